"""Golden-section search for the smallest value of a function whose every value is certified (a minimum of
upper values is itself an upper value: the search's placement is a choice of speed only)."""

from __future__ import annotations

import math
from collections.abc import Callable

_G = 0.5 * (math.sqrt(5.0) - 1.0)


def golden_min(f: Callable[[float], float], a: float, b: float, steps: int, *, tol: float = 0.0,
               enough: float = -math.inf, left_on_tie: bool = True) -> float:
    """The smallest value of ``f`` over the points of a golden-section search of [a, b]: at most ``steps``
    steps, stopping once the interval is narrower than ``tol`` or a value is <= ``enough``; on equal values the
    interval keeps its left part when ``left_on_tie``. NaN values are ignored (inf if every value is NaN)."""
    c, d = b - _G * (b - a), a + _G * (b - a)
    fc, fd = f(c), f(d)
    best = min(math.inf, fc, fd)  # (a NaN value is never the best: min keeps its first argument against NaN)
    for _ in range(steps):
        if best <= enough or b - a < tol:
            break
        if fc < fd or (left_on_tie and fc == fd):
            b, d, fd = d, c, fc
            c = b - _G * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _G * (b - a)
            fd = f(d)
        best = min(best, fc, fd)
    return best
