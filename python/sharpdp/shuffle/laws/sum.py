"""Sums of sub-probability laws (an atom plus a truncated lognormal part: the Gaussian randomizer,
docs/accountant.md §2.4)."""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle.laws.base import Law, check_threshold
from sharpdp.shuffle.laws.lognormal import two_node


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
            # and x + 0.0 = x), without three K-long temporaries per array. The far-tail treatment asks for the
            # same grid twice (its jump term and the body pass): the last result is kept, read-only, as
            # LognormalLaw.cells keeps its own; the dense part's cells are then computed into new arrays rather
            # than copied from its kept ones (docs/accountant_tail.md §25: one K-long copy of four arrays less)
            key = (float(x0), float(h), int(K), two_node())  # (the cells' rule: docs/accountant_tail.md §62.2)
            memo = getattr(self, "_cells_memo", None)
            if memo is not None and memo[0] == key:
                return memo[1]
            dense, sparse = self.parts[few.index(False)], self.parts[few.index(True)]
            fresh = getattr(dense, "cells_fresh", None)
            out = tuple(fresh(x0, h, K)) if fresh is not None else \
                tuple(np.array(a, dtype=float) for a in dense.cells(x0, h, K))  # (a copy: parts keep theirs)
            idx, *vals = sparse.cells_sparse(x0, h, K)
            for a, v in zip(out, vals):
                a[idx] += v
                a.flags.writeable = False
            self._cells_memo = (key, out)
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
        lo *= 1 - 1e-12  # (in place: the same doubles, docs/accountant_tail.md §69.2)
        up *= 1 + 1e-12
        return lo, up

    def prob_above_up(self, x):
        return sum(p.prob_above_up(x) for p in self.parts) * (1 + 1e-12)

    def heavy_form(self):
        """The closed-form deep tail's description (docs/accountant_tail.md §23) of an atom x_a < 0 with probability
        p_a plus an increasing lognormal part a + G e^{r V - r^2/2} on V > v_lo with weight w (the Gaussian
        randomizer's x vs bot law, docs/worst_case_pairs.md §4), x_a >= a, masses summing to 1 within 1e-12: with
        P(V > v_lo - k r) bracketed by ``interval_prob``,

            E L - a = p_a (x_a - a) + w G P(V > v_lo - r),   E (L - a)^2 = p_a (x_a - a)^2 + w G^2 e^{r^2} P(V > v_lo - 2r),

        rounded outwards, and Var L >= E (L - a)^2 - (E L - a)^2 from the lower and upper values. None otherwise.
        Computed once per law (its parts are not changed after construction)."""
        if "_heavy" not in self.__dict__:
            self._heavy = self._heavy_form()
        return self._heavy

    def _heavy_form(self):
        if len(self.parts) != 2:
            return None
        from sharpdp.shuffle.laws.lognormal import HeavyForm, LognormalLaw, interval_prob

        at = [p for p in self.parts if p.atoms() is not None]
        co = [p for p in self.parts if isinstance(p, LognormalLaw)]
        if len(at) != 1 or len(co) != 1 or at[0].atoms()[0].size != 1:
            return None
        c = co[0]
        if not (c._S == 0 and c._G > 0 and c._sign > 0 and c._vhi == math.inf and math.isfinite(c._vlo)):
            return None
        xa, pa = float(at[0].atoms()[0][0]), float(at[0].atoms()[1][0])
        a, G, r, w = c.a, c._G, c.r, c.weight
        if not (a <= xa < 0.0 and c.support()[0] < 0.0 and r * r < 700.0):  # (on s >= 0: the part's density)
            return None
        p0, e0 = interval_prob(c._vlo, math.inf)
        if not abs(pa + w * float(p0) - 1.0) <= 1e-12 - 4 * w * float(e0):
            return None
        p1, e1 = interval_prob(c._vlo - r, math.inf)
        p2, e2 = interval_prob(c._vlo - 2 * r, math.inf)
        u = 4 * np.finfo(float).eps
        dx = xa - a  # (>= 0; rounded: its own 1 ulp below)
        d_at_lo, d_at_hi = pa * dx * (1 - u), pa * dx * (1 + u)
        d_lo = (d_at_lo + w * G * max(float(p1) - float(e1), 0.0) * (1 - 4 * u)) * (1 - u)
        d_hi = (d_at_hi + w * G * (float(p1) + float(e1)) * (1 + 4 * u)) * (1 + u)
        m2_lo = (pa * dx * dx * (1 - 2 * u) + w * G * G * math.exp(r * r) * max(float(p2) - float(e2), 0.0)
                 * (1 - 1e-12)) * (1 - u)
        m2_up = (pa * dx * dx * (1 + 2 * u) + w * G * G * math.exp(r * r) * (float(p2) + float(e2)) * (1 + 1e-12)) \
            * (1 + u)
        var_lo = max((m2_lo - d_hi * d_hi * (1 + u)) * (1 - u), 0.0)
        return HeavyForm(a=a, G=G, r=r, d_lo=d_lo, d_hi=d_hi, m2_up=m2_up, var_lo=var_lo, cont=c,
                         key=(a, G, r, c._vlo, w, xa, pa), atom=xa, atom_p=pa)

    def density_up(self, s):
        """Upper bounds on the sup of the density of L over [s, inf) for a law with :meth:`heavy_form`: its
        lognormal part's where s is above the atom, inf elsewhere."""
        s = np.atleast_1d(np.asarray(s, dtype=float))
        f = self.heavy_form()
        if f is None:
            return np.full(s.shape, np.inf)
        return np.where(s > f.atom, f.cont.density_up(s), np.inf)

    def density_lo(self, s):
        """Lower bounds on the density of L at s for a law with :meth:`heavy_form` (its lognormal part's: the atom
        adds none), 0 for other laws."""
        s = np.atleast_1d(np.asarray(s, dtype=float))
        f = self.heavy_form()
        return np.zeros(s.shape) if f is None else f.cont.density_lo(s)

    def second_moment_above_up(self, x):
        """Upper bounds on E[(L - a)^2; L > x] for a law with :meth:`heavy_form` (a its location): the lognormal
        part's plus p_a (x_a - a)^2 where x < x_a; inf for other laws."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        f = self.heavy_form()
        if f is None:
            return np.full(x.shape, np.inf)
        dx = f.atom - f.a
        at = np.where(x < f.atom, f.atom_p * dx * dx * (1 + 1e-12), 0.0)
        return (f.cont.second_moment_above_up(x) + at) * (1 + 1e-12)

    def spread(self):
        sd = self.std()
        qs = [p.spread() for p in self.parts if p.continuous]
        return min([sd] + qs) if qs else sd


__all__ = ["SumLaw"]
