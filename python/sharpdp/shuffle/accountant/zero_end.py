"""get_epsilon's answer 0 decided first where the search heads for eps = 0 (docs/accountant.md §8.10).

The search returns exactly 0 iff ``get_delta(0) <= delta`` (docs/accountant.md §8 step 1). Where phase 1's model root,
or a point phase 2 is about to probe, lies below ``ZERO_EPS``, :class:`ZeroEnd` evaluates ``get_delta(0)`` at once
instead of after the search: at or below delta the search ends with the answer 0 (:class:`AtZero`), above it the final
check is settled (no second evaluation at 0). A choice of points only: nothing here is a bound."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: a phase-1 model root or phase-2 point below this (in eps) has the search evaluate get_delta(0) first
#: (docs/accountant.md §8.10): a point this close to 0 costs what get_delta(0) costs, and its value is 0's within
#: the accountant's accuracy in every regime of the map (n <= 1e9)
ZERO_EPS = 1e-9


class AtZero(Exception):
    """``get_delta(0) <= delta``: get_epsilon's answer is exactly 0 (raised by :meth:`ZeroEnd.check`)."""


class ZeroEnd:
    """Whether get_epsilon's answer 0 is settled, and its check made early (docs/accountant.md §8.10).

    Parameters
    ----------
    acc : object
        The accountant (its public ``get_delta``).
    delta : float
        The target.
    settled : bool
        The answer 0 is already ruled out (a certified lower value of D_up above delta at some eps >= 0).
    """

    def __init__(self, acc: Any, delta: float, settled: bool) -> None:
        self.acc, self.delta, self.settled = acc, delta, bool(settled)

    def check(self, e: float) -> None:
        """Where ``e`` (a model root or a point about to be probed) lies below ``ZERO_EPS`` and the answer 0 is not
        settled, evaluate ``get_delta(0)``: raise :class:`AtZero` where it is <= delta, else mark it settled."""
        if self.settled or not e < ZERO_EPS:
            return
        self.settled = True
        if float(self.acc.get_delta(0.0)) <= self.delta:
            raise AtZero

    def wrap(self, fun: Callable[[float], float]) -> Callable[[float], float]:
        """``fun`` with :meth:`check` made first at each point."""
        def checked(e: float) -> float:
            self.check(e)
            return fun(e)
        return checked


__all__ = ["ZERO_EPS", "AtZero", "ZeroEnd"]
