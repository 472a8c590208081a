"""Fewer evaluations of ``calibrate_gaussian`` at n = 1e9 on the loose search (docs/calibration.md §21): stage 3's first
certifying point aimed with the margin of the rel_tol its evaluation asks (:func:`first_rho`), cheaper loose evaluations
(:func:`loose_rel`) and stage 1 stopped after one loose evaluation near the target (:func:`one_loose`). Choices of
points only: a point is returned only by a certifying evaluation whose certified upper value is <= delta."""

from __future__ import annotations

import math
from typing import Any

from sharpdp.shuffle.accountant import limits


def first_rho(search: Any, cert_tol: float) -> float:
    """The expected log(upper / log-midpoint) of stage 3's first certifying evaluation (the aim's margin,
    docs/calibration.md §3 step 3): 0.5 log(1 + ``cert_tol``) (``cert_tol`` = CERT_REL_TOL, session 48's), or with
    ``limits.CAL49_FIRST_RHO`` on the one-dimensional (``calibrate_gaussian``) loose search at n >= ``limits.CAL49_N``
    0.5 log(1 + the rel_tol the certifying evaluations ask there: 0.02, docs/calibration.md §12, §21.1). A choice of
    points only."""
    on = limits.CAL49_FIRST_RHO and search.loose and search.n >= limits.CAL49_N and search.t_box is None
    rel = search.cert_rel if on else cert_tol
    return 0.5 * math.log1p(rel)


def loose_rel(n: int, rel: float, one_d: bool) -> float:
    """The loose search's rel_tol at n (``rel``: session 48's, ``limits.CAL_LOOSE_REL_TOL`` at n >= 1e8), or with
    ``limits.CAL49_LOOSE_REL`` > 0 at n >= ``limits.CAL49_N`` on a one-dimensional search (``one_d``:
    ``calibrate_gaussian``; the BMG's loose calls cost the same at 0.5) that value (docs/calibration.md §21.3: at
    n = 1e9 a rel_tol-0.5 call costs half a rel_tol-0.3 one at eps = 0.01, with a bracket about as narrow). Model
    points only: the certifying evaluations keep their rel_tol."""
    new = float(limits.CAL49_LOOSE_REL)
    if not (math.isfinite(new) and 0.0 <= new < 1.0):
        raise ValueError(f"limits.CAL49_LOOSE_REL must be a finite number in [0, 1), got {new!r}")
    return new if new > 0.0 and n >= limits.CAL49_N and one_d else rel


def one_loose(search: Any, target: float) -> bool:
    """Whether stage 1 stops after the search's first (loose) evaluation (docs/calibration.md §21.2): with
    ``limits.CAL49_ONE_LOOSE`` > 0 and ``limits.CAL48_SAFE_STEP`` on the loose search at n >= ``limits.CAL49_N`` (where
    one evaluation costs about 1 s), a slope model set (``Search.safe_slope``: stage 3's first step is then §20's, from
    that point) and the evaluation's estimate within ``limits.CAL49_ONE_LOOSE`` of ``target`` in log delta. A choice of
    points only."""
    tol = float(limits.CAL49_ONE_LOOSE)
    if not (math.isfinite(tol) and tol >= 0.0):
        raise ValueError(f"limits.CAL49_ONE_LOOSE must be a finite number >= 0, got {tol!r}")
    if not (tol > 0.0 and limits.CAL48_SAFE_STEP and search.loose and search.n >= limits.CAL49_N
            and search.safe_slope is not None and len(search.pts) == 1):
        return False
    return bool(abs(search.pts[0][2] - target) <= tol)


__all__ = ["first_rho", "loose_rel", "one_loose"]
