"""Helpers of get_epsilon's search (docs/accountant.md §8): the per-search memo, and whether the loose looks of
§8.8 walk to the root (docs/accountant.md §8.9). Choices of points only: nothing here is a bound."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sharpdp.shuffle.accountant import concentrated, far_tail

#: the loose looks walk (docs/accountant.md §8.8 rule 2) only where the first look's value carries a big-jump share of at
#: least this (its far-tail terms' ``jump_upper`` over its upper value; docs/accountant.md §8.9)
WALK_JUMP = 1e-6
#: at n >= 1e7 (the search's _WALK_N), get_delta is evaluated at the phase-1 root after a look naming phase 1's law
#: only where the look's value puts that root within this many xtol of the root (2 below 1e7: docs/accountant.md §8.4,
#: §8.11.2)
LOOK_REACH_LARGE = 1.0


def memoised(fn: Callable[[float], Any], size: int) -> Callable[[float], Any]:
    """fn memoised by its argument (at most ``size`` values kept): one search's cache."""
    cache: dict[float, Any] = {}

    def get(e: float) -> Any:
        hit = cache.get(e)
        if hit is None:
            hit = fn(e)
            if len(cache) < size:
                cache[e] = hit
        return hit
    return get


def walks(rep: Any) -> bool:
    """Whether the loose looks of docs/accountant.md §8.8 may walk from the look ``rep`` (an
    :class:`~sharpdp.shuffle.accountant.results.AccountantReport` at rel_tol 0.1): its upper value carries a big-jump
    share (the far-tail terms' ``jump_upper``) of at least ``WALK_JUMP`` (docs/accountant.md §8.9). A value that is all
    body (the Gaussian randomizer at sigma0 = 2, n >= 1e8: share ~1e-10) is as dear at the loose target as a probe, and
    there the walk cost more than the probes it saved. A choice of points only (deterministic: the report's terms)."""
    try:
        j, u = float(rep.terms.get("jump_upper", 0.0)), float(rep.upper)
    except (TypeError, ValueError, AttributeError):
        return False
    return u > 0.0 and j >= WALK_JUMP * u


def closed_at(gamma: Any, law: Any, n: int, rel_tol: float) -> bool:
    """Whether the far-tail treatment's value of ``law`` at ``rel_tol`` is the closed form of docs/accountant_tail.md
    §18 (:func:`.concentrated.certify` accepts it on the raised law the treatment runs on; memoised there, so the
    work is reused by a report at the same epsilon and rel_tol). A speed choice only (docs/accountant.md §8.4: no look
    at the phase-1 root where the law that led phase 1 takes it)."""
    return concentrated.certify(law.shifted(up=True), float(gamma), n, rel_tol, far_tail.choose_T0) is not None


__all__ = ["WALK_JUMP", "closed_at", "memoised", "walks"]
