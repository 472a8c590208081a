"""Review rev36 (session 36) of eps36's calibrations (docs/calibration.md §14: measured at n = 1e8, 1e9, no rule
changed; get_epsilon's choices of docs/accountant.md §8.14 run inside them).

Claim attacked: a calibrated randomizer meets its target: a fresh accountant's certified upper value at the target eps
is <= delta, and a fresh rel_tol-1e-3 accountant's certified lower value there does not exceed delta.
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import ShuffleAccountant, clear_caches
from sharpdp.shuffle.calibration.bmg import calibrate_bmg
from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian


@pytest.mark.parametrize("kind, n, eps, delta", [("bmg", 10**6, 0.5, 1e-8), ("gauss", 10**6, 0.2, 1e-7),
                                                 ("gauss", 10**8, 0.05, 1e-9), ("bmg", 10**8, 0.01, 1e-9)], ids=str)
def test_calibrated_randomizer_meets_its_target(kind, n, eps, delta):
    clear_caches()
    r = calibrate_bmg(n, eps, delta, 1) if kind == "bmg" else calibrate_gaussian(n, eps, delta)
    clear_caches()
    assert ShuffleAccountant(r, n).get_delta(eps) <= delta, (kind, r)
    clear_caches()
    lo, up = ShuffleAccountant(r, n, rel_tol=1e-3).get_delta_bounds(eps)
    assert lo <= delta, (kind, r, lo, up)
