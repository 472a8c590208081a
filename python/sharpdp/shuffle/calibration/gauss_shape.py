"""``calibrate_gaussian``'s start on the loose search at the root of the accountant's shape model (docs/calibration.md
§16.1).

On the loose search (n >= 1e7, eps <= 0.01, docs/calibration.md §6) the start aimed on the template plus the single big
jump with its Jensen correction (§10, §13.1) lands 2.7 delta above the target at (n, eps) = (1e8, 0.001), and stage 1
pays two more loose evaluations to reach it. The estimate M(sigma0) = the largest normal approximation of the laws'
values plus the single big jump (:func:`sharpdp.shuffle.accountant.walk_model.shape`, docs/accountant.md §8.20), formed
on the accountant's own laws at epsilon, follows the certified values more closely; with ``limits.CAL44_SHAPE_START``
the start is where log M meets the search's target.

A model only (docs/calibration.md §1): a point is returned only by a certifying evaluation whose certified upper value
is <= delta; the start only chooses the first (loose) evaluation.
"""

from __future__ import annotations

import math

from scipy.optimize import brentq

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.walk_model import shape
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.randomizers import GaussianRandomizer

#: the root is bracketed around the old start in steps of this (in x = log sigma0), at most _GROW steps each way, and
#: solved to _XTOL in x (the loose search's stage 1 stops within 0.03 in log delta, about 1e-3 in x at its slopes)
_STEP, _GROW, _XTOL = 0.05, 20, 1e-5
_H = 1e-4  # the central difference's half step in x of :func:`shape_slope` (docs/calibration.md §20)


def shape_x(x0: float, n: int, epsilon: float, target: float, adjacency: str) -> float | None:
    """x = log sigma0 near ``x0`` where log M(sigma0) = ``target`` (docs/calibration.md §16.1), or None (the rule
    off, not the loose search's zero-out case, M not formed, or no root bracketed: the start stays ``x0``).
    With ``limits.CAL46_START_MAX`` (docs/calibration.md §17) the larger of that root and ``x0`` (the start nearer the
    target from above: both models lie below the certified values where measured), whatever
    ``limits.CAL44_SHAPE_START``."""
    if limits.CAL46_START_MAX:
        xs = _shape_root(x0, n, epsilon, target, adjacency)
        return None if xs is None else max(xs, x0)
    if not limits.CAL44_SHAPE_START:
        return None
    return _shape_root(x0, n, epsilon, target, adjacency)


def shape_slope(x: float, n: int, epsilon: float, adjacency: str) -> float | None:
    """d log M / d x at x = log sigma0 (central difference, step _H), M the shape model of :func:`shape_x`, or None
    (not the loose search's zero-out case at n >= ``limits.CAL44_SHAPE_N``, or M not formed). A slope model for the
    first certifying step of docs/calibration.md §20 (a choice of points only)."""
    if not (adjacency == "zero_out" and n >= limits.CAL44_SHAPE_N and math.isfinite(x)):
        return None
    try:
        lo, hi = (shape(laws_for(GaussianRandomizer(math.exp(y), 1), epsilon, adjacency), n) for y in (x - _H, x + _H))
    except (ValueError, ArithmeticError, OverflowError, ZeroDivisionError, NotImplementedError):
        return None
    if not (lo > 0.0 and hi > 0.0):
        return None
    return (math.log(hi) - math.log(lo)) / (2.0 * _H)


def _shape_root(x0: float, n: int, epsilon: float, target: float, adjacency: str) -> float | None:
    """The root of log M(sigma0) = ``target`` near ``x0`` in x = log sigma0 (docs/calibration.md §16.1), or None (not
    the loose search's zero-out case, M not formed, or no root bracketed)."""
    if not (adjacency == "zero_out" and n >= limits.CAL44_SHAPE_N
            and math.isfinite(x0) and math.isfinite(target)):
        return None

    def f(x: float) -> float:
        m = shape(laws_for(GaussianRandomizer(math.exp(x), 1), epsilon, adjacency), n)
        if not m > 0.0:
            raise ArithmeticError("shape model not formed")
        return math.log(m) - target  # (decreasing in x: a larger sigma0 is a post-processing)

    try:
        a = b = x0
        fa = fb = f(x0)
        for _ in range(_GROW):
            if fa > 0.0 >= fb and a < b:
                break
            if fb > 0.0:
                a, fa = b, fb
                b += _STEP
                fb = f(b)
            else:
                b, fb = a, fa
                a -= _STEP
                fa = f(a)
        else:
            return None
        return float(brentq(f, a, b, xtol=_XTOL))
    except (ValueError, ArithmeticError, OverflowError, ZeroDivisionError, NotImplementedError):
        return None


__all__ = ["shape_slope", "shape_x"]
