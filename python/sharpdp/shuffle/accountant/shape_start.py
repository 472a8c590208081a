"""Phase 1's first point at the root of the shape model "normal body plus one big jump" (docs/accountant.md §8.24.1).

Where get_epsilon's single-big-jump start (docs/accountant.md §8.11, :func:`.jump_guess.first_point`) is not formed, phase
1 started from the Gaussian-limit guess of docs/accountant.md §11 with that guess's slope; at small n both are far
from the root (GaussianRandomizer(4.6), n = 100: the first upper-only values 4e-6 and 3.5e-8 around delta = 1e-6) and
phase 1 paid 4-6 upper-only passes of 0.6-1.1 get_delta each. The closed-form estimate M (the largest normal
approximation of the laws' values plus the single big jump, :func:`.walk_model.shape`, docs/accountant.md §8.20)
follows the values' shape more closely; with ``limits.EPS44_SHAPE_START`` phase 1 starts at the root of M = delta with
M's slope there.

A choice of points only: M, its root and its slope are estimates, never bounds. Phase 1's values are upper-only values
used as a model, and every bracket end of the search is a certified value (docs/accountant.md §8, step 5).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.walk_model import shape

#: the root is bracketed from the guess in factors of this (at most _GROW steps), then solved by the Illinois rule in
#: log M against log eps to _RES (relative, in eps; phase 1's own resolution is 1e-2); the slope by a difference of _STEP
_FACTOR, _GROW, _RES, _ITERS, _STEP = 2.0, 40, 1e-4, 40, 1e-3


def shape_start(laws_at: Callable[[float], Any], n: int, delta: float, lo: float, hi: float,
                g0: float) -> tuple[float, float] | None:
    """(x, k): the root x in (lo, hi) of M(eps) = delta (``limits.EPS44_SHAPE_START``, docs/accountant.md §8.24.1) and
    M's slope k there in the units of the search's ``_root`` (d/d log eps of log(-log delta) - log(-log M), < 0);
    None where the rule is off, M is not formed on the way, or no root is bracketed (phase 1 then starts as before).
    Searched from ``g0`` (the search's guess) in factors of 2. An estimate only."""
    if not limits.EPS44_SHAPE_START or not (0.0 < delta < 1.0 and 0.0 < g0 and math.isfinite(g0)):
        return None
    try:
        pairs = laws_at(0.0)
        if all(law.atoms() is not None for _, law in pairs):  # (atom laws: their own starts, as before)
            return None
        if not max((n - 1) * float(g) for g, _ in pairs) >= float(limits.EPS44_SHAPE_ACTIVE):
            return None  # (few active users: the normal body is far from the sum's law, docs/accountant.md §8.24.1)
    except (ValueError, ArithmeticError, NotImplementedError):
        return None
    ld = math.log(delta)
    z_lo_end = math.log(lo) if lo > 0.0 else -math.inf
    z_hi_end = math.log(hi) if 0.0 < hi < math.inf else math.inf

    def f(z: float) -> float | None:
        m = shape(laws_at(math.exp(z)), n)
        return math.log(m) - ld if m > 0.0 else None

    z0 = min(max(math.log(g0), z_lo_end), z_hi_end)
    f0 = f(z0)
    if f0 is None:
        return None
    a = b = z0
    fa = fb = f0
    step = math.log(_FACTOR)
    for _ in range(_GROW):  # (a bracket fa > 0 >= fb, a < b, inside (lo, hi))
        if fa > 0.0 >= fb and a < b:
            break
        if fb > 0.0:
            a, fa = b, fb
            b = min(b + step, z_hi_end)
            if not b > a:
                return None
            fb_new = f(b)
            if fb_new is None:
                return None
            fb = fb_new
        else:
            b, fb = a, fa
            a = max(a - step, z_lo_end)
            if not a < b:
                return None
            fa_new = f(a)
            if fa_new is None:
                return None
            fa = fa_new
    else:
        return None
    side = 0
    for _ in range(_ITERS):
        if b - a <= _RES:
            break
        z = b - fb * (b - a) / (fb - fa) if fa != fb else 0.5 * (a + b)
        if not a < z < b:
            z = 0.5 * (a + b)
        fz = f(z)
        if fz is None:
            return None
        if fz > 0.0:
            a, fa = z, fz
            fb, side = (0.5 * fb if side == -1 else fb), -1
        else:
            b, fb = z, fz
            fa, side = (0.5 * fa if side == 1 else fa), 1
    z = b - fb * (b - a) / (fb - fa) if fa != fb else 0.5 * (a + b)
    z = min(max(z, a), b)
    g_lo, g_hi = f(z - _STEP), f(z + _STEP)
    if g_lo is None or g_hi is None or not g_hi < g_lo:
        return None
    k = ((g_hi - g_lo) / (2.0 * _STEP)) / -ld  # (f = log(-log delta) - log(-log v): df/dz = -(d log v/dz) / log v)
    x = math.exp(z)
    return (x, k) if k < 0.0 and math.isfinite(k) and (lo < x < hi) else None


__all__ = ["shape_start"]
