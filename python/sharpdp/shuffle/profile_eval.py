"""Certified profile values at explicit points, in increasing chunks under a progress bar (``dominating_pair`` with
``epsilons``, ``privacy_profile``'s sweep; moved from ``profile.py``, unchanged)."""

from __future__ import annotations

import numpy as np

CHUNK = 8  # values per evaluate call (and per progress update)
SLOW_CHUNK = 1.0  # s: after a chunk this slow, explicit points are evaluated (and shown) one at a time


def explicit_eval(evaluate, ks: np.ndarray, progress: bool | None, label: str = "", desc: str | None = None):
    """``evaluate`` at the explicit lattice indices ``ks`` (sorted) in increasing chunks, the same order
    of evaluation as one call; ``progress`` (None: after 1 s) shows a bar whose total is exact (the
    number of points, known in advance). Once a chunk took over SLOW_CHUNK s (far-tail values of a heavy
    round: seconds each), the values are taken one per call, so the bar moves with each of them."""
    import sys

    from sharpdp import _progress

    desc = desc or f"privacy profile (explicit points){' of ' * bool(label)}{label}"
    bar = _progress.progress_bar(total=int(ks.size), desc=desc, unit=" values",
                                 file=sys.stderr, leave=True, disable=progress is False,
                                 delay=0.0 if progress else 1.0)
    lo, up = np.empty(ks.size), np.empty(ks.size)
    start, size = 0, CHUNK
    while start < ks.size:
        t0 = _progress.clock()
        lo[start:start + size], up[start:start + size] = evaluate(ks[start:start + size])
        bar.update(int(min(size, ks.size - start)))
        start += size
        if _progress.clock() - t0 > SLOW_CHUNK:
            size = 1
    bar.close()
    return lo, up


__all__ = ["CHUNK", "SLOW_CHUNK", "explicit_eval"]
