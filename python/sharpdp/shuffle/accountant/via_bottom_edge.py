"""The edge of a cliff of leg B from the laws' closed-form tops (docs/accountant.md §9.14): the least second leg e2 at
which every law of leg B (bot vs x) has its largest privacy-loss value at most 0, so that the engine certifies D_up = 0
there (driver ``certify``: "L <= 0 almost surely") and the split's chain is A(e1) plus the release sampler's charge. A
place to look only (:meth:`sharpdp.shuffle.accountant.via_bottom_cliff.CliffSearch._shrink` and ``_edge`` certify the
split there like any other)."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from sharpdp.shuffle.accountant.limits import EPS_CAP
from sharpdp.shuffle.laws import laws_for

#: bisection steps on the laws' tops (each ~0.1 ms): the edge to ~2^-60 of its bracket
EDGE_STEPS = 64


def _flat(randomizer: Any, only: tuple[int, ...] | None) -> Callable[[float], bool]:
    """``at(e)``: True where every law of leg B at e (the zero-out laws of ``only``, all where None) has
    ``top_bound() <= 0``; False where a law is unbounded above, or the laws cannot be formed."""
    def at(e: float) -> bool:
        try:
            laws = laws_for(randomizer, e, "zero_out")
        except (ValueError, ArithmeticError, NotImplementedError, TypeError):
            return False
        tops = [law.top_bound() for i, (_, law) in enumerate(laws) if only is None or i in only]
        return bool(tops) and all(t <= 0.0 for t in tops)
    return at


def leg_edge(randomizer: Any, only: tuple[int, ...] | None) -> float | None:
    """The least e in [0, EPS_CAP] found by bisection at which :func:`_flat` holds (every law of leg B has
    ``top_bound() <= 0``; a point where it was checked), or None where it fails at EPS_CAP (a law unbounded above,
    e.g. leg A's, or no randomizer). The bisection assumes only that the laws' tops fall with e (they do for the
    Gaussian randomizer's bot vs x law); the point returned is one where the check passed, whatever their shape."""
    if randomizer is None:
        return None
    at = _flat(randomizer, only)
    if at(0.0):
        return 0.0
    hi = 1.0
    while not at(hi):
        if hi >= EPS_CAP:
            return None
        hi = min(2.0 * hi, EPS_CAP)
    lo = 0.0 if hi == 1.0 else 0.5 * hi
    for _ in range(EDGE_STEPS):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        lo, hi = (lo, mid) if at(mid) else (mid, hi)
    return hi


def edge_fraction(eps: float, e2s: float, second: Callable[[float, float], float]) -> float | None:
    """The fraction f of the split e1 = f eps whose second leg ``second(eps, f eps)`` (the split's own rounding) is at
    least the edge ``e2s``, f as large as this finds (f lowered by ulps from (eps - e2s) / eps); None where e2s >= eps
    (no split has the whole edge) or at f = 0."""
    if not 0.0 <= e2s < eps:
        return None
    f = (eps - e2s) / eps
    for _ in range(64):
        if f <= 0.0:
            return None
        e2 = second(eps, f * eps)
        if Fraction(e2) >= Fraction(e2s):
            return f
        f = math.nextafter(f, 0.0)
    return None


__all__ = ["EDGE_STEPS", "edge_fraction", "leg_edge"]
