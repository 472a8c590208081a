"""get_epsilon through bot: the search on certified values of the replace bound through bot
(docs/accountant.md §9.2; :class:`sharpdp.shuffle.accountant.via_bottom.ViaBottom`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

from sharpdp.shuffle.accountant.limits import EPS_MAX
from sharpdp.shuffle.accountant.search import shrink


class Decider(Protocol):
    """The replace bound through bot (a :class:`sharpdp.shuffle.accountant.via_bottom.ViaBottom`)."""

    bottom: Any  # the zero-out accountant of the legs

    def decide(self, eps: float, target: float) -> float: ...


def epsilon_search(vb: Decider, delta: float, xtol: float, get_delta: Callable[[float], float],
                   put: Callable[[float, float], float] | None = None) -> float:
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
    most delta."""
    if get_delta(0.0) <= delta:
        return 0.0
    if put is None:
        fun = get_delta
    else:
        def fun(e: float) -> float:
            return put(e, vb.decide(e, delta))
    zo = vb.bottom
    lo, ulo = 0.0, math.inf
    try:
        hi = min(zo.get_epsilon(0.5 * delta, xtol=xtol) * 1.02 + 1e-9, EPS_MAX)
    except ValueError:  # delta / 2 below the zero-out floor: delta itself may still be reached
        hi = EPS_MAX
    uhi = fun(hi)
    step, ld = 0.1, math.log(delta)
    prev: tuple[float, float] | None = None
    while uhi > delta:  # (bounded: the step doubles, at most ~20 steps to 700)
        if hi >= EPS_MAX:
            return EPS_MAX  # certified by get_delta(700) <= delta, checked by the caller (epsilon)
        if lo > 0.0 and math.isfinite(ulo) and ulo > 0.0:
            prev = (lo, math.log(ulo))
        lo, ulo = hi, uhi
        x = hi * (1.0 + step)
        if prev is not None and prev[1] > math.log(uhi):  # secant in log delta, aimed 3 % past
            x_sec = hi + (math.log(uhi) - ld) * (hi - prev[0]) / (prev[1] - math.log(uhi))
            x = min(x, max(x_sec * 1.03, hi * 1.02))
        hi = min(x, EPS_MAX)
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
    return shrink(fun, delta, lo, ulo, hi, uhi, xtol)[2]
