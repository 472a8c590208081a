"""The far tail in closed form given the number of active users (docs/accountant_tail.md §18): its brackets against
the FFT treatment's, conditional Monte Carlo references, an exact n = 2 quadrature, and its closed-form pieces
against quadrature; the sweep's values against fresh ones."""

from __future__ import annotations

from _main_floats34 import switch

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.special import ndtr

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import concentrated, far_tail
from sharpdp.shuffle.laws.bmg import bmg_laws
from sharpdp.shuffle.laws.lognormal import LognormalLaw
from sharpdp.shuffle.profile import privacy_profile

HEAVY = (0.04089409561900239, 0.5960134902126553), 10**5  # bench/bench_composition.py "heavy"


def _law(eps, g=HEAVY[0][0], s=HEAVY[0][1]):
    gamma, law = bmg_laws(g, s, eps, "zero_out")[0]  # the x vs bot order
    return float(gamma), law


@pytest.mark.parametrize("eps", [3.0, 5.0])
def test_closed_form_bracket_meets_the_fft_treatments(eps, monkeypatch):
    gamma, law = _law(eps)
    cf = concentrated.certify(law, gamma, HEAVY[1], 1e-2, far_tail.choose_T0)
    assert cf is not None and 0 < cf.lower <= cf.upper <= cf.lower * (1 + 0.25e-2)
    monkeypatch.setattr(concentrated, "certify", lambda *a, **k: None)  # the FFT treatment alone
    fft = far_tail.certify_bigjump(law, gamma, HEAVY[1], 1e-2)
    assert fft.N > 0 and fft.lower <= cf.upper and cf.lower <= fft.upper  # two certified brackets of one value
    assert cf.upper <= fft.upper * (1 + 1e-3)  # not looser than the FFT value by more than 0.1 rel_tol


# (mean, standard error) of D_up by conditional Monte Carlo (tests/test_review_heavy.py DELTA_REF)
MC = {3.5: (5.2216092870919036e-11, 6.9710544258956186e-15), 5.0: (9.735377100021299e-14, 4.629254360788216e-17),
      7.0: (7.310660152106345e-18, 4.043222632304564e-21), 8.5: (2.408519611965407e-21, 4.632359823812373e-25)}


@pytest.mark.parametrize("eps", sorted(MC))
def test_closed_form_brackets_the_monte_carlo_reference(eps):
    gamma, law = _law(eps)
    cf = concentrated.certify(law, gamma, HEAVY[1], 1e-2, far_tail.choose_T0)
    mu, se = MC[eps]
    assert cf is not None and cf.lower <= mu + 4 * se and cf.upper >= mu - 4 * se
    assert cf.upper <= (mu + 4 * se) * 1.003  # and tight: within 0.3 % of the reference


def _tau(t, a, G, r):
    """E[(a + G e^{rV - r^2/2} - t)_+] (Black-Scholes form), written independently of the package."""
    k = t - a
    if k <= 0:
        return a + G - t
    v = (math.log(k / G) + 0.5 * r * r) / r
    return G * ndtr(r - v) - k * ndtr(-v)


@pytest.mark.parametrize("g,s,eps", [(0.3, 0.6, 8.0), (0.3, 0.6, 6.0), (0.1, 0.8, 5.0)])
def test_n2_jump_bracket_contains_the_exact_value(g, s, eps):
    # n = 2: E phi(A') = (1 - g) tau(T0) + g E tau(max(T0, -min(L, T0))), by quadrature over V
    gamma, law = _law(eps, g, s)
    a, G, r = law.one_term()
    T0 = far_tail.choose_T0(law, gamma, 2, 1e-4 * _tau(-gamma * (a + G), a, G, r))
    lo, up = concentrated.jump_bracket(law, gamma, 2, T0)

    def f(v):
        return math.exp(-0.5 * v * v) / math.sqrt(2 * math.pi) * _tau(max(T0, -min(a + G * math.exp(r * v - 0.5 * r * r),
                                                                                  T0)), a, G, r)

    vT = (math.log((T0 - a) / G) + 0.5 * r * r) / r
    q = sum(integrate.quad(f, x, y, epsrel=1e-12, limit=400)[0] for x, y in ((-14, vT), (vT, 14)))
    exact = (1 - gamma) * _tau(T0, a, G, r) + gamma * q
    assert lo <= exact * (1 + 1e-9) and up >= exact * (1 - 1e-9)
    assert up <= exact * (1 + 1e-3) and lo >= exact * (1 - 1e-3)  # and tight


def test_density_and_second_moment_bounds_against_quadrature():
    law = LognormalLaw(-5.0, 0.9, 1.7)
    a, G, r = law.one_term()

    def dens(s):
        v = (math.log((s - a) / G) + 0.5 * r * r) / r
        return math.exp(-0.5 * v * v) / math.sqrt(2 * math.pi) / (r * (s - a))

    s = np.array([1.0, 30.0, 400.0, 5e4])
    up = law.density_up(s)
    for x, u in zip(s, up):
        grid = x * np.linspace(1.0, 3.0, 201)
        assert u >= max(dens(g) for g in grid) and u <= dens(x) * (1 + 1e-9)  # the sup over [x, inf), tightly
    assert np.all(np.isinf(law.density_up([a - 1.0, a + 1e-9])))  # below the mode's side: no bound
    m2 = law.second_moment_above_up(s)
    for x, u in zip(s, m2):
        v0 = (math.log((x - a) / G) + 0.5 * r * r) / r
        ref = integrate.quad(lambda v: math.exp(-0.5 * v * v) / math.sqrt(2 * math.pi)
                             * (G * math.exp(r * v - 0.5 * r * r)) ** 2, v0, v0 + 40, epsrel=1e-12, limit=200)[0]
        assert ref <= u <= ref * (1 + 1e-8)
    assert LognormalLaw(-5.0, 0.9, 1.7, z_lo=-1.0).one_term() is None  # a truncated law is not eligible


def test_profile_sweep_values_equal_fresh_values(monkeypatch):
    # (**) session 43, lead: docs/accountant_tail.md §63.5: inside a sweep the warm clamp gives its own certified
    # value, equal to a fresh one with it off (before §63.5 the closed form's memo handed the sweep's to the fresh call)
    switch(monkeypatch, "FT42_T0_WARM", False)
    clear_caches()
    acc = ShuffleAccountant(BlanketMixedGaussian(*HEAVY[0], 1), HEAVY[1])
    eps = np.array([3.0, 4.5, 6.0, 8.0])
    sweep = privacy_profile(acc, eps)
    for e, v in zip(eps, sweep):
        fresh = ShuffleAccountant(BlanketMixedGaussian(*HEAVY[0], 1), HEAVY[1]).get_delta_bounds(float(e))
        assert fresh[0] > 0 and fresh[1] == v  # the same certified value (the closed form is history-free)
        assert fresh[1] <= fresh[0] * (1 + 0.25e-2)
    clear_caches()
