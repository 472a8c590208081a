"""The calibration's start (docs/calibration.md §3, step 0): the first evaluation picks the base and stage 1 steps on
it through that evaluation, instead of restarting at the picked base's own optimum. The certified value at the
returned parameters (a fresh accountant at rel_tol 1e-2) meets the target, and the cells where the restart cost an
evaluation now make one fewer."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.calibration.bmg import calibrate_bmg_report
from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian_report
from sharpdp.shuffle.round_cache import clear_caches

DELTA = 1e-6


def _certified(randomizer, n: int, eps: float) -> float:
    clear_caches()
    return float(ShuffleAccountant(randomizer, n, "zero_out", rel_tol=1e-2).get_delta_bounds(eps)[1])


# (function, n, eps, evaluations at most: one fewer than the restart made, 7 and 10)
CELLS = [
    ("gauss", 10**5, 0.01, 6),
    ("bmg", 10**4, 0.1, 8),
]


@pytest.mark.parametrize("fn, n, eps, evals", CELLS)
def test_start_on_the_picked_base(fn, n, eps, evals):
    clear_caches()
    rep = calibrate_gaussian_report(n, eps, DELTA) if fn == "gauss" else calibrate_bmg_report(n, eps, DELTA, 1)
    assert rep.evaluations <= evals
    up = _certified(rep.randomizer, n, eps)
    assert up <= DELTA
    assert rep.delta_bounds[1] <= DELTA and abs(rep.delta_bounds[1] - up) <= 1e-12 * DELTA
