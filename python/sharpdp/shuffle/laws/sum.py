"""Sums of sub-probability laws (an atom plus a truncated lognormal part: the Gaussian randomizer,
docs/accountant.md §2.4)."""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle.laws.base import Law, check_threshold


class SumLaw(Law):
    """Sum of sub-probability laws (e.g. an atom plus a truncated lognormal part)."""

    def __init__(self, parts):
        self.parts = list(parts)
        # each user's value comes from one part
        self.value_error = max((p.value_error for p in self.parts), default=0.0)

    def moved(self, c):
        law = SumLaw([p.moved(c) for p in self.parts])
        law.moved_by = max(p.moved_by for p in law.parts)
        return law

    def _mass(self, p):
        return p.total_mass() if hasattr(p, "total_mass") else 1.0

    def support(self):
        s = [p.support() for p in self.parts]
        return min(x[0] for x in s), max(x[1] for x in s)

    def _raw(self, c=0.0, second=True):
        tot = s1 = s2 = 0.0
        for p in self.parts:
            a, b, d = p.raw_moments(c, second)
            tot, s1, s2 = tot + a, s1 + b, s2 + d
        return tot, s1, s2

    def mean(self):
        t, s1, _ = self._raw(second=False)
        return s1 / t

    def std(self):
        c = self.mean()
        try:
            t, s1, s2 = self._raw(c)
        except OverflowError:
            return math.inf
        if not math.isfinite(s2):
            return math.inf
        return math.sqrt(max(s2 / t - (s1 / t) ** 2, 0.0))

    def cells(self, x0, h, K):
        few = [hasattr(p, "cells_sparse") and p.atoms()[0].size <= K // 64 for p in self.parts]
        if len(self.parts) == 2 and sum(few) == 1:
            # a few atoms plus one dense part (the Gaussian randomizer's atom and lognormal part): the atoms'
            # cells added in place at their indices; the same floats as the sum below (two terms per cell,
            # and x + 0.0 = x), without three K-long temporaries per array
            dense, sparse = self.parts[few.index(False)], self.parts[few.index(True)]
            out = tuple(np.array(a, dtype=float) for a in dense.cells(x0, h, K))  # (a copy: parts keep theirs)
            idx, *vals = sparse.cells_sparse(x0, h, K)
            for a, v in zip(out, vals):
                a[idx] += v
            return out
        outs = [p.cells(x0, h, K) for p in self.parts]
        return tuple(sum(o[i] for o in outs) for i in range(4))

    def prob_below(self, x):
        r = [p.prob_below(x) for p in self.parts]
        return sum(a for a, _ in r), sum(b for _, b in r)

    def prob_above(self, x):
        r = [p.prob_above(x) for p in self.parts]
        return sum(a for a, _ in r), sum(b for _, b in r)

    def tail_upper(self, T):
        return sum(p.tail_upper(T) for p in self.parts)

    def tail_upper_bracket(self, T):
        check_threshold(T)
        b = [p.tail_upper_bracket(T) for p in self.parts]
        return sum(x for x, _ in b) * (1 - 1e-12), sum(y for _, y in b) * (1 + 1e-12)

    def tail_lower(self, B):
        return sum(p.tail_lower(B) for p in self.parts)


    @property
    def continuous(self):
        return any(p.continuous for p in self.parts)

    def stop_loss(self, t):
        t = np.atleast_1d(np.asarray(t, dtype=float))
        lo = np.zeros(t.shape)
        up = np.zeros(t.shape)
        for p in self.parts:
            a, b = p.stop_loss(t)
            lo += a
            up += b
        return lo * (1 - 1e-12), up * (1 + 1e-12)

    def prob_above_up(self, x):
        return sum(p.prob_above_up(x) for p in self.parts) * (1 + 1e-12)

    def spread(self):
        sd = self.std()
        qs = [p.spread() for p in self.parts if p.continuous]
        return min([sd] + qs) if qs else sd


__all__ = ["SumLaw"]
