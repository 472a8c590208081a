"""Review rev25a of get_epsilon's far end decided by the caps (docs/accountant.md §8.5, ``ends.end_cap``) and of
phase 1's stop at its own resolution (§8.6, ``search._REACH``).

References, independent of the rules under review: a fresh accountant's own certified values (its report at the far
end, its ``get_delta`` at an answer and 0.1 % below it), and a plain bisection on fresh ``get_delta`` values at a
tenth of the search's tolerance. Families beyond the builder's tests: LatticePrivUnit (the release sampler's charge
makes the whole far value, so ``end_cap`` equals it to the last bit), k-RR and PrivUnit under zero-out (no charge:
every law at 700 is L <= 0, ``end_cap`` = 0 and get_delta's floor 5e-324), a BMG at n = 1e7, and deltas on both sides
of ``end_cap`` and of the far value, down to below the smallest certified value (ValueError)."""

from __future__ import annotations

import math

import pytest
from test_eps24_search import _bisect, _fresh_delta

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, PrivUnit, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant.ends import end_cap
from sharpdp.shuffle.accountant.limits import EPS_MAX, TINY
from sharpdp.shuffle.randomizers.privunit_lattice import LatticePrivUnit
from sharpdp.shuffle.round_cache import clear_caches

XTOL = 1e-3

_LATTICE = lambda: LatticePrivUnit(0.75, 0.2, 10)  # noqa: E731
_GAUSS = lambda: GaussianRandomizer(0.5, 1)  # noqa: E731

DOMINANCE = [
    (_LATTICE, 10, True),  # (the far value is the charge alone: end_cap equals it bit for bit)
    (_LATTICE, 10**4, True),
    (_GAUSS, 10**4, True),  # (end_cap 2.68e-15, far value 3.15e-16)
    (_GAUSS, 10**7, True),
    (lambda: BlanketMixedGaussian(0.3, 0.6, 1), 10**7, True),
    (lambda: RandomizedResponse(10, 8.0), 10**4, True),  # (no charge: eps_tau = inf, end_cap = 0)
    (lambda: PrivUnit(0.75, 0.2, 10), 10**4, True),
    (_LATTICE, 10**4, False),
]


@pytest.mark.parametrize("make, n, charge", DOMINANCE)
def test_end_cap_dominates_the_far_value_other_families(make, n, charge):
    """end_cap >= a fresh accountant's report at the far end (eps_tau, or 700 without a charge), at 700 and beyond
    eps_tau; get_delta there (floored at 5e-324) <= max(end_cap, 5e-324)."""
    clear_caches()
    acc = ShuffleAccountant(make(), n, "zero_out", sampler_charge=charge)
    c = end_cap(acc)
    far = acc.eps_tau if math.isfinite(acc.eps_tau) else EPS_MAX
    for e in (far, 0.5 * (far + EPS_MAX), EPS_MAX):
        assert float(acc.report(e).upper) <= c
    assert float(acc.get_delta(EPS_MAX)) <= max(c, TINY)
    if make is _LATTICE and charge:  # (the bound is tight to the bit here: any lowering of end_cap fails)
        assert float(acc.report(far).upper) == c


def _eps_or_refused(make, n: int, delta: float) -> float | None:
    clear_caches()
    try:
        return float(ShuffleAccountant(make(), n, "zero_out").get_epsilon(delta, xtol=XTOL))
    except ValueError:
        return None


@pytest.mark.parametrize("make, n", [(_GAUSS, 10**4), (_LATTICE, 10**4)])
def test_deltas_around_the_far_end_certified(make, n):
    """Deltas around end_cap and the far value (the rule fires at delta >= end_cap, the report at eps_tau decides
    below): each answer is certified by a fresh accountant, within xtol of its crossing (0.1 % below is not
    certified), and the answers do not increase with delta by more than xtol (each search stops within xtol)."""
    clear_caches()
    acc = ShuffleAccountant(make(), n, "zero_out")
    c, far = end_cap(acc), float(acc.report(acc.eps_tau).upper)
    deltas = sorted({0.3 * far, math.nextafter(far, 0.0), far, math.nextafter(c, 0.0), c, 1.001 * c})
    answers = []
    for d in deltas:
        e = _eps_or_refused(make, n, d)
        assert e is not None and 0.0 < e < acc.eps_tau
        assert _fresh_delta(make, n, "zero_out", e) <= d
        assert _fresh_delta(make, n, "zero_out", e * (1 - XTOL)) > d
        answers.append(e)
    assert all(b <= a * (1 + XTOL) for a, b in zip(answers, answers[1:]))


def test_below_the_smallest_certified_value_refused():
    """GaussianRandomizer(0.5), n = 1e4: the smallest certified value over eps is ~1.85e-17 (at eps ~ 32.5, D_up
    falling, the charge rising): deltas below it are refused (ValueError), never answered."""
    for d in (1e-17, 1e-19):
        assert _eps_or_refused(_GAUSS, 10**4, d) is None


def test_not_met_at_700_refused_without_the_charge():
    """Without the charge the far end is 700, whose value for GaussianRandomizer(0.5), n = 1e3, is 4e-323 (= end_cap:
    the laws' closed-form E[L_+] at 700): delta = 1e-323 is refused (not met at 700), and 4e-323 is answered and
    certified by a fresh accountant (the search's end at 700 rests on end_cap <= delta alone)."""
    make = lambda: GaussianRandomizer(0.5, 1)  # noqa: E731
    clear_caches()
    with pytest.raises(ValueError, match="not met at epsilon = 700"):
        ShuffleAccountant(make(), 1000, "zero_out", sampler_charge=False).get_epsilon(1e-323)
    clear_caches()
    e = float(ShuffleAccountant(make(), 1000, "zero_out", sampler_charge=False).get_epsilon(4e-323))
    clear_caches()
    assert 0.0 < e <= EPS_MAX
    assert float(ShuffleAccountant(make(), 1000, "zero_out", sampler_charge=False).get_delta(e)) <= 4e-323


# ------------------------------------------------------------------ phase 1 ends at its resolution (§8.6)

# cells of the review's sweep (Gaussian sigma0 0.5-4.6, n 10-1e7, delta 1e-15..1e-2) where _REACH moved the answer
# (s25's answers 24.47822 and 6.968878: within xtol either way)
REACH_MOVED = [(0.51, 10**6, 1e-15), (0.6, 10**6, 1e-6)]


@pytest.mark.parametrize("sigma0, n, delta", REACH_MOVED)
def test_answers_moved_by_reach_against_a_fresh_bisection(sigma0, n, delta):
    """Where phase 1's early stop changed the answer: certified by a fresh accountant and within xtol of a fresh
    bisection's crossing at xtol / 10."""
    make = lambda: GaussianRandomizer(sigma0, 1)  # noqa: E731
    e = _eps_or_refused(make, n, delta)
    assert e is not None and 0.0 < e < 700.0
    assert _fresh_delta(make, n, "zero_out", e) <= delta
    lo, hi = _bisect(make, n, "zero_out", delta, e * (1 - 3 * XTOL), e * (1 + 3 * XTOL), XTOL / 10)
    assert lo <= e <= hi * (1 + XTOL)
