"""The cap cover of replace-one through bot refuted by one targeted leg B (docs/accountant.md §9.16): before the cover
of §9.3 (:meth:`sharpdp.shuffle.accountant.via_bottom.ViaBottom._cap_closed`) spends its engine legs on an interval
[a, ...] of first legs, leg B at e2 >= eps - a is certified to the absolute target at which no lower value of it can
close that interval; where its upper value falls below that level the cover fails there as it would after its engine
legs (a choice of steps only: the cover's reports and refusals are those of §9.3). The cover of §9.3 itself is here
too (:func:`cap_closed`, the body of ``ViaBottom._cap_closed``)."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.closed_forms import trivial_cap
from sharpdp.shuffle.accountant.limits import EPS_CAP, U
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.via_bottom_cliff import Split
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


def cap_closed(vb: Any, eps: float, rel_tol: float, tols: tuple[float, ...] | None = None) -> Split | None:
    """The cap proved before any split is certified (docs/accountant.md §9.3): a cover of the first
    legs [0, eps] by intervals [a, b] of the grid e1 = k eps / CAP_GRID on which A_lo(b) + e^a B_lo(e2)
    >= 1 (rounded down; e2 >= eps - a exactly), A_lo and B_lo lower values of the legs' D_up from the
    closed forms (``ViaBottom._closed_leg``) or, where they fall short and the legs' closed upper values leave
    room, the engine's legs at max(rel_tol, 0.1) (the golden-section search's, cached): B at most
    CAP_ENGINE_LEGS times, A from then on at the grid points visited. The intervals are taken greedily
    from e1 = 0, each to b = eps or the largest grid point a bisection finds. Returns the split f = SPLITS[0] with bracket (1, 1)
    (min(1, value) is 1 at every split), legs bracketed by their lower values and 1; None when the
    cover fails (the split search follows, with nothing lost but the closed forms' few ms)."""
    tols = vb.COVER_TOLS if tols is None else tols
    loose = [False]  # an interval closed by a leg B looser than rt
    k_max = vb.CAP_GRID
    grid = [eps * k / k_max for k in range(k_max)] + [eps]
    engine = vb.CAP_ENGINE_LEGS
    rt = max(rel_tol, 0.1)
    a_lo: dict[int, float] = {}
    engine_a = [False]  # A_lo from the engine's legs too (once the closed forms fell short)

    def a_at(k: int) -> float:
        if k not in a_lo:
            lo = vb._closed_leg(0, grid[k], rel_tol)[0]
            a_lo[k] = max(lo, vb._leg_lower(0, grid[k], rt)) if engine_a[0] else lo
        return a_lo[k]

    def reach(k: int, e2: float, b_lo: float) -> int:
        """An m > k with A_lo(grid[m]) + e^{grid[k]} B_lo >= 1, the largest one a bisection finds (every
        such m gives a valid interval [grid[k], grid[m]], whatever the shape of A_lo); k when none."""
        def ok(m: int) -> bool:
            return vb._interval_at_least_1(eps, grid[k], e2, a_at(m), b_lo)
        if ok(k_max):
            return k_max
        if engine_a[0] and limits.VIA_BOTTOM_FLOOR_STOP and k + 1 < k_max and not ok(k + 1):
            return k  # (§9.13: the largest lower value of A beyond grid[k] is expected at k + 1: no bisection)
        lo, hi = k, k_max
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if ok(mid) else (lo, mid)
        return lo

    k = 0
    while k < k_max:
        a = grid[k]
        e2 = eps - a
        while Fraction(e2) + Fraction(a) < Fraction(eps):  # (B at e2 >= eps - a: exactly)
            e2 = math.nextafter(e2, math.inf)
        b_lo, b_up = vb._closed_leg(1, e2, rel_tol)
        # a known lower value of B at some e >= e2 (B non-increasing) closing [a, eps] ends the cover (§9.3)
        if vb._interval_at_least_1(eps, a, e2, a_at(k_max), max(b_lo, vb._known_lower(1, e2))):
            break
        m = reach(k, e2, b_lo)
        if m == k and engine > 0 and vb._interval_at_least_1(eps, a, e2, vb._closed_leg(
                0, grid[k + 1], rel_tol)[1], b_up) and not beyond_reach(vb, a, e2, grid[k + 1], rel_tol):  # (§9.16)
            # the legs' closed upper values leave room: the engine's lower values may close the interval
            engine -= 1
            if not engine_a[0]:
                engine_a[0] = True
                a_lo.clear()
            for t in (*tols, rt):  # leg B loose first; the next target only where it may close more
                lo_t = max(b_lo, vb._leg_lower(1, e2, t))
                m = reach(k, e2, lo_t)
                if m > k or t == rt or reach(k, e2, max(b_lo, vb.leg(1, e2, t).upper)) == k:
                    loose[0] = loose[0] or (m > k and t != rt)
                    break
            b_lo = lo_t
        if m == k:
            # a failure after a loose interval may be the loose path's alone: the cover of before decides
            return vb._cap_closed(eps, rel_tol, ()) if loose[0] else None
        k = m
    f = vb.SPLITS[0]
    e1 = f * eps
    e2 = vb._second(eps, e1)
    legs = (AccountantReport(e1, min(vb._closed_leg(0, e1, rel_tol)[0], 1.0), 1.0),
            AccountantReport(e2, min(vb._closed_leg(1, e2, rel_tol)[0], 1.0), 1.0))
    return Split(f, 1.0, 1.0, e1, replace(legs[0], terms={"note": "cap proved from the legs' lower values "
                                                                  "(docs/accountant.md §9.3)"}), legs[1])


__all__ = ["beyond_reach", "cap_closed", "cap_refuted", "closing_level", "trivial_refuted"]
