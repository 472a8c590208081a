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

from _cal34_switches import session33_calibration  # noqa: F401  (the fixture)

# (**) session 34, cal34: un-nested, this file pins the calibration rules of docs/calibration.md §6-§8 on purpose:
# it runs with §12's switches off (certifying evaluations at rel_tol 1e-2, stage 2's probes made)
pytestmark = pytest.mark.usefixtures("session33_calibration")


def _fresh(s: float, n: int, eps: float, rel_tol: float = 1e-2) -> tuple[float, float]:
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(s, 1), n, "zero_out", rel_tol=rel_tol).get_delta_bounds(eps)
    return float(lo), float(up)


def _calibrated(n: int, eps: float, delta: float) -> float:
    clear_caches()
    rep = calibrate_gaussian_report(n, eps, delta, progress=False)
    s = float(rep.randomizer.sigma0)
    assert rep.delta_bounds[1] <= delta
    assert _fresh(s, n, eps) == tuple(float(v) for v in rep.delta_bounds)  # (fresh, caches cleared: the same bracket)
    return s


def test_rule_1_cell_certified_tight_and_against_edgeworth():
    """calibrate_gaussian(1e8, 0.001, 1e-6) (rule 1: sigma0 1.1641353 where main gave 1.163924): the fresh bracket at
    rel_tol 1e-3 is <= delta (measured [9.89958e-7, 9.90537e-7]); sigma0^2 1e-3 smaller is refuted (lower value
    1.00393e-6 > delta); the Edgeworth estimate (9.89818e-7, its first order 9.98996e-7) is <= delta and meets the
    bracket within its tolerance."""
    n, eps, delta = 10**8, 0.001, 1e-6
    s = _calibrated(n, eps, delta)
    lo, up = _fresh(s, n, eps)
    lo3, up3 = _fresh(s, n, eps, 1e-3)
    assert up <= delta and up3 <= delta and max(lo, lo3) <= min(up, up3)
    assert _fresh(s * math.sqrt(1 - 1e-3), n, eps, 1e-3)[0] > delta
    e2, e1, _ = d_up_edgeworth(s, eps, n)
    tol = 3.0 * abs(e2 - e1) + 2e-4 * e2
    assert e2 - tol <= delta and lo3 - tol <= e2 <= up3 + tol


def test_rule_2_cell_certified():
    """calibrate_gaussian(1e9, 0.01, 1e-6) (rule 2: one certifying evaluation instead of two; sigma0 0.7338154753785715,
    main's): the fresh default bracket (rel_tol 1e-2) is the report's and <= delta; the fresh rel_tol-1e-3 bracket's
    lower value is <= delta and the two certified brackets intersect. (Its upper value is not: next test.)"""
    n, eps, delta = 10**9, 0.01, 1e-6
    s = _calibrated(n, eps, delta)
    lo, up = _fresh(s, n, eps)
    lo3, up3 = _fresh(s, n, eps, 1e-3)
    assert up <= delta and lo3 <= delta and max(lo, lo3) <= min(up, up3)


def test_finer_tolerance_bracket_nested_at_the_rule_2_answer():
    """At rel_tol 1e-3 the far-tail treatment's larger clamp forced a coarser grid under the size caps (the bracket
    [8.732e-7, 1.00543e-6] before session 30's n9rel30); the default request's run is intersected with it
    (docs/accountant_tail.md §36): nested in the default's bracket, upper value <= delta."""
    s, n, eps, delta = 0.7338154753785715, 10**9, 0.01, 1e-6
    lo, up = _fresh(s, n, eps)
    lo3, up3 = _fresh(s, n, eps, 1e-3)
    assert up3 <= delta and lo <= lo3 <= up3 <= up
