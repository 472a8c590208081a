"""Every class of datasets tabulated at once, O(n w^2) (docs/sharp_krr.md §4.5-4.9; n <= N_EXACT)."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from sharpdp.shuffle.exact_krr.binomial import RR, TAIL_LEVELS, UROUND, ULP_CALL, binom_window, chernoff_edges

#: Tables already built in this process, shared by every Classes of the same (eps0, n, classes) (a table is a
#: pure function of them and of the level: accountants made afresh for each call, or one per n of a sweep that
#: returns to an n, ask for the same ones); the least recently used are dropped beyond _TABLE_ELEMENTS entries
#: in all, and a table larger than that is not kept here (its Classes keeps it).
_TABLES: OrderedDict[tuple, tuple[np.ndarray, np.ndarray, float]] = OrderedDict()
_TABLE_ELEMENTS = 8_000_000  # 64 MB
_table_elements = [0]
_TABLES_LOCK = threading.Lock()


class Classes(RR):
    """The laws U_j of a list of classes j (docs/sharp_krr.md §2) and the certified bracket of
    max_j delta_j(eps) over them (§4); one row per class."""

    def __init__(self, epsilon0: float, n: int, classes: Any) -> None:
        """Constants of the randomizer; the classes' tables are built per tail level on demand."""
        super().__init__(epsilon0)
        self.n = n
        self.classes = list(classes)  # the j of each row
        self._levels: dict[float, tuple[np.ndarray, np.ndarray, float]] = {}

    def _level(self, nats: float) -> tuple[np.ndarray, np.ndarray, float]:
        """(table, relative error per row, truncated mass) of the laws U_j (j = 0..N) on windows
        leaving out <= e^-nats per binomial tail; one row per class, aligned with zero padding."""
        got = self._levels.get(nats)
        if got is not None:
            return got
        key = (self.epsilon0, self.n, tuple(self.classes), nats)
        with _TABLES_LOCK:
            got = _TABLES.get(key)
            if got is not None:
                _TABLES.move_to_end(key)
        if got is None:
            got = self._build_level(nats)
            got[0].flags.writeable = False  # (shared: read only)
            got[1].flags.writeable = False
            with _TABLES_LOCK:
                if key not in _TABLES and got[0].size <= _TABLE_ELEMENTS:
                    _TABLES[key] = got
                    _table_elements[0] += got[0].size
                while _table_elements[0] > _TABLE_ELEMENTS and len(_TABLES) > 1:
                    _table_elements[0] -= _TABLES.popitem(last=False)[1][0].size
        self._levels[nats] = got
        return got

    def _build_level(self, nats: float) -> tuple[np.ndarray, np.ndarray, float]:
        """:meth:`_level` computed."""
        N, e0 = self.n - 1, self.epsilon0
        rows, rels = [], []
        edges_p: dict[int, tuple[int, int]] = {}
        edges_q: dict[int, tuple[int, int]] = {}
        for j in self.classes:
            m1, m2 = j, N - j
            if m1 not in edges_p:
                edges_p[m1] = chernoff_edges(m1, self._p, self._q, nats)
            if m2 not in edges_q:
                edges_q[m2] = chernoff_edges(m2, self._q, self._p, nats)
            (a0, a1), (b0, b1) = edges_p[m1], edges_q[m2]
            A, ra = binom_window(m1, e0, a0, a1, nats)
            B, rb = binom_window(m2, -e0, b0, b1, nats)
            rows.append(np.convolve(A, B))
            terms = min(A.size, B.size)
            # product: ra + rb + u; a sum of `terms` positive terms: (terms - 1) u (1.01 margin)
            rels.append((ra + rb + UROUND) * 1.01 + 1.01 * terms * UROUND)
        width = max(r.size for r in rows) + 2  # one zero each side: the terms just outside the window
        table = np.zeros((len(rows), width))
        for j, r in enumerate(rows):
            table[j, 1:1 + r.size] = r
        # mass left out of row j's window (each binomial: two tails of <= e^-(nats + 1))
        cut = 4.0 * math.exp(-nats) * (1 + 4 * ULP_CALL)
        return table, np.array(rels), cut

    # ------------------------------------------------------------------ one epsilon
    def bracket(self, eps: float, rows: Any = slice(None), target: float | None = None) -> tuple[float, float, int]:
        """(lower, upper, row index of the maximum among ``rows``) of max_j delta_j(eps) over the rows'
        classes, 0 <= eps < eps0 (docs/sharp_krr.md §4): at the first tail level whose truncation
        charges are below 1e-6 of the upper value (or the last); with a ``target``, also at the first
        level that decides upper <= target or lower > target (get_epsilon's question)."""
        lo, up = self.row_brackets(eps, rows, target)
        j = int(np.argmax(up))
        return float(np.max(lo)), float(up[j]), j

    def row_brackets(self, eps: float, rows: Any = slice(None),
                     target: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per-row (lower, upper) arrays of delta_j(eps), at the tail level :meth:`bracket` chooses."""
        for nats in TAIL_LEVELS:
            lo, up, cut_part = self._bracket_at(eps, rows, nats)
            lo_max, up_max = float(np.max(lo)), float(np.max(up))
            if cut_part <= 1e-6 * up_max or (target is not None and (up_max <= target or lo_max > target)):
                break
        return lo, up

    def _bracket_at(self, eps: float, rows: Any, nats: float) -> tuple[np.ndarray, np.ndarray, float]:
        """Per-row (lower, upper) on the tables of one tail level, and the larger truncation charge
        (of the upper values, a times the left-out mass, or of the lower ones, b times it)."""
        a = -self._p * math.expm1(eps - self.epsilon0)
        b = self._q * math.expm1(eps + self.epsilon0)
        ra = self._coef_rel(eps - self.epsilon0)  # relative error bounds of a and b (§4.4)
        rb = self._coef_rel(eps + self.epsilon0)
        table, rel, cut = self._level(nats)
        T = table[rows]
        rmax = float(np.max(rel[rows]))  # the rows' pmf errors (§4.3), one bound for all rows
        # §4.5: the true term a U(c-1) - b U(c) is at most a(1 + ra)(1 + r) X - b(1 - rb)(1 - r) Y with
        # X, Y the stored values; the coefficients below carry 16u more each side, which covers the
        # rounding of the two products and of the subtraction (|fl(x - y) - (x - y)| <= u(x + y))
        # and of the coefficients themselves; the lower terms symmetrically
        X, Y = T[:, :-1], T[:, 1:]  # U(c - 1), U(c) with c = column + 1
        tmp = X * (a * (1 + ra + rmax + 16 * UROUND))
        tmp -= Y * (b * (1 - rb - rmax - 16 * UROUND))
        np.maximum(tmp, 0.0, out=tmp)
        up_sum = tmp.sum(axis=1)
        tmp = X * (a * (1 - ra - rmax - 16 * UROUND))
        tmp -= Y * (b * (1 + rb + rmax + 16 * UROUND))
        np.maximum(tmp, 0.0, out=tmp)
        lo_sum = tmp.sum(axis=1)
        w = T.shape[1]
        s = 1.01 * w * UROUND  # sum of w nonnegative terms
        # the left-out mass (§4.6), and the subnormal range where relative error bounds fail: every
        # stored value and product is within 2^-1074 absolute of its bound, so each U entry within
        # (w + 1) 2^-1074 (w terms, w < width) and a row sum within width (w + 1)(a + b) 2^-1074
        width = T.shape[1]
        # each product's own underflow (<= 2^-1075, not scaled by a or b) is charged too; the charge
        # itself cannot underflow (docs/sharp_krr.md §4.6)
        tiny = width * ((width + 1) * (a + b) + 4.0) * 5e-324 * 2
        charge = a * (1 + ra) * cut * (1 + 2 * UROUND) + tiny
        up = up_sum * (1 + s) + charge
        lo_charge = b * (1 + rb) * cut * (1 + 2 * UROUND) + tiny
        lo = np.maximum(lo_sum * (1 - s) - lo_charge, 0.0)
        return lo, np.minimum(up * (1 + 2 * UROUND), 1.0), max(charge, lo_charge)


__all__ = ["Classes"]
