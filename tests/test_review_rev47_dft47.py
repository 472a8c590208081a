"""Review rev47 (session 47): attack on dft47's DFT of the low frequencies by blocks of 64 nodes with a Taylor expansion
of the phase (``_core.accountant.dft_low``, cpp/kernels/dft_taylor.hpp, Lemma 72.1 of docs/accountant_tail.md §72.2) and
the pruned spectrum on it (``limits.DFT47_TAYLOR_PRUNED``, off in its branch). Claims: |z~_k - z_k| <= e for every
k <= K (z_k = sum_x y_x e^{-2 pi i k x / N} of the stored doubles), and with the switch on the pruned spectrum's err_Q
bounds its l2 distance to the exact z_k^n. Skipped while the kernel or the switch is absent (dft47 not merged).

References: direct sums in mpmath (40 digits) of every node, on adversarial vectors: N not a multiple of 64 (the last
block's centre beyond N), mass at the blocks' edges (|t| = 1: the Taylor remainder's worst point), signed and
huge-range values (1e-300 .. 1), a single node, all mass in one block, K up to the kernel's limit (alpha near 5.5:
where the remainder is largest), and through ``fft.spectrum`` with the rule forced at small N (tests of
test_review_rev47_freq_cut.py's ``_check_spectrum``)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from sharpdp import _core
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch
from test_review_rev47_freq_cut import _check_spectrum, _pmf

pytestmark = pytest.mark.skipif(not (hasattr(_core.accountant, "dft_low") and hasattr(limits, "DFT47_TAYLOR_PRUNED")),
                                reason="rule of a branch not merged (dft47)")


def _exact(y: np.ndarray, ks) -> list:
    N = y.size
    nz = np.flatnonzero(y)
    with mp.workdps(40):
        vals = [mp.mpf(float(y[i])) for i in nz]
        return [mp.fsum(v * mp.expjpi(mp.mpf(-2 * ((int(k) * int(i)) % N)) / N) for v, i in zip(vals, nz)) for k in ks]


def _check(y: np.ndarray, K: int) -> int:
    z, e = _core.accountant.dft_low(np.ascontiguousarray(y, dtype=float), int(K))
    if not math.isfinite(e):
        return 0
    z = np.asarray(z)
    assert z.shape[0] == K + 1
    ks = sorted(set(list(range(min(K + 1, 12))) + list(np.linspace(0, K, 12).astype(int))))
    ex = _exact(y, ks)
    with mp.workdps(40):
        for k, zk in zip(ks, ex):
            d = abs(mp.mpc(complex(z[k])) - zk)
            assert d <= mp.mpf(e), (y.size, K, k, float(d), e)
    return 1


def _vec(kind: str, N: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = np.zeros(N)
    if kind == "edges":  # mass at d = -32 and 31 of every block
        y[0::64] = rng.uniform(0, 1, y[0::64].size)
        y[63::64] = rng.uniform(0, 1, y[63::64].size)
    elif kind == "signed":
        y[:] = rng.normal(0, 1, N) * 10.0 ** rng.uniform(-300, 0, N)
    elif kind == "one":
        y[int(rng.integers(0, N))] = 1.0
    elif kind == "block":
        b = int(rng.integers(0, N // 64)) * 64
        y[b:b + 64] = rng.uniform(0, 1, 64)
    else:  # "dense"
        y[:] = rng.uniform(0, 1, N) ** 4
    return y / max(np.sum(np.abs(y)), 1e-300)


@pytest.mark.parametrize("kind", ["edges", "signed", "one", "block", "dense"])
@pytest.mark.parametrize("N", [4096, 4097, 6000, 64 * 37 + 63])
def test_dft_low_bound_holds(kind, N):
    Kmax = int(5.4 * N / (2 * math.pi * 32))  # (alpha = 2 pi k 32 / N below 5.4: near the kernel's own limit 5.5)
    ran = 0
    for K in (0, 1, 7, max(1, Kmax // 3), Kmax):
        ran += _check(_vec(kind, N, N + K), K)
    assert ran >= 4


@settings(max_examples=15, deadline=None, derandomize=True)
@given(kind=st.sampled_from(["edges", "signed", "one", "block", "dense"]), N=st.integers(65, 20000),
       seed=st.integers(0, 10**6), frac=st.floats(0.0, 1.0))
def test_dft_low_bound_property(kind, N, seed, frac):
    Kmax = max(0, int(5.45 * N / (2 * math.pi * 32)))
    _check(_vec(kind, N, seed), int(frac * Kmax))


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(kind=st.sampled_from(["tie", "sublattice", "dense", "atom"]), seed=st.integers(0, 10**6),
       off=st.sampled_from([1e-6, 1e-3, 0.05]), logn=st.floats(4.0, 9.0), q=st.integers(2, 200),
       logN=st.integers(11, 13), shift=st.integers(0, 5000))
def test_taylor_pruned_spectrum_err_bounds_the_exact_distance(monkeypatch, kind, seed, off, logn, q, logN, shift):
    N = 2 ** logN
    y = _pmf(kind, N - 8 if kind == "dense" else N // 2, seed, off, 1.0, q)
    switch(monkeypatch, "DFT47_TAYLOR_PRUNED", True)
    _check_spectrum(monkeypatch, y, int(round(10.0 ** logn)), N, shift)


@pytest.mark.parametrize("kind, n, size, N, shift", [
    ("tie", 10**7, 6000, 2**14, 9000), ("atom", 10**8, 5000, 2**14, 16000), ("atom", 10**9, 2000, 2**15, 30000),
    ("atom", 10**6, 3000, 2**14, 0), ("tie", 10**9, 8000, 2**15, 100)])
def test_taylor_pruned_spectrum_cases(monkeypatch, kind, n, size, N, shift):
    """As the property above, at cells where the Taylor path certainly runs (K within the kernel's alpha < 5.5 and the
    work): asserted through dft_low's finite bound at the cut."""
    from sharpdp.shuffle.accountant import fft, freq_cut

    switch(monkeypatch, "DFT47_TAYLOR_PRUNED", True)
    ran = 0
    for seed in range(2):
        y = _pmf(kind, size, seed, 1e-3, 1.0, 7)
        if _check_spectrum(monkeypatch, y, n, N, shift):
            folded = fft.fold(y, N, shift)
            K = freq_cut.cut(folded, float(n), limits.BODY46_PRUNED_RATIO)
            ran += math.isfinite(_core.accountant.dft_low(folded, K)[1])
    assert ran >= 1


@pytest.mark.parametrize("g, s, n, eps", [(0.0204, 0.461, 10**9, 1e-2), (0.0786, 0.597, 10**9, 1e-3)])
def test_taylor_pruned_cells_hold_the_tight_reference(monkeypatch, g, s, n, eps):
    """The END brackets at §72's cells (5: BMG (0.0204, 0.461), 2: BMG (0.0786, 0.597), n = 1e9; zero-out, rel_tol
    1e-2) with the rule on: they overlap the rule-off bracket and the rule-off bracket at rel_tol 1e-5."""
    from test_review_rev47_freq_cells import _bracket

    with monkeypatch.context() as m:
        switch(m, "DFT47_TAYLOR_PRUNED", True)
        lo1, up1, served = _bracket(m, g, s, n, eps, 1e-2, True)
    assert served > 0
    lo0, up0, _ = _bracket(monkeypatch, g, s, n, eps, 1e-2, True)
    lor, upr, _ = _bracket(monkeypatch, g, s, n, eps, 1e-5, True)
    assert lo1 <= up1 and lo1 <= up0 and lo0 <= up1, (lo0, up0, lo1, up1)
    assert lo1 <= upr and lor <= up1, (lo1, up1, lor, upr)
