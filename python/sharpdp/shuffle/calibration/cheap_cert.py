"""A certifying evaluation tried first at a cheaper rel_tol (docs/calibration.md §15).

On the loose search at ``limits.CAL_LOOSE_REL_TOL_N`` <= n <= ``limits.CAL43_CHEAP_N_MAX`` (``calibrate_gaussian``), a certifying evaluation (stage 3,
docs/calibration.md §3 step 3, §12) first asks ``get_delta_bounds`` at rel_tol ``limits.CAL43_CHEAP_REL`` where the
search's last loose bracket is at most ``limits.CAL43_CHEAP_WIDTH`` wide (an estimate that the cheaper bracket is
narrow enough to decide; it only chooses which certified evaluation runs first). That bracket is kept where it decides
the point (upper <= delta: certified, the report carrying it and its rel_tol; lower > delta: refuted); otherwise it is
dropped from the model and the point is evaluated at the usual certifying rel_tol, as before; with
``limits.CAL49_CHEAP_STEP`` it is kept as a failed certification instead (its upper value is above delta), and the search
steps to the safe side, where the next certifying evaluation is again tried at the cheaper rel_tol (docs/calibration.md
§21.4)."""

from __future__ import annotations

from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.calibration.search import Search


def cheap_gate(pts: list[tuple[Any, ...]], n: int, loose: bool) -> bool:
    """Whether a certifying evaluation is tried at ``limits.CAL43_CHEAP_REL`` first: switch on, the loose search at
    ``limits.CAL_LOOSE_REL_TOL_N`` <= n <= ``limits.CAL43_CHEAP_N_MAX`` (at n = 1e9 the accountant at rel_tol 0.1 costs
    more than at 0.02, §15.3), and the last loose evaluation's bracket (lo, up) with lo > 0 and
    (up - lo) / lo <= ``limits.CAL43_CHEAP_WIDTH`` (docs/calibration.md §15.1; a choice of evaluations only)."""
    if not (limits.CAL43_CHEAP_CERT and loose and limits.CAL_LOOSE_REL_TOL_N <= n <= limits.CAL43_CHEAP_N_MAX):
        return False
    loose_pts = [p for p in pts if not p[3]]
    if not loose_pts:
        return False
    lo, up = loose_pts[-1][4], loose_pts[-1][5]
    return bool(lo > 0.0 and (up - lo) <= limits.CAL43_CHEAP_WIDTH * lo)


class CheapSearch(Search):
    """:class:`Search` whose certifying evaluations go through :func:`cheap_gate` first (docs/calibration.md §15);
    ``rel_of`` maps each point certified at the cheaper rel_tol to it (the report's ``rel_tol``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rel_of: dict[tuple[float, float | None], float] = {}

    def evaluate(self, x: float, t: float | None, fine: bool) -> float:
        if not fine or any(p[0] == x and p[1] == t and p[3] for p in self.pts) or not cheap_gate(self.pts, self.n,
                                                                                                  self.loose):
            return super().evaluate(x, t, fine)
        saved, self.cert_rel = self.cert_rel, float(limits.CAL43_CHEAP_REL)
        try:
            v = super().evaluate(x, t, True)
        finally:
            self.cert_rel = saved
        lo, up = self.pts[-1][4], self.pts[-1][5]
        if up <= self.delta or lo > self.delta:  # (decided: certified, or refuted as the usual evaluation would be)
            self.rel_of[(x, t)] = float(limits.CAL43_CHEAP_REL)
            return v
        if limits.CAL49_CHEAP_STEP:  # (undecided: a failed certification, the search steps to the safe side, §21.4)
            return v
        self.pts.pop()  # (undecided: not a point of the model; its call stays counted in ``count`` and ``full``)
        return super().evaluate(x, t, fine)


__all__ = ["CheapSearch", "cheap_gate"]
