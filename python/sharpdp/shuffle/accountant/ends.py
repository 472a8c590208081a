"""get_epsilon's far end (docs/accountant.md §8.3, §8.5, §9.9): with the release sampler's charge, the search's upper
end below eps_tau (:func:`charge_end`) and, through bot, below the eps where the charge alone reaches delta
(:func:`bottom_end`, with its certified refusals); the closed-form caps that decide the far end's check without a
report (:func:`end_cap`). Used by :func:`.epsilon_route.route`."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from sharpdp.shuffle.accountant.closed_forms import plus, trivial_cap
from sharpdp.shuffle.accountant.golden import golden_min
from sharpdp.shuffle.accountant.limits import EPS_MAX, TINY
from sharpdp.shuffle.contract import surcharge
from sharpdp.shuffle.laws import laws_for

#: golden-section steps of charge_end's search for the smallest fresh value (docs/accountant.md §8.3)
CHARGE_STEPS = 24


def end_cap(acc: Any) -> float:
    """A closed-form certified upper value of what a fresh accountant reports at the search's far end
    (docs/accountant.md §8.5): with the release sampler's charge, the value at eps_tau (reported for every larger eps)
    is at most the laws' caps max(E[L_+], 5e-324) at eps_tau plus the surcharge and the charge, each rounded up;
    without it, the value at 700 is at most ``_cap_beyond(700)``'s (module step L). inf where a cap is not formed.
    get_delta's running minimum only lowers the value, so ``end_cap(acc) <= delta`` certifies get_delta there
    without a report (a report at eps_tau certifies every law there: 1.9 s for GaussianRandomizer(0.5), n = 1e3)."""
    if not math.isfinite(acc.eps_tau):
        return acc._cap_beyond(EPS_MAX)[1]
    e = acc.eps_tau
    try:
        c = max((max(trivial_cap(law), TINY) for _, law in laws_for(acc.randomizer, e, acc.adjacency)
                 if law.top_bound() > 0), default=0.0)
    except (ValueError, OverflowError, ArithmeticError, FloatingPointError):
        return math.inf
    u = plus(plus(c, surcharge(acc.randomizer, e, acc.adjacency)), acc.sampler_term(e))
    return u if math.isfinite(u) else math.inf


def charge_end(acc: Any, delta: float, known: list[float]) -> float | None:
    """get_epsilon's upper end where the release sampler's charge makes the certified values rise
    (docs/accountant.md §8.3): None when there is no charge or the value at eps_tau (reported for every
    larger eps) is <= delta; else the first of ``known`` (epsilons at which the monotone memo holds a
    value <= delta) and of the points where the charge (1 + e^eps) tau is delta (1 - 2^-k), k = 1..8, whose
    value (as a fresh accountant reports it: ``report``, before the running minimum) is <= delta, then the
    smallest of at most CHARGE_STEPS golden-section points of [0, eps_tau] if it is.

    Raises
    ------
    ValueError
        None of them is <= delta (e.g. delta <= 2 tau, the charge at eps = 0): the message gives the
        smallest value seen (the golden-section search's minimum where the values are unimodal).
    """
    if not math.isfinite(acc.eps_tau) or end_cap(acc) <= delta:  # (the value at eps_tau decided by the caps: §8.5)
        return None

    def fresh(e: float) -> float:
        return min(max(float(acc.report(e).upper), TINY), 1.0)

    seen = [(fresh(acc.eps_tau), acc.eps_tau)]
    if seen[0][0] <= delta:
        return None
    ladder = (math.log(c) for k in range(1, 9)
              if (c := delta * (1.0 - 0.5**k) / (acc.sampler_tau * (1.0 + 1e-12)) - 1.0) > 1.0)
    e, (u, at) = _first_at_most(fresh, delta, (min(e, acc.eps_tau) for e in (*known, *ladder)), acc.eps_tau, seen)
    if e is not None:
        return e
    c0 = acc.sampler_term(0.0)
    why = (f"not above the charge alone at eps = 0, {c0!r}" if c0 >= delta else
           f"not certified at any epsilon tried (smallest value {u!r}, at eps = {at!r}, {_found(len(seen))})")
    raise ValueError(f"delta: {delta!r} is {why}: the certified value is D_up(eps) plus the release sampler's "
                     f"total-variation charge (1 + e^eps) n sampler_tv, which grows with eps (docs/sampling.md §4, "
                     f"docs/accountant.md §8.3); sampler_charge=False certifies the mathematical mechanism alone")


def _first_at_most(value: Callable[[float], float], delta: float, points: Iterable[float], top: float,
                   seen: list[tuple[float, float]], then: Iterable[float] = ()) -> tuple[float | None,
                                                                                        tuple[float, float]]:
    """The first of ``points`` whose ``value`` is <= delta, else the point of smallest value of at most
    CHARGE_STEPS golden-section points of [0, top] if it is <= delta, else the first of ``then`` whose value is
    (else None); with the smallest (value, eps) of ``seen`` (points evaluated before, extended by every point
    tried here): docs/accountant.md §8.3, §9.9."""
    if (e := _first_of(value, delta, points, seen)) is not None:
        return e, seen[-1]

    def tried(e: float) -> float:
        seen.append((value(e), e))
        return seen[-1][0]

    # the ladder's points sit where the charge alone is below delta, and D_up may still exceed it there: a
    # golden-section search of [0, top] for the smallest value (D_up falls, the charge rises)
    golden_min(tried, 0.0, top, CHARGE_STEPS, enough=delta)
    u, e = min(seen)
    if u <= delta:
        return e, (u, e)
    hit = _first_of(value, delta, then, seen)
    return hit, min(seen)


def _first_of(value: Callable[[float], float], delta: float, points: Iterable[float],
              seen: list[tuple[float, float]]) -> float | None:
    """The first of ``points`` whose ``value`` is <= delta (else None), each (value, eps) appended to ``seen``."""
    for e in points:
        seen.append((value(e), e))
        if seen[-1][0] <= delta:
            return e
    return None


def bottom_end(acc: Any, delta: float, known: list[float]) -> float | None:
    """get_epsilon's upper end through bot under the release sampler's charge (docs/accountant.md §9.9): None when
    there is no charge or delta >= ``sampler_floor(700)`` (the far end is then checked as before); else a point e
    below e_c (the smallest eps found with ``sampler_floor(eps)`` > delta, above which no value reported at any eps
    is <= delta) whose certified value is <= delta and entered into the monotone memo: the first of ``known``
    (epsilons at which the memo holds a value <= delta) and of the points where ``sampler_floor`` is
    delta (1 - 2^-k), k = 1..8, whose value (the split search of ``report``) is <= delta, then the smallest of at
    most CHARGE_STEPS golden-section points of [0, e_c] if it is, then the first of the half steps k = 1/2, ...,
    15/2 (at most 8 more evaluations: a window past a cliff of the legs' values just below e_c) whose value is.

    Raises
    ------
    ValueError
        Certified refusals, before any split: delta below ``sampler_floor(0)`` (4 tau, the smallest value any eps
        can report), or a lower value of a leg's D_up at e_c above delta (legs at the loose ``PROBE_TOL``: every
        split at eps < e_c is at least it); else none of the points tried is <= delta (the message gives the
        smallest value seen and its eps).
    """
    vb = acc._bottom
    tau = float(vb.bottom.sampler_tau)
    if not tau > 0.0 or delta >= vb.sampler_floor(EPS_MAX):
        return None
    why = "release sampler's total-variation charge on both legs of the replace bound through bot"
    head = f"delta: {delta!r} is below what the released messages can be certified for"
    f0 = vb.sampler_floor(0.0)
    if delta < f0:
        raise ValueError(f"{head}: every certified value at any epsilon is at least {f0!r}, the {why} at eps = 0, "
                         f"so no epsilon in [0, {EPS_MAX:g}] has one <= delta{_memo_note(acc)} (docs/sampling.md §4, "
                         f"docs/accountant.md §9.1, §9.9)")
    e_c = math.log(delta / tau - 3.0)
    while vb.sampler_floor(e_c) <= delta:  # (a few ulp: floor is non-decreasing, > delta at EPS_MAX)
        e_c = e_c * (1.0 + 1e-9) + 1e-12
    lo = max(vb._closed_leg(j, e_c, acc.rel_tol)[0] for j in (0, 1))  # (closed forms first, then the loose legs)
    for j in (0, 1):
        lo = lo if lo > delta else max(lo, vb._leg_lower(j, e_c, vb.PROBE_TOL))
    if lo > delta:
        raise ValueError(f"{head}: no epsilon in [0, {EPS_MAX:g}] has a certified value <= delta (proved before any "
                         f"split): above eps = e_c = {e_c!r} the {why} alone exceeds it, and below it every split's "
                         f"value is at least {lo!r}, a lower value of the larger of the two legs' D_up at e_c (each "
                         f"split's legs sit at epsilons below e_c, where a leg's D_up is at least its value at e_c): a "
                         f"lower bound on the values the bound through bot can certify, not on the mechanism's own "
                         f"delta{_memo_note(acc)} (docs/sampling.md §4, docs/accountant.md §9.9)")

    def value(e: float) -> float:  # a certified value, entered into the memo (get_delta(e) then reports it)
        return float(acc._memo_put(e, min(max(float(acc.report(e).upper), TINY), 1.0)))

    def ladder(ks: Iterable[float]) -> Iterable[float]:  # where sampler_floor is delta (1 - 2^-k), below e_c
        return (min(math.log(c), e_c) for k in ks if (c := delta * (1.0 - 0.5**k) / tau - 3.0) > 1.0)

    # after the golden section, the half steps k = 1/2, 3/2, ..., 15/2 approach e_c from below: a window of
    # certified values past a cliff of the legs' values, which the golden section (following a flat part) misses
    seen: list[tuple[float, float]] = []
    e, _ = _first_at_most(value, delta, (*(min(e, e_c) for e in known), *ladder(range(1, 9))), e_c, seen,
                          ladder(k + 0.5 for k in range(8)))
    if e is not None:
        return e
    u, at = min((*seen, *zip(acc._memo_u, acc._memo_e)))  # (the memo: values get_delta computed before, all > delta)
    raise ValueError(f"{head}: not certified at any epsilon tried (smallest value {u!r}, at eps = {at!r}, "
                     f"{_found(len(seen), ' and the values this accountant held before')}; get_delta({at!r}) on "
                     f"this accountant reports it; above eps = {e_c!r} the {why} alone exceeds it, so no larger "
                     f"epsilon is certified, docs/accountant.md §9.9)")


def _found(count: int, also: str = "") -> str:
    """What a refusal's smallest value is: the smallest of the ``count`` certified values the search computed (and
    ``also``), not a proved minimum (a golden-section search finds the minimum only where the values are unimodal:
    docs/accountant.md §8.3, §9.9)."""
    return (f"the smallest found among the {count} certified values the search computed{also}, not a proved "
            f"minimum: another epsilon may certify a smaller one")


def _memo_note(acc: Any) -> str:
    """A refusal's note on the smallest certified value this accountant has computed (its monotone memo), if any;
    get_epsilon's refusals before any split compute none (docs/accountant.md §9.9)."""
    if not acc._memo_u:
        return "; none was computed for this refusal: get_delta(epsilon) computes one"
    u, e = min(zip(acc._memo_u, acc._memo_e))
    return f"; the smallest certified value this accountant has computed is {u!r}, at eps = {e!r} (get_delta)"


__all__ = ["CHARGE_STEPS", "bottom_end", "charge_end", "end_cap"]
