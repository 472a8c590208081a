"""The rounding allowances of the accountant (docs/accountant.md §3.2.1 and §3.5.1): the Chernoff
exponents' allowance covers the exact exponent, and the perturbation charge covers a shift of
every user's value (brute force)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from _golden import golden_min
from sharpdp import _core
from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant
from sharpdp.shuffle.accountant.lattice import perturbation_charge
from sharpdp.shuffle.accountant.results import Grid

C = _core.accountant


def _exact_min_exponent(g, k0, h, n, b, dir_):
    """min over lam > 0 of -dir lam b + n log sum_k g_k e^{dir lam (k0 + k) h}, in 30-digit arithmetic
    (convex in lam: golden section on log lam). The lattice values (k0 + k) h make e^{dir lam (k0 + k) h} the
    powers z^(k0 + k) of z = e^{dir lam h}: one exponential and K products per evaluation (relative rounding
    ~K 1e-30)."""
    mpmath.mp.dps = 30
    gs = [mpmath.mpf(float(x)) for x in g]

    def f(loglam):
        lam = mpmath.e ** loglam
        z = mpmath.e ** (dir_ * lam * mpmath.mpf(h))
        p, s = z ** k0, []
        for gk in gs:
            if gk > 0:
                s.append(gk * p)
            p *= z
        return -dir_ * lam * mpmath.mpf(b) + n * mpmath.log(mpmath.fsum(s))

    return golden_min(f, -40, 20, 90)


@pytest.mark.parametrize("seed,K,n", [(0, 40, 1e9), (2, 300, 3e8), (3, 7, 50.0)])
@pytest.mark.parametrize("dir_", [1, -1])
def test_chernoff_edge_allowance_covers_the_exact_exponent(seed, K, n, dir_):
    rng = np.random.default_rng(seed)
    g = rng.random(K) ** 3
    g[rng.random(K) < 0.2] = 0.0
    g[K // 2] += 0.5
    g /= g.sum()
    k0, h = -K // 3, 0.37
    mean = float(np.dot(g, (k0 + np.arange(K)) * h))
    sd = math.sqrt(float(np.dot(g, ((k0 + np.arange(K)) * h - mean) ** 2)))
    log_tgt = -30.0
    b, a = C.chernoff_edge_bound(g, k0, h, n, log_tgt, dir_, 1.0 / (math.sqrt(n) * sd + h))
    assert b == C.chernoff_edge(g, k0, h, n, log_tgt, dir_, 1.0 / (math.sqrt(n) * sd + h))
    assert 0.0 < a < 1e-3  # (the historical margin 0.01 is never the binding one here)
    # the edge is certified: P(S beyond b) <= exp(log_tgt + a)
    assert float(_exact_min_exponent(g, k0, h, n, b, dir_)) <= log_tgt + a


@pytest.mark.parametrize("shift", [1e-3, 0.05, -0.05])
def test_perturbation_charge_covers_a_shift_of_every_value(shift):
    """E[(S + n c)_+] - E[S_+] (exact, by convolution) <= perturbation_charge for c = |shift|."""
    h, k0, n, gamma = 0.25, -8, 12, 0.6
    psi = np.exp(-0.5 * ((k0 + np.arange(13)) * h + 0.6) ** 2)
    psi /= psi.sum()
    g = gamma * psi
    g[-k0] += 1.0 - gamma  # the mixture's atom at 0
    q = np.array([1.0])
    for _ in range(n):
        q = np.convolve(q, g)
    s = (n * k0 + np.arange(q.size)) * h
    diff = abs(float(np.dot(q, np.maximum(s + n * shift, 0.0)) - np.dot(q, np.maximum(s, 0.0))))
    theta = C.solve_theta(g, k0, h, 0.1)
    _, lam, _, _, tau, mass = C.tilt(g, np.zeros_like(g), k0, h, theta)
    grid = Grid(h, 0, 1.0, 1.0, theta=theta, n_log_mgf=n * lam, log_mgf_err=n * math.log1p(mass - 1.0 + tau))
    c = abs(shift)
    charge = perturbation_charge(n * c, grid, n * gamma, n * c)
    assert diff / (n * gamma) <= charge
    assert charge < c / gamma  # the Chernoff factor helps


def test_lattice_position_term_is_reported_and_tiny():
    rep = ShuffleAccountant(BlanketMixedGaussian(0.9, 3.0, 1), 300).report(0.01)
    assert 0.0 < rep.terms["lattice_position"] < 1e-9 * rep.upper
