"""The engine's window sum in the frequency domain (docs/accountant_tail.md §65, Lemma 65.1; session 43, body43).

Checked against independent references: (i) the window sum of the exact inverse DFT of a given half spectrum, in
mpmath at 40 digits, node by node (small N; hypothesis over N, the window's start, the offset, h, theta and the band),
must lie within the returned error bound of E~; (ii) the weights' l2 norm bound against the window's sum of squares
in mpmath; (iii) the switch off as the certified reference: the engine's brackets with the rule on and off overlap and
agree to 1e-8 where the rule ran (checked by a spy), on a regime cell with the N threshold lowered.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _main_floats34 import switch
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import lattice, spectral_sum
from sharpdp.shuffle.accountant.spectral_sum import fnorm_bound, window_sum

mpmath.mp.dps = 40


def _reference(Q: np.ndarray, N: int, nk0: int, sa: int, h: float, theta: float) -> mpmath.mpf:
    """sum_{s in W, s > 0} s h e^{-theta s h} q(r(s)), q the exact inverse real DFT of the half spectrum Q (imaginary
    parts at 0 and N/2 dropped, as numpy's irfft does), in mpmath."""
    ks = [int(k) for k in np.flatnonzero(Q)]
    tot = mpmath.mpf(0)
    hh, th = mpmath.mpf(h), mpmath.mpf(theta)
    for s in range(max(sa, 1), sa + N):
        r = (s - nk0) % N
        q = mpmath.mpf(0)
        for k in ks:
            c = mpmath.mpc(float(Q[k].real), float(Q[k].imag))
            ph = mpmath.expjpi(mpmath.mpf(2 * k * r) / N)
            if k == 0 or (N % 2 == 0 and k == N // 2):
                q += mpmath.re(c) * mpmath.re(ph)
            else:
                q += 2 * mpmath.re(c * ph)
        tot += s * hh * mpmath.exp(-th * s * hh) * q / N
    return tot


def _band(N: int, m: int, seed: int) -> np.ndarray:
    """A half spectrum with m non-zero low frequencies (a smooth pmf's shape: decaying, with phases)."""
    rng = np.random.default_rng(seed)
    Q = np.zeros(N // 2 + 1, dtype=complex)
    k = np.arange(m)
    Q[:m] = np.exp(-0.5 * (k / max(m / 3.0, 1.0)) ** 2) * np.exp(1j * rng.uniform(-np.pi, np.pi, m))
    Q[0] = 1.0
    return Q


@settings(max_examples=25, deadline=None)
@given(N=st.integers(64, 240), sa=st.integers(-200, 60), nk0=st.integers(-10**6, 10**6), m=st.integers(1, 8),
       h=st.floats(0.01, 2.0), theta=st.floats(1e-3, 3.0), seed=st.integers(0, 2**31))
def test_window_sum_encloses_the_exact_sum(N, sa, nk0, m, h, theta, seed):
    Q = _band(N, min(m, N // 8), seed)
    got = window_sum(Q, 0.0, N, nk0, sa, h, theta)
    ref = _reference(Q, N, nk0, sa, h, theta)
    if got is None:  # (the enclosure too wide for OWN_REL: the caller inverts; nothing claimed)
        return
    E, err = got
    assert abs(mpmath.mpf(E) - ref) <= err
    assert err <= 1e-8 * abs(E) + 1e-300


def test_window_sum_error_grows_with_err_Q():
    N, nk0, sa, h, theta = 128, 12345, -40, 0.3, 0.7
    Q = _band(N, 6, 1)
    E0, e0 = window_sum(Q, 0.0, N, nk0, sa, h, theta)
    E1, e1 = window_sum(Q, 1e-6, N, nk0, sa, h, theta)
    assert E0 == E1
    assert e1 - e0 == pytest.approx(1e-6 * fnorm_bound(h, theta) / math.sqrt(N), rel=1e-6)
    # a spectrum perturbed by d (||d||_2 over the full spectrum <= err_Q) moves the exact sum by at most e1
    d = np.zeros_like(Q)
    d[3] = 0.5e-6 / math.sqrt(2)  # (counted twice in the full spectrum)
    ref = _reference(Q + d, N, nk0, sa, h, theta)
    assert abs(mpmath.mpf(E1) - ref) <= e1


def test_window_sum_refuses_high_frequencies():
    N = 256
    Q = _band(N, 4, 2)
    Q[N // 8 + 1] = 1e-3
    assert window_sum(Q, 0.0, N, 0, -10, 0.5, 0.5) is None
    assert window_sum(np.zeros(N // 2 + 1, dtype=complex), 1e-9, N, 0, -10, 0.5, 0.5)[0] == 0.0


@pytest.mark.parametrize("h,theta,sa,N", [(0.05, 0.2, -30, 200), (1.0, 1e-2, 1, 100), (0.3, 3.0, 5, 64)])
def test_fnorm_bound(h, theta, sa, N):
    exact = mpmath.sqrt(mpmath.fsum((s * mpmath.mpf(h) * mpmath.exp(-mpmath.mpf(theta) * s * h)) ** 2
                                    for s in range(max(sa, 1), sa + N)))
    inf = mpmath.sqrt(mpmath.nsum(lambda s: (s * mpmath.mpf(h) * mpmath.exp(-mpmath.mpf(theta) * s * h)) ** 2,
                                  [1, mpmath.inf]))
    b = fnorm_bound(h, theta)
    assert b >= exact and b >= inf and b <= inf * (1 + 1e-9)


def test_engine_on_against_off(monkeypatch):
    """The rule's engine against main's (the switch off, the certified reference) on a regime cell: every engine run
    where window_sum applied gives a bracket overlapping main's, E within 1e-8, and the values within 1e-8."""
    rz = GaussianRandomizer(1.0, 1)
    calls = []
    real = spectral_sum.window_sum

    def spy(*a, **k):
        r = real(*a, **k)
        calls.append(r)
        return r

    monkeypatch.setattr(lattice, "window_sum", spy)
    out = {}
    for on in (False, True):
        switch(monkeypatch, "BODY43_SPECTRAL_SUM", on)
        switch(monkeypatch, "BODY43_SPECTRAL_MIN_N", 2**14)
        out[on] = ShuffleAccountant(rz, 10**6, "zero_out").get_delta_bounds(0.01)
    applied = [c for c in calls if c is not None]
    assert len(applied) >= 2
    (lo0, up0), (lo1, up1) = out[False], out[True]
    assert max(lo0, lo1) <= min(up0, up1)
    assert lo1 == pytest.approx(lo0, rel=1e-8) and up1 == pytest.approx(up0, rel=1e-8)


@settings(max_examples=60, deadline=None)
@given(size=st.integers(1, 300), N=st.integers(16, 400), shift=st.integers(-10**6, 10**6), seed=st.integers(0, 2**31))
def test_fold_copy_is_bincount(size, N, shift, seed):
    """fft.fold's copy (at most N nodes) gives bincount's doubles bit for bit, signed zeros included; more nodes fold."""
    from sharpdp.shuffle.accountant.fft import fold

    rng = np.random.default_rng(seed)
    pmf = rng.random(size) * rng.choice([1.0, 1e-300, 0.0, -0.0], size)
    want = np.bincount((np.arange(size) + shift) % N, weights=pmf, minlength=N)
    got = fold(pmf, N, shift)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.view(np.int64), want.view(np.int64))
