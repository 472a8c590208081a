"""The bracket search of get_epsilon on the candidate classes (docs/sharp_krr.md §4.14).

Nothing here is certified by itself: :func:`gdp_epsilon_estimate` is a first guess (an estimate),
and :func:`refine_bracket` only chooses where the candidates' certified lower values are evaluated.
Its result keeps the invariants of the bisection it replaces: ``lo`` is the given lower end or a
point where ``lower(lo) > d`` was evaluated, ``hi`` the given upper end or a point where
``lower(hi) <= d`` was evaluated.
"""

from __future__ import annotations

import math
from typing import Callable

#: relative width to which the candidates' bracket is refined, as a fraction of xtol (the decision
#: is then made at lo (1 + xtol): the closer lo is to the candidates' crossing, the more of the
#: allowed slack the branch and bound can spend on long ranges, docs/sharp_krr.md §4.14)
BRACKET_FRACTION = 1.0 / 32.0


def gdp_epsilon_estimate(epsilon0: float, n: int, delta: float) -> float:
    """Estimated epsilon of n shuffled binary RR reports at ``delta``: the epsilon of the Gaussian
    trade-off with mu = (p - q) / sqrt((n - 1) p q) (the normal approximation of the privacy loss
    of one class, docs/sharp_krr.md §4.14). An estimate only (no bound in either direction): it
    places the first evaluation of :func:`refine_bracket`; 0.0 when the estimate is met at 0, eps0
    when it is not met below eps0."""
    p = 1.0 / (1.0 + math.exp(-epsilon0))
    q = 1.0 - p
    if n < 2 or not (p > q > 0):
        return epsilon0
    mu = (p - q) / math.sqrt((n - 1) * p * q)

    def gdp_delta(eps: float) -> float:
        a, b = -eps / mu + 0.5 * mu, -eps / mu - 0.5 * mu
        return 0.5 * math.erfc(-a / math.sqrt(2.0)) - math.exp(eps) * 0.5 * math.erfc(-b / math.sqrt(2.0))

    if gdp_delta(0.0) <= delta:
        return 0.0
    if gdp_delta(epsilon0) > delta:
        return epsilon0
    lo, hi = 0.0, epsilon0
    for _ in range(80):  # bisection in floats (microseconds)
        mid = 0.5 * (lo + hi)
        if gdp_delta(mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-6 * hi:
            break
    return hi


def refine_bracket(lower: Callable[[float], float], d: float, lo: float, hi: float, width: float,
                   floor: float, guess: float | None = None, max_steps: int = 200) -> tuple[float, float]:
    """(lo, hi) with hi - lo <= width hi (or lo == 0 and hi < floor): a safeguarded regula falsi
    (Illinois) on log(lower(eps) / d) from a guess, falling back to bisection.

    ``lower(eps)`` is a certified lower value of the candidates' delta at eps (any value > d
    certifies the answer above eps); the caller guarantees lower(lo) > d or lo is its own lower end,
    and hi is an accepted upper end. Only points where lower was evaluated become new ends: lo where
    lower > d, hi where lower <= d. The choice of points (interpolation, the guess, the expanding
    steps) changes only the number of evaluations.
    """
    f_lo: float | None = None  # log(lower / d) at lo (> 0), None when not evaluated here
    f_hi: float | None = None  # log(lower / d) at hi (<= 0), None when not evaluated here or lower = 0
    step = 4.0 * width  # relative step outward from a one-sided end (grows 4-fold)
    last_side = 0
    mark_w, since = hi - lo, 0  # a bisection when three steps have not halved the bracket
    for _ in range(max_steps):
        w = hi - lo
        if w <= width * hi or (lo == 0.0 and hi < floor):
            break
        if since == 3:
            force, since = w > 0.5 * mark_w, 0
            mark_w = w
        else:
            force = False
        since += 1
        if force:
            x = math.sqrt(lo * hi) if lo > 0 and hi > 4.0 * lo else 0.5 * (lo + hi)
        elif f_lo is not None and f_hi is not None:
            x = lo + w * f_lo / (f_lo - f_hi)
        elif guess is not None and lo < guess < hi:
            x = guess
        elif f_lo is not None:
            x = lo * (1.0 + step)
            step *= 4.0
        elif f_hi is not None:
            x = hi / (1.0 + step)
            step *= 4.0
        else:
            x = math.sqrt(lo * hi) if lo > 0 and hi > 4.0 * lo else 0.5 * (lo + hi)
        guess = None
        nudge = min(0.5 * width * hi, 0.5 * w)  # at least this far inside: the far end closes next
        x = min(max(x, lo + nudge), hi - nudge)
        if not (lo < x < hi):
            x = 0.5 * (lo + hi)
            if not (lo < x < hi):
                break
        v = lower(x)
        f = math.log(v / d) if v > 0 else None
        if v > d:
            lo, f_lo = x, f
            if last_side == 1 and f_hi is not None:
                f_hi *= 0.5  # Illinois
            last_side = 1
        else:
            hi, f_hi = x, f
            if last_side == -1 and f_lo is not None:
                f_lo *= 0.5
            last_side = -1
    return lo, hi


__all__ = ["BRACKET_FRACTION", "gdp_epsilon_estimate", "refine_bracket"]
