"""The closed form's fifth stage (docs/accountant_tail.md §38): the tail bound of P(X_m > -T0) with at most one term
above a level (§38.1) against a lattice lower value of the probability (an FFT convolution of the law of min(L, T0)
rounded down, written independently of the package), the saddle-point binomial probabilities (§38.2) against mpmath,
and the brackets the closed form now returns at n = 1e9 against the FFT treatment's brackets of main (7b66b43)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from _main_floats34 import switch
from scipy.special import ndtr

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import concentrated, far_tail, mgf
from sharpdp.shuffle.accountant.closed_forms import log_binom, log_binom_sharp
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.laws.bmg import bmg_laws


def _tail_lattice_lo(law, T0, m, x, h):
    """A lower value of P(X_m > x), X_m the sum of m copies of min(L, T0): each cell of width h of the law of
    min(L, T0) at its lower end (so the lattice sum is <= X_m), the m-fold law by an FFT."""
    a, G, r = law.one_term()
    edges = a + h * np.arange(0, int(math.ceil((T0 - a) / h)) + 1)
    edges[-1] = T0
    F = np.where(edges > a, ndtr((np.log(np.maximum(edges - a, 1e-300) / G) + 0.5 * r * r) / r), 0.0)
    base = np.append(np.diff(F), 1.0 - F[-1])  # (the last: the atom at T0)
    size = 1 << int(math.ceil(math.log2(m * base.size)))
    pm = np.fft.irfft(np.fft.rfft(base, size) ** m, size)[: m * (base.size - 1) + 1]
    xs = m * a + h * np.arange(pm.size)
    return float(np.sum(pm[xs > x]))


@pytest.mark.parametrize("g0,s0,eps,m,frac", [(0.3, 0.7, 1.5, 150, 0.8), (0.3, 0.7, 1.5, 400, 1.0),
                                              (0.3, 0.7, 2.5, 150, 0.6), (0.1, 0.5, 1.0, 400, 0.8)])
def test_one_jump_tail_above_a_lattice_lower_value(g0, s0, eps, m, frac):
    _, law = bmg_laws(g0, s0, eps, "zero_out")[0]
    T0 = -law.mean() * m / (1.0 + 1.0 / frac)  # (-T0 - m E V between T0 and 1.7 T0: two terms near T0 are needed)
    mu_lo, mu_hi, _, _ = concentrated._moments(law, T0)
    mm = np.array([float(m)])
    mh = concentrated._up(mm * mu_hi)
    new = float(mgf.one_jump_tail_up(law, T0, mm, lambda lev: concentrated._mean_v(law, lev)[1])[0])
    old = float(mgf.mgf_tail_up(law, T0, mm, mh, mu_hi, 1024)[0])
    ref = _tail_lattice_lo(law, T0, m, -T0, T0 / 4000.0)
    assert ref > 0 and new >= ref  # valid
    assert new <= 0.6 * old and new <= 60 * ref  # tighter than §22 (b)'s, within a small factor of the truth


def test_one_jump_tail_at_the_n_1e9_cell():
    # GaussianRandomizer(0.5, 1), n = 1e9, eps = 1 at the closed form's clamp: §22 (b) gives ~5e-4 (the term
    # tau(T0) P was 1e-3 of the value, docs/accountant_tail.md §35.4); at most one term above l gives ~6.4e-5
    _, law = laws_for(GaussianRandomizer(0.5, 1), 1.0, "zero_out")[0]
    T0 = 35160576.94389398
    mu_lo, mu_hi, _, _ = concentrated._moments(law, T0)
    m = np.array([45500264.0])
    mh = concentrated._up(m * mu_hi)
    new = float(mgf.one_jump_tail_up(law, T0, m, lambda lev: concentrated._mean_v(law, lev)[1])[0])
    old = float(mgf.mgf_tail_up(law, T0, m, mh, mu_hi, 1024)[0])
    assert 4e-4 < old < 6e-4 and 3e-5 < new < 1e-4


@pytest.mark.parametrize("N,gamma", [(10**9 - 1, 0.04550026389635839), (10**8 - 1, 0.3), (10**6 - 1, 0.0123),
                                     (999, 0.5), (10**9 - 1, 0.9)])
def test_log_binom_sharp_against_mpmath(N, gamma):
    mp.mp.dps = 40
    mean, sd = N * gamma, math.sqrt(N * gamma * (1 - gamma))
    ms = np.unique(np.round(np.clip([mean - 12 * sd, mean - 3 * sd, mean, mean + 0.5, mean + 7 * sd, mean + 12 * sd,
                                     5, 150], 0, N)))
    val, err = log_binom_sharp(N, ms, gamma)
    _, err_old = log_binom(N, ms, gamma)
    g = mp.mpf(gamma)
    for k, v, e, e0 in zip(ms, val, err, err_old):
        exact = (mp.loggamma(N + 1) - mp.loggamma(k + 1) - mp.loggamma(N - k + 1) + k * mp.log(g)
                 + (N - k) * mp.log(1 - g))
        assert abs(exact - v) <= e  # valid
        if min(k, N - k) >= 1e4:
            assert e <= 1e-10 and e <= 1e-3 * e0 or N < 1e4  # and far sharper than log_binom's at large N


@pytest.mark.parametrize("sigma0,eps,fft", [
    # the FFT treatment's brackets of main (7b66b43; /tmp/map30 of session 30): an independent pipeline
    (0.5, 1.0, (2.3703603454943247e-4, 2.3735372531680192e-4)),
    (1.0, 0.01, (1.7770211987162097e-13, 1.7791475195748726e-13)),
])
def test_new_closed_form_brackets_at_n_1e9(sigma0, eps, fft, monkeypatch):
    switch(monkeypatch, "CLOSED_WHOLE_ACCEPT", 0.0)  # (**) session 37, hat37: pins the closed form's stages (§51.4 off)
    gamma, law = laws_for(GaussianRandomizer(sigma0, 1), eps, "zero_out")[0]
    concentrated._MEMO.clear()
    assert concentrated.certify(law, float(gamma), 10**9, 1e-2, far_tail.choose_T0) is not None  # (was None)
    lo, up = ShuffleAccountant(GaussianRandomizer(sigma0, 1), 10**9).get_delta_bounds(eps)
    assert lo <= fft[1] and fft[0] <= up  # two certified brackets of one value meet
    assert (up - lo) / lo <= 1e-3  # within 0.1 rel_tol


def test_accepted_jump_bracket_holds_the_hat_reference_at_its_clamp():
    # GaussianRandomizer(0.5, 1), n = 1e9, eps = 1, accepted by §38.3's stage at T0 = 35160576.9: E phi(A') by the
    # hat lattice law and an FFT power (tests/test_review_rev24c.py's reference, an upper estimate converging as h^2:
    # h = 512 / 256: 2.3720731e-4 / 2.3720625e-4) lies in the closed form's bracket of it
    import sys
    import pathlib
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from test_review_rev24c import _gr, _hat_reference
    gamma, run, prm = _gr(0.5, 1.0)
    n = 10**9
    concentrated._MEMO.clear()
    cb = concentrated.certify(run, gamma, n, 1e-2, far_tail.choose_T0)
    assert cb is not None and cb.T0 == 35160576.94389398
    T0 = cb.T0
    _, mu_hi, sig2, _ = concentrated._moments(run, T0)  # (the FFT window's centre and width: any cover will do)
    mu, sd = (n - 1) * gamma * mu_hi, math.sqrt((n - 1) * gamma * (sig2 + mu_hi * mu_hi))
    ref = _hat_reference(prm, gamma, n, T0, 512.0, mu, sd)
    assert ref == pytest.approx(2.3720731e-4, rel=1e-7)
    assert cb.jump_lo <= ref * (1 - 1e-4) and cb.jump_up >= ref * (1 + 1e-4)  # (the reference within 5e-6 of its limit)
