"""Session 31 (eps31): get_epsilon's phase 1 from the single-big-jump model's root (docs/accountant.md §8.11,
``accountant.jump_guess``).

References independent of the rule: the search with the rule off (``first_point`` returning the Gaussian-limit guess:
the code before), fresh accountants' certified brackets at the answers, and a Monte Carlo estimate of the model's
E[(L - T)_+] with a confidence interval.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant import jump_guess as JG
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.round_cache import clear_caches

DELTA = 1e-6

# (the BMGs of calibrate_bmg at n = 1e6, eps = 1 and 8; GaussianRandomizer sigma0 = 0.5 at n = 1e8: one big jump)
JUMP_CELLS = [
    pytest.param(lambda: BlanketMixedGaussian(0.027018718327855053, 0.5082412099806768, 1), 10**6, id="bmg-1e6-eps1"),
    pytest.param(lambda: BlanketMixedGaussian(0.00917073516974465, 0.3490130918106981, 1), 10**6, id="bmg-1e6-eps8"),
    pytest.param(lambda: GaussianRandomizer(0.5, 1), 10**8, id="gauss0.5-1e8"),
]


def _laws_at(r):
    return lambda e: laws_for(r, e, "zero_out")


def _chi(r):
    return min(math.sqrt(float(g)) / law.std() for g, law in laws_for(r, 0.0, "zero_out"))


def _counted(monkeypatch, make, n, off=False):
    """A fresh get_epsilon(DELTA) with its upper-only passes counted; ``off``: the rule off (the search before)."""
    c = {"up": 0}
    clear_caches()
    orig = S.upper_value
    monkeypatch.setattr(S, "upper_value", lambda *a, **k: (c.__setitem__("up", c["up"] + 1), orig(*a, **k))[1])
    if off:
        monkeypatch.setattr(S, "first_point", lambda laws_at, n, delta, g0, hi: (g0, None))
    try:
        return float(ShuffleAccountant(make(), n, "zero_out").get_epsilon(DELTA)), c["up"]
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("make,n", JUMP_CELLS)
def test_jump_root_is_near_the_answer_and_the_search_stays_certified(monkeypatch, make, n):
    """In the jump regime the model's root lies within 1 % of get_epsilon's answer; the answer is certified (a fresh
    get_delta <= delta there; a fresh certified lower value above delta 0.5 % below it, D_up non-increasing), within
    2 xtol of the search's answer without the rule, with no more upper-only passes than that search."""
    r = make()
    g0 = S._guess_epsilon(ShuffleAccountant(r, n, "zero_out"), DELTA)
    out = JG.first_point(_laws_at(r), n, DELTA, g0, 700.0)
    assert out[1] is not None and out[1] < 0.0
    ans, ups = _counted(monkeypatch, make, n)
    ans0, ups0 = _counted(monkeypatch, make, n, off=True)
    assert abs(out[0] / ans - 1.0) < 1e-2
    assert abs(ans / ans0 - 1.0) <= 2e-3
    assert ups <= ups0
    clear_caches()
    assert float(ShuffleAccountant(make(), n, "zero_out").get_delta(ans)) <= DELTA
    clear_caches()
    lo, _ = ShuffleAccountant(make(), n, "zero_out").get_delta_bounds(ans * (1.0 - 5e-3))
    assert float(lo) > DELTA


def test_rule_off_outside_the_jump_regime():
    """No model root where the others' spread is wide (the BMG of calibrate_bmg at n = 1e9, eps = 0.01: J is 9 times
    below the certified value there), where the template dominates (n = 100), or for atom laws (k-RR)."""
    wide = BlanketMixedGaussian(0.020407558963614108, 0.46074320548916337, 1)
    assert JG.first_point(_laws_at(wide), 10**9, DELTA, 0.0069, 700.0) == (0.0069, None)
    assert JG.jump_guess(_laws_at(wide), 10**9, DELTA, _chi(wide), 0.0069, 700.0) is None
    small = BlanketMixedGaussian(0.0511, 0.567, 1)
    assert JG.first_point(_laws_at(small), 100, DELTA, 8.9, 700.0) == (8.9, None)
    krr = RandomizedResponse(10, 4.0)
    assert JG.first_point(_laws_at(krr), 10**6, DELTA, 0.5, 700.0) == (0.5, None)


