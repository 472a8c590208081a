"""The cap cover of replace-one through bot refuted by one targeted leg B (docs/accountant.md §9.16): before the cover
of §9.3 (:meth:`sharpdp.shuffle.accountant.via_bottom.ViaBottom._cap_closed`) spends its engine legs on an interval
[a, ...] of first legs, leg B at e2 >= eps - a is certified to the absolute target at which no lower value of it can
close that interval; where its upper value falls below that level the cover fails there as it would after its engine
legs (a choice of steps only: the cover's reports and refusals are those of §9.3)."""

from __future__ import annotations

import math
from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.closed_forms import trivial_cap
from sharpdp.shuffle.accountant.limits import EPS_CAP, U
from sharpdp.shuffle.laws import laws_for


def closing_level(a: float, a_up: float) -> float:
    """A level below every lower value b_lo of leg B at e2 that closes the cover's interval from a, i.e. with
    (a_lo + e^a (1 - 4u) b_lo)(1 - 8u) >= 1 for some lower value a_lo <= ``a_up`` of leg A beyond a (the test of
    ``ViaBottom._interval_at_least_1``): such a b_lo is >= (1 / (1 - 8u) - a_up) / (e^a (1 - 4u)) > (1 - a_up) / e^a,
    and the level is that bound lowered by 1e-9 relative (the rounding of exp, the quotient and the subtraction, a few
    ulp). 0 where a_up >= 1 (no level: a lower value 0 of B may close the interval) or e^a overflows."""
    w = math.exp(a) if a <= 700.0 else math.inf
    if not (a_up < 1.0 and math.isfinite(w)):
        return 0.0
    return (1.0 - a_up) / w * (1.0 - 1e-9) * (1.0 - 4.0 * U)


def beyond_reach(vb: Any, a: float, e2: float, e_next: float, rel_tol: float) -> bool:
    """True (``limits.VIA_BOTTOM_COVER_TARGET``) where leg B (bot vs x) at e2 has a certified upper value below the
    :func:`closing_level` of the cover's interval from a: then no certified lower value of B(e2) (at most the true
    B(e2), at most that upper value) closes it with leg A's lower values beyond a, all at most A(e_next) (A
    non-increasing; e_next = the grid point after a), so the cover of §9.3 fails there (docs/accountant.md §9.16).
    Leg B is certified by the zero-out accountant at the loose rel_tol ``vb.PROBE_TOL`` to the absolute target of the
    level from leg A's closed-form upper value at e_next (its refinement stops once its upper value is below it), and
    is not kept in the split search's leg cache; where that upper value is not below it but below the level from
    leg A's closed-form lower value at e_next (so that a tighter leg A may refute), leg A at e_next is certified at
    max(rel_tol, 0.1) (the cover's own engine leg there, cached) and the level taken from the least of the two upper
    values of A. False otherwise, where the engine refuses a leg, without the randomizer, and with the switch off (the cover's engine legs
    then run as in §9.3). A choice of steps only: a refuted interval is one the cover's engine legs cannot close."""
    if not limits.VIA_BOTTOM_COVER_TARGET or getattr(vb.bottom, "randomizer", None) is None:
        return False  # (a zero-out accountant without its randomizer, e.g. a test's stand-in: no absolute target, §9.4)
    a_lo, a_up = vb._closed_leg(0, e_next, rel_tol)
    level = closing_level(a, a_up)
    if not level > 0.0:
        return False
    try:
        b_up = vb.bottom._report(e2, vb.PROBE_TOL, only=vb.legs[1], negligible=level).upper
    except RuntimeError:
        return False
    if b_up < level:
        return True
    if not b_up < closing_level(a, a_lo):  # (a tighter leg A cannot bring the level above leg B's upper value)
        return False
    return bool(b_up < closing_level(a, min(a_up, vb.leg(0, e_next, max(rel_tol, 0.1)).upper)))


def cap_refuted(vb: Any, eps: float, rel_tol: float) -> bool:
    """True (``limits.VIA_BOTTOM_CAP_REFUTE``, docs/accountant.md §9.18) where the legs' closed-form upper values of
    D_up (``ViaBottom._closed_leg``, cached by the first cap proof of §9.3) at the split e1 = SPLITS[0] eps,
    e2 = eps - e1 lowered as the split's, put the chain A_up(e1) + e^{e1} B_up(e2), rounded up, below 1. Then
    D_up^A(e1) + e^{e1} D_up^B(eps - e1) < 1 (D_up^B non-increasing, e2 <= eps - e1), while each cap proof of §9.3
    reports only where lower values of D_up prove that chain >= 1 at every split: none of them can report (a choice of
    steps only: their answers are the same). False with the switch off."""
    if not limits.VIA_BOTTOM_CAP_REFUTE:
        return False
    e1 = vb.SPLITS[0] * eps
    e2 = vb._second(eps, e1)
    if e1 > 700.0:
        return False
    a_up, b_up = vb._closed_leg(0, e1, rel_tol)[1], vb._closed_leg(1, e2, rel_tol)[1]
    return bool((a_up + math.exp(e1) * (1.0 + 4.0 * U) * b_up) * (1.0 + 8.0 * U) < 1.0)


def trivial_refuted(vb: Any, eps: float) -> bool:
    """True (``limits.VIA_BOTTOM_TRIVIAL_REFUTE``, docs/accountant.md §9.22.5) where the legs' E[L_+] (the trivial caps,
    ``closed_forms.trivial_cap``: certified upper values of every law's D_up at every n, one stop-loss value each) at the
    split e1 = SPLITS[0] eps, e2 = eps - e1 lowered as the split's, maximised over each leg's laws, put the chain, rounded
    up, below 1: no cap proof of §9.3 can report (Lemma 9.18.1 with these upper values), so none is tried and the closed
    forms they would read (the few-user brackets at small n) are not computed. A choice of steps only; False with the
    switch off, without a randomizer or where a law cannot be formed."""
    rnd = getattr(vb.bottom, "randomizer", None)
    e1 = vb.SPLITS[0] * eps
    if not limits.VIA_BOTTOM_TRIVIAL_REFUTE or rnd is None or not 0.0 <= e1 <= EPS_CAP:
        return False
    e2 = vb._second(eps, e1)
    caps = []
    try:
        for j, e in ((0, e1), (1, e2)):
            only = vb.legs[j]
            caps.append(max(trivial_cap(law) for i, (_, law) in enumerate(laws_for(rnd, e, "zero_out"))
                            if only is None or i in only))
    except (RuntimeError, ValueError, ArithmeticError):
        return False
    return bool((caps[0] + math.exp(e1) * (1.0 + 4.0 * U) * caps[1]) * (1.0 + 8.0 * U) < 1.0)


__all__ = ["beyond_reach", "cap_refuted", "closing_level", "trivial_refuted"]
