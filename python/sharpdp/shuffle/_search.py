"""get_epsilon's root search (docs/accountant.md §8) and the monotone memos (module step M of
:mod:`sharpdp.shuffle.accountant`).

:func:`search_epsilon` brackets and shrinks the target on the certified upper value (phases 1
and 2: :func:`sharpdp.shuffle._certify.certify` in upper-only mode) and then on ``get_delta``
itself (phase 3). It sees the accountant only through :class:`_Evaluator` (no import of the
public class: no cycle).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from typing import Any, Protocol

from sharpdp.shuffle._certify import _jensen_lower, _plus, _surcharge, _trivial_cap, _upper_value, certify
from sharpdp.shuffle._laws import laws_for
from sharpdp.shuffle._lattice import _EPS_CAP, _EPS_MAX, _MEMO_MAX, _SHRINK_ITERS, _TINY, _VALUE_FLOOR


class _Evaluator(Protocol):
    """What the search asks of the accountant (:class:`sharpdp.shuffle.ShuffleAccountant`)."""

    randomizer: Any
    adjacency: str
    n: int
    rel_tol: float
    threads: int

    def get_delta(self, epsilon: Any) -> Any: ...

    def _cap_beyond(self, eps: float) -> tuple[float, float]: ...


def _shrink(fun: Callable[[float], float], delta: float, lo: float, ulo: float, hi: float, uhi: float,
            tol: float) -> tuple[float, float, float, float]:
    """Root search of get_epsilon: secant on log delta (aimed a little past the root, then a
    probe just below it) with bisection when it stalls, until hi - lo <= tol hi; fun(hi) <=
    delta < fun(lo).
    Stops at hi <= 1e-15 nats (a verified answer; only reached when fun drops below delta
    right after 0, e.g. a coarse upper value below get_delta(0))."""
    ld = math.log(delta)
    slow = 0
    for _ in range(_SHRINK_ITERS):  # (bounded: the safe end hi is returned in any case)
        if not (hi - lo > tol * hi and hi > 1e-15):
            break
        width = hi - lo
        if slow >= 2 or not (ulo > 0 and uhi > 0):
            x, slow = 0.5 * (lo + hi), 0
        else:
            flo, fhi = math.log(ulo) - ld, math.log(uhi) - ld
            x = hi - fhi * (hi - lo) / (fhi - flo) if fhi < flo else 0.5 * (lo + hi)
            x = min(max(x + 0.3 * tol * hi, lo + 0.01 * width), hi - 0.01 * width)
        u = fun(x)
        if u <= delta:
            hi, uhi = x, u
            x2 = x * (1.0 - 0.7 * tol)
            if x2 > lo and hi - lo > tol * hi:
                u2 = fun(x2)
                if u2 > delta:
                    lo, ulo = x2, u2
                else:
                    hi, uhi = x2, u2
        else:
            lo, ulo = x, u
        slow = slow + 1 if hi - lo > 0.5 * width else 0
    return lo, ulo, hi, uhi


def _envelope_put(keys: list, vals: list, k: float, v: float) -> float:
    """Insert (k, v) into a sorted non-increasing envelope (module step M) and return the reported
    value min(v, value at the largest key <= k); values at larger keys are lowered to it, so the
    envelope stays non-increasing. At most _MEMO_MAX points (then it restarts: forgetting
    points only loosens later reports)."""
    i = bisect.bisect_right(keys, k)
    if i > 0:
        v = min(v, vals[i - 1])
    if i > 0 and keys[i - 1] == k:
        vals[i - 1] = v
    else:
        if len(keys) >= _MEMO_MAX:
            keys.clear()
            vals.clear()
            i = 0
        keys.insert(i, k)
        vals.insert(i, v)
        i += 1
    for j in range(i, len(vals)):
        if vals[j] <= v:
            break
        vals[j] = v
    return v


def _guess_epsilon(acc: _Evaluator, delta: float) -> float:
    """Starting point only (asymptotics of docs/accountant.md §11, not a bound).

    Solves phi(a)/a^2 = delta chi sqrt(n).
    """
    from scipy.optimize import brentq

    try:
        pairs = laws_for(acc.randomizer, 0.0, acc.adjacency)
        chi = min(math.sqrt(g) / law.std() for g, law in pairs)
        lt = math.log(delta * chi * math.sqrt(acc.n))
        f = lambda a: -0.5 * a * a - 0.5 * math.log(2 * math.pi) - 2 * math.log(a) - lt  # noqa: E731
        a = brentq(f, 1e-3, 60.0) if f(1e-3) > 0 > f(60.0) else 1.0
        return max(a / (chi * math.sqrt(acc.n)), 1e-8)
    except (ValueError, ZeroDivisionError, ArithmeticError):
        return 0.1


def search_epsilon(acc: _Evaluator, delta: float, xtol: float, cap0: float | None) -> float:
    """get_epsilon's search after the checks (validated delta and xtol; ``cap0``: eps0 of a pure
    eps0-LDP randomizer under replace-one, else None; get_delta(700) <= delta already checked)."""
    ratios: dict[int, float] = {}
    rel = acc.rel_tol
    up_cache: dict = {}

    def up(e: float) -> float:
        if e > _EPS_CAP:  # module step L: min(value at 60, E[L_+] at e)
            return min(up(_EPS_CAP), acc._cap_beyond(e)[1])
        key = (e, tuple(sorted(ratios.items())))
        if key in up_cache:
            return up_cache[key]
        # the laws in decreasing order of their cap E[L_+] (>= their value): a law whose cap is
        # below the maximum so far cannot change it, and one whose cap is far below delta or
        # below the value floor only needs the cap (get_delta itself reports the cap below the
        # floor, certify; the search needs no more there)
        items = []
        for i, (gamma, law) in enumerate(laws_for(acc.randomizer, e, acc.adjacency)):
            items.append((_trivial_cap(law) if law.support()[1] > 0 else 0.0, i, float(gamma), law))
        m = 0.0
        for c, i, gamma, law in sorted(items, key=lambda t: -t[0]):
            if c <= m:
                continue
            if c <= max(1e-6 * delta, _VALUE_FLOOR):
                m = max(m, c)
            else:
                m = max(m, _upper_value(law, gamma, acc.n, rel, acc.threads, delta, ratios.get(i, 0.125)))
        u = _plus(max(m, _TINY), _surcharge(acc.randomizer, e, acc.adjacency))
        if len(up_cache) < 512:
            up_cache[key] = u
        return u

    def jensen_at(e: float) -> float:
        """max over laws of the Jensen lower value at e (<= D_up <= every upper value)."""
        if e > _EPS_CAP:
            return acc._cap_beyond(e)[0]
        return max((_jensen_lower(law, float(gamma), acc.n) for gamma, law in
                    laws_for(acc.randomizer, e, acc.adjacency) if law.support()[1] > 0), default=0.0)

    def cap_at(e: float) -> float:
        """max over laws of E[L_+] at e plus the surcharge: a cheap certified upper value."""
        if e > _EPS_CAP:
            return acc._cap_beyond(e)[1]
        c = max((_trivial_cap(law) for _, law in laws_for(acc.randomizer, e, acc.adjacency)
                 if law.support()[1] > 0), default=0.0)
        return _plus(c, _surcharge(acc.randomizer, e, acc.adjacency))

    ld = math.log(delta)

    def shrink(fun: Callable[[float], float], lo: float, ulo: float, hi: float, uhi: float,
               tol: float) -> tuple[float, float, float, float]:
        return _shrink(fun, delta, lo, ulo, hi, uhi, tol)

    def rebracket(fun: Callable[[float], float], lo: float, hi: float,
                  tol: float) -> tuple[float, float, float, float] | None:
        """Re-establish fun(hi) <= delta < fun(lo) near an old bracket (steps of twice its
        width, doubling: the root moves little between grids), then shrink it."""
        w = max(hi - lo, 1e-3 * hi)
        uhi = fun(hi)
        while uhi > delta:  # (w doubles: at most ~60 steps to reach cap)
            w *= 2.0
            lo, ulo, hi = hi, uhi, min(hi + w, cap)
            uhi = fun(hi)
            if uhi > delta and hi >= cap:
                return None
        ulo = fun(lo) if lo > 0 else u0
        while ulo <= delta:  # (lo halves at least, and is 0 below 1e-6 hi: bounded)
            hi, uhi = lo, ulo
            w *= 2.0
            lo = max(lo - w, 0.5 * lo) if lo > 1e-6 * hi else 0.0
            ulo = fun(lo) if lo > 0 else u0
        return shrink(fun, lo, ulo, hi, uhi, tol)

    # exactly 0 iff the published value get_delta(0) meets the target
    d0 = acc.get_delta(0.0)
    if d0 <= delta:
        return 0.0
    # phase 1: bracket and shrink to 1% on a coarse grid (h = sd/8, upper value only); the
    # value at 0 is taken as d0 (> delta), so no bracket ever closes at 0
    u0 = d0
    # the search never goes beyond cap: eps0 (delta = 0 there) or 700 (get_delta(700) <= delta
    # was checked above, so cap itself is a certified answer)
    cap = cap0 if cap0 is not None else _EPS_MAX
    if up(cap) > delta:
        return cap  # the blanket bound is no better than the local guarantee (or than 700)
    # a first upper end from the closed-form cap E[L_+] (up <= cap): bisection on the cheap
    # closed forms (at most 40 steps) instead of certified evaluations
    c_lo, c_hi = 0.0, cap
    if cap_at(cap) <= delta:
        for _ in range(40):
            mid = 0.5 * (c_lo + c_hi)
            if cap_at(mid) <= delta:
                c_hi = mid
            else:
                c_lo = mid
            if c_hi - c_lo <= 1e-3 * c_hi:
                break
        cap_end, cap_u = c_hi, cap_at(c_hi)
    else:
        cap_end, cap_u = cap, up(cap)
    # a first lower end from the closed-form Jensen lower value (<= D_up <= up): the largest
    # epsilon found (at most 40 bisection steps) where it still exceeds delta
    j_lo, j_hi, j_u = 0.0, cap_end, u0
    if jensen_at(0.0) > delta:
        for _ in range(40):
            mid = 0.5 * (j_lo + j_hi)
            v = jensen_at(mid)
            if v > delta:
                j_lo, j_u = mid, v
            else:
                j_hi = mid
            if j_hi - j_lo <= 1e-3 * j_hi:
                break
    g = min(_guess_epsilon(acc, delta), cap_end)
    lo, ulo = 0.0, u0
    u = None
    if j_lo > 0.0:  # bracket [Jensen end, cap end] without certified evaluations
        lo, ulo, hi, uhi = j_lo, j_u, cap_end, cap_u
    else:
        u = up(g) if g < cap_end else cap_u
    if u is None:
        pass
    elif u <= delta:
        hi, uhi = g, u
        while hi > 1e-12 * g:  # walk down to a bracket
            u = up(0.5 * hi)
            if u > delta:
                lo, ulo = 0.5 * hi, u
                break
            hi, uhi = 0.5 * hi, u
    else:
        lo, ulo = g, u
        for _ in range(200):
            e = min(2.0 * lo, cap_end)
            u = up(e) if e < cap_end else cap_u
            if u <= delta:
                hi, uhi = e, u
                break
            lo, ulo = e, u
        else:
            raise RuntimeError("get_epsilon: could not bracket the target")
    lo, ulo, hi, uhi = shrink(up, lo, ulo, hi, uhi, max(xtol, 1e-2))
    # phase 2: each law's grid from one full report (the grid get_delta settles on there),
    # then the same search on that grid (upper value only)
    for i, (gamma, law) in enumerate(laws_for(acc.randomizer, min(hi, _EPS_CAP), acc.adjacency)):
        r = certify(law, float(gamma), acc.n, rel, acc.threads)
        if r.h_ratio is not None:
            ratios[i] = r.h_ratio
    res = rebracket(up, lo, hi, xtol)
    if res is None:
        return cap
    lo, ulo, hi, uhi = res
    # phase 3: the final bracket with get_delta itself (the full report; its grid may still
    # differ slightly), so that get_delta(answer) <= delta
    res = rebracket(acc.get_delta, max(lo, hi * (1.0 - 2.0 * xtol)), hi, xtol)
    if res is None:
        return cap
    lo, ulo, hi, uhi = res
    return min(hi, cap)
