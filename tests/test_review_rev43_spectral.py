"""Review rev43 (session 43): attack on body43's docs/accountant_tail.md §65.1 (``spectral_sum.window_sum``, Lemma
65.1, ``limits.BODY43_SPECTRAL_SUM``: the engine's window sum by Parseval from the power step's few non-zero
frequencies, its error bound by complex ball arithmetic). Skipped while the module is absent (branch body43).

Reference (mpmath at 40 digits, no sharpdp code): take the computed half spectrum Q~ itself as exact (err_Q = 0), so
the exact circular sequence is its inverse DFT and the exact window sum is (1/N) sum_k w_k Re(Q~_k Phi_k) with
Phi_k = sum_{s in W, s >= 1} s h e^{-theta s h} e^{2 pi i k (s - n k0) / N} summed node by node (theta, h the doubles
as given: the code's rounding of theta h, of the phases and of the closed form must all be inside its bound).
Claims: |E_exact - E~| <= the returned error at every (N, theta h, window start, n k0, frequencies) tried, the rule
returns a value on most of them (not idle), and at large N (2^20) against the closed form in mpmath. Then, in the
engine, the switch on vs off: the two certified values E +- fp intersect.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from _rev43_mp import digits_fixture

ss = pytest.importorskip("sharpdp.shuffle.accountant.spectral_sum")


_digits = digits_fixture(40)  # (mpmath's digits for every reference here, set per test)


def _spectrum(N: int, ks: np.ndarray, c: float, m0: int) -> np.ndarray:
    """A half spectrum (rfft layout) non-zero at ``ks``: a Gaussian's, centred at position m0."""
    Q = np.zeros(N // 2 + 1, dtype=complex)
    kf = ks.astype(float)
    Q[ks] = np.exp(-c * kf * kf) * np.exp(-2j * np.pi * ((ks * m0) % N) / N)
    Q[0] = Q[0].real if 0 in ks else 0.0
    return Q


def _exact_direct(Q, N, nk0, sa, h, theta) -> mpmath.mpf:
    ks = np.flatnonzero(Q)
    s1 = max(sa, 1)
    th = mpmath.mpf(theta) * mpmath.mpf(h)
    ss_ = list(range(s1, sa + N))
    wts = [s * mpmath.mpf(h) * mpmath.exp(-s * th) for s in ss_]
    tot = mpmath.mpf(0)
    for k in ks.tolist():
        w = 1 if k == 0 else 2
        phi = mpmath.mpc(0)
        for s, wt in zip(ss_, wts):
            phi += wt * mpmath.expjpi(mpmath.mpf(2 * k * ((s - nk0) % N)) / N)
        tot += w * (mpmath.mpc(complex(Q[k])) * phi).real
    return tot / N


def _exact_closed(Q, N, nk0, sa, h, theta) -> mpmath.mpf:
    ks = np.flatnonzero(Q)
    s1 = max(sa, 1)
    J = sa + N - s1
    r = mpmath.exp(-mpmath.mpf(theta) * mpmath.mpf(h))
    tot = mpmath.mpf(0)
    for k in ks.tolist():
        w = 1 if k == 0 else 2
        rho = r * mpmath.expjpi(mpmath.mpf(2 * k) / N)
        P = rho ** J
        num = s1 * (1 - P) * (1 - rho) + rho - J * P + (J - 1) * rho * P
        phi = mpmath.mpf(h) * r ** s1 * mpmath.expjpi(mpmath.mpf(2 * k * ((s1 - nk0) % N)) / N) * num / (1 - rho) ** 2
        tot += w * (mpmath.mpc(complex(Q[k])) * phi).real
    return tot / N


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logN=st.integers(7, 10), log_t=st.floats(-7.0, 0.5), h=st.sampled_from([1e-3, 0.37, 1.0]),
       start=st.floats(-1.2, 1.0), nk0=st.integers(-10**12, 10**12), nk=st.integers(1, 6), c=st.floats(1e-4, 0.3),
       m0=st.integers(0, 10**6), zero=st.booleans())
def test_window_sum_encloses_the_exact_sum(logN, log_t, h, start, nk0, nk, c, m0, zero):
    N = 2**logN
    theta = 10**log_t / h
    sa = int(start * N)
    ks = np.unique(np.concatenate([[0] if zero else [], np.arange(1, nk + 1)]).astype(np.int64))
    Q = _spectrum(N, ks, c, m0)
    out = ss.window_sum(Q, 0.0, N, nk0, sa, h, theta)
    if out is None:
        return
    E, err = out
    ref = _exact_direct(Q, N, nk0, sa, h, theta)
    assert abs(ref - E) <= err, (float(ref), E, err)


