"""The jump term's window sums by Parseval (docs/accountant_tail.md §66, Lemmas 66.1-66.2; session 44, body44).

Checked against independent references: (i) the window sums of the exact inverse DFT of a given half spectrum, in
mpmath at 40 digits, node by node (small N; hypothesis over N, the window's start, the offset, m0, the weights' linear
parts and their computed part below -T0) must lie within the returned error bounds; (ii) the truncation below the cut
on a non-negative band-limited pmf whose mass is known; (iii) the blocked partial DFT against mpmath's direct sum;
(iv) the geometric closed forms at r = 1 (frequency 0 included) against direct sums; (v) the switch off as the
certified reference: the far-tail brackets with the rule on and off overlap and agree to 1e-8 where the rule ran
(checked by a spy), on a regime cell with the N threshold lowered.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _main_floats34 import switch
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import jump, jump_spectral
from sharpdp.shuffle.accountant.jump_spectral import Linear, partial_dft, window_sums
from sharpdp.shuffle.accountant.spectral_sum import geometric

mpmath.mp.dps = 40


def _q_exact(Q: np.ndarray, N: int) -> list:
    """The exact inverse real DFT of the half spectrum Q (imaginary parts at 0 and N/2 dropped), in mpmath."""
    ks = [int(k) for k in np.flatnonzero(Q)]
    out = []
    for r in range(N):
        q = mpmath.mpf(0)
        for k in ks:
            c = mpmath.mpc(float(Q[k].real), float(Q[k].imag))
            ph = mpmath.expjpi(mpmath.mpf(2 * k * r) / N)
            q += mpmath.re(c) * mpmath.re(ph) if k == 0 or (N % 2 == 0 and k == N // 2) else 2 * mpmath.re(c * ph)
        out.append(q / N)
    return out


def _weight(wt: Linear, s: int, m0: int, h: float, r: int):
    """The weight at node s (window position r) as Lemma 66.1 takes it: the computed weight at s <= -m0, the exact
    linear function beyond."""
    if s <= -m0:
        return mpmath.mpf(float(wt.w[r]))
    return mpmath.mpf(wt.const) + mpmath.mpf(wt.slope) * mpmath.mpf(h) * (s + m0)


def _reference(Q, N, p0, sa, h, m0, wt):
    q = _q_exact(Q, N)
    return mpmath.fsum(_weight(wt, sa + r, m0, h, r) * q[(sa + r - p0) % N] for r in range(N))


def _band(N: int, m: int, seed: int, positive: bool = False) -> np.ndarray:
    """A half spectrum with m non-zero low frequencies; ``positive``: sum_{k>=1} 2 |Q_k| < Q_0 = 1 (a positive pmf)."""
    rng = np.random.default_rng(seed)
    Q = np.zeros(N // 2 + 1, dtype=complex)
    k = np.arange(m)
    Q[:m] = np.exp(-0.5 * (k / max(m / 3.0, 1.0)) ** 2) * np.exp(1j * rng.uniform(-np.pi, np.pi, m))
    if positive and m > 1:
        Q[1:m] *= 0.45 / float(np.sum(np.abs(Q[1:m])))
    Q[0] = 1.0
    return Q


def _linear(N, sa, m0, h, const, slope, seed):
    """A Linear weight: decreasing-in-depth positive values below -T0 (a stop-loss grid's shape), exact linear above."""
    rng = np.random.default_rng(seed)
    x = (sa + np.arange(N)) * h
    w = const + slope * (x + m0 * h)
    below = x <= -m0 * h
    depth = (-m0 * h - x[below])
    w[below] = const * np.exp(-depth * rng.uniform(0.1, 2.0)) if const > 0 else 0.0
    return Linear(w, const, slope, float(np.sqrt(np.sum(w * w))) * (1 + 1e-6))


@settings(max_examples=20, deadline=None)
@given(N=st.integers(64, 200), sa=st.integers(-150, 40), p0=st.integers(-10**6, 10**6), m0=st.integers(0, 120),
       m=st.integers(1, 8), h=st.sampled_from([0.25, 0.5, 0.75, 1.0, 0.046875]), const=st.floats(0.0, 2.0),
       slope=st.floats(0.0, 1.0), seed=st.integers(0, 2**31))
def test_window_sums_enclose_the_exact_sums(N, sa, p0, m0, m, h, const, slope, seed):
    Q = _band(N, min(m, N // 8), seed)
    wts = [_linear(N, sa, m0, h, const, slope, seed), _linear(N, sa, m0, h, 0.0, 1.0, seed + 1)]
    got = window_sums(Q, 0.0, N, p0, sa, h, m0, wts, 1.0, 0.0)
    if got is None:  # (an enclosure too wide for OWN_REL: the caller inverts; nothing claimed)
        return
    for (E, err), wt in zip(got, wts):
        ref = _reference(Q, N, p0, sa, h, m0, wt)
        assert abs(mpmath.mpf(E) - ref) <= err
        assert err <= 1e-8 * abs(E) + 1e-300


def test_error_grows_with_err_Q_and_the_cut_charges_the_rest():
    N, p0, sa, h, m0 = 160, 777, -100, 0.5, 20
    Q = _band(N, 6, 3, positive=True)
    q = _q_exact(Q, N)
    assert min(q) > 0 and abs(mpmath.fsum(q) - 1) < 1e-30  # (a positive pmf of mass 1)
    wt = _linear(N, sa, m0, h, 0.7, 0.3, 5)
    (E0, e0), = window_sums(Q, 0.0, N, p0, sa, h, m0, [wt], 1.0, 0.0)
    (E1, e1), = window_sums(Q, 1e-6, N, p0, sa, h, m0, [wt], 1.0, 0.0)
    assert E0 == E1 and e1 - e0 == pytest.approx(1e-6 * wt.norm / np.sqrt(N), rel=1e-6)
    # the cut: the nodes below the last weight above it are left out, charged max weight there times the mass
    cut = float(np.sort(wt.w[:80])[40])
    (E2, e2), = window_sums(Q, 0.0, N, p0, sa, h, m0, [wt], 1.0, cut)
    ref = _reference(Q, N, p0, sa, h, m0, wt)
    assert E2 < E0 and abs(mpmath.mpf(E2) - ref) <= e2
    assert e2 - e0 <= cut * (1 + 1e-6) + 1e-15
    # a mass bound too small would break it: the charge is what keeps the reference inside
    (E3, e3), = window_sums(Q, 0.0, N, p0, sa, h, m0, [wt], 0.0, cut)
    assert abs(mpmath.mpf(E3) - ref) > e3


@settings(max_examples=25, deadline=None)
@given(M=st.integers(1, 700), N=st.integers(64, 4096), pos0=st.integers(0, 4095), seed=st.integers(0, 2**31))
def test_partial_dft_encloses_the_direct_sum(M, N, pos0, seed):
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.0, 1.0, M) * np.exp(-rng.uniform(0, 5, M))
    ks = np.unique(rng.integers(0, N // 8 + 1, 5))
    b = partial_dft(w, ks, N, pos0 % N)
    for i, k in enumerate(ks.tolist()):
        ref = mpmath.fsum(mpmath.mpf(float(w[j])) * mpmath.expjpi(mpmath.mpf(2 * k * (pos0 + j)) / N) for j in range(M))
        assert abs(mpmath.mpc(complex(b.z[i])) - ref) <= b.r[i]
    assert np.all(b.r <= 1e-10 * max(float(np.sum(w)), 1e-300))


@pytest.mark.parametrize("J,S,s1,p0,N", [(50, 7, -3, 11, 128), (1, 0, 5, 0, 64), (300, -40, 2, 999, 2048)])
def test_geometric_at_r1_with_frequency_0(J, S, s1, p0, N):
    ks = np.array([0, 1, 3, N // 8])
    lin, con = geometric(ks, N, p0, s1, J, S, 0.0, const=True)
    for i, k in enumerate(ks.tolist()):
        ph = [mpmath.expjpi(mpmath.mpf(2 * k * (s1 + j - p0)) / N) for j in range(J)]
        ref_l = mpmath.fsum((S + j) * ph[j] for j in range(J))
        ref_c = mpmath.fsum(ph)
        assert abs(mpmath.mpc(complex(lin.z[i])) - ref_l) <= lin.r[i]
        assert abs(mpmath.mpc(complex(con.z[i])) - ref_c) <= con.r[i]


def test_far_tail_on_against_off(monkeypatch):
    """The rule's jump terms against main's (the switch off, the certified reference) on a far-tail cell: the window
    sums ran by Parseval (a spy), and the brackets overlap and agree to 1e-8."""
    rz = GaussianRandomizer(1.0, 1)
    calls = []
    real = jump_spectral.window_sums

    def spy(*a, **k):
        r = real(*a, **k)
        calls.append(r)
        return r

    monkeypatch.setattr(jump, "window_sums", spy)
    out = {}
    for on in (False, True):
        switch(monkeypatch, "BODY44_JUMP_SPECTRAL", on)
        switch(monkeypatch, "BODY44_JUMP_SPECTRAL_MIN_N", 2**12)
        out[on] = ShuffleAccountant(rz, 10**6, "zero_out").get_delta_bounds(0.01)
    assert any(c is not None for c in calls)
    (lo0, up0), (lo1, up1) = out[False], out[True]
    assert max(lo0, lo1) <= min(up0, up1)
    assert lo1 == pytest.approx(lo0, rel=1e-8) and up1 == pytest.approx(up0, rel=1e-8)
