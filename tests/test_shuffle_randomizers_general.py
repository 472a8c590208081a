"""GeneralRandomizer (Numba quadrature) and the BMG chi_up helper, against closed forms."""

import math

import numpy as np
import pytest
from numba import njit
from scipy.stats import norm

from sharpdp.shuffle import BlanketMixedGaussian, GeneralRandomizer, RandomizedResponse, gaussian_chi_chua
from sharpdp.shuffle.indices import _bmg_up_variance, bmg_chi_up

EPS0 = 1.0
T = math.tanh(EPS0 / 2)
SIG, GAM = 1.0, 0.9


@njit
def lifted_rr(y, x):
    # binary RR on sign(y), uniform magnitude: the same privacy as RandomizedResponse(2, EPS0)
    return 0.5 * (1 + T * x * (1.0 if y >= 0 else -1.0))


@njit
def half(y):
    return 0.5


@njit
def bmg1(y, x):
    c = 1 / (SIG * math.sqrt(2 * math.pi))
    return c * (GAM * math.exp(-0.5 * (y / SIG) ** 2) + (1 - GAM) * math.exp(-0.5 * ((y - x) / SIG) ** 2))


@njit
def phi0(y):
    return math.exp(-0.5 * (y / SIG) ** 2) / (SIG * math.sqrt(2 * math.pi))


@njit
def gauss(y, x):
    return math.exp(-0.5 * ((y - x) / SIG) ** 2) / (SIG * math.sqrt(2 * math.pi))


@pytest.fixture(scope="module")
def lifted():
    return GeneralRandomizer(lifted_rr, [-1.0, 1.0], (-1.0, 1.0), blanket=half, gamma=1 - T,
                             breakpoints=[0.0], cells=32)


@pytest.fixture(scope="module")
def bmg():
    return GeneralRandomizer(bmg1, [-1.0, 1.0], (-15.0, 15.0), blanket=phi0, gamma=GAM, cells=512)


def test_lifted_rr_matches_randomized_response(lifted):
    rr = RandomizedResponse(2, EPS0)
    for adj in ("zero_out", "replace"):
        assert (lifted.chi_lo_for(adj), lifted.chi_up_for(adj)) == pytest.approx(rr.shuffle_indices(adj), rel=1e-12)
        got = {tuple(np.round(v, 12)) for _, v, _ in lifted._pav_atoms(0.3, adj)}
        want = {tuple(np.round(v, 12)) for _, v, _ in rr._pav_atoms(0.3, adj)}
        assert got == want
    assert lifted.quad_error["mass"] < 1e-14


def test_bmg_indices_by_quadrature(bmg):
    assert bmg.chi_lo == pytest.approx(BlanketMixedGaussian(GAM, SIG, 1).chi_lo, rel=1e-10)
    assert bmg.chi_up == pytest.approx(bmg_chi_up(GAM, SIG), rel=1e-8)
    assert bmg.quad_error["mass"] < 1e-12 and bmg.quad_error["chi_lo[zero_out]"] < 1e-8


def test_bmg_law_brackets_closed_form_partial_expectations(bmg):
    # x vs ⊥: L = gamma + (1-gamma) exp(rZ - r^2/2) - e^eps; E[(L - c)_+] in Black-Scholes form
    eps, r = 0.2, 1 / SIG
    laws = {tuple(v[:3]): (v, p) for _, v, p in bmg._pav_atoms(eps, "zero_out")}
    lows = {tuple(v[:3]): (v, p) for _, v, p in bmg._pav_atoms(eps, "zero_out", spread=False)}
    # pick the x = +1 vs ⊥ order: its atoms' maximum is near the largest
    up_v, up_p = max(laws.values(), key=lambda vp: vp[0].max())
    lo_v, lo_p = max(lows.values(), key=lambda vp: vp[0].max())
    for c in (-0.2, 0.0, 0.5, 2.0, 5.0):
        K = (c + math.exp(eps) - GAM) / (1 - GAM)
        d1 = (-math.log(K) + r * r / 2) / r
        exact = (1 - GAM) * (norm.cdf(d1) - K * norm.cdf(d1 - r))
        up = np.dot(np.maximum(up_v - c, 0), up_p)
        lo = np.dot(np.maximum(lo_v - c, 0), lo_p)
        assert lo <= exact * (1 + 1e-9) + 1e-15 and exact <= up * (1 + 1e-9) + 1e-15
        assert up - lo <= 0.03 * exact + 1e-12  # cell width 30/512: the spread costs ~1 % in the far tail
    assert np.dot(up_v, up_p) == pytest.approx(1 - math.exp(eps), rel=1e-10)


