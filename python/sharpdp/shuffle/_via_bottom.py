"""Replace-one through bot for randomizers without a proven worst-case replace pair
(docs/accountant.md §9; the class Notes of :class:`sharpdp.shuffle.ShuffleAccountant`).

The datasets D = (x1, ...) and D' = (x1', ...) are compared through D_bot = (bot, ...). The
hockey-stick divergence satisfies delta_{P,R}(e1 + e2) <= delta_{P,Q}(e1) + e^{e1} delta_{Q,R}(e2),
and both legs (x1 vs bot, bot vs x1') are zero-out pairs, bounded by a zero-out accountant.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sharpdp.shuffle._lattice import _EPS_CAP, _EPS_MAX, _U
from sharpdp.shuffle._results import AccountantReport
from sharpdp.shuffle._search import _shrink


class _ZeroOut(Protocol):
    """The zero-out accountant of the legs (a :class:`sharpdp.shuffle.ShuffleAccountant`)."""

    def _report(self, epsilon: float, rel_tol: float, only: Any = None) -> AccountantReport: ...

    def get_epsilon(self, delta: float, *, xtol: float = 1e-3) -> float: ...


@dataclass(frozen=True)
class Split:
    """One split e1 + e2 = eps of the chain A(e1) + e^{e1} B(e2), rounded outwards."""

    f: float  # e1 / eps
    upper: float
    lower: float
    e1: float
    leg_a: AccountantReport  # x vs bot at e1
    leg_b: AccountantReport  # bot vs x at e2


class ViaBottom:
    """The replace bound through bot, from a zero-out accountant and the randomizer's legs.

    Parameters
    ----------
    bottom : ShuffleAccountant
        Zero-out accountant of the same randomizer, n and rel_tol.
    legs : (tuple of int or None, tuple of int or None)
        Indices of the zero-out laws bounding leg A (x vs bot) and leg B (bot vs x); None: all
        laws (:meth:`sharpdp.shuffle.LocalRandomizer.zero_out_legs`).
    """

    # fractions of epsilon given to the first leg (x1 vs bot) in the split search
    SPLITS = (0.35, 0.5, 0.65, 0.8)

    def __init__(self, bottom: _ZeroOut, legs: tuple[tuple[int, ...] | None, tuple[int, ...] | None]) -> None:
        self.bottom = bottom
        self.legs = legs
        self._leg_cache: dict[tuple[int, float, float], AccountantReport] = {}

    def leg(self, j: int, e: float, rel_tol: float) -> AccountantReport:
        """Zero-out report of leg j (0: x vs bot, 1: bot vs x) at e, cached."""
        key = (j, e, rel_tol)
        if key not in self._leg_cache:
            if len(self._leg_cache) > 4096:
                self._leg_cache.clear()
            self._leg_cache[key] = self.bottom._report(e, rel_tol, only=self.legs[j])
        return self._leg_cache[key]

    def split(self, eps: float, f: float, rel_tol: float) -> Split:
        """A(e1) + e^{e1} B(eps - e1) at e1 = f eps, rounded outwards."""
        e1 = f * eps
        e2 = eps - e1
        if e1 + e2 > eps:  # (rounding) certify at e1 + e2 <= eps: delta is non-increasing
            e2 = math.nextafter(e2, 0.0)
        ra, rb = self.leg(0, e1, rel_tol), self.leg(1, e2, rel_tol)
        w = math.exp(e1)
        return Split(f, (ra.upper + w * rb.upper) * (1 + 8 * _U), (ra.lower + w * rb.lower) * (1 - 8 * _U), e1, ra, rb)

    def report(self, eps: float, rel_tol: float) -> AccountantReport:
        """Replace-one through bot (class Notes): min over the split e1 + e2 = eps of
        A(e1) + e^{e1} B(e2), rounded outwards, capped at 1."""
        eps_in, eps = eps, min(eps, _EPS_CAP)  # delta is non-increasing: the value there holds beyond
        cands = [self.split(eps, f, rel_tol) for f in self.SPLITS]
        f0 = min(cands, key=lambda c: c.upper).f
        cands += [self.split(eps, min(f0 + 0.06, 1.0), rel_tol), self.split(eps, max(f0 - 0.06, 0.0), rel_tol)]
        best = min(cands, key=lambda c: c.upper)
        ra, rb = best.leg_a, best.leg_b
        r = ra if ra.upper >= rb.upper else rb
        terms = dict(r.terms, via_bottom=True, epsilon_split=best.e1, leg_upper=(ra.upper, rb.upper))
        return AccountantReport(eps_in, min(best.lower, 1.0), min(best.upper, 1.0), r.h, r.N, r.T, r.B, r.theta,
                                r.n_log_mgf, r.law_index, terms)

    def epsilon(self, delta: float, xtol: float, get_delta: Callable[[float], float]) -> float:
        """get_epsilon through bot: an upper end from the even split with both legs bounded by the
        zero-out value D0 (the fixed point of e -> eps0(delta / (1 + e^e)), approached from
        below), then the search on get_delta itself."""
        zo, margin = self.bottom, 1.0 - 1e-12  # margin: the rounding of the target and of f
        e = zo.get_epsilon(0.5 * delta * margin, xtol=xtol)  # 1 + e^e >= 2: a lower end
        for _ in range(100):
            # aim at a slightly larger e than the current one, so one more round usually suffices
            e_aim = e * (1.0 + xtol) + 1e-15
            e_new = zo.get_epsilon(delta * margin / (1.0 + math.exp(e_aim)), xtol=xtol)
            if e_new <= e_aim:
                break  # D0(e_new) (1 + e^{e_new}) <= delta
            e = e_new
        else:
            raise RuntimeError("get_epsilon: the replace bound through bot did not converge")
        if get_delta(0.0) <= delta:
            return 0.0
        hi = min(2.0 * e_new, _EPS_MAX)
        uhi = get_delta(hi)
        step = max(xtol, 1e-3)
        while uhi > delta:  # (the legs refine apart from the max: rarely a hair above)
            if hi >= _EPS_MAX:
                return _EPS_MAX  # get_delta(700) <= delta was checked by get_epsilon
            hi = min(hi * (1.0 + step), _EPS_MAX)
            step *= 2.0  # (bounded: at most ~20 steps to 700)
            uhi = get_delta(hi)
        lo = 0.5 * hi
        ulo = get_delta(lo)
        while ulo <= delta:
            if lo <= 1e-15:
                return lo
            hi, uhi, lo = lo, ulo, 0.5 * lo
            ulo = get_delta(lo)
        return _shrink(get_delta, delta, lo, ulo, hi, uhi, xtol)[2]
