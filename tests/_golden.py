"""Golden-section minimisation in mpmath, shared by the tests' high-precision references."""

from __future__ import annotations

from collections.abc import Callable

import mpmath


def golden_min(f: Callable[[mpmath.mpf], mpmath.mpf], lo: float, hi: float, iters: int) -> mpmath.mpf:
    """f at the midpoint of the final bracket of ``iters`` golden-section steps on [lo, hi] (f unimodal)."""
    a, c = mpmath.mpf(lo), mpmath.mpf(hi)
    g = (mpmath.sqrt(5) - 1) / 2
    for _ in range(iters):
        x1, x2 = c - g * (c - a), a + g * (c - a)
        if f(x1) < f(x2):
            c = x2
        else:
            a = x1
    return f((a + c) / 2)
