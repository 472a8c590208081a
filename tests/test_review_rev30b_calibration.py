"""Review rev30b of the calibrations' session-30 rules (docs/calibration.md §8, cal30): on loose search evaluations
(n >= 1e7, eps <= 0.01) stage 1 ends on a close loose bracket (``search.STAGE1_BRACKET``), and stage 3's first
certifying evaluation is made at a loose point already certified <= delta where the model gains less than
``gain_rtol`` (``Search._loose_good``).

Claims attacked, in the cells the rules change (``calibrate_gaussian(1e8, 0.001, 1e-6)``: rule 1;
``calibrate_gaussian(1e9, 0.01, 1e-6)``: rule 2): the returned parameters' fresh certified delta at eps (new
accountant, caches cleared; default rel_tol and rel_tol 1e-3) is <= delta; an independent estimate of the blanket
divergence at the answer (the second-order Edgeworth estimate of tests/_review28_gauss_reference.py, accurate at eps =
0.001, n = 1e8) is <= delta; and the answer is within docs/calibration.md §3.1's tolerance of the smallest certified
sigma0: sigma0^2 smaller by 1e-3 (relative) is refuted by a certified lower value above delta.
"""

from __future__ import annotations

import math

import pytest
from _review28_gauss_reference import d_up_edgeworth

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.calibration import calibrate_gaussian_report


def _fresh(s: float, n: int, eps: float, rel_tol: float = 1e-2) -> tuple[float, float]:
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(s, 1), n, "zero_out", rel_tol=rel_tol).get_delta_bounds(eps)
    return float(lo), float(up)


@pytest.mark.parametrize("n, eps, delta", [(10**8, 0.001, 1e-6), (10**9, 0.01, 1e-6)])
def test_gaussian_calibration_certified_and_within_the_tolerance(n, eps, delta):
    clear_caches()
    rep = calibrate_gaussian_report(n, eps, delta, progress=False)
    s = float(rep.randomizer.sigma0)
    assert rep.delta_bounds[1] <= delta
    lo, up = _fresh(s, n, eps)
    assert (lo, up) == tuple(float(v) for v in rep.delta_bounds) and up <= delta
    lo3, up3 = _fresh(s, n, eps, 1e-3)
    assert up3 <= delta and max(lo, lo3) <= min(up, up3)
    assert _fresh(s * math.sqrt(1 - 1e-3), n, eps, 1e-3)[0] > delta  # (no certified sigma0^2 1e-3 smaller)
    if eps <= 0.001:
        e2, e1, _ = d_up_edgeworth(s, eps, n)
        tol = 3.0 * abs(e2 - e1) + 2e-4 * e2
        assert e2 - tol <= delta and lo3 - tol <= e2 <= up3 + tol