def test_jump_value_against_monte_carlo():
    """jump_value's E[(L - T)_+], T = (n - 1) gamma (e^eps - 1), against an importance-sampled Monte Carlo estimate
    (5 standard errors) of the BMG's x vs ⊥ law L = gamma - e^eps + (1 - gamma) e^{rZ - r^2/2}, Z standard normal,
    r = 1 / sigma0 (docs/calibration.md §2): Z drawn from N(m, 1) at the threshold m, weighted by exp(-m Z + m^2/2)."""
    gamma, s0, n, eps = 0.027018718327855053, 0.5082412099806768, 10**6, 1.0
    j, q = JG.jump_value(laws_for(BlanketMixedGaussian(gamma, s0, 1), eps, "zero_out"), n)
    rr, T = 1.0 / s0, (n - 1) * gamma * (math.exp(eps) - 1.0)
    m = (math.log((T + math.exp(eps) - gamma) / (1.0 - gamma)) + 0.5 * rr * rr) / rr  # (where L crosses T)
    z = np.random.default_rng(31).standard_normal(2_000_000) + m
    L = gamma - math.exp(eps) + (1.0 - gamma) * np.exp(rr * z - 0.5 * rr * rr)
    v = np.maximum(L - T, 0.0) * np.exp(-m * z + 0.5 * m * m)
    mc, se = float(v.mean()), float(v.std() / math.sqrt(v.size))
    assert 0.0 < q < JG.SHIFT_SPREAD
    assert 0.0 < se < 1e-2 * mc
    assert abs(j - mc) <= 5.0 * se, (j, mc, se)


def test_template_value_against_quadrature():
    """template_value against (phi(a) - a Phibar(a)) by numerical integration: E[(Z - a)_+] = int_a^inf (z - a) phi(z) dz."""
    from scipy import integrate

    for a in (0.5, 3.0, 8.0):
        ref = integrate.quad(lambda z: (z - a) * math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi), a, np.inf,
                             epsabs=0, epsrel=1e-12)[0]
        chi, n = 2.0, 10**4
        assert JG.template_value(a / (chi * math.sqrt(n)), chi, n) == pytest.approx(ref / (chi * math.sqrt(n)),
                                                                                     rel=1e-9)


def test_look_reach_at_large_n(monkeypatch):
    """docs/accountant.md §8.11.2: at n >= 1e7 a look putting r1 more than 1 xtol from the root moves phase 2's first
    probe to the look's model root. The BMG of calibrate_bmg at n = 1e8, eps = 0.1: no more probes than with the reach
    2 (the rule before), an answer within 2 xtol of that search's, certified by a fresh get_delta."""
    from sharpdp.shuffle.accountant import looks

    make = lambda: BlanketMixedGaussian(0.020104468458158786, 0.45659017565152327, 1)  # noqa: E731
    n = 10**8

    def run(reach):
        c = {"probe": 0}
        clear_caches()
        orig = S.probe
        monkeypatch.setattr(S, "probe", lambda *a, **k: (c.__setitem__("probe", c["probe"] + 1), orig(*a, **k))[1])
        monkeypatch.setattr(S, "LOOK_REACH_LARGE", reach)
        try:
            return float(ShuffleAccountant(make(), n, "zero_out").get_epsilon(DELTA)), c["probe"]
        finally:
            monkeypatch.undo()

    ans, probes = run(looks.LOOK_REACH_LARGE)
    ans0, probes0 = run(2.0)
    assert probes <= probes0
    assert abs(ans / ans0 - 1.0) <= 2e-3
    clear_caches()
    assert float(ShuffleAccountant(make(), n, "zero_out").get_delta(ans)) <= DELTA
