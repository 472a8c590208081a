"""A leg of replace-one through bot served by a leg of the same order and epsilon certified already at another rel_tol
(docs/accountant.md §9.21; switch ``limits.VIA_BOTTOM_LEG_SERVE``): a choice of which certified legs are computed.

The split searches of §9-§9.20 ask for the same leg (order j, epsilon e) at several rel_tols: a search's leg at 0.1 and
§9.12's looser SEARCH_B_TOLS, the probes' PROBE_TOL, the reported split's rel_tol. Every certified report of the leg is a
bracket of it whose upper value is at least its supremum over x (the leg's contract, docs/accountant.md §9.19 "Which
g"), whatever rel_tol it was asked at; so a cached report serves a request where it meets what the request asks of the
engine: it was asked at a rel_tol at most the request's with an absolute target at most the request's (or with an
upper value below it), its bracket meets the request's rel_tol, or its upper value is below the request's absolute
target (where the engine's refinement would stop, docs/accountant.md §9.4)."""

from __future__ import annotations

from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.results import AccountantReport

# a request at a rel_tol below this (a reported split's leg) is served only by a leg asked at a rel_tol at most its own
SEARCH_TOL = 0.1


def serves(r: AccountantReport, t: float, neg_t: float, rel_tol: float, negligible: float) -> bool:
    """True where the leg report ``r`` (asked at rel_tol ``t`` with the absolute target ``neg_t``) serves a request at
    ``rel_tol`` with the absolute target ``negligible`` (docs/accountant.md §9.21.1): a report the engine refused
    (the bracket [0, 1]) never does; else asked at t <= rel_tol with a target met at least as tightly, or, for a
    search's request (rel_tol >= SEARCH_TOL), a bracket within rel_tol of a positive lower value or an upper value
    below the target."""
    if isinstance(r.terms, dict) and "refused" in r.terms:
        return False
    if t <= rel_tol and (neg_t <= negligible or r.upper < negligible):
        return True
    if rel_tol < SEARCH_TOL:  # (a reported split's leg: the engine's at its rel_tol, often far inside it, §9.21.3)
        return False
    if 0.0 < r.lower and r.upper - r.lower <= rel_tol * r.lower:
        return True
    return r.upper < negligible


def served(vb: Any, j: int, e: float, rel_tol: float, negligible: float) -> AccountantReport | None:
    """With ``limits.VIA_BOTTOM_LEG_SERVE``, the cached leg j at e (``vb._leg_cache``, its targets ``vb._leg_neg``) at
    another rel_tol that :func:`serves` the request, the one of least upper value (then of largest lower value); None
    without the switch or where none does. A choice of which certified legs run: the report is the engine's."""
    if not limits.VIA_BOTTOM_LEG_SERVE:
        return None
    best: AccountantReport | None = None
    for (jj, ee, t), r in vb._leg_cache.items():
        if jj != j or ee != e or t == rel_tol or not serves(r, t, vb._leg_neg.get((jj, ee, t), 0.0), rel_tol, negligible):
            continue
        if best is None or (r.upper, -r.lower) < (best.upper, -best.lower):
            best = r
    return best
