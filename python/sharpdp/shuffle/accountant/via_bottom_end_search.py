"""The split search of replace-one through bot from an end split below 1 where the splits of SPLITS are at the cap
(docs/accountant.md §9.25; switch ``limits.REP48_END_SEARCH``, read only where ``limits.REP47_END_SPLITS`` found such
an end split).

§9.24's rule appends the end split (f = 0 or f = 1) to the candidates and lets the search of §9 go on: the candidates of
SPLITS at rel_tol, their refinements, the golden section's window and its slides, 20-50 engine legs. The chain is convex in
e^{e1} (Lemma 9.22.1) and its value at the end is below its values at SPLITS (at or above 1), so its least split lies
between the end and the nearest split of SPLITS: :func:`end_search` slides from the end toward it on loose legs (steps
SPLIT_TOL, 2 SPLIT_TOL, ... while the value falls, ``_probe``), shrinks the last step (``_shrink``, its closed-form edge of
§9.14) unless :func:`end_gain` bounds what a split inside it can gain, and certifies the split found at rel_tol (``split``, ``_contract``,
§9.4). Which splits run is a choice only: every value reported is a certified split's
chain (Lemma 9.1)."""

from __future__ import annotations

import math
from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.limits import U


def end_gain(vb: Any, eps: float, end: Any, other: float) -> float:
    """A certified lower value of the chain A(e1) + e^{e1} B(e2) at every split between the end split ``end`` (f = 0 or
    f = 1) and the split at f = ``other`` (docs/accountant.md §9.25, Lemma 9.25.1), rounded down, from leg A at the
    larger first leg and leg B at the larger second leg of the two (A and B non-increasing, e^{e1} >= e^{min e1}): the
    end's own leg for one, a leg known already (``vb._known_lower``, no new certification) for the other; 0 where none
    is known."""
    e1o = other * eps
    e2o = vb._second(eps, e1o)
    if end.f <= 0.0:  # (splits e1 in [0, e1o]: A(e1) >= A(e1o), B(e2) >= B(eps) = the end's leg B, e^{e1} >= 1)
        a_lo, w, b_lo = vb._known_lower(0, e1o), 1.0, end.leg_b.lower
    else:  # (splits e1 in [e1o, eps]: A(e1) >= A(eps) = the end's leg A, B(e2) >= B(e2o), e^{e1} >= e^{e1o})
        a_lo, w, b_lo = end.leg_a.lower, math.exp(e1o) * (1 - 4 * U), vb._known_lower(1, e2o)
    return max((a_lo + w * b_lo) * (1 - 8 * U), 0.0) if math.isfinite(w) else 0.0


def end_search(vb: Any, eps: float, rel_tol: float, rt: float, end: Any) -> Any:
    """With ``limits.REP48_END_SEARCH``: the split search of docs/accountant.md §9.25 from the end split ``end`` (f = 0 or
    f = 1, certified upper value below 1) on legs at rel_tol ``rt`` (>= rel_tol): slides inward from the end (at most
    vb.SLIDES steps SPLIT_TOL, 2 SPLIT_TOL, ... while vb._probe finds a better split), then vb._shrink toward the first
    worse split unless the slide did not leave the end and :func:`end_gain` shows no split before that worse one gains
    SHRINK_GAIN on the end; the split found is certified at ``rel_tol`` (vb.split and vb._contract, §9.4) and becomes
    the hint of §9.2. None with the switch off (the search of §9.24 follows)."""
    if not limits.REP48_END_SEARCH:
        return None
    sgn = 1.0 if end.f <= 0.0 else -1.0
    first = vb.split(eps, end.f, rt)  # (cached where the end was found at rt)
    best, prev, step = first, first, vb.SPLIT_TOL
    for _ in range(vb.SLIDES):
        f = min(max(best.f + sgn * step, 0.0), 1.0)
        c = vb._probe(eps, f, rt, best.upper) if f != best.f else None
        if c is None:
            break
        prev, best, step = best, c, 2.0 * step
    other = min(max(best.f + sgn * step, 0.0), 1.0)
    if best is not first and math.exp(best.e1) * best.leg_b.upper > vb.CLIFF * best.upper:
        # (a balanced split: the least one lies between the split before the last step and the first worse one, on
        # either side of best; §9's window there)
        best = vb._refine(eps, min(prev.f, other), max(prev.f, other), rt)
    elif best is not first or end_gain(vb, eps, first, other) < (1.0 - vb.SHRINK_GAIN) * first.upper:
        best = vb._shrink(eps, best, other, rt)  # (before a cliff of leg B, §9.5: toward the first worse split)
    # (the split at rel_tol, §9.4's contract: not §9.12's budget, whose bracket may reach above the end split's chain at
    # rel_tol, the value §9.24's search reports at least as tightly)
    got = vb._contract(eps, vb.split(eps, best.f, rel_tol), rel_tol)
    vb._hint = eps - got.e1 if got.upper < 1.0 else None
    return got


__all__ = ["end_gain", "end_search"]