def test_gaussian_chi_up_equals_chi_chua_on_grid():
    # gamma = 0 Gaussian with ⊥ = input 0: chi_up over x1, x in a grid of [-1, 1] is chi_chua
    grid = np.linspace(-1, 1, 9)
    g = GeneralRandomizer(gauss, grid, (-20.0, 20.0), blanket=phi0, gamma=0.0, cells=512)
    assert g.chi_lo == 0.0
    assert g.chi_up == pytest.approx(gaussian_chi_chua(SIG), rel=1e-9)
    assert bmg_chi_up(0.0, SIG) == pytest.approx(gaussian_chi_chua(SIG), rel=1e-9)
    with pytest.raises(ValueError, match="gamma"):
        g._pav_atoms(0.1)


@pytest.mark.parametrize("gamma,sigma", [(0.5, 0.7), (0.95, 4.6)])
def test_bmg_chi_up_worst_case_is_at_the_extremes(gamma, sigma):
    grid = np.linspace(-1, 1, 7)
    worst = max(_bmg_up_variance(gamma, sigma, a, b) for a in grid for b in grid)
    assert 1 / math.sqrt(worst) == pytest.approx(bmg_chi_up(gamma, sigma), rel=1e-9)
    assert bmg_chi_up(gamma, sigma) >= BlanketMixedGaussian(gamma, sigma, 1).chi_lo


def test_general_bad_input():
    with pytest.raises(ValueError, match="support"):
        GeneralRandomizer(gauss, [1.0], (1.0, -1.0))
    with pytest.raises(ValueError, match="gamma"):
        GeneralRandomizer(gauss, [1.0], (-5.0, 5.0), blanket=phi0, gamma=0.9)  # not a blanket
    with pytest.raises(ValueError, match="gamma"):
        GeneralRandomizer(gauss, [1.0], (-5.0, 5.0), gamma=0.5)
    with pytest.raises(ValueError, match="inputs"):
        GeneralRandomizer(gauss, [float("nan")], (-5.0, 5.0))
    with pytest.raises(TypeError, match="Numba"):
        GeneralRandomizer(lambda y, x: 1.0, [1.0], (-5.0, 5.0))
    with pytest.raises(ValueError, match="gamma"):
        bmg_chi_up(1.0, 1.0)


def test_bmg_chi_up_worst_case_in_two_dimensions():
    # d = 2 grid check: non-colinear (x1, x) configurations do not beat the antipodal one
    g, s = 0.5, 0.7
    h = s / 30
    y = np.arange(-8 * s - 4, 8 * s + 4, h)
    Y1, Y2 = np.meshgrid(y, y)

    def phi(m1, m2):
        return np.exp(-((Y1 - m1) ** 2 + (Y2 - m2) ** 2) / (2 * s * s)) / (2 * np.pi * s * s)

    def var(x1, x):
        return (1 - g) ** 2 * np.sum((phi(*x1) - phi(0, 0)) ** 2 / (g * phi(0, 0) + (1 - g) * phi(*x))) * h * h

    anti = var((1.0, 0.0), (-1.0, 0.0))
    assert 1 / math.sqrt(anti) == pytest.approx(bmg_chi_up(g, s), rel=1e-6)
    for th in np.linspace(0, math.pi, 7)[:-1]:
        for r in (0.5, 1.0):
            assert var((1.0, 0.0), (r * math.cos(th), r * math.sin(th))) <= anti * (1 + 1e-9)
    assert var((0.6, 0.0), (-1.0, 0.0)) <= anti
