"""Lemma 70.1's certified cut of |z_k|^n and the one-part spectrum without the forward FFT (docs/accountant_tail.md §70),
against direct sums in mpmath and the FFT path (the switch off) as references."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from _main_floats34 import machine_same, switch
from sharpdp.shuffle.accountant import fft, freq_cut
from sharpdp.shuffle.accountant.fft import Part


def _pmf(N: int, atom: float, sd: float, seed: int, support: int) -> np.ndarray:
    """A rough positive body of ``support`` nodes from node 10 (discretised Gaussian times noise) and an atom at its
    centre (as the inactive users' atom inside the active users' law)."""
    rng = np.random.default_rng(seed)
    x = np.arange(support)
    body = np.exp(-0.5 * ((x - support / 3) / sd) ** 2) * rng.uniform(0.2, 1.0, support)
    y = np.zeros(N)
    y[10:10 + support] = (1 - atom) * body / body.sum()
    y[10 + support // 3] += atom
    return y


def _abs_z(y: np.ndarray, beta) -> mpmath.mpf:
    nz = np.flatnonzero(y)
    return abs(mpmath.fsum(mpmath.mpf(float(y[i])) * mpmath.expjpi(2 * beta * int(i) / (2 * mpmath.pi)) for i in nz))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), atom=st.floats(0.0, 0.95), lo=st.floats(0.01, 3.1), width=st.floats(1.0001, 2.0),
       W=st.integers(1, 40))
def test_pair_bound_below_the_exact_gap(seed, atom, lo, width, W):
    """m^2 - |z(beta)|^2 >= pair_bound on [b1, b2] at the ends and five inner points (mpmath, 30 digits)."""
    N = 128
    y = _pmf(N, atom, 4.0, seed, 30)
    b1, b2 = lo, min(math.pi, lo * width)
    x0 = int(np.argmax(y))
    B = freq_cut.pair_bound(y, x0, W, b1, b2)
    assert B >= 0
    with mpmath.workdps(30):
        m = mpmath.fsum(mpmath.mpf(float(v)) for v in y)
        for t in np.linspace(0.0, 1.0, 7):
            beta = mpmath.mpf(b1) + (mpmath.mpf(b2) - mpmath.mpf(b1)) * mpmath.mpf(float(t))
            assert m * m - _abs_z(y, beta) ** 2 >= B


def test_pair_bound_is_not_trivial():
    """Near the top frequency with y(x0 +- 1) = 0 the odd distances still give a positive bound."""
    N = 256
    y = np.zeros(N)
    y[100] = 0.9
    y[[97, 103, 105]] = [0.04, 0.03, 0.03]
    assert freq_cut.pair_bound(y, 100, 32, math.pi / 1.1, math.pi) > 0.05
    assert freq_cut.pair_bound(y, 100, 1, math.pi / 1.1, math.pi) == 0.0


@pytest.mark.parametrize("n", [10**5, 10**6, 10**8])
@pytest.mark.parametrize("seed", [1, 2])
def test_cut_certifies_every_frequency_above(n, seed):
    """Every k > K has n log|z_k| <= -760 (numpy's direct DFT within 1e-12, mpmath at the first ten above K), and the
    cut is not far above the truth (within 3 times the last frequency that is not negligible)."""
    N = 4096
    y = _pmf(N, 0.6, 6.0, seed, 300)
    K = freq_cut.cut(y, float(n))
    assert K is not None
    z = np.fft.rfft(y)
    az = np.abs(z)
    assert np.all(n * np.log(np.maximum(az[K + 1:] + 1e-12, 1e-300)) <= -760.0)
    with mpmath.workdps(30):
        for k in range(K + 1, min(K + 11, N // 2 + 1)):
            assert n * mpmath.log(_abs_z(y, 2 * mpmath.pi * k / N)) <= -760
    true_K = int(np.flatnonzero(n * np.log(np.maximum(az, 1e-300)) > -760.0).max())
    assert true_K <= K <= 3 * true_K + 3


def test_cut_refuses_a_pmf_on_a_sublattice():
    """A pmf on the even nodes has |z_{N/2}| = m: no cut can be certified."""
    N = 1024
    y = np.zeros(N)
    y[100:400:2] = 1.0 / 150
    assert freq_cut.cut(y, 1e6) is None


@pytest.mark.parametrize("n", [10**6, 10**8])
def test_pruned_spectrum_against_the_fft_path(n):
    """The pruned (Q, err_Q) and the FFT path's (the switch off) agree within the sum of their bounds (l2 over the
    Hermitian spectrum), and the pruned Q is 0 above the cut."""
    N = 8192
    y = _pmf(N, 0.7, 8.0, 3, 400)
    pr = freq_cut.pruned_spectrum(y, n, 2e7, 1.1, fft.kernels().power)
    assert pr is not None
    Qp, ep, _ = pr
    Qf, ef, _ = fft.spectrum([Part(y, n)], N, 1e-300, 2e7)
    K = freq_cut.cut(y, float(n))
    assert np.all(Qp[K + 1:] == 0)
    w = np.full(N // 2 + 1, 2.0)
    w[0] = w[-1] = 1.0
    dist = math.sqrt(float(np.sum(w * np.abs(Qp - Qf) ** 2)))
    assert dist <= ep + ef
    assert ep <= ef * (1 + 1e-9) + 1e-290  # (the same accurate DFT at the frequencies that matter)


def test_pruned_spectrum_refuses_without_the_work():
    N = 8192
    y = _pmf(N, 0.7, 8.0, 3, 400)
    assert freq_cut.pruned_spectrum(y, 10**6, 1000.0, 1.1, fft.kernels().power) is None


def test_switch_on_since_the_merge_and_listed():
    """On since session 46's merge (a full suite run with it on); SESSION45 holds the value of main's floats before."""
    from _main_floats34 import SESSION45

    from sharpdp.shuffle.accountant import limits

    assert limits.BODY46_PRUNED_FORWARD is True and SESSION45["BODY46_PRUNED_FORWARD"] is False


@pytest.mark.parametrize("cell", [(0.0786, 0.597, 10**9, 1e-3)])
def test_heavy_cell_same_bracket(monkeypatch, cell):
    """BMG (0.0786, 0.597), n = 1e9, eps 0.001 (docs/accountant_tail.md §70.4): the switch on gives the switch off's
    bracket (measured: the same bits)."""
    from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant

    g, s0, n, eps = cell
    off = ShuffleAccountant(BlanketMixedGaussian(g, s0, 1), n, "zero_out").get_delta_bounds(eps)
    switch(monkeypatch, "BODY46_PRUNED_FORWARD", True)
    on = ShuffleAccountant(BlanketMixedGaussian(g, s0, 1), n, "zero_out").get_delta_bounds(eps)
    assert machine_same(on[0], off[0]) and machine_same(on[1], off[1])
