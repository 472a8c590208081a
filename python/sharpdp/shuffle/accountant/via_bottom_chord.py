"""Leg A of replace-one through bot between two certified neighbours, from convexity in e^eps (docs/accountant.md §9.19).

A(e) = sup_x D_up^{x vs bot}(e) is convex in t = e^e: each D_up is E[(U - t V)_+] / (n gamma) with (U, V) not depending
on e (docs/accountant.md §1.3, §1.5: l_eps = R_x / R_BG - e^eps), a mean of positive parts of functions affine in t, and a
supremum of convex functions is convex. Between two legs A certified at e_k < e < e_{k+1} the chord of their upper values
is an upper value of A(e); the secants through the pairs of certified legs beyond them, and A's monotonicity (§1.6),
give lower values. :func:`chord_leg` returns that bracket as the leg's report where it meets the leg's rel_tol; the
cliff searches of §9.5 (:func:`chording`) then certify their legs B alone; leg B likewise (B = sup_x D_up^{bot vs x})."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import wraps
from typing import Any, TypeVar

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.accountant.results import AccountantReport

# the relative margin on each interpolation weight (expm1 within 2 ulp as exp, assumption F4, of an argument within
# 1 ulp: a few ulp times 1 + d for anchors at most CHORD_SPAN apart; 1e-12 is ~4500 ulp)
WEIGHT_MARGIN = 1e-12
# anchors farther than this from e (in nats) are not used (the chord's curvature error grows with the span)
CHORD_SPAN = 1.0

F = TypeVar("F", bound=Callable[..., Any])


def _diff(a: float, b: float) -> float:
    """a - b for floats a > b, rounded to nearest from the exact difference (relative error <= u)."""
    return float(Fraction(a) - Fraction(b))


def _ratio(num: float, den: float) -> float:
    """expm1(num) / expm1(den) for 0 < num, den <= CHORD_SPAN + tiny (an interpolation weight, before its margin)."""
    return math.expm1(num) / math.expm1(den)


def anchors(vb: Any, e: float, leg: int = 0) -> list[tuple[float, float, float]]:
    """The engine-certified legs ``leg`` (0: A, 1: B) known to ``vb`` (its leg cache, every rel_tol), merged per e (the largest lower value,
    the least upper value), as sorted (e', lower, upper) with 0 <= e' <= eps_tau and |e' - e| <= CHORD_SPAN."""
    et = float(getattr(vb.bottom, "eps_tau", math.inf))
    got: dict[float, tuple[float, float]] = {}
    for (j, x, _), r in vb._leg_cache.items():
        if j != leg or not 0.0 <= x <= et or abs(x - e) > CHORD_SPAN or "refused" in r.terms:
            continue
        lo, up = got.get(x, (0.0, math.inf))
        got[x] = (max(lo, r.lower), min(up, r.upper))
    return sorted((x, lo, up) for x, (lo, up) in got.items())


def chord_bracket(pts: list[tuple[float, float, float]], e: float) -> tuple[float, float] | None:
    """(lower, upper) values of A(e) from certified brackets ``pts`` = sorted (e_i, lo_i, up_i) of A at e_i (all at most
    eps_tau), with some e_k < e < e_{k+1} (docs/accountant.md §9.19, Lemma 9.19.1); None without such neighbours.
    Upper: the chord of up_k, up_{k+1} in t = e^e (at most up_k: A is non-increasing). Lower: the largest of lo_{k+1}
    (monotone), the secant through (e_{k-1}, e_k) extended right and the one through (e_{k+1}, e_{k+2}) extended left,
    each with the slope's least value from the brackets. Rounded outwards (weights by WEIGHT_MARGIN, each product and
    sum by a few u)."""
    k = max((i for i, p in enumerate(pts) if p[0] < e), default=None)
    if k is None or k + 1 >= len(pts) or not pts[k + 1][0] > e:
        return None
    (ea, loa, upa), (eb, lob, upb) = pts[k], pts[k + 1]
    lam = _ratio(_diff(e, ea), _diff(eb, ea))  # (t - t_a) / (t_b - t_a), in (0, 1)
    if upb >= upa:
        up = upa + min(1.0, lam * (1 + WEIGHT_MARGIN)) * (upb - upa) * (1 + 2 * U)
    else:
        up = upa - lam * (1 - WEIGHT_MARGIN) * (upa - upb) * (1 - 2 * U)
    up = min(up * (1 + 4 * U), upa)
    lows = [lob]
    if k >= 1:  # (t - t_a) / (t_a - t_p) = e^{ea - ep} expm1(e - ea) / expm1(ea - ep)
        ep, _, upp = pts[k - 1]
        if upp > loa:
            r = math.exp(_diff(ea, ep)) * _ratio(_diff(e, ea), _diff(ea, ep)) * (1 + WEIGHT_MARGIN + 8 * U)
            lows.append(loa - r * (upp - loa) * (1 + 4 * U))
        else:
            lows.append(loa)
    if k + 2 < len(pts):  # (t_b - t) / (t_c - t_b) = e^{-(e - ... )}: expm1(eb - e) e^{e - eb} / expm1(ec - eb)
        ec, _, upc = pts[k + 2]
        if upc < lob:
            r = math.exp(-_diff(eb, e)) * _ratio(_diff(eb, e), _diff(ec, eb)) * (1 - WEIGHT_MARGIN - 8 * U)
            lows.append(lob + r * (lob - upc) * (1 - 4 * U))
    lo = max(0.0, max(lows) * (1 - 8 * U))
    return lo, up


def chord_leg(vb: Any, e: float, rel_tol: float, leg: int = 0, negligible: float = 0.0) -> AccountantReport | None:
    """Leg ``leg``'s report at e (0: A; 1: B, with ``limits.VIA_BOTTOM_CHORD_B``) from :func:`chord_bracket` on the
    certified legs of that order known to ``vb`` where its bracket meets rel_tol (upper - lower <= rel_tol lower, lower
    > 0; leg B: min(rel_tol, VIA_BOTTOM_CHORD_B_TOL)), 0 < e <= eps_tau and n >= VIA_BOTTOM_CHORD_N; ``negligible``
    (the leg's absolute target, §9.4) is kept with it (a chord is not accepted for being below it alone); None
    otherwise (the engine certifies it). Kept in :func:`chords`. With ``limits.VIA_BOTTOM_CHORD`` off: None."""
    if not (limits.VIA_BOTTOM_CHORD and (leg == 0 or limits.VIA_BOTTOM_CHORD_B)) \
            or not 0.0 < e <= float(getattr(vb.bottom, "eps_tau", math.inf)) \
            or not getattr(vb.bottom, "n", 0) >= limits.VIA_BOTTOM_CHORD_N:
        return None
    pts = anchors(vb, e, leg)
    if any(p[0] == e for p in pts):
        return None
    b = chord_bracket(pts, e)
    tol = rel_tol if leg == 0 else min(rel_tol, limits.VIA_BOTTOM_CHORD_B_TOL)
    if b is None or not (b[0] > 0.0 and b[1] - b[0] <= tol * b[0]):
        return None
    r = AccountantReport(e, b[0], b[1], terms={"chord": "between certified legs of its order (docs/accountant.md §9.19)"})
    chords(vb)[(leg, e, rel_tol)] = (r, negligible)
    return r


def chords(vb: Any) -> dict[tuple[int, float, float], tuple[AccountantReport, float]]:
    """``vb``'s chord legs (leg, e, rel_tol) -> (report, the absolute target it met), apart from its leg cache (which
    holds the engine's legs alone: the anchors, and the legs the reported split reads, §9.12)."""
    memo = vb.__dict__.get("_chords")
    if memo is None or len(memo) > 4096:
        memo = vb._chords = {}
    return memo


def cached_chord(vb: Any, j: int, e: float, rel_tol: float, negligible: float) -> AccountantReport | None:
    """A chord leg of ``vb`` at (j, e, rel_tol) meeting the absolute target ``negligible`` (as ViaBottom.leg's cache),
    else a new one from :func:`chord_leg` (None where none applies)."""
    hit = chords(vb).get((j, e, rel_tol))
    if hit is not None and (hit[1] <= negligible or hit[0].upper < negligible):
        return hit[0]
    return chord_leg(vb, e, rel_tol, j, negligible)


def engine_leg(vb: Any, j: int, e: float, tols: tuple[float, ...]) -> AccountantReport | None:
    """Where the search's leg j at e was a chord (at the first of ``tols`` that has one), the engine's leg at that rel_tol
    and absolute target (the reported split's leg B of §9.12, read from the engine's legs alone); None where none was."""
    t = next((t for t in tols if (j, e, t) in chords(vb)), None)
    if t is None:
        return None
    prev, vb._chord_on = vb.__dict__.get("_chord_on", False), False
    try:
        return vb.leg(j, e, t, chords(vb)[(j, e, t)][1])  # type: ignore[no-any-return]
    finally:
        vb._chord_on = prev


def _scope(method: F, on: Callable[[], bool]) -> F:
    @wraps(method)
    def inner(self: Any, *args: Any, **kw: Any) -> Any:
        prev = self.__dict__.get("_chord_on", False)
        self._chord_on = prev or on()
        try:
            return method(self, *args, **kw)
        finally:
            self._chord_on = prev
    return inner  # type: ignore[return-value]


def chording(method: F) -> F:
    """The cliff searches of §9.5 with leg A from :func:`chord_leg` where it applies (ViaBottom.leg reads the flag)."""
    return _scope(method, lambda: limits.VIA_BOTTOM_CHORD)


def chording_search(method: F) -> F:
    """The window of §9.10 (its golden section and model) likewise, with ``limits.VIA_BOTTOM_CHORD_SEARCH`` too (not the
    model search of §9.11: docs/accountant.md §9.19)."""
    return _scope(method, lambda: limits.VIA_BOTTOM_CHORD and limits.VIA_BOTTOM_CHORD_SEARCH)
