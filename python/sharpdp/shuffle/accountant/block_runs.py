"""Runs of a block's count vectors (docs/accountant_atoms.md §13): the rows that share all counts but the last, along
which the float estimate of a block value is monotone, so that the rows above a threshold are found at the runs'
ends and by bisection instead of row by row (:func:`.blocks._one_block_atoms`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sharpdp.shuffle.accountant.memo import result_memo


@dataclass(frozen=True)
class Runs:
    """The count vectors of a block (rows of ``counts`` as :func:`.block_weights.compositions` orders them) as runs: rows
    start .. start + length - 1 share their first m1 - 1 counts (``prefix``) and their last count is c0, c0 + 1, ...
    The estimate of a row, e = ((c_1 a_1 + c_2 a_2) + ...) + c_m1 a_m1 in float (the order of
    :func:`.blocks._one_block_atoms`'s row-wise estimate, the same doubles), is pe + c a_m1 with pe the run's prefix sum:
    monotone in c along a run (float products and sums are monotone in their arguments), so a run's extremes are
    at its ends and the rows above a threshold are one end of it (docs/accountant_atoms.md §13)."""

    start: np.ndarray  # first row of each run
    length: np.ndarray  # rows of each run
    c0: np.ndarray  # the last count of the run's first row (float)
    prefix: np.ndarray  # the first m1 - 1 counts of the run (float, runs x (m1 - 1))

    def _pe(self, a: np.ndarray) -> np.ndarray:
        pe = self.prefix[:, 0] * a[0]
        for j in range(1, a.size - 1):
            pe += self.prefix[:, j] * a[j]
        return pe

    def _est(self, pe: np.ndarray, c: np.ndarray, al: float) -> np.ndarray:
        return pe + c * al

    def extremes(self, a: np.ndarray) -> tuple[float, np.ndarray] | None:
        """max |e| over every row (None if not finite), and the runs' first / last estimates' largest |e|."""
        pe, al = self._pe(a), float(a[-1])
        e1 = self._est(pe, self.c0, al)
        e2 = self._est(pe, self.c0 + (self.length - 1), al)
        big = np.maximum(np.abs(e1), np.abs(e2))
        emax = float(np.max(big))
        return (emax, big) if math.isfinite(emax) else None

    def _rows(self, sel: np.ndarray, i0: np.ndarray, i1: np.ndarray) -> np.ndarray:
        """The rows start + i, i0 <= i < i1, of the runs ``sel``, in increasing order."""
        ln = i1 - i0
        tot = int(np.sum(ln))
        if tot == 0:
            return np.zeros(0, dtype=np.int64)
        base = np.repeat(self.start[sel] + i0, ln)
        return base + (np.arange(tot) - np.repeat(np.cumsum(ln) - ln, ln))

    def rows_where_abs_at_least(self, a: np.ndarray, x: float, big: np.ndarray) -> np.ndarray:
        """The rows with |e| >= x (``big`` from :meth:`extremes`): every row of the runs whose ends reach x, its
        estimate computed."""
        sel = np.flatnonzero(big >= x)
        rows = self._rows(sel, np.zeros(sel.size, dtype=np.int64), self.length[sel])
        pe = np.repeat(self._pe(a)[sel], self.length[sel])
        c = np.repeat(self.c0[sel], self.length[sel]) + (rows - np.repeat(self.start[sel], self.length[sel]))
        return rows[np.abs(self._est(pe, c, float(a[-1]))) >= x]

    def rows_above(self, a: np.ndarray, thr: float) -> np.ndarray:
        """The rows with e > thr, in increasing order: whole runs whose both ends are above, none of those whose
        both ends are at most thr, and in the others (one crossing each, e monotone) the end found by bisection
        on the estimate itself."""
        pe, al = self._pe(a), float(a[-1])
        ln = self.length
        e1 = self._est(pe, self.c0, al)
        e2 = self._est(pe, self.c0 + (ln - 1), al)
        i0 = np.where(e1 > thr, 0, ln)  # (the kept rows start + i0 .. start + i1 - 1 of each run)
        i1 = np.where(e2 > thr, ln, 0)
        i0 = np.where(e2 > thr, i0, 0)
        cross = np.flatnonzero((e1 > thr) != (e2 > thr))
        if cross.size:
            up = e2[cross] > thr  # increasing along the run (al > 0): a suffix is kept, else a prefix
            lo = np.zeros(cross.size, dtype=np.int64)  # e(lo) and e(hi) on either side of thr
            hi = ln[cross] - 1
            pc, cc = pe[cross], self.c0[cross]
            while True:
                mid = (lo + hi) // 2
                act = hi - lo > 1
                if not bool(np.any(act)):
                    break
                above = self._est(pc, cc + mid, al) > thr
                move_hi = act & (above == up)  # mid on hi's side
                hi = np.where(move_hi, mid, hi)
                lo = np.where(act & ~move_hi, mid, lo)
            i0[cross] = np.where(up, hi, 0)
            i1[cross] = np.where(up, ln[cross], hi)
        sel = np.flatnonzero(i1 > i0)
        return self._rows(sel, i0[sel], i1[sel])


RUNS_CACHE: dict = result_memo()


def runs(counts: np.ndarray) -> Runs | None:
    """The runs of ``counts`` (memoised on the array: the weights cache keeps it alive and read-only), or None
    when the rows are not so ordered or there are fewer than 3 atoms (the row-wise estimates then)."""
    m1 = counts.shape[1]
    if m1 < 3:
        return None
    key = (id(counts), counts.shape)
    hit = RUNS_CACHE.get(key)
    if hit is not None and hit[0] is counts:
        return hit[1]
    pre = counts[:, :-1]
    last = counts[:, -1]
    new = np.ones(counts.shape[0], dtype=bool)
    new[1:] = np.any(pre[1:] != pre[:-1], axis=1)
    start = np.flatnonzero(new)
    length = np.diff(np.append(start, counts.shape[0]))
    ok = bool(np.all((np.diff(last) == 1.0) | new[1:]))
    out = Runs(start, length, last[start].copy(), np.asfortranarray(pre[start])) if ok else None
    if len(RUNS_CACHE) >= 8:
        RUNS_CACHE.pop(next(iter(RUNS_CACHE)))
    RUNS_CACHE[key] = (counts, out)
    return out
