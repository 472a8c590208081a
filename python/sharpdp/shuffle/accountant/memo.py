"""The monotone memos of :class:`~sharpdp.shuffle.accountant.ShuffleAccountant` (docs/accountant.md §7.2,
module step M): certified values stored as a non-increasing envelope, so reports never contradict
each other."""

from __future__ import annotations

import bisect

from sharpdp.shuffle.accountant.limits import MEMO_MAX


def envelope_put(keys: list, vals: list, k: float, v: float) -> float:
    """Insert (k, v) into a sorted non-increasing envelope (module step M) and return the reported
    value min(v, value at the largest key <= k); values at larger keys are lowered to it, so the
    envelope stays non-increasing. At most MEMO_MAX points (then it restarts: forgetting
    points only loosens later reports)."""
    i = bisect.bisect_right(keys, k)
    if i > 0:
        v = min(v, vals[i - 1])
    if i > 0 and keys[i - 1] == k:
        vals[i - 1] = v
    else:
        if len(keys) >= MEMO_MAX:
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


#: the engine's process-wide result memos (deterministic functions of their keys: clearing them changes no value,
#: only the time of the next call); :func:`sharpdp.shuffle.clear_caches` empties them
RESULT_MEMOS: list[dict] = []


def result_memo() -> dict:
    """A new process-wide result memo, registered so that :func:`clear_result_memos` empties it."""
    d: dict = {}
    RESULT_MEMOS.append(d)
    return d


def clear_result_memos() -> None:
    """Empty every registered result memo of the engine."""
    for d in RESULT_MEMOS:
        d.clear()


def object_memo(obj, attr: str, limit: int = 256) -> dict | None:
    """The result memo kept on ``obj`` (a law) under the attribute ``attr``: created on first use, emptied once it
    holds ``limit`` entries; None where ``obj`` has no attribute storage (then nothing is kept). For functions of an
    immutable object's parameters and the key alone (the same floats: docs/accountant_tail.md §17); it lives and
    dies with the object (``clear_caches`` need not reach it)."""
    memo = getattr(obj, attr, None)
    if memo is None:
        memo = {}
        try:
            setattr(obj, attr, memo)
        except AttributeError:  # (no attribute storage: no memo)
            return None
    elif len(memo) >= limit:
        memo.clear()
    return memo


__all__ = ["RESULT_MEMOS", "clear_result_memos", "envelope_put", "object_memo", "result_memo"]
