"""The split searches' legs B of replace-one through bot at a looser rel_tol first, and a probe's loose leg B kept where
it decides the probe better (docs/accountant.md §9.26; switches ``limits.REP49_LOOSE_B``, ``limits.REP49_PROBE_KEEP``):
choices of which certified legs run, never of a value's certification.

A split's value A_up(e1) + e^{e1} B_up(e2), rounded outwards, is a certified upper value of delta_replace(eps) whatever
rel_tol certified its legs (Lemma 9.1, docs/accountant.md §9, §9.21.1). Near the edge of a cliff of leg B on the far
tail's big-jump path (§9.23.1) a leg B at rel_tol 0.1 costs 3-5 times the same leg at rel_tol 1 whose bracket is nearly
as narrow (the engine's floor there, not its target, sets the width): :func:`loose_b` certifies it at LOOSE_B_TOL first
and keeps it where its bracket moves the chain's by no more than leg A's rel_tol does. :func:`probe_kept` keeps the split
a probe of §9.5 certified already (leg A at the search's rel_tol, leg B at PROBE_TOL) where its upper value is below the
probe's bar, in place of the same split with leg B certified again."""

from __future__ import annotations

import math
from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.accountant.results import AccountantReport

# the first rel_tol of a search's leg B under limits.REP49_LOOSE_B (the loosest of BudgetSearch.SEARCH_B_TOLS)
LOOSE_B_TOL = 1.0


def loose_b(vb: Any, e1: float, e2: float, rel_tol: float, ra: AccountantReport, neg: float) -> AccountantReport | None:
    """With ``limits.REP49_LOOSE_B`` (and §9.12's search legs B on), inside the golden section's window and the cliff
    searches after it (``ViaBottom._refine``; not the model search of §9.11, which reads the legs' midpoints that a loose
    leg B moves): the leg B at e2 of the split at e1 (its legs at ``rel_tol`` >= 0.1, ``ra`` its leg A, ``neg`` leg B's
    absolute target of §9.4) certified at LOOSE_B_TOL first and returned where (a) its upper value is below ``neg``, (b)
    e^{e1} times its bracket's width is at most ``rel_tol`` A_lo(e1) (the chain's bracket widens by at most what leg A at
    rel_tol allows it) or (c) the chain's certified lower value with it is at least the bar of the comparison the split is
    made for (``vb._bar``: the golden section's kept split, a probe's bar; every upper value of the split is then >= it,
    so the comparison decides as on the split at rel_tol); None otherwise or with the switch off (the caller certifies
    leg B at rel_tol as before; the loose leg stays cached). A choice only: any certified leg B gives a certified chain
    (docs/accountant.md §9.26). A kept leg's rel_tol and target are recorded for :func:`tight_b`."""
    if not (limits.REP49_LOOSE_B and getattr(vb, "_in_refine", False) and limits.VIA_BOTTOM_SEARCH_B
            and limits.VIA_BOTTOM_LOOSE_SEARCH and 0.1 <= rel_tol < LOOSE_B_TOL and ra.lower > 0.0):
        return None
    w = math.exp(e1)
    rb: AccountantReport = vb.leg(1, e2, LOOSE_B_TOL, neg)
    if rb.upper < neg or w * (rb.upper - rb.lower) <= rel_tol * ra.lower \
            or (ra.lower + w * rb.lower) * (1 - 8 * U) >= getattr(vb, "_bar", math.inf):
        vb.__dict__.setdefault("_loose_kept", {})[e2] = (rel_tol, neg)
        return rb
    return None


def tight_b(vb: Any, e2: float) -> AccountantReport | None:
    """Where :func:`loose_b` kept a split's leg B at e2, the leg B that split would have certified without it (at the
    search's rel_tol, to the same absolute target): the reported split's leg B of §9.12 where the loose one leaves its
    bracket over the budget (docs/accountant.md §9.26); None elsewhere or with the switch off."""
    kept = vb.__dict__.get("_loose_kept", {}).get(e2) if limits.REP49_LOOSE_B else None
    return None if kept is None else vb.leg(1, e2, kept[0], kept[1])  # type: ignore[no-any-return]


def shrink_done(vb: Any, eps: float, best: Any, other: float, rt: float) -> bool:
    """With ``limits.REP49_SHRINK_STOP``: True where the bisection of a cliff search (``CliffSearch._shrink``, §9.5) from
    the split ``best`` toward the worse split at f = ``other`` > best.f can gain less than vb.SHRINK_GAIN: every split
    e1 in [best.e1, other eps] (e2 <= best's e2) has A(e1) + e^{e1} B(e2) >= A(other eps) + e^{best.e1} B(best's e2)
    (A and B non-increasing, §1.6: Lemma 9.25.1 (b)), and that bound from certified lower values (leg A at ``rt`` at
    other eps: the probe's there, cached, or its chord of §9.19; best's own leg B) is at least (1 - SHRINK_GAIN)
    best.lower: no split between is below (1 - SHRINK_GAIN) times best's chain (its upper value carries the loose legs'
    width, which SHRINK_GAIN does not exceed; docs/accountant.md §9.26; a choice of where to stop only)."""
    if not (limits.REP49_SHRINK_STOP and other > best.f):
        return False
    a: AccountantReport = vb.leg(0, other * eps, rt)
    return a.lower + math.exp(best.e1) * best.leg_b.lower >= (1.0 - vb.SHRINK_GAIN) * best.lower
