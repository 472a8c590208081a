"""The split at the edge of leg B's cliff tried first where the model search of §9.11 finds no balanced split
(docs/accountant.md §9.22): the chain A(e1) + e^{e1} B(e2) is convex in e^{e1} (Lemma 9.22.1), B is 0 beyond the edge
e2* of the laws' closed-form tops (§9.14), so where the split just past the edge is not better than the split at it,
the split at the edge is the search's end (a place to look only: the split is certified like any other)."""

from __future__ import annotations

import math
from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.limits import VALUE_FLOOR


def edge_first(vb: Any, eps: float, rel_tol: float, rt: float) -> Any:
    """With ``limits.VIA_BOTTOM_EDGE_FIRST``, the split at the closed-form edge of leg B's cliff
    (``vb._closed_edge(eps)``, docs/accountant.md §9.14) on legs at rel_tol ``rt``, where it is before the edge (leg B's
    share at most EDGE, ``not vb._past_cliff``), its upper value is in [VALUE_FLOOR, 1) and a certified lower value of the
    chain at the split BEYOND_TOL past it (in f) exceeds that upper value (``vb._worse``); None otherwise (the search of
    §9 follows, its cache holding these splits). A choice of which split the search ends at (docs/accountant.md §9.22.3:
    the chain is convex in e^{e1}, so no split beyond the probed one is better than it, and none before the edge is
    better than the edge split but for leg B's release-sampler charge). Returns that split certified as the reported
    split of the loose search (``vb._reported`` at ``rel_tol``, docs/accountant.md §9.12), the hint of §9.2 set."""
    if not limits.VIA_BOTTOM_EDGE_FIRST:
        return None
    fe = vb._closed_edge(eps)
    if fe is None or not 0.0 < fe < 1.0:
        return None
    at = vb.split(eps, fe, rt)
    if not (VALUE_FLOOR <= at.upper < 1.0) or vb._past_cliff(at):
        return None
    beyond = min(fe + vb.BEYOND_TOL, 1.0)
    # (a certified lower value of the chain there strictly above the edge split's upper value: Lemma 9.22.1 then puts
    # every split beyond it above the edge split's chain too)
    if not beyond > fe or not math.isfinite(at.upper) or not vb._worse(eps, beyond, rt, math.nextafter(at.upper, math.inf)):
        return None
    best = vb._reported(eps, at.f, rel_tol, rt)
    vb._hint = eps - best.e1
    return best


__all__ = ["edge_first"]
