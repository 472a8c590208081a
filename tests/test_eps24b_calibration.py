"""The calibration's refusal below the release sampler's charge floor, and its message where a target above the
floor is not met (docs/calibration.md §5)."""

from __future__ import annotations

import math

import pytest
from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, calibrate_bmg_report, calibrate_gaussian_report
from sharpdp.shuffle.calibration.search import delta_floor

FLIGHTS_N, FLIGHTS_D = 327346, 4  # `sharpdp mean`'s built-in table: rows without a missing value, 4 columns


def _charge(n: int, eps: float, tv: float) -> float:
    """docs/sampling.md §4's charge g(n tv) = (1 + e^min(eps, eps_tau)) n tv, eps_tau = min(60, ln(1/(n tv))/2)."""
    tau = n * tv
    return (1.0 + math.exp(min(eps, 60.0, 0.5 * math.log(1.0 / tau)))) * tau


@pytest.mark.parametrize("n,eps,dim", [(FLIGHTS_N, 30.0, FLIGHTS_D), (FLIGHTS_N, 2.0, FLIGHTS_D), (1000, 8.0, 1),
                                       (10**6, 1.0, 3), (2, 45.0, 1)])
def test_floor_is_the_smallest_charge_over_sigma0(n, eps, dim):
    """Brute force over sigma0 (every default grid exponent, both ends of each band, powers of two and their
    neighbours): the smallest charge of the randomizer's own sampler_tv is >= the floor and within 1e-6 of it."""
    sigmas = [2.0**j * f for j in range(-4, 12) for f in (1.0, 1.0 + 1e-9, 1.3, 1.999999)] + [0.1, 0.37, 1e4]
    smallest = min(_charge(n, eps, BlanketMixedGaussian(0.5, s, dim).sampler_tv) for s in sigmas)
    floor = delta_floor(n, eps, dim)
    assert floor <= smallest <= floor * (1.0 + 1e-6)


def test_floor_below_a_certified_upper_value_at_its_minimum():
    """The accountant's certified upper value at sigma0 = 0.5 (s = 256 on the default grid, d = 4) is above the
    floor and within 1e-6 of it at eps = 30 (the charge dominates there): the floor is attained, not loose."""
    up = float(ShuffleAccountant(BlanketMixedGaussian(0.0114, 0.5, FLIGHTS_D), FLIGHTS_N).get_delta_bounds(30.0)[1])
    floor = delta_floor(FLIGHTS_N, 30.0, FLIGHTS_D)
    assert floor <= up <= floor * (1.0 + 1e-6)


def test_flights_eps30_delta_1e16_refused_up_front_naming_delta_and_floor():
    """`sharpdp mean --epsilon 30 --delta 1e-16` (README's data): below the charge floor 1.39e-16, a ValueError
    before any evaluation (was: 40 evaluations, then "re-check failed")."""
    with pytest.raises(ValueError, match=r"delta: 1e-16 is at or below 1\.39e-16"):
        calibrate_bmg_report(FLIGHTS_N, 30.0, 1e-16, FLIGHTS_D, progress=False)
    with pytest.raises(ValueError, match=r"delta: 1e-31 is at or below"):  # the Gaussian randomizer: dim 1
        calibrate_gaussian_report(1000, 8.0, 1e-31)


@pytest.mark.parametrize("args", [(FLIGHTS_N, 30.0, 2e-16, FLIGHTS_D), (100, 4.0, 1e-30, 1)])
def test_reachable_targets_near_or_below_the_value_floor_are_found(args):
    """Above the floor the search still runs and certifies: delta = 2e-16 (1.44 x the floor) on the flights table,
    and 1e-30 (below the accountant's VALUE_FLOOR 1e-24) at n = 100, eps = 4; the answer re-checked on a fresh
    accountant."""
    n, eps, delta, dim = args
    rep = calibrate_bmg_report(n, eps, delta, dim, progress=False)
    up = float(ShuffleAccountant(rep.randomizer, n).get_delta_bounds(eps)[1])
    assert up <= delta and rep.delta_bounds[1] <= delta


def test_flights_eps2_delta_1e27_names_the_smallest_upper_value_and_the_value_floor():
    """`--epsilon 2 --delta 1e-27`: above the charge floor (1.09e-28) but below VALUE_FLOOR, where the accountant's
    caps stay at 1.2e-27 over the search's region: a RuntimeError naming that value and the cause."""
    assert delta_floor(FLIGHTS_N, 2.0, FLIGHTS_D) < 1e-27
    with pytest.raises(RuntimeError) as info:
        calibrate_bmg_report(FLIGHTS_N, 2.0, 1e-27, FLIGHTS_D, progress=False)
    msg = str(info.value)
    assert msg.startswith("calibration: re-check failed, no certified delta <= 1e-27 found")
    smallest = float(msg.split("evaluations was ")[1].split(" ")[0])
    assert 1e-27 < smallest < 1.3e-27 and "below 1e-24 the accountant certifies loose caps" in msg