@pytest.mark.parametrize("t", [1e-7, 1e-4, 0.01, 0.3])
@pytest.mark.parametrize("sa", [-200_000, 5, 700_000])
def test_window_sum_large_N_closed_form(t, sa):
    """N = 2^20, n k0 ~ -3e13 (a long lattice), 40 frequencies: the closed form in mpmath (checked against the node
    sums above) against the rule's value and bound; with err_Q > 0 the bound grows by err_Q ||phi||_2 / sqrt(N)."""
    N, h, nk0 = 2**20, 0.01, -31_415_926_535_897
    theta = t / h
    ks = np.arange(0, 40, dtype=np.int64)
    Q = _spectrum(N, ks, 2e-3, 123_457)
    out = ss.window_sum(Q, 0.0, N, nk0, sa, h, theta)
    if sa <= 5 and t >= 1e-4:  # (it applies; not where E underflows (sa = 7e5) or the enclosures are too wide)
        assert out is not None
    if out is None:
        return
    E, err = out
    ref = _exact_closed(Q, N, nk0, sa, h, theta)
    assert abs(ref - E) <= err, (float(ref), E, err)
    E2, err2 = ss.window_sum(Q, 1e-9, N, nk0, sa, h, theta)
    assert E2 == E and err2 >= err + 1e-9 * ss.fnorm_bound(h, theta) / math.sqrt(N) * (1 - 1e-12)


def test_closed_form_matches_the_node_sums():
    """The reference's closed form against its node sums (so the large-N test's reference is right)."""
    N, h, theta, nk0 = 512, 0.5, 0.013, 987_654_321
    Q = _spectrum(N, np.arange(0, 5, dtype=np.int64), 0.01, 77)
    for sa in (-100, 1, 300):
        a, b = _exact_direct(Q, N, nk0, sa, h, theta), _exact_closed(Q, N, nk0, sa, h, theta)
        assert abs(a - b) <= mpmath.mpf(10) ** -30 * abs(a)


def test_fnorm_bound_is_an_upper_bound():
    for h, theta in ((1.0, 1e-3), (0.01, 5.0), (1e-3, 1e4), (2.0, 0.5)):
        t = mpmath.mpf(theta) * mpmath.mpf(h)
        x = mpmath.exp(-2 * t)
        exact = mpmath.sqrt(mpmath.mpf(h) ** 2 * x * (1 + x) / (1 - x) ** 3)
        assert ss.fnorm_bound(h, theta) >= exact


@pytest.mark.parametrize("make, n, eps", [("gauss1", 10**8, 0.001), ("bmg", 10**8, 0.001)])
def test_engine_on_meets_off(monkeypatch, make, n, eps):
    """The body-dominated cells of §65 (n = 1e8): the reported bracket with the switch on meets the switch-off one
    (main's certified values) and moves by < 1e-8 relative; the spectral sum was taken (not idle)."""
    from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
    from sharpdp.shuffle.accountant import lattice

    from _main_floats34 import switch

    rand = {"gauss1": lambda: GaussianRandomizer(1.0, 1), "bmg": lambda: BlanketMixedGaussian(0.171, 0.781, 1)}[make]
    with monkeypatch.context() as mp:
        switch(mp, "BODY43_SPECTRAL_SUM", False)
        off = ShuffleAccountant(rand(), n).get_delta_bounds(eps)
    taken: list = []
    orig = lattice.window_sum
    monkeypatch.setattr(lattice, "window_sum", lambda *a: taken.append(orig(*a)) or taken[-1])
    switch(monkeypatch, "BODY43_SPECTRAL_SUM", True)
    on = ShuffleAccountant(rand(), n).get_delta_bounds(eps)
    clear_caches()
    assert any(t is not None for t in taken)
    assert max(on[0], off[0]) <= min(on[1], off[1]), (on, off)
    assert abs(on[1] / off[1] - 1.0) <= 1e-8 and abs(on[0] / off[0] - 1.0) <= 1e-8, (on, off)


@settings(max_examples=200, deadline=None)
@given(N=st.integers(16, 300), size=st.integers(0, 300), shift=st.integers(-10**6, 10**6), seed=st.integers(0, 10**6),
       neg_zero=st.booleans())
def test_fold_copy_is_bincounts_doubles(N, size, shift, seed, neg_zero):
    """§65.2's fold (a copy where the pmf has at most N nodes) gives bincount's doubles bit for bit, any shift
    (negative, beyond N), with zeros and negative zeros in the pmf."""
    from sharpdp.shuffle.accountant.fft import fold

    rng = np.random.default_rng(seed)
    pmf = rng.random(size) * (rng.random(size) < 0.7)
    if neg_zero and size:
        pmf[rng.integers(0, size)] = -0.0
    want = np.bincount((np.arange(size) + shift) % N, weights=pmf, minlength=N)
    got = fold(pmf, N, shift)
    assert got.shape == want.shape and all(float(a).hex() == float(b).hex() for a, b in zip(got.tolist(), want.tolist()))
