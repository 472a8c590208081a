"""The DFT of the low frequencies by blocks with a Taylor expansion of the phase (cpp/kernels/dft_taylor.hpp) and the
pruned spectrum on it (docs/accountant_tail.md §72), against direct sums in mpmath, the power step's accurate DFT and
the FFT path (the switch off) as references."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from _main_floats34 import switch
from sharpdp.shuffle.accountant import fft, freq_cut
from sharpdp.shuffle.accountant.fft import Part


def _exact(y: np.ndarray, k: int) -> mpmath.mpc:
    """z_k = sum_x y_x e^{-2 pi i k x / N} of the stored doubles (mpmath, 40 digits)."""
    N = y.size
    with mpmath.workdps(40):
        return mpmath.fsum(mpmath.mpf(float(y[x])) * mpmath.expjpi(-2 * mpmath.mpf(k) * int(x) / N)
                           for x in np.flatnonzero(y))


def _pmf(N: int, atom: float, sd: float, seed: int, support: int, start: int = 10) -> np.ndarray:
    """A rough positive body of ``support`` nodes (a discretised Gaussian times noise) and an atom at its centre."""
    rng = np.random.default_rng(seed)
    x = np.arange(support)
    body = np.exp(-0.5 * ((x - support / 3) / sd) ** 2) * rng.uniform(0.2, 1.0, support)
    y = np.zeros(N)
    y[start:start + support] = (1 - atom) * body / body.sum()
    y[start + support // 3] += atom
    return y


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6), N=st.integers(2000, 6000), dens=st.floats(0.02, 1.0), K=st.integers(0, 8),
       power8=st.booleans())
def test_within_the_bound_against_mpmath(seed, N, dens, K, power8):
    """|z~_k - z_k| <= e at every k <= K (random non-negative y, some entries 0, a wide range of magnitudes)."""
    rng = np.random.default_rng(seed)
    y = rng.random(N) * (rng.random(N) < dens)
    if power8:
        y = y ** 8
    y[rng.integers(0, N)] = 1.0
    z, e = fft.kernels().dft_low(y, K)
    assert z.shape == (K + 1,) and math.isfinite(e) and e > 0
    for k in range(K + 1):
        assert abs(mpmath.mpc(complex(z[k])) - _exact(y, k)) <= e


def test_the_bound_is_tight_where_the_expansion_converges():
    """At small alpha = 2 pi k 32 / N the bound is a few u times sum y (within 1.5 times the accurate DFT's,
    docs/accountant.md §3.6.4), and holds against mpmath."""
    N = 2**20
    y = _pmf(N, 0.7, 1000.0, 5, 20000)
    K = 40
    z, e = fft.kernels().dft_low(y, K)
    u = 2.0**-53
    acc_e = math.sqrt(2) * 15 * u * float(np.sum(y)) * 1.01
    assert acc_e < e <= 1.5 * acc_e
    for k in (0, 1, 7, 40):
        assert abs(mpmath.mpc(complex(z[k])) - _exact(y, k)) <= e


def test_refuses_where_the_expansion_does_not_apply():
    """alpha >= 5.5 (k 64 / N large): e = inf (the caller then runs the FFT path)."""
    y = np.zeros(256)
    y[3] = 1.0
    _, e = fft.kernels().dft_low(y, 100)
    assert e == math.inf
    with pytest.raises(ValueError):
        fft.kernels().dft_low(y, 200)


@pytest.mark.parametrize("n", [10**6, 10**8])
def test_pruned_spectrum_against_the_fft_path(n):
    """The pruned (Q, err_Q) on the Taylor DFT and the FFT path's agree within the sum of their bounds (l2 over the
    Hermitian spectrum); Q is 0 above the cut; the pruned path runs where the accurate DFT's budget would refuse."""
    N = 2**16
    y = _pmf(N, 0.7, 40.0, 3, 3000, start=3000)
    C = fft.kernels()
    K = freq_cut.cut(y, float(n))
    nnz = int(np.count_nonzero(y))
    work = float((K + 1) * (N // 64))
    assert (K + 1) * nnz > work  # (the accurate DFT's budget would refuse)
    assert freq_cut.pruned_spectrum(y, n, work, 1.1, C.power) is None
    pr = freq_cut.pruned_spectrum(y, n, work, 1.1, C.power, C.dft_low)
    assert pr is not None
    Qp, ep, _ = pr
    Qf, ef, _ = fft.spectrum([Part(y, n)], N, 1e-300, 2e7)
    assert np.all(Qp[K + 2:] == 0)
    w = np.full(N // 2 + 1, 2.0)
    w[0] = w[-1] = 1.0
    dist = math.sqrt(float(np.sum(w * np.abs(Qp - Qf) ** 2)))
    assert dist <= ep + ef


def test_switch_default_on_and_listed():
    """On since session 47's merge (docs/accountant_tail.md §72.8); SESSION46 holds session 46's value."""
    from _main_floats34 import SESSION46

    from sharpdp.shuffle.accountant import limits

    assert limits.DFT47_TAYLOR_PRUNED is True and SESSION46["DFT47_TAYLOR_PRUNED"] is False  # on since session 47's merge


def test_cell_brackets_overlap(monkeypatch):
    """GaussianRandomizer(1), n = 1e8, eps 0.001 (docs/accountant_tail.md §72.4): the switch on runs the Taylor path and
    its certified bracket overlaps the switch off's (both certified), within 1e-5 relative of it."""
    from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

    off = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**8, "zero_out").get_delta_bounds(1e-3)
    switch(monkeypatch, "DFT47_TAYLOR_PRUNED", True)
    calls = []
    C = fft.kernels()

    class Spy:
        def __getattr__(self, name):
            return getattr(C, name)

        def dft_low(self, y, K):
            calls.append(K)
            return C.dft_low(y, K)

    monkeypatch.setattr(fft, "kernels", lambda: Spy())
    on = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**8, "zero_out").get_delta_bounds(1e-3)
    assert calls
    assert on[0] <= off[1] and off[0] <= on[1]
    assert abs(on[0] - off[0]) <= 1e-5 * off[0] and abs(on[1] - off[1]) <= 1e-5 * off[1]


def test_pruned_spectrum_refuses_an_infinite_bound():
    """Where the DFT by blocks gives no finite bound the pruned path returns None (the caller runs the FFT path)."""
    N = 2**16
    y = _pmf(N, 0.7, 40.0, 3, 3000, start=3000)
    C = fft.kernels()

    def no_bound(yy, K):
        return np.zeros(K + 1, dtype=np.complex128), math.inf

    assert freq_cut.pruned_spectrum(y, 10**8, 1e9, 1.1, C.power, no_bound) is None
    assert freq_cut.pruned_spectrum(y, 10**8, 1e9, 1.1, C.power, C.dft_low) is not None
