"""The secant step of get_epsilon's bracket shrinkers (docs/accountant.md §8, §9.2): :func:`secant_point`, shared by
the plain shrinker :func:`shrink` (a reference of the tests) and by
:func:`sharpdp.shuffle.accountant.via_bottom_search.close`, the shrinker of replace-one through bot; the first
bracket's helpers of :func:`sharpdp.shuffle.accountant.search.search_epsilon` (:func:`geometric_end`,
:func:`upward_end`, :func:`decreasing_root`, docs/accountant.md §8 step 3)."""

from __future__ import annotations

import math
from collections.abc import Callable

from sharpdp.shuffle.accountant.limits import SHRINK_ITERS


def secant_point(ld: float, lo: float, ulo: float, hi: float, uhi: float, tol: float,
                 root: float | None = None) -> float:
    """The next point of a bracket [lo, hi] with values ulo > delta >= uhi (both > 0; ``ld`` = log delta):
    ``root`` where it lies strictly inside the bracket, else the secant root in log delta against eps (the
    midpoint where the values do not decrease), aimed 0.3 ``tol`` hi above it (the safe side) and clamped to
    1 % of the bracket's width inside its ends.

    Parameters
    ----------
    ld : float
        log delta, the target in log.
    lo, ulo, hi, uhi : float
        The bracket's ends (nats) and their certified values (> 0).
    tol : float
        The search's relative tolerance xtol.
    root : float or None
        A model's root to aim at instead of the secant's (ignored outside (lo, hi)).

    Returns
    -------
    float
        A point strictly inside [lo, hi] (nats) where hi - lo > 0.
    """
    width = hi - lo
    r = root
    if r is None or not lo < r < hi:
        flo, fhi = math.log(ulo) - ld, math.log(uhi) - ld
        r = hi - fhi * (hi - lo) / (fhi - flo) if fhi < flo else 0.5 * (lo + hi)
    return min(max(r + 0.3 * tol * hi, lo + 0.01 * width), hi - 0.01 * width)


def shrink(fun: Callable[[float], float], delta: float, lo: float, ulo: float, hi: float, uhi: float,
           tol: float, *, model: Callable[..., float | None] | None = None,
           above: list[tuple[float, float]] | None = None, bisect: bool = False) -> tuple[float, float, float, float]:
    """Root search of get_epsilon: secant on log delta (aimed a little past the root, then a
    probe just below it) with bisection when it stalls, until hi - lo <= tol hi; fun(hi) <=
    delta < fun(lo).
    Stops at hi <= 1e-15 nats (a verified answer; only reached when fun drops below delta
    right after 0, e.g. a coarse upper value below get_delta(0)).
    With ``above`` (a list, the close of replace-one through bot): every point found above delta is
    appended to it, the secant aims at ``model(above, log delta, lo, hi)`` where that is a root inside
    the bracket, and the probe below a point <= delta is made only where the bracket's secant puts the
    root above the probe (a value <= delta there is the first split found below it, not the least).
    ``bisect``: bisection throughout, without the probe (values that may be flat or not monotone near delta, the
    bracket's upper end not a root: docs/accountant.md §9.9)."""
    ld = math.log(delta)
    slow = 0
    for _ in range(SHRINK_ITERS):  # (bounded: the safe end hi is returned in any case)
        if not (hi - lo > tol * hi and hi > 1e-15):
            break
        width = hi - lo
        r = None if model is None else model(above, ld, lo, hi)
        if bisect or slow >= 2 or not (ulo > 0 and uhi > 0):
            x, slow = 0.5 * (lo + hi), 0
        else:
            x = secant_point(ld, lo, ulo, hi, uhi, tol, r)
        u = fun(x)
        if u <= delta:
            hi, uhi = x, u
            x2 = x * (1.0 - 0.7 * tol)
            near = not bisect
            if near and above is not None:
                flo, fhi = math.log(ulo) - ld, math.log(max(uhi, 1e-300)) - ld
                near = fhi < flo and hi - fhi * (hi - lo) / (fhi - flo) >= x2
            if near and x2 > lo and hi - lo > tol * hi:
                u2 = fun(x2)
                if u2 > delta:
                    lo, ulo = x2, u2
                    if above is not None:
                        above.append((lo, ulo))
                else:
                    hi, uhi = x2, u2
        else:
            lo, ulo = x, u
            if above is not None:
                above.append((lo, ulo))
        slow = slow + 1 if hi - lo > 0.5 * width else 0
    return lo, ulo, hi, uhi


def sharpened_root(delta: float, x: float, u: float, slope: float) -> float | None:
    """The model root from one value u at x (docs/accountant.md §8.2; a choice of points only, not a bound): one step
    of the model log(-log u) linear in log eps with ``slope`` (< 0, phase 1's -d log(-log u) / d log eps, as
    :func:`sharpdp.shuffle.accountant.search._root`). None where the value forms no model (not in (0, 1), or the
    step is not finite)."""
    if not (0.0 < u < 1.0 and 0.0 < delta < 1.0 and slope < 0.0 and x > 0.0):
        return None
    z = math.log(x) - (math.log(-math.log(delta)) - math.log(-math.log(u))) / slope
    return math.exp(z) if math.isfinite(z) and z < 700.0 else None


def decreasing_root(f: Callable[[float], float], lo: float, hi: float) -> float:
    """Root of a continuous decreasing f with f(lo) > 0 > f(hi), by bisection to the resolution of
    doubles (a starting point of the search only; no scipy.optimize import on get_epsilon's path,
    whose cost is larger than a whole search)."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def geometric_end(above: Callable[[float], bool], x: float, lo: float, hi: float,
                   ratio: float) -> tuple[float, float]:
    """A bracket (lo, hi) of a monotone predicate, ``above(hi)`` true (or hi the given end) and
    ``above(lo)`` false (or lo the given end), searched from x > 0 in steps of 4 (at most 16) and
    then by geometric bisection until hi <= ratio lo: few evaluations when x is near the switch."""
    if not (lo < x < hi and x > 0.0):
        x = math.sqrt(max(lo, 1e-12 * hi) * hi) if hi > 0.0 else hi
    for _ in range(16):
        if not lo < x < hi:
            break
        if above(x):
            hi, x = x, x / 4.0
        else:
            lo, x = x, x * 4.0
        if lo > 0.0:
            break
    for _ in range(40):
        if not (lo > 0.0 and hi > ratio * lo):
            break
        mid = math.sqrt(lo * hi)
        if above(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi


def upward_end(below: Callable[[float], bool], x: float, cap: float) -> float:
    """The first of x, 4x, ..., 4^7 x (below cap) where ``below`` holds, else cap: an upper end of a
    monotone predicate true at cap, in few evaluations when x is near the switch (past 4^7 x, the
    geometric bisection of :func:`geometric_end` from the last point where it failed)."""
    for _ in range(8):
        if not 0.0 < x < cap:
            return cap
        if below(x):
            return x
        x *= 4.0
    return geometric_end(below, x, x / 4.0, cap, 1.25)[1]
