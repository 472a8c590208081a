"""The calibration's loose search evaluations at n >= 1e7, epsilon <= 0.01 (docs/calibration.md §6): the search's
evaluations at rel_tol 0.1, the answer certified at rel_tol 1e-2 as before. References: a fresh accountant's
get_delta_bounds at the returned randomizer (its upper value <= delta, equal to the report's bracket) and the same
calibration with the loose evaluations off (Err_1 within 1e-3, the tolerance of docs/calibration.md §3.1)."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle import accountant as A
from sharpdp.shuffle.calibration import bmg as CB
from sharpdp.shuffle.calibration import search as CS
from sharpdp.shuffle.round_cache import clear_caches

from _cal34_switches import session33_calibration  # noqa: F401  (the fixture)
from _main_floats34 import switch

# (**) session 34, cal34: un-nested, this file pins the calibration rules of docs/calibration.md §6-§8 on purpose:
# it runs with §12's switches off (certifying evaluations at rel_tol 1e-2, stage 2's probes made)
pytestmark = pytest.mark.usefixtures("session33_calibration")


def test_search_rel_tol(monkeypatch: pytest.MonkeyPatch) -> None:
    switch(monkeypatch, "CAL_LOOSE_REL_TOL", 0.1)  # (**) session 35, cal35: §6's rel_tol 0.1 (§13: 0.3 at n >= 1e8)

    def rel(n: int, eps: float) -> float:
        return CS.Search(lambda x, t: None, (lambda x, t: 0.0,), lambda x, t: 0.0, n, eps, 1e-6, "zero_out", False,
                         "").search_rel

    assert rel(10**8, 0.01) == 0.1 and rel(10**7, 1e-3) == 0.1
    assert rel(10**6, 0.01) == CS.CERT_REL_TOL  # (small n: every evaluation a candidate, as before)
    assert rel(10**8, 0.1) == CS.CERT_REL_TOL  # (a loose report costs about a certifying one there)


def _calibrate(n: int, eps: float, delta: float) -> tuple[CS.CalibrationReport, list[float]]:
    rels: list[float] = []
    orig = A.ShuffleAccountant.get_delta_bounds

    def gdb(self, e):
        rels.append(self.rel_tol)
        return orig(self, e)

    A.ShuffleAccountant.get_delta_bounds = gdb
    try:
        clear_caches()
        rep = CB.calibrate_bmg_report(n, eps, delta, 1, progress=False)
    finally:
        A.ShuffleAccountant.get_delta_bounds = orig
    return rep, rels


def test_loose_search_n1e8(monkeypatch: pytest.MonkeyPatch) -> None:
    switch(monkeypatch, "CAL_LOOSE_REL_TOL", 0.1)  # (**) session 35, cal35: §6's rel_tol 0.1 (§13: 0.3 at n >= 1e8)
    n, eps, delta = 10**8, 0.01, 1e-6
    rep, rels = _calibrate(n, eps, delta)
    assert 0.1 in rels and CS.CERT_REL_TOL in rels  # loose search evaluations, a certifying one
    assert rep.certificate == "get_delta_bounds"
    # certified: a fresh accountant at the accountant's default accuracy agrees with the report and meets delta
    clear_caches()
    lo, up = ShuffleAccountant(rep.randomizer, n, "zero_out").get_delta_bounds(eps)
    assert (float(lo), float(up)) == pytest.approx(rep.delta_bounds, rel=0, abs=0)
    assert up <= delta
    # the rule off: the same optimum within the tests' tolerance (docs/calibration.md §3.1)
    monkeypatch.setattr(CS, "_LOOSE_N", 10**12)
    rep0, rels0 = _calibrate(n, eps, delta)
    assert set(rels0) == {CS.CERT_REL_TOL}
    assert abs(rep.randomizer.mse_single / rep0.randomizer.mse_single - 1.0) <= 1e-3
