"""The walk's shape model (docs/accountant.md §8.20): where get_epsilon's loose looks walk to the root at n >= 1e7
(docs/accountant.md §8.8), the next look sits at the root of rho(eps) M(eps) = delta, M the closed-form estimate
"normal body plus one big jump" and rho the looks' own level over it, instead of the secant on phase 1's slope.

A choice of points only: M and rho are estimates, never bounds; every bracket end of the search is still a certified
value (a look's lower value above delta, or a probe), docs/accountant.md §8, step 6.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.far_tail_grid import normal_value
from sharpdp.shuffle.accountant.jump_guess import jump_value

#: the model's root is searched within this factor of the last look (in eps) and to this relative resolution; its
#: slope there by a central difference of this step (in log eps)
_SPAN, _RES, _STEP = 2.0, 1e-6, 1e-3


def shape(pairs: list[Any], n: int) -> float:
    """M at one epsilon (``pairs``: laws_for's (gamma, law) there): the largest normal approximation of the laws'
    values (:func:`.far_tail_grid.normal_value`) plus the single-big-jump model (:func:`.jump_guess.jump_value`);
    0.0 where it is not formed. An estimate only."""
    try:
        body = max((normal_value(law, float(g), n) for g, law in pairs if law.top_bound() > 0), default=0.0)
        m = body + jump_value(pairs, n)[0]
    except (ValueError, ArithmeticError, NotImplementedError):
        return 0.0
    return m if math.isfinite(m) and m > 0.0 else 0.0


def shape_root(laws_at: Callable[[float], Any], n: int, delta: float, pts: list[tuple[float, float]], lo: float,
               hi: float) -> tuple[float, float] | None:
    """(log of the next look's point, the model's slope there in the units of the search's ``_root``: d/d log eps of
    log(-log delta) - log(-log v)) (docs/accountant.md §8.20), or None (the walk's secant step then, as before: the
    rule off, a model not formed, or no root within a factor 2 of the last look inside (lo, hi)).

    ``pts``: the looks so far as (log eps, log(-log delta) - log(-log v)), v a look's model value (§8.8). The level
    log rho = log v - log M is taken at the last look, and where there are two looks or more moves linearly in log eps
    through the last two (a secant on the model's residual); the root of log M + log rho = log delta is bisected in
    log eps; the slope is the model's central difference there."""
    if not limits.EPS41_WALK_SHAPE or not pts or not 0.0 < delta < 1.0:
        return None
    ld = math.log(-math.log(delta))

    def log_m(z: float) -> float | None:
        m = shape(laws_at(math.exp(z)), n)
        return math.log(m) if m > 0.0 else None

    levels = []
    for z, f in pts[-2:]:
        lv = -math.exp(ld - f)  # (log v: f = ld - log(-log v))
        lm = log_m(z)
        if lm is None:
            return None
        levels.append((z, lv - lm))
    (z1, r1) = levels[-1]
    slope = 0.0
    if len(levels) == 2 and levels[0][0] != z1:
        slope = (r1 - levels[0][1]) / (z1 - levels[0][0])

    def g(z: float) -> float | None:
        lm = log_m(z)
        return None if lm is None else lm + r1 + slope * (z - z1) - math.log(delta)

    a = max(z1 - math.log(_SPAN), math.log(lo) if lo > 0.0 else -math.inf)
    b = min(z1 + math.log(_SPAN), math.log(hi) if hi > 0.0 else -math.inf)
    if not a < b:
        return None
    ga, gb = g(a), g(b)
    if ga is None or gb is None or not ga > 0.0 > gb:
        return None
    while b - a > _RES:
        c = 0.5 * (a + b)
        gc = g(c)
        if gc is None:
            return None
        if gc > 0.0:
            a = c
        else:
            b = c
    z = 0.5 * (a + b)
    g_lo, g_hi = g(z - _STEP), g(z + _STEP)
    if g_lo is None or g_hi is None or not g_hi < g_lo:
        return None
    # the model's slope at its root in _root's units: f = log(-log delta) - log(-log v) has df/dz = -(d log v/dz) / log v
    return z, -((g_hi - g_lo) / (2.0 * _STEP)) / math.log(delta)


def shape_step(laws_at: Callable[[float], Any], n: int, delta: float, pts: list[tuple[float, float]], lo: float,
               hi: float) -> tuple[float, float] | None:
    """Phase 2's first point where no walk runs after the look at the phase-1 root (docs/accountant.md §8.20): the shape
    model's root and slope from that look (:func:`shape_root`) where ``limits.EPS41_SHAPE_STEP`` and the model explains
    the look within ``limits.EPS41_SHAPE_FIT`` (|log rho| there), else None (phase 1's slope or the refit, as before).
    A choice of points only."""
    if not limits.EPS41_SHAPE_STEP or not pts or not 0.0 < delta < 1.0:
        return None
    z, f = pts[-1]
    m = shape(laws_at(math.exp(z)), n)
    if not m > 0.0 or abs(-math.exp(math.log(-math.log(delta)) - f) - math.log(m)) > float(limits.EPS41_SHAPE_FIT):
        return None
    return shape_root(laws_at, n, delta, pts, lo, hi)


__all__ = ["shape", "shape_root", "shape_step"]
