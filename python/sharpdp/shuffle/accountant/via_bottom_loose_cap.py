"""The cap of replace-one through bot proved from the loose search's legs first (docs/accountant.md §9.23.7; switch
``limits.REP46_LOOSE_CAP``): a choice of which certified legs run.

Where the loose model search of §9.11 finds its first splits at or above 1, the split search of §9 certifies the
candidates of SPLITS on legs at rel_tol (``ViaBottom._report_splits``) and its early stop at the cap (``ViaBottom._at_cap``)
reports (1, 1) where their certified lower values prove A(e1) + e^{e1} B(e2) >= 1 at every split (``_cap_proved``). Those
lower values need not come from legs at rel_tol: any certified lower values prove it. :func:`loose_cap` tries the proof on
the same candidates' legs at the loose rel_tol first."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.via_bottom_end_search import end_search
from sharpdp.shuffle.accountant.via_bottom_ends import end_below


def loose_cap(vb: Any, eps: float, ct: float, rel_tol: float | None = None) -> Any:
    """With ``limits.REP46_LOOSE_CAP``: the candidates of vb.SPLITS on legs at the loose rel_tol ``ct`` (those of the model
    search's start first, cached; none more after one below 1); where every one's upper value is >= 1 and their certified lower values prove the cap (the split of largest lower value at >= 1, or
    vb._cap_proved on them, its end legs at ``ct``), that split with the bracket (1, 1), the report of §9's early stop at
    the cap (delta <= 1 always; >= 1 at every split, so their minimum is 1); None otherwise (the candidates of before
    follow; the legs certified here stay cached). Where the split of largest lower value is at >= 1 but an end split is
    below 1 (§9.24) and ``rel_tol`` is given, the split search from that end (:func:`.via_bottom_end_search.end_search`,
    docs/accountant.md §9.25: its reported split certified at ``rel_tol``, None with its switch off)."""
    if not limits.REP46_LOOSE_CAP:
        return None
    cands = []
    for f in sorted(vb.SPLITS, key=lambda f: f not in vb._start(eps)):  # (the model search's first splits, cached, first)
        cands.append(vb.split(eps, f, ct))
        if cands[-1].upper < 1.0:
            return None  # (a split below 1: no cap; the candidates of before)
    best = max(cands, key=lambda c: c.lower)
    low = end_below(vb, eps, ct) if best.lower >= 1.0 else None  # (§9.24: the ends)
    if best.lower >= 1.0 and low is None or vb._cap_proved(eps, cands, ct):
        return replace(best, lower=1.0, upper=1.0)
    return end_search(vb, eps, rel_tol, ct, low) if low is not None and rel_tol is not None else None  # (§9.25)
