"""The end splits of replace-one through bot checked before an early stop at the cap that reads one split
(docs/accountant.md §9.24; switch ``limits.REP47_END_SPLITS``).

§9's stops (a) and (c), §9.3's one-split proof and §9.23.7's loose cap (a) report (1, 1) from the splits of SPLITS
(f = 0.35 ... 0.8) alone: delta <= 1 always, so the report is certified, but the least split may lie at an end of [0, 1]
below 1 (§9.23.8). With the switch they stop only where the end splits f = 0 and f = 1 are certified at or above 1;
otherwise the end split below 1 joins the candidates and the split search of §9 goes on from it. Which splits run is a
choice; every value reported is a certified split's chain (§9)."""

from __future__ import annotations

from typing import Any

from sharpdp.shuffle.accountant import limits

ENDS = (0.0, 1.0)  # the end splits checked, in this order (f = 0 first: the end below 1 at the cells of §9.24.1)


def end_below(vb: Any, eps: float, rel_tol: float) -> Any:
    """With ``limits.REP47_END_SPLITS``: the first end split (f = 0, then f = 1) whose certified upper value on legs at
    ``rel_tol`` (vb.split, its absolute target of §9.4 on leg B) is below 1, else None; None at once with the switch
    off (no leg runs: main's stops). With ``limits.REP48_END_PROBE`` an end whose chain has a certified lower value >= 1
    (vb._worse at the bar 1) is skipped before it is certified (docs/accountant.md §9.25.7)."""
    if not limits.REP47_END_SPLITS:
        return None
    for f in ENDS:
        # (§9.25.7: a certified lower value of the end's chain at or above 1 puts every certified upper value of it there
        # too; leg B at the loose PROBE_TOL first, as the search's probes; a stand-in without probes certifies each end)
        worse = getattr(vb, "_worse", None)
        if limits.REP48_END_PROBE and worse is not None and worse(eps, f, rel_tol, 1.0):
            continue
        s = vb.split(eps, f, rel_tol)
        if s.upper < 1.0:
            return s
    return None


def end_found(vb: Any, eps: float, rel_tol: float, cands: list) -> bool:
    """:func:`end_below` appended to ``cands`` (the split search's candidates, so that its least split is the end one);
    True where one was found (the stop at the cap must not fire), False otherwise (and with the switch off)."""
    low = end_below(vb, eps, rel_tol)
    if low is None:
        return False
    cands.append(low)
    return True
