"""Basic composition of shuffled rounds: a second certified value of :class:`~sharpdp.shuffle.ComposedAccountant`
(``docs/composition.md`` §4.3).

K = sum_j n_j rounds, each eps' = eps / K rounded down (so that K eps' <= eps exactly), compose adaptively to a
mechanism whose delta at eps is at most sum_j n_j delta_j(eps'), delta_j(eps') the round's certified upper value
(Dwork & Roth, "The Algorithmic Foundations of Differential Privacy", Theorem 3.16; the adaptive form proved in
``docs/composition.md`` §4.3). Far in the tails the pair route of §4 can be the looser of the two (its pair's
infinity mass and lattice); the composed accountant reports the smaller.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from sharpdp.shuffle.accountant.golden import golden_min
from sharpdp.shuffle.accountant.limits import U as _U
from sharpdp.shuffle.round_cache import value_cache

#: the round accountants' get_epsilon accept a relative xtol in [1e-6, 0.5] (ShuffleAccountant; the sharp one
#: [1e-9, 0.5]): a finer request is answered by a bisection on the composed basic value
_ROUND_XTOL = (1e-6, 0.5)
#: golden-section steps of :func:`floor_point`'s search (the accountant's CHARGE_STEPS: docs/accountant.md §8.3)
FLOOR_STEPS = 24


def share(epsilon: float, rounds: int) -> float:
    """eps / ``rounds`` rounded down: ``rounds`` times the result is <= ``epsilon`` in exact arithmetic
    (fl(eps / K) is within half an ulp of eps / K, the next float down is below it; 0 stays 0)."""
    e = epsilon / rounds
    return math.nextafter(e, 0.0) if 0.0 < e < math.inf else max(e, 0.0)  # (+inf stays +inf: each round's limit)


def _round_bounds(acc: Any, e: float, lower: bool) -> tuple[float, float]:
    """(lower, upper) of one round's certified delta at e >= 0 ((0, 1) without an accountant, e.g. a composed
    accountant whose pairs were set by hand: then there is no basic value); ``lower=False`` skips the lower one."""
    if lower and callable(getattr(acc, "get_delta_bounds", None)):
        lo, up = acc.get_delta_bounds(e)
        return float(lo), float(up)
    if callable(getattr(acc, "get_delta", None)):
        return 0.0, float(acc.get_delta(e))
    return 0.0, 1.0


def basic_bounds(parts: Sequence[tuple[Any, int]], epsilon: float, lower: bool = True) -> tuple[float, float]:
    """(lower, upper) of basic composition at ``epsilon`` (> 0, +inf included): the upper value sum_j n_j delta_j(eps')
    rounded up, certified (docs/composition.md §4.3); the lower value the same sum of the rounds' lower values
    rounded down, a reference of this route (0 with ``lower=False``). ``parts``: (accountant, count) pairs."""
    e = share(epsilon, sum(c for _, c in parts))
    vals = [(c, *_round_bounds(a, e, lower)) for a, c in parts]
    # each product c v and the correctly rounded fsum err by at most u relatively: (1 + u) / (1 - u) < 1 + 4u
    up = math.fsum(c * v for c, _, v in vals)
    up = min(math.nextafter(up * (1.0 + 4 * _U), math.inf), 1.0) if up == up else 1.0
    lo = math.fsum(c * v for c, v, _ in vals)
    lo = max(math.nextafter(lo * (1.0 - 4 * _U), 0.0), 0.0) if lo == lo else 0.0
    return min(lo, up), up


def cached_floor(parts: Sequence[tuple[Any, int]], epsilon: float) -> float:
    """A lower value of basic composition's upper value at ``epsilon`` from values already computed, no new one:
    sum_j n_j max L_j(s) over the round's cached profile values at s >= eps' (``round_cache.value_cache``), L_j(s)
    a lower value of the round's bound at s, rounded down (0 where none is cached). The round's certified value
    at eps' is >= its bound there >= its bound at s >= L_j(s), the bound being a hockey-stick divergence,
    non-increasing in eps (docs/composition.md §4.3). Cheap evidence that basic composition cannot win: only
    whether the basic value is computed depends on it, never a reported value."""
    e = share(epsilon, sum(c for _, c in parts))
    total = []
    for a, c in parts:
        if not callable(getattr(a, "get_delta_bounds", None)):
            return 0.0
        lows = [v[0] for s, v in list(value_cache(a).items()) if s >= e and v[0] == v[0]]
        total.append(c * max(lows, default=0.0))
    return max(math.fsum(total) * (1.0 - 4 * _U), 0.0)


def smaller(parts: Sequence[tuple[Any, int]], epsilon: float, value: float,
            lower: bool = False) -> tuple[float, float] | None:
    """basic composition's (lower, upper) at ``epsilon`` where its upper value is <= ``value`` (the pair route's, or
    the value reported), else None; no new round value where :func:`cached_floor` already exceeds ``value``, nor
    at an epsilon that is not > 0 (+inf included: the rounds' values at +inf, docs/composition.md §4.3). The one rule by which the composed accountant takes the basic value
    (docs/composition.md §4.3)."""
    if not 0.0 < epsilon <= math.inf or cached_floor(parts, epsilon) > value:
        return None
    lo, up = basic_bounds(parts, epsilon, lower)
    return (lo, up) if up <= value else None


def basic_epsilon(parts: Sequence[tuple[Any, int]], delta: float, xtol: float, hi: float) -> float | None:
    """The smallest eps (to a relative ``xtol``) with basic upper value <= ``delta``, if it is below ``hi`` (an eps
    the caller has already certified, ``math.inf`` for none); None when basic composition does not win there.

    Cheap evidence first: the basic value is non-increasing in eps in practice (the round accountants' values are
    monotone per object), so when it exceeds delta at ``hi`` (:func:`cached_floor`, else its value) it is not
    searched below. Else each round's own
    ``get_epsilon`` at delta / K (each part's share n_j delta / K then sums to delta) gives a point, checked by the
    basic value itself; one round type with an xtol the round accepts returns it, else a bisection on the basic
    value over [0, that point] (or [0, hi]). Every returned eps has a basic upper value <= delta (checked); the
    caller keeps the smaller of it and its own answer."""
    rounds = sum(c for _, c in parts)
    if math.isfinite(hi) and smaller(parts, hi, delta) is None:
        return None
    rx = min(max(xtol, _ROUND_XTOL[0]), _ROUND_XTOL[1])
    try:  # (1 - 1e-9): room for the rounding up of the sum; (1 + 1e-12): the share of K e is then >= e
        e = max(float(a.get_epsilon(delta / rounds * (1.0 - 1e-9), xtol=rx)) for a, _ in parts)
        cand = rounds * e * (1.0 + 1e-12)
    except (ValueError, AttributeError):  # (no epsilon reaches it, or no accountant)
        cand = math.inf
    if math.isfinite(cand) and basic_bounds(parts, cand, lower=False)[1] <= delta:
        if len(parts) == 1 and rx <= xtol:
            return cand  # (the round's own smallest eps to xtol, times K)
        hi = min(hi, cand)
    if not math.isfinite(hi):
        return None
    lo = 0.0
    for _ in range(200):  # (xtol >= 1e-12: about 40 halvings)
        if hi - lo <= xtol * hi:
            break
        mid = 0.5 * (lo + hi)
        if basic_bounds(parts, mid, lower=False)[1] <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def _charged(parts: Sequence[tuple[Any, int]]) -> list[tuple[Any, int]]:
    """The parts whose round carries a release-sampler charge (``sampler_tau`` > 0, docs/sampling.md §4)."""
    return [(a, c) for a, c in parts if getattr(a, "sampler_tau", 0.0) > 0.0 and callable(getattr(a, "sampler_term", None))]


def charge(parts: Sequence[tuple[Any, int]], epsilon: float) -> float:
    """The rounds' release-sampler charge in basic composition's value at ``epsilon`` (>= 0, +inf included):
    sum_j n_j c_j(min(eps', eps_tau_j)), c_j the round's ``sampler_term`` (what its certified value at eps' adds for the
    release sampler, docs/sampling.md §4; the value at eps_tau_j above it); 0.0 when no round has a charge."""
    e = share(epsilon, sum(c for _, c in parts))
    return math.fsum(c * a.sampler_term(min(e, a.eps_tau)) for a, c in _charged(parts))


def floor_point(parts: Sequence[tuple[Any, int]]) -> tuple[float, float, float] | None:
    """(lower, upper, eps*): the smallest basic upper value met by a golden-section search of [0, K max_j eps_tau_j]
    (FLOOR_STEPS steps, its end included; ties to the smaller eps), the composed epsilon eps* where it is certified,
    and the route's reference lower value there (docs/composition.md §4.4). None when no round has a release-sampler
    charge (then the basic value does not rise with eps). Every value met is certified at its eps and, the released
    composition's delta being non-increasing in eps, at every larger one: the search only places the points."""
    charged = _charged(parts)
    if not charged:
        return None
    hi = sum(c for _, c in parts) * max(a.eps_tau for a, _ in charged)  # (beyond it every round's value is constant)
    seen: list[tuple[float, float]] = []

    def value(x: float) -> float:
        seen.append((basic_bounds(parts, x, lower=False)[1], x))
        return seen[-1][0]

    value(hi)
    golden_min(value, 0.0, hi, FLOOR_STEPS)
    up, at = min(seen)
    lo, up_again = basic_bounds(parts, at)  # (the rounds' values are monotone per object: up_again <= up)
    up = min(up, up_again)
    return min(lo, up), up, at


def envelope(parts: Sequence[tuple[Any, int]], epsilon: float, value: float,
             floor: Any) -> tuple[float, float, float] | None:
    """basic composition's floor (``floor()``: :func:`floor_point`, memoised by the caller) where it holds at
    ``epsilon`` (eps* <= epsilon) and is below ``value``, the value otherwise reported; searched only where the rounds'
    release-sampler charge in the basic value at ``epsilon`` (:func:`charge`) makes at least half of ``value`` (the
    value rises with eps only through that charge). None elsewhere. The one rule by which the composed accountant
    reports a value certified at a smaller epsilon (docs/composition.md §4.4)."""
    if not (0.0 < epsilon <= math.inf and value > 0.0):
        return None
    c = charge(parts, epsilon)
    if not (c > 0.0 and c >= 0.5 * value):
        return None
    f = floor()
    return f if f is not None and f[2] <= epsilon and f[1] <= value else None
