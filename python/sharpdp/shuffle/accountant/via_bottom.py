"""Replace-one through bot for randomizers without a proven worst-case replace pair
(docs/accountant.md §9; the class Notes of :class:`sharpdp.shuffle.ShuffleAccountant`).

The datasets D = (x1, ...) and D' = (x1', ...) are compared through D_bot = (bot, ...). The
hockey-stick divergence satisfies delta_{P,R}(e1 + e2) <= delta_{P,Q}(e1) + e^{e1} delta_{Q,R}(e2),
and both legs (x1 vs bot, bot vs x1') are zero-out pairs, bounded by a zero-out accountant.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Protocol

from sharpdp.shuffle.accountant.limits import EPS_CAP, EPS_MAX, U
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.search import shrink


class _ZeroOut(Protocol):
    """The zero-out accountant of the legs (a :class:`sharpdp.shuffle.ShuffleAccountant`)."""

    sampler_tau: float  # n sampler_tv (0 without a charge, docs/sampling.md §4)
    eps_tau: float  # above it the value at eps_tau
    _closed_only: bool  # closed forms only (docs/accountant.md §6.9)

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
    # width in f at which the golden-section refinement of the best split stops
    SPLIT_TOL = 0.01
    # early stop at the cap (docs/accountant.md §9): every split of SPLITS has a certified upper
    # value at least this (the refinements gain at most ~20 % over SPLITS: the result is the cap 1)
    CAP_MARGIN = 1.5

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
        return Split(f, (ra.upper + w * rb.upper) * (1 + 8 * U), (ra.lower + w * rb.lower) * (1 - 8 * U), e1, ra, rb)

    def report(self, eps: float, rel_tol: float) -> AccountantReport:
        """Replace-one through bot (class Notes): min over the split e1 + e2 = eps of
        A(e1) + e^{e1} B(e2), rounded outwards, capped at 1. Above the legs' eps_tau (the release
        sampler's charge, docs/sampling.md §4) the value at eps_tau is reported when it is within
        rel_tol of the sampler floor, below which no split at eps reports (docs/accountant.md §9.1);
        else the smaller of the two."""
        eps_in, eps = eps, min(eps, EPS_CAP)  # delta is non-increasing: the value there holds beyond
        et = float(getattr(self.bottom, "eps_tau", math.inf))
        if eps > et:
            at_tau = self.report(et, rel_tol)  # (valid at eps > et: delta is non-increasing)
            at_tau = replace(at_tau, epsilon=eps_in, terms=dict(at_tau.terms, note=f"value at eps_tau = {et:.6g}"))
            if at_tau.upper <= (1.0 + rel_tol) * self.sampler_floor(eps):
                return at_tau
            here = self._report_splits(eps, rel_tol, eps_in)
            return here if here.upper < at_tau.upper else at_tau
        return self._report_splits(eps, rel_tol, eps_in)

    def _report_splits(self, eps: float, rel_tol: float, eps_in: float) -> AccountantReport:
        """:meth:`report` by the split search at eps (<= 60), reported at eps_in."""
        cands = [self.split(eps, f, rel_tol) for f in self.SPLITS]
        capped = self._at_cap(eps, cands, rel_tol)
        if capped is not None:
            return self._as_report(eps_in, capped)
        f0 = min(cands, key=lambda c: c.upper).f
        cands += [self.split(eps, min(f0 + 0.06, 1.0), rel_tol), self.split(eps, max(f0 - 0.06, 0.0), rel_tol)]
        best = min(cands, key=lambda c: c.upper)
        # the objective is sharply V-shaped in f near its optimum (one leg falls steeply while the
        # other rises): a golden-section search around the best split on cheap (rel_tol 0.1) leg
        # values, then the split it finds certified at rel_tol; every split is a valid bound
        lo, hi = max(best.f - 0.06, 0.0), min(best.f + 0.06, 1.0)
        g, rt = 0.5 * (math.sqrt(5.0) - 1.0), max(rel_tol, 0.1)
        c, d = self.split(eps, hi - g * (hi - lo), rt), self.split(eps, lo + g * (hi - lo), rt)
        while hi - lo > self.SPLIT_TOL:
            if c.upper <= d.upper:
                hi, d = d.f, c
                c = self.split(eps, hi - g * (hi - lo), rt)
            else:
                lo, c = c.f, d
                d = self.split(eps, lo + g * (hi - lo), rt)
        cands.append(self.split(eps, (c if c.upper <= d.upper else d).f, rel_tol))
        return self._as_report(eps_in, min(cands, key=lambda c: c.upper))

    @staticmethod
    def _as_report(eps: float, best: Split) -> AccountantReport:
        """The report of one split, its values capped at 1."""
        ra, rb = best.leg_a, best.leg_b
        r = ra if ra.upper >= rb.upper else rb
        terms = dict(r.terms, via_bottom=True, epsilon_split=best.e1, leg_upper=(ra.upper, rb.upper))
        return AccountantReport(eps, min(best.lower, 1.0), min(best.upper, 1.0), r.h, r.N, r.T, r.B, r.theta,
                                r.n_log_mgf, r.law_index, terms)

    def _at_cap(self, eps: float, cands: list[Split], rel_tol: float) -> Split | None:
        """The early stop at the cap (docs/accountant.md §9): when the split search cannot report
        below 1, the split of ``cands`` with the largest lower value (its upper value replaced by
        1 >= delta, its lower value by 1 where the legs' lower values prove A(e1) + e^{e1} B(e2) >= 1
        at every split); None when the search must go on."""
        if min(c.upper for c in cands) < 1.0:
            return None
        best = max(cands, key=lambda c: c.lower)
        if best.lower >= 1.0 or self._cap_proved(eps, cands, rel_tol):
            return replace(best, lower=1.0, upper=1.0)
        if min(c.upper for c in cands) >= self.CAP_MARGIN:
            return replace(best, upper=1.0)
        return None

    def _cap_proved(self, eps: float, cands: list[Split], rel_tol: float) -> bool:
        """True when the legs' certified lower values prove A(e1) + e^{e1} B(e2) >= 1 for every split
        e1 + e2 <= eps (docs/accountant.md §9): between consecutive first legs a <= e1 <= b,
        A(e1) >= A(b) and B(e2) >= B(e2') for e2 <= eps - a <= e2' (A, B non-increasing)."""
        pts = sorted(cands, key=lambda c: c.e1)
        a_lo = [c.leg_a.lower for c in pts]
        b_lo = [c.leg_b.lower for c in pts]
        e1s = [c.e1 for c in pts]
        e2s = [c.leg_b.epsilon for c in pts]
        # interior intervals first (no new leg), then the ends [0, e1_first] and [e1_last, eps]
        for i in range(len(pts) - 1):
            if not self._interval_at_least_1(eps, e1s[i], e2s[i], a_lo[i + 1], b_lo[i]):
                return False
        if not (a_lo[0] >= 1.0 or self._interval_at_least_1(eps, 0.0, eps, a_lo[0], self.leg(1, eps, rel_tol).lower)):
            return False
        return self._interval_at_least_1(eps, e1s[-1], e2s[-1], self.leg(0, eps, rel_tol).lower, b_lo[-1])

    @staticmethod
    def _interval_at_least_1(eps: float, a: float, e2: float, a_lo: float, b_lo: float) -> bool:
        """A_lo + e^a B_lo >= 1, rounded down, with B_lo a lower value of B at e2 >= eps - a
        (checked exactly): a lower value of A(e1) + e^{e1} B(e2') on a <= e1 <= b, e2' <= eps - e1."""
        if Fraction(e2) + Fraction(a) < Fraction(eps):
            return False
        return (a_lo + math.exp(a) * (1 - 4 * U) * b_lo) * (1 - 8 * U) >= 1.0

    def epsilon(self, delta: float, xtol: float, get_delta: Callable[[float], float]) -> float:
        """get_epsilon through bot: the search on get_delta itself, bracketed from the zero-out
        accountant's answers (docs/accountant.md §9). Two guesses of the upper end, each checked on
        get_delta (a guess above delta becomes the lower end): the split with a small e1, where the
        bound is about A(e1) + B(eps) (the zero-out answer at delta / 2), then the even split with
        both legs at most the zero-out value D0 (the fixed point of e -> eps0(delta / (1 + e^e)),
        approached from below); then the zero-out answer at delta as the lower end (every split has
        A(e1) + e^{e1} B(e2) >= max(A(eps), B(eps))), checked too."""
        if get_delta(0.0) <= delta:
            return 0.0
        zo = self.bottom
        lo, ulo = 0.0, math.inf
        e_half = zo.get_epsilon(0.5 * delta, xtol=xtol)
        for guess in (lambda: e_half * 1.02 + 1e-9, lambda: 2.0 * self._even_split_half(delta, xtol, e_half)):
            hi = min(guess(), EPS_MAX)
            uhi = get_delta(hi)
            if uhi <= delta:
                break
            lo, ulo = hi, uhi
        step = 0.02
        while uhi > delta:  # (the legs refine apart from the max: rarely a hair above)
            if hi >= EPS_MAX:
                return EPS_MAX  # get_delta(700) <= delta was checked by get_epsilon
            lo, ulo = hi, uhi
            hi = min(hi * (1.0 + step), EPS_MAX)
            step *= 2.0  # (bounded: at most ~20 steps to 700)
            uhi = get_delta(hi)
        if lo == 0.0:
            lo = zo.get_epsilon(delta, xtol=xtol)
            lo = lo if 1e-15 < lo < hi else 0.5 * hi
            ulo = get_delta(lo)
            while ulo <= delta:
                if lo <= 1e-15:
                    return lo
                hi, uhi, lo = lo, ulo, 0.5 * lo
                ulo = get_delta(lo)
        return shrink(get_delta, delta, lo, ulo, hi, uhi, xtol)[2]

    def sampler_floor(self, eps: float) -> float:
        """A certified lower value of every upper value :meth:`report` returns at ``eps`` (docs/accountant.md
        §9.1): the release sampler's charge alone, min(1, (3 + e^{min(eps, 60, eps_tau)}) tau) rounded down
        (tau = the zero-out accountant's ``sampler_tau``; 0 without a charge). No value reported at ``eps`` is
        below it (the mechanism's own terms only add); it grows with eps up to eps_tau.

        Each leg's upper value at e includes (1 + e^{min(e, eps_tau)}) tau (docs/sampling.md §4) or is 1,
        and for e1 + e2 = e' (e' a hair below min(eps, 60) after the rounding of the split), e1, e2 >= 0:
        e^{e1} (1 + e^{min(e2, eps_tau)}) >= 1 + e^{min(e', eps_tau)} (e2 >= eps_tau: e^{e1} >= 1; else
        e^{e1} + e^{e'} >= 1 + e^{e'}); with A(e1) >= 2 tau the split's value A(e1) + e^{e1} B(e2) is at
        least (3 + e^{min(e', eps_tau)}) tau."""
        zo = self.bottom
        tau = float(getattr(zo, "sampler_tau", 0.0))
        if not tau > 0.0:
            return 0.0
        e = min(eps, EPS_CAP, float(getattr(zo, "eps_tau", math.inf)))
        e = e * (1.0 - 1e-12) - 1e-300  # the split's nextafter and exp's rounding (a few ulp)
        return min(1.0, tau * (3.0 + math.exp(max(e, 0.0))) * (1.0 - 1e-12))

    def _even_split_half(self, delta: float, xtol: float, e: float) -> float:
        """e with D0(e) (1 + e^e) <= delta (D0 the zero-out value), from e <= the fixed point."""
        zo, margin = self.bottom, 1.0 - 1e-12  # margin: the rounding of the target and of f
        for _ in range(100):
            # aim at a slightly larger e than the current one, so one more round usually suffices
            e_aim = e * (1.0 + xtol) + 1e-15
            e_new = zo.get_epsilon(delta * margin / (1.0 + math.exp(e_aim)), xtol=xtol)
            if e_new <= e_aim:
                return e_new  # D0(e_new) (1 + e^{e_new}) <= delta
            e = e_new
        raise RuntimeError("get_epsilon: the replace bound through bot did not converge")
