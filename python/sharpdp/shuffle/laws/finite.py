"""Laws with finitely many atoms (k-RR, binary RR, any finite output space; docs/accountant.md §2.2)."""

from __future__ import annotations

import math

import numpy as np

from sharpdp import _validation as V
from sharpdp.shuffle.laws.base import U, Law, check_threshold


class FiniteLaw(Law):
    """Law with finitely many atoms: P(L = values[i]) = probs[i].

    Parameters
    ----------
    values, probs : array_like of float, shape (m,)
        Atom locations and probabilities (probs >= 0, summing to 1 within 1e-9; they are
        used as given).
    value_error : float, default 0.0
        Bound on |stored - true| of every atom value (>= 0, finite; see :class:`Law`).

    Raises
    ------
    ValueError
        Mismatched or empty arrays, non-finite entries, negative probs, probs not summing to 1,
        value_error negative or not finite.
    """

    def atoms(self) -> tuple[np.ndarray, np.ndarray]:
        """(values, probs): the law's atoms (so ``atomic`` is True)."""
        return self.values, self.probs

    def __init__(self, values, probs, value_error=0.0):
        self.value_error = V.real("value_error", value_error, lo=0.0)
        v = V.real_array("values", values, ndim=1, allow_empty=True)
        p = V.real_array("probs", probs, ndim=1, allow_empty=True)
        if v.shape != p.shape or v.size == 0:
            raise ValueError("values and probs must be non-empty arrays of equal length")
        if not (np.all(np.isfinite(v)) and np.all(np.isfinite(p))) or p.min() < 0:
            raise ValueError("probs must be finite and >= 0, values finite")
        if abs(p.sum() - 1.0) > 1e-9:
            raise ValueError(f"probs must sum to 1, got {p.sum()!r}")
        if v.size > 1 and bool(np.all(v[1:] > v[:-1])):
            # already sorted with distinct atoms (merge_atoms' output): what np.unique and the
            # bincount below return for it (each bin 0.0 + p_i = p_i exactly), without the sort
            self.values, self.probs = v.copy(), p + 0.0
            return
        v, inv = np.unique(v, return_inverse=True)  # equal atoms merged: one law, one computation
        self.values, self.probs = v, np.bincount(inv.ravel(), weights=p, minlength=v.size)

    _sorted = False  # values sorted increasingly (set where that is guaranteed)


    def moved(self, c):
        to = math.copysign(math.inf, c)
        v = np.nextafter(self.values + c, to)  # rounded to nearest, then one ulp further: beyond value + c
        law = SubFinite(v, self.probs) if isinstance(self, SubFinite) else FiniteLaw(v, self.probs)
        law.moved_by = float(np.max(np.nextafter(np.abs(v - self.values), np.inf), initial=0.0))
        return law
    def support(self):
        nz = self.values[self.probs > 0]
        return float(nz.min()), float(nz.max())

    def mean(self):
        return float(np.dot(self.values, self.probs))

    def std(self):
        mu = self.mean()
        return float(math.sqrt(max(np.dot((self.values - mu) ** 2, self.probs), 0.0)))

    def _cell_terms(self, x0, h, K):
        """(ji, pin, pin frac, pin fe): the cell index, probability, weighted position and weighted position
        error of every atom in [x0, x0 + K h) (the partition of prob_below(x0) / prob_above(x0 + K h))."""
        v, pin = self.values, self.probs
        if self._sorted:  # (zero-probability atoms only add exact zeros below)
            sl = slice(int(np.searchsorted(v, x0, "left")), int(np.searchsorted(v, x0 + K * h, "left")))
            v, pin = v[sl], pin[sl]
        else:
            inside = (v >= x0) & (v < x0 + K * h) & (pin > 0)
            v, pin = v[inside], pin[inside]
        t = (v - x0) / h
        ji = np.clip(np.floor(t), 0, K - 1).astype(np.int64)
        frac = np.clip(t - ji, 0.0, 1.0)
        # frac carries an absolute error <= 4u(|v - x0|/h + 1).
        fe = 4.0 * U * (np.abs(v - x0) / h + 1.0)
        return ji, pin, pin * frac, pin * fe

    @staticmethod
    def _cell_sums(ji, pin, pw, pe, size):
        """(m, w, em, ew) of :meth:`cells` over ``size`` bins of ``ji``."""
        # (bincount sums in input order, as np.add.at would, only faster)
        m = np.bincount(ji, weights=pin, minlength=size)
        w = np.bincount(ji, weights=pw, minlength=size)
        ew = np.bincount(ji, weights=pe, minlength=size)
        # a running sum of c non-negative terms is within (c - 1) u of the exact one (relative)
        r = (np.bincount(ji, minlength=size) + 4.0) * U
        return m, w, r * m, ew * (1.0 + r) + r * w

    def cells(self, x0, h, K):
        # Same partition as prob_below(x0) / prob_above(x0 + K h): [x0, x0 + K h) is inside.
        ji, pin, pw, pe = self._cell_terms(x0, h, K)
        return self._cell_sums(ji, pin, pw, pe, K)

    def cells_sparse(self, x0, h, K):
        """(idx, m, w, em, ew): :meth:`cells` at its occupied cells ``idx`` only (increasing; the other cells
        are exact zeros), the same floats per cell: a few atoms on a long lattice without K-long arrays."""
        ji, pin, pw, pe = self._cell_terms(x0, h, K)
        idx, inv = np.unique(ji, return_inverse=True)  # (inv keeps the input order within each cell)
        return (idx,) + self._cell_sums(inv.ravel(), pin, pw, pe, idx.size)

    def prob_below(self, x):
        sel = self.probs[self.values < x]
        p = float(sel.sum())
        return p, (sel.size + 4.0) * U * p

    def prob_above(self, x):
        # P(L >= x): an atom exactly at the top edge is clamped there, never dropped.
        sel = self.probs[self.values >= x]
        p = float(sel.sum())
        return p, (sel.size + 4.0) * U * p

    def tail_upper(self, T):
        return self.tail_upper_bracket(T)[1]

    def tail_upper_bracket(self, T):
        check_threshold(T)
        s = float(np.dot(np.maximum(self.values - T, 0.0), self.probs))
        rel = max((self.values.size + 4.0) * U, 1e-12)  # a dot product of m terms: m u (relative)
        return s * (1.0 - rel), s * (1.0 + rel)

    def tail_lower(self, B):
        s = float(np.dot(np.maximum(-B - self.values, 0.0), self.probs))
        return s * (1.0 + 1e-12)


    def stop_loss(self, t):
        t = np.atleast_1d(np.asarray(t, dtype=float))
        if self.values.size == 1 and t.ndim == 1:  # (one atom: the product and matmul's 0 + it, without the
            # (t.size, 1) matrix; the same doubles, docs/accountant_tail.md §69.2)
            s = np.maximum(float(self.values[0]) - t, 0.0)
            s *= float(self.probs[0])
            s += 0.0
        else:
            s = np.maximum(self.values[None, :] - t[:, None], 0.0) @ self.probs
        rel = max((self.values.size + 4.0) * U, 1e-12)
        return s * (1 - rel), s * (1 + rel)

    def prob_above_up(self, x):
        x = np.atleast_1d(np.asarray(x, dtype=float))
        s = (self.values[None, :] > x[:, None]).astype(float) @ self.probs
        return s * (1 + (self.values.size + 4.0) * U)

    def raw_moments(self, c=0.0, second=True):
        v = self.values - c
        a, b = float(self.probs.sum()), float(np.dot(v, self.probs))
        with np.errstate(over="ignore"):  # (inf: std() reports inf)
            d = float(np.dot(v * v, self.probs)) if second else math.nan
        return a, b, d


class SubFinite(FiniteLaw):
    """Atoms with total mass < 1 (a part of a SumLaw)."""

    def __init__(self, values, probs, value_error=0.0):
        self.values = np.ascontiguousarray(values, dtype=float).ravel()
        self.probs = np.ascontiguousarray(probs, dtype=float).ravel()
        self.value_error = float(value_error)




__all__ = ["FiniteLaw", "SubFinite"]
