"""Review rev35 (session 35) of cal35's calibration rules (docs/calibration.md §13: loose model points at rel_tol 0.3
at n >= 1e8, the Gaussian's Jensen start on the loose search, §13.2's growing trust region, §13.3's upper value 0 as
log TINY): every answer must stay certified whatever the model did. Cells the builder did not test: other eps and
delta (1e-9, 1e-12), small n where §13.2-§13.3 act. Reference: a fresh accountant at rel_tol 1e-3 (upper value <=
delta) and the report's own bracket reproduced by a fresh accountant at its rel_tol; the same calibration's answer on
the switches' other side is not needed (the claim attacked is certification, not optimality)."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.calibration import calibrate_bmg_report, calibrate_gaussian_report
from sharpdp.shuffle.round_cache import clear_caches


def _fresh(mech, n: int, eps: float, rel_tol: float) -> tuple[float, float]:
    clear_caches()
    lo, up = ShuffleAccountant(mech, n, "zero_out", rel_tol=rel_tol).get_delta_bounds(eps)
    return float(lo), float(up)


CELLS = [("gauss", 10**3, 1.0, 1e-6), ("gauss", 10**5, 0.1, 1e-9), ("bmg", 10**4, 0.5, 1e-12),
         ("bmg", 10**8, 0.005, 1e-9)]


@pytest.mark.parametrize("kind,n,eps,delta", [c if c[1] < 10**8 else pytest.param(*c, marks=pytest.mark.slow) for c in CELLS])
def test_calibrated_answer_is_certified(kind, n, eps, delta):
    clear_caches()
    rep = (calibrate_bmg_report(n, eps, delta, 1, progress=False) if kind == "bmg"
           else calibrate_gaussian_report(n, eps, delta, progress=False))
    mech = rep.randomizer
    assert rep.delta_bounds[1] <= delta
    lo, up = _fresh(mech, n, eps, rep.rel_tol)
    assert up <= delta * (1 + 1e-12), (up, delta)
    lo3, up3 = _fresh(mech, n, eps, 1e-3)
    assert up3 <= delta * (1 + 1e-12) and max(lo, lo3) <= min(up, up3) * (1 + 1e-12)
