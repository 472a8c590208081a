"""Stage 3 of the calibration search stops at the optimality tests' tolerance at n >= 1e7 (docs/calibration.md §7):
one certifying evaluation fewer where the next step gains less than 1e-3. References: a fresh accountant's
get_delta_bounds at the returned randomizer (upper value <= delta, the report's bracket exactly) and the same
calibration with the rule off (Err_1 within 1e-3, never below it: the rule only stops earlier)."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.calibration import gaussian as CG
from sharpdp.shuffle.calibration import search as CS
from sharpdp.shuffle.round_cache import clear_caches

from _cal34_switches import session33_calibration  # noqa: F401  (the fixture)
from _main_floats34 import switch

# (**) session 34, cal34: un-nested, this file pins the calibration rules of docs/calibration.md §6-§8 on purpose:
# it runs with §12's switches off (certifying evaluations at rel_tol 1e-2, stage 2's probes made)
pytestmark = pytest.mark.usefixtures("session33_calibration")


def test_gain_rtol_by_n() -> None:
    def gain(n: int, eps: float) -> float:
        return CS.Search(lambda x, t: None, (lambda x, t: 0.0,), lambda x, t: 0.0, n, eps, 1e-6, "zero_out", False,
                         "").gain_rtol

    assert gain(10**8, 0.01) == CS.GAIN_RTOL_LARGE == 1e-3 and gain(10**7, 1.0) == 1e-3
    assert gain(10**6, 0.01) == CS._GAIN_RTOL == 1e-4  # (below 1e7: as before)


_CLOSED_THEN_FULL = CS.closed_then_full


def _calibrate(n: int, eps: float, delta: float, monkeypatch: pytest.MonkeyPatch) -> tuple[CS.CalibrationReport,
                                                                                        list[float]]:
    """calibrate_gaussian_report with the rel_tol of each of its evaluations (CS.closed_then_full, traced)."""
    seen: list[float] = []
    inner = _CLOSED_THEN_FULL  # (the module's own, not a wrapper left by an earlier call)
    monkeypatch.setattr(CS, "closed_then_full", lambda r, n_, adj, e, d, rel_tol=CS.CERT_REL_TOL, *a:
                        seen.append(rel_tol) or inner(r, n_, adj, e, d, rel_tol, *a))
    clear_caches()
    return CG.calibrate_gaussian_report(n, eps, delta, progress=False), seen


def test_one_certifying_evaluation_fewer_n1e8(monkeypatch: pytest.MonkeyPatch) -> None:
    # (**) session 43, lead: docs/calibration.md §15 (the report's bracket there is the rel_tol-0.1 accountant's)
    switch(monkeypatch, "CAL43_CHEAP_CERT", False)
    n, eps, delta = 10**8, 0.01, 1e-6
    rep, rels = _calibrate(n, eps, delta, monkeypatch)
    # certified: a fresh accountant at the default accuracy gives the report's bracket, <= delta
    clear_caches()
    lo, up = ShuffleAccountant(rep.randomizer, n, "zero_out").get_delta_bounds(eps)
    assert (float(lo), float(up)) == pytest.approx(rep.delta_bounds, rel=0, abs=0)
    assert up <= delta
    monkeypatch.setattr(CS, "GAIN_RTOL_LARGE", CS._GAIN_RTOL)  # (the rule off)
    rep0, rels0 = _calibrate(n, eps, delta, monkeypatch)
    assert rels.count(CS.CERT_REL_TOL) == rels0.count(CS.CERT_REL_TOL) - 1 and rels.count(CS.CERT_REL_TOL) >= 1
    s2, s20 = rep.randomizer.sigma0 ** 2, rep0.randomizer.sigma0 ** 2
    assert s20 <= s2 <= s20 * (1.0 + 1e-3)
