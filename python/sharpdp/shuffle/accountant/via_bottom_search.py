"""get_epsilon through bot: the search on certified values of the replace bound through bot
(docs/accountant.md §9.2; :class:`sharpdp.shuffle.accountant.via_bottom.ViaBottom`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

from sharpdp.shuffle.accountant.limits import EPS_MAX, TINY
from sharpdp.shuffle.accountant.secant import shrink


class Decider(Protocol):
    """The replace bound through bot (a :class:`sharpdp.shuffle.accountant.via_bottom.ViaBottom`)."""

    bottom: Any  # the zero-out accountant of the legs

    def decide(self, eps: float, target: float) -> float: ...

    def report(self, eps: float, rel_tol: float) -> Any: ...


def epsilon_search(vb: Decider, delta: float, xtol: float, get_delta: Callable[[float], float],
                   put: Callable[[float, float], float] | None = None, end: float | None = None) -> float:
    """get_epsilon through bot: a search on certified values of the bound (docs/accountant.md §9,
    §9.2). ``put(e, u)`` is the accountant's monotone memo (returns the reported value); with it,
    each value is :meth:`ViaBottom.decide`'s (a split search that stops once the comparison with delta is
    decided) entered into the memo, so that get_delta at the answer reports it; without it,
    get_delta. The upper end is first guessed at the split with a small e1, where the bound is about
    A(e1) + B(eps) (1.02 x the zero-out answer at delta / 2); while the value there exceeds delta
    the guess becomes the lower end and the next guess is the log-linear extrapolation of the
    last two values to delta (a little past it), at least 2 % and at most a doubling step above;
    if the first guess is already at most delta the zero-out answer at delta is the lower end
    (every split has A(e1) + e^{e1} B(e2) >= max(A(eps), B(eps))), checked too, halved while at
    most delta. ``end`` (with ``put``): the upper end in place of EPS_MAX, a point whose value <= delta the memo
    holds (docs/accountant.md §9.9), returned where the growing phase reaches it."""
    if get_delta(0.0) <= delta:
        return 0.0
    if put is None:
        fun = get_delta
    else:
        def fun(e: float) -> float:  # (with end: the full split search, as a fresh accountant's get_delta, §9.9)
            u = vb.decide(e, delta) if end is None else min(max(vb.report(e, vb.bottom.rel_tol).upper, TINY), 1.0)
            return put(e, u)
    zo = vb.bottom
    lo, ulo = 0.0, math.inf
    top = EPS_MAX if end is None or put is None else end
    try:
        hi = min(zo.get_epsilon(0.5 * delta, xtol=xtol) * 1.02 + 1e-9, top)
    except ValueError:  # delta / 2 below the zero-out floor: delta itself may still be reached
        hi = top
    uhi = fun(hi)
    above: list[tuple[float, float]] = []  # the evaluated points whose value exceeds delta (the model's)
    step, ld = 0.1, math.log(delta)
    prev: tuple[float, float] | None = None
    while uhi > delta:  # (bounded: the step doubles, at most ~20 steps to 700)
        if hi >= top:  # certified by get_delta(700) <= delta, checked by the caller (epsilon), or by the memo at end
            return top
        if lo > 0.0 and math.isfinite(ulo) and ulo > 0.0:
            prev = (lo, math.log(ulo))
        lo, ulo = hi, uhi
        above.append((lo, ulo))
        x = hi * (1.0 + step)
        if prev is not None and prev[1] > math.log(uhi):  # secant in log delta, aimed 3 % past
            x_sec = hi + (math.log(uhi) - ld) * (hi - prev[0]) / (prev[1] - math.log(uhi))
            x = min(x, max(x_sec * 1.03, hi * 1.02))
        hi = min(x, top)
        step *= 2.0
        uhi = fun(hi)
    if lo == 0.0:
        try:
            lo = zo.get_epsilon(delta, xtol=xtol)
        except ValueError:
            lo = 0.0
        lo = lo if 1e-15 < lo < hi else 0.5 * hi
        ulo = fun(lo)
        while ulo <= delta:
            if lo <= 1e-15:
                return lo
            hi, uhi, lo = lo, ulo, 0.5 * lo
            ulo = fun(lo)
        above.append((lo, ulo))
    return close(fun, delta, lo, ulo, hi, uhi, xtol, above, bisect=top != EPS_MAX)


def _model_root(above: list[tuple[float, float]], ld: float, lo: float, hi: float) -> float | None:
    """The model root from the points of ``above`` nearest the bracket's lower end (values above delta: each a
    minimised split value, unlike the first split <= delta that ends an evaluation below it): the root beyond
    the nearest of the parabola (log value against eps) through three of them where it has one, else of the
    secant through two; None without two such points or a decreasing secant."""
    pts = sorted((p for p in above if p[1] > 0.0 and p[0] <= lo), key=lambda p: -p[0])[:2]
    if len(pts) < 2 or not pts[0][0] > pts[1][0]:
        return None
    (x1, u1), (x0, u0) = pts
    f1, f0 = math.log(u1) - ld, math.log(u0) - ld
    if not f0 > f1 > 0.0:
        return None
    r = x1 + f1 * (x1 - x0) / (f0 - f1)
    third = sorted((p for p in above if p[1] > 0.0 and p[0] < x0), key=lambda p: -p[0])[:1]
    if third:  # the parabola through three points (log value against eps): its root beyond x1, if any
        x2, f2 = third[0][0], math.log(third[0][1]) - ld
        s1, s0 = (f1 - f0) / (x1 - x0), (f0 - f2) / (x0 - x2)
        c = (s1 - s0) / (x1 - x2)
        b = s1 + c * (x1 - x0)  # the slope at x1
        disc = b * b - 4.0 * c * f1
        if disc >= 0.0 and b < 0.0:
            d = 2.0 * f1 / (-b + math.sqrt(disc))  # (f1 + b d + c d^2 = 0: the root nearest x1, stable form)
            if d > 0.0 and math.isfinite(d):
                r = x1 + d
    return r


def close(fun: Callable[[float], float], delta: float, lo: float, ulo: float, hi: float, uhi: float,
          tol: float, above: list[tuple[float, float]], bisect: bool = False) -> float:
    """The safe end hi of the final bracket (hi - lo <= tol hi, fun(hi) <= delta < fun(lo), hi evaluated or
    the caller's): the root of :func:`_model_root` (points above delta), else regula falsi on the bracket's
    ends; each point aimed 0.3 tol hi past the model root, a point <= delta followed by one 0.7 tol below it
    (an accurate model closes the bracket in two evaluations); bisection after two steps that do not halve it, or
    throughout with ``bisect`` (the upper end from :func:`.ends.bottom_end`, docs/accountant.md §9.9)."""
    return shrink(fun, delta, lo, ulo, hi, uhi, tol, model=_model_root, above=above, bisect=bisect)[2]


def vertex(best: Any, seen: list[Any], step: float) -> float | None:
    """The shift x of e2 (|x| < step) minimising A_c e^{a x} + W_c e^{-(b + 1) x}, the log-linear
    model of A(e1 - x) + e^{e1 - x} B(e2 + x) around ``best`` (W_c = e^{e1} B(e2)), with a and b the
    legs' log slopes by central differences from the splits of ``seen`` at e1 -+ step; None when
    a neighbour is missing or a slope is not positive. Only a place to look: the split there is
    certified like any other."""
    p = [c for c in seen if abs((best.e1 - c.e1) - step) < 0.01 * step]
    m = [c for c in seen if abs((c.e1 - best.e1) - step) < 0.01 * step]
    if not (p and m):
        return None
    ap, am, bp, bm = p[0].leg_a.upper, m[0].leg_a.upper, p[0].leg_b.upper, m[0].leg_b.upper
    ac, bc = best.leg_a.upper, best.leg_b.upper
    if min(ap, am, bp, bm, ac, bc) <= 0.0:
        return None
    a = (math.log(ap) - math.log(am)) / (2.0 * step)
    b = (math.log(bm) - math.log(bp)) / (2.0 * step)
    if not (a > 0.0 and b > 0.0 and math.isfinite(a) and math.isfinite(b)):
        return None
    x = math.log((b + 1.0) * math.exp(best.e1) * bc / (a * ac)) / (a + b + 1.0)
    return min(max(x, -0.9 * step), 0.9 * step)
