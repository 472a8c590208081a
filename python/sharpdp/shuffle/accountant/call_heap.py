"""The C heap kept for reuse over a whole public call at n >= limits.BODY45_KEPT_HEAP_N (1e4 since session 47's merge;
docs/accountant.md §8.27.1): speed only, the same floats.

:func:`call_kept` decorates ``ShuffleAccountant.get_delta_bounds`` and ``get_epsilon``: where the accountant's n is at
least ``limits.BODY45_KEPT_HEAP_N`` and ``limits.EPS47_CALL_HEAP`` is on, the call runs inside
:func:`heap_keep.kept_heap` (docs/accountant_tail.md §68.2), so the arrays freed between the passes (the round's
lattice laws, the Chernoff searches, the lognormal cells, the search's closed forms) stay in the heap for the next
pass as inside the passes. Below that n the call runs as it is: malloc's settings are never touched there (and
ctypes is not imported). Nesting is counted by ``kept_heap``: the passes' own scopes, a nested call (the swap
identity's, a bottom accountant's) share the outermost one. :func:`kept_first` does the same for a function whose
first argument is n (the calibrations ``calibrate_gaussian_report`` and ``calibrate_bmg_report``, whose evaluations
are ``get_delta_bounds`` calls of fresh accountants: one scope over all of them, docs/calibration.md §18.1).
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar, cast

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.heap_keep import kept_heap

F = TypeVar("F")


def wanted(n: Any) -> bool:
    """Whether a call of an accountant of n users runs inside the kept heap (the switches and the n gate; an n that
    does not compare, not yet validated by the call, never does: the call raises its own error as before)."""
    try:
        return bool(limits.EPS47_CALL_HEAP and limits.BODY45_KEPT_HEAP and n >= limits.BODY45_KEPT_HEAP_N)
    except (TypeError, ValueError):
        return False


def scope(n: Any) -> AbstractContextManager[None]:
    """:func:`heap_keep.kept_heap` where :func:`wanted` holds, else a scope that does nothing."""
    return kept_heap() if wanted(n) else nullcontext()


def call_kept(f: F) -> F:
    """``f(self, ...)`` (a method of an accountant with attribute ``n``) run inside :func:`heap_keep.kept_heap` where
    :func:`wanted` holds (a decorator; speed only, the same floats: docs/accountant.md §8.27.1)."""
    g: Any = f

    @functools.wraps(g)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        with scope(self.n):
            return g(self, *args, **kwargs)
    return cast(F, run)


def kept_first(f: F) -> F:
    """``f(n, ...)`` run inside :func:`scope` (n) (a decorator; speed only, the same floats: docs/calibration.md §18.1)."""
    g: Any = f

    @functools.wraps(g)
    def run(*args: Any, **kwargs: Any) -> Any:
        with scope(args[0] if args else kwargs.get("n")):
            return g(*args, **kwargs)
    return cast(F, run)


__all__ = ["call_kept", "kept_first", "scope", "wanted"]
