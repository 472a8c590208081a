"""Session 35 (cal35): on the calibration's loose search the model points ask rel_tol 0.3 at n >= 1e8, and
calibrate_gaussian's start there aims on the big jump with its Jensen correction (docs/calibration.md §13).

References: a fresh accountant at the report's rel_tol (the report's bracket exactly, upper <= delta) and at rel_tol
1e-3 (upper <= delta at a finer accuracy; the brackets intersect); tightness: sigma0 smaller by 1e-3 (relative) at the
answer's gamma is refuted by a certified lower value > delta; the same calibration with §13's switches off (session
34's answer): the objective within 1e-3 (relative, the optimality tolerance of docs/calibration.md §3.1) and no more
evaluations.
"""

from __future__ import annotations

import math

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.calibration import calibrate_bmg_report, calibrate_gaussian_report
from sharpdp.shuffle.calibration import search as CS
from sharpdp.shuffle.round_cache import clear_caches

DELTA = 1e-6


def _fresh(mech, n: int, eps: float, rel_tol: float) -> tuple[float, float]:
    clear_caches()
    lo, up = ShuffleAccountant(mech, n, "zero_out", rel_tol=rel_tol).get_delta_bounds(eps)
    return float(lo), float(up)


def _calibrate(kind: str, n: int, eps: float) -> tuple[CS.CalibrationReport, float]:
    """The report and its answer's objective (Err_1 at d = 1; sigma0^2 for the Gaussian randomizer)."""
    clear_caches()
    rep = (calibrate_bmg_report(n, eps, DELTA, 1, progress=False) if kind == "bmg"
           else calibrate_gaussian_report(n, eps, DELTA, progress=False))
    g = getattr(rep.randomizer, "gamma", 0.0)
    return rep, rep.randomizer.sigma0 ** 2 / (1 - g) ** 2 + g / (1 - g)


def _off(monkeypatch) -> None:
    monkeypatch.setattr(limits, "CAL_LOOSE_REL_TOL", 0.1)
    monkeypatch.setattr(limits, "CAL_LOOSE_JENSEN_GAUSS", False)


def test_switches_and_where_the_rules_apply(monkeypatch) -> None:
    def search(n: int, eps: float) -> CS.Search:
        return CS.Search(lambda x, t: None, (lambda x, t: 0.0,), lambda x, t: 0.0, n, eps, DELTA, "zero_out", False, "")

    monkeypatch.setattr(limits, "CAL49_LOOSE_REL", 0.0)  # (session 48's rel_tol at n = 1e9: docs/calibration.md §21.3)
    assert limits.CAL_LOOSE_REL_TOL == 0.3 and limits.CAL_LOOSE_REL_TOL_N == 10**8 and limits.CAL_LOOSE_JENSEN_GAUSS
    assert limits.CAL_TRUST_GROW is True  # (§13.2: tests/test_shuffle_calibration.py's two-user case, its reference)
    assert limits.CAL_ZERO_AS_TINY is True and CS._log_estimate(0.0, 0.0) == math.log(limits.TINY)  # (§13.3)
    assert CS._log_estimate(1e-7, 4e-7) == pytest.approx(math.log(2e-7))  # (the log-midpoint, as before)
    assert search(10**8, 0.01).search_rel == 0.3 and search(10**9, 1e-3).search_rel == 0.3
    assert search(10**7, 0.01).search_rel == 0.1 and search(10**8 - 1, 1e-3).search_rel == 0.1  # (§6's, below 1e8)
    assert search(10**8, 0.1).search_rel == CS.CERT_REL_TOL and search(10**6, 0.01).search_rel == CS.CERT_REL_TOL
    assert search(10**8, 0.01).cert_rel == limits.CAL_CERT_REL_TOL_LOOSE  # (the certifying evaluations: unchanged)
    _off(monkeypatch)
    assert search(10**8, 0.01).search_rel == 0.1


@pytest.mark.parametrize("kind, n, eps", [("gauss", 10**8, 0.01), ("bmg", 10**8, 0.01)])
def test_answer_certified_and_within_the_optimality_tolerance(monkeypatch, kind, n, eps) -> None:
    """Measured (docs/calibration.md §13): calibrate_gaussian(1e8, 0.01) 2 + 1 -> 1 + 1 evaluations (loose +
    certifying), sigma0^2 +2.3e-4; calibrate_bmg(1e8, 0.01) 4 + 1 -> 3 + 1, Err_1 -3.8e-4."""
    seen: list[float] = []
    real = CS.closed_then_full

    def spy(r, n_, adj, e, d, rel_tol=CS.CERT_REL_TOL, skip=float("inf")):
        seen.append(rel_tol)
        return real(r, n_, adj, e, d, rel_tol, skip)

    monkeypatch.setattr(CS, "closed_then_full", spy)
    rep, err = _calibrate(kind, n, eps)
    mech = rep.randomizer
    assert 0.3 in seen and rep.rel_tol in seen and set(seen) <= {0.3, rep.rel_tol}  # (model points at 0.3 only)
    assert rep.certificate == "get_delta_bounds" and rep.delta_bounds[1] <= DELTA
    lo, up = _fresh(mech, n, eps, rep.rel_tol)
    assert (lo, up) == tuple(rep.delta_bounds)  # (a fresh accountant at the report's rel_tol: the same bracket)
    lo3, up3 = _fresh(mech, n, eps, 1e-3)
    assert up3 <= DELTA and max(lo, lo3) <= min(up, up3)
    # tightness: at the answer's gamma, sigma0 (1 - 1e-3) is refuted (a certified lower value above delta)
    smaller = (BlanketMixedGaussian(mech.gamma, mech.sigma0 * (1 - 1e-3), 1) if kind == "bmg"
               else GaussianRandomizer(mech.sigma0 * (1 - 1e-3), 1))
    assert _fresh(smaller, n, eps, 1e-2)[0] > DELTA
    # session 34's answer (the switches off): the objective within the optimality tolerance, no fewer evaluations
    _off(monkeypatch)
    seen.clear()
    old, err_old = _calibrate(kind, n, eps)
    assert 0.3 not in seen and old.delta_bounds[1] <= DELTA
    assert abs(err / err_old - 1.0) <= 1e-3
    assert rep.evaluations < old.evaluations


def test_gaussian_jensen_start_at_1e7() -> None:
    """calibrate_gaussian(1e7, 0.001): the Jensen start (model points still at rel_tol 0.1 below 1e8) certified at
    rel_tol 0.02; the fresh bracket the report's; the fresh rel_tol 1e-3 upper value <= delta."""
    n, eps = 10**7, 0.001
    rep, _ = _calibrate("gauss", n, eps)
    assert rep.rel_tol == 0.02 and rep.delta_bounds[1] <= DELTA
    assert _fresh(rep.randomizer, n, eps, rep.rel_tol) == tuple(rep.delta_bounds)
    assert _fresh(rep.randomizer, n, eps, 1e-3)[1] <= DELTA
