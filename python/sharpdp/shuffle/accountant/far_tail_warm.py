"""The far-tail clamp T0 searched from the previous eps's along a sweep (docs/accountant_tail.md §63).

Inside a sweep's warm start (``plain_warm.warm_sweep``: a privacy profile's sweep, a pair's sampling), the clamp
searches of the far-tail treatment (:func:`~.far_tail_grid.choose_T0`, for the closed form of §18 and for the FFT
treatment's rounds) start at the clamp the same law family took at the previous eps of the sweep, moved by the ratio of
its last two clamps (a prediction), and test a few neighbours of it (a galloping search, then the same bisection to 2 %
as ``choose_T0``'s) instead of the doubling from E[L]_+ + sd(L) and six bisection steps. Every value of the far-tail
treatment is certified for any T0 (§7, §8): only the clamp chosen changes, never what a value certifies. Outside a
sweep, or with ``limits.FT42_T0_WARM`` False, ``choose_T0`` itself (main's floats); a value outside a sweep therefore
does not depend on the values computed before it.
"""

from __future__ import annotations

import math

from sharpdp.shuffle.accountant import limits, plain_warm
from sharpdp.shuffle.accountant.far_tail_grid import bisect_T0, choose_T0
from sharpdp.shuffle.accountant.jump import pair_integral_up
from sharpdp.shuffle.laws import Law

#: the first neighbour tested is this factor away (the bisection's own stop, T - lo <= 0.02 T, then holds at once)
STEP = 1.02
#: the predicted move of the clamp (ratio of the family's last two clamps) is used only within [1 / MOVE_MAX, MOVE_MAX]
MOVE_MAX = 1.5
#: at most this many galloping steps (the step squared each time) before the search falls back to ``choose_T0``
GALLOP_MAX = 40


def _state() -> dict | None:
    """The sweep's state dict of ``plain_warm`` (None outside a sweep or with the switch off); this module's keys
    start with its own tag, so they never meet ``plain_warm``'s families."""
    if not limits.FT42_T0_WARM:
        return None
    return plain_warm.sweep_state()


def sweep_T0(law: Law, gamma: float, n: int, target: float, kind: str, cold=choose_T0) -> float:
    """A clamp T0 >= E[L]_+ + sd(L) with (n - 1) gamma I2_up(T0) / 2 <= target where one is found (``choose_T0``'s
    contract; ``kind`` names the caller's search, "closed" or "pair", whose targets differ): searched from the law
    family's last clamp in a sweep (module docstring), else by ``cold`` (:func:`~.far_tail_grid.choose_T0`, or the
    caller's name for it). A choice of speed only: the far-tail values are certified for any T0
    (docs/accountant_tail.md §7, §63.2)."""
    st = _state()
    if st is None:
        return cold(law, gamma, n, target)
    key = ("far_tail_warm.T0", kind) + plain_warm.family(law, gamma, n, 0.0)
    prev = st.get(key)
    T = None
    if prev is not None:
        last, before = prev
        move = min(max(last / before, 1.0 / MOVE_MAX), MOVE_MAX) if before > 0.0 and math.isfinite(before) else 1.0
        T = warm_search(law, gamma, n, target, last * move)
    if T is None:
        T = cold(law, gamma, n, target)
    st[key] = (T, prev[0] if prev is not None else math.nan)
    return T


def closed_T0(cold=choose_T0):
    """:func:`sweep_T0` for the closed form of §18 (``concentrated.route``'s ``choose_T0`` argument), ``cold`` outside
    a sweep."""
    return lambda law, gamma, n, target: sweep_T0(law, gamma, n, target, "closed", cold)


def warm_search(law: Law, gamma: float, n: int, target: float, guess: float) -> float | None:
    """``choose_T0``'s search started at ``guess``: raised by factors STEP, STEP^2, STEP^4, ... until the pair term
    holds, else lowered so while it still holds (never below E[L]_+ + sd(L)), then bisected to within 2 % as
    ``choose_T0``. Returns T with pair(T) <= target (T = the base where the pair term holds there), or None where no
    such T is found within GALLOP_MAX steps (the caller then runs ``choose_T0``)."""
    base = max(law.mean(), 0.0) + law.std()
    scale = 0.5 * (n - 1) * gamma

    def holds(T: float) -> bool:
        return scale * pair_integral_up(law, T) <= target

    T = max(guess, base)
    f = STEP
    if not holds(T):
        lo = T
        for _ in range(GALLOP_MAX):
            T = lo * f
            if not math.isfinite(T):
                return None
            if holds(T):
                break
            lo, f = T, f * f
        else:
            return None
    else:
        for _ in range(GALLOP_MAX):
            if T <= base:
                return T
            lo = max(T / f, base)
            if not holds(lo):
                break
            T, f = lo, f * f
        else:
            return None
    return bisect_T0(holds, lo, T)  # (choose_T0's bisection: lo fails, T holds)


__all__ = ["GALLOP_MAX", "MOVE_MAX", "STEP", "closed_T0", "sweep_T0", "warm_search"]
