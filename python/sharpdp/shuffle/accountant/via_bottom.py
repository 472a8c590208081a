"""Replace-one through bot for randomizers without a proven worst-case replace pair
(docs/accountant.md §9; the class Notes of :class:`sharpdp.shuffle.ShuffleAccountant`).

The datasets D = (x1, ...) and D' = (x1', ...) are compared through D_bot = (bot, ...). The
hockey-stick divergence satisfies delta_{P,R}(e1 + e2) <= delta_{P,Q}(e1) + e^{e1} delta_{Q,R}(e2),
and both legs (x1 vs bot, bot vs x1') are zero-out pairs, bounded by a zero-out accountant. The golden section
and the cliff searches near the optimum (§9.5) are in :mod:`.via_bottom_cliff`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from typing import Any, Protocol

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.driver import certify
from sharpdp.shuffle.accountant.limits import EPS_CAP, EPS_MAX, TINY, U, VALUE_FLOOR
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.via_bottom_budget import BudgetSearch, chain
from sharpdp.shuffle.accountant.via_bottom_chord import cached_chord
from sharpdp.shuffle.accountant.via_bottom_cliff import Split
from sharpdp.shuffle.accountant.via_bottom_cover import cap_closed, cap_refuted, trivial_refuted
from sharpdp.shuffle.accountant.via_bottom_edge_first import edge_first
from sharpdp.shuffle.accountant.via_bottom_end_search import end_search
from sharpdp.shuffle.accountant.via_bottom_ends import end_below, end_found
from sharpdp.shuffle.accountant.via_bottom_loose_b import loose_b
from sharpdp.shuffle.accountant.via_bottom_loose_cap import loose_cap
from sharpdp.shuffle.accountant.via_bottom_mirror import mirror_b, raise_lower
from sharpdp.shuffle.accountant.via_bottom_penalty import penalty_bound
from sharpdp.shuffle.accountant.via_bottom_search import epsilon_search, vertex
from sharpdp.shuffle.accountant.via_bottom_serve import served
from sharpdp.shuffle.laws import laws_for


class _ZeroOut(Protocol):
    """The zero-out accountant of the legs (a :class:`sharpdp.shuffle.ShuffleAccountant`)."""

    randomizer: Any
    n: int
    threads: int
    rel_tol: float  # the legs' target accuracy
    sampler_tau: float  # n sampler_tv (0 without a charge, docs/sampling.md §4)
    eps_tau: float  # above it the value at eps_tau
    _closed_only: bool  # closed forms only (docs/accountant.md §6.9)

    def _report(self, epsilon: float, rel_tol: float, only: Any = None, upper_first: bool = False,
                negligible: float = 0.0) -> AccountantReport: ...

    def get_epsilon(self, delta: float, *, xtol: float = 1e-3) -> float: ...


class ViaBottom(BudgetSearch):
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
    # cliff vertices of leg B (docs/accountant.md §9.5): at most SLIDES steps beyond the golden-section window,
    # probes' leg B first at the loose rel_tol PROBE_TOL, bisection to BEYOND_TOL in f unless it can gain less
    # than SHRINK_GAIN; a golden-section best split with e^{e1} B(e2) <= CLIFF x its value is at a cliff
    SLIDES, PROBE_TOL, BEYOND_TOL, SHRINK_GAIN, CLIFF = 6, 30.0, 0.000078125, 0.005, 0.01
    # a split with e^{e1} B(e2) <= EDGE x its value is before the edge of a cliff of leg B (the bisection of _shrink)
    EDGE = 1e-6
    # early stop at the cap (docs/accountant.md §9): every split of SPLITS has a certified upper
    # value at least this (the refinements gain at most ~20 % over SPLITS: the result is the cap 1)
    CAP_MARGIN = 1.5
    # most steps of get_epsilon's local walk from the last best split, on legs at rel_tol 0.1 first where the first
    # split's lower value there exceeds FAR x the target (§9.2)
    WALK_STEPS, FAR = 8, 2.0
    # first legs e1 = k eps / CAP_GRID of the closed-form cap proof (§9.3) ...
    CAP_GRID = 16
    # ... and the most engine legs B (at rel_tol max(rel_tol, 0.1)) it may add to the closed forms (legs A
    # from the engine then too, at the grid points a bisection visits)
    CAP_ENGINE_LEGS = 2
    # ... each leg B first at these loose rel_tols (§9.3: a lower value that closes the interval is enough)
    COVER_TOLS = (30.0,)
    # a split's leg B is certified to the absolute target ABS_SHARE rel_tol A_lo(e1) / e^{e1} (its refinement
    # stops once its upper value is below it: a small share of the chain's rel_tol, docs/accountant.md §9.4)
    ABS_SHARE = 0.1
    # the short-cuts of §9.3-§9.4 (the cap from a cover or one split, the golden-section split not certified
    # again, leg B to an absolute target); False gives the plain split search of §9 (a test reference: the
    # short-cuts must not change its values)
    SHORTCUTS = True
    _in_refine = False  # inside the golden section's window and the cliff searches (:meth:`_refine`, §9.26)

    def __init__(self, bottom: _ZeroOut, legs: tuple[tuple[int, ...] | None, tuple[int, ...] | None]) -> None:
        self.bottom = bottom
        self.legs = legs
        self._leg_cache: dict[tuple[int, float, float], AccountantReport] = {}
        self._leg_neg: dict[tuple[int, float, float], float] = {}  # the absolute target each cached leg met
        self._hint: float | None = None  # the best second leg e2 of the last split search (§9.2)
        self._closed_cache: dict[tuple[int, float], tuple[float, float]] = {}
        self._last: Split | None = None  # the split of the last report (docs/accountant.md §9.15)

    def leg(self, j: int, e: float, rel_tol: float, negligible: float = 0.0) -> AccountantReport:
        """Zero-out report of leg j (0: x vs bot, 1: bot vs x) at e, cached; its refinement stops once its upper
        value is below ``negligible`` (an absolute target, docs/accountant.md §9.4; a cached report serves when
        certified with no larger one or already below it). Where the engine refuses to
        certify the leg (RuntimeError), the bracket [0, 1] (a hockey-stick divergence of probability
        distributions is at most 1; docs/accountant.md §9.2): that split is then useless, not wrong."""
        key = (j, e, rel_tol)
        hit = self._leg_cache.get(key)
        if (hit is None or not (self._leg_neg.get(key, 0.0) <= negligible or hit.upper < negligible)) and \
                (got := served(self, j, e, rel_tol, negligible)) is not None:  # (§9.21: certified at another rel_tol)
            self._leg_cache[key], self._leg_neg[key] = got, negligible
            return got
        if hit is None and self._chord_on and (c := cached_chord(self, j, e, rel_tol, negligible)) is not None:
            return c  # (§9.19: between two certified legs of its order, inside the split searches)
        if hit is None or not (self._leg_neg.get(key, 0.0) <= negligible or hit.upper < negligible):
            if len(self._leg_cache) > 4096:
                self._leg_cache.clear()
                self._leg_neg.clear()
            try:
                rep = self.bottom._report(e, rel_tol, only=self.legs[j], negligible=negligible) if negligible > 0.0 \
                    else self.bottom._report(e, rel_tol, only=self.legs[j])
            except RuntimeError as exc:
                rep = AccountantReport(e, 0.0, 1.0, terms={"refused": str(exc)})
            hit = self._leg_cache[key] = rep
            self._leg_neg[key] = negligible
        return hit

    def split(self, eps: float, f: float, rel_tol: float, absolute: bool = True, b_tol: float | None = None,
              rough_b: bool = False, guess: bool = True, idle: bool = False) -> Split:
        """A(e1) + e^{e1} B(eps - e1) at e1 = f eps, rounded outwards; ``absolute``: leg B to the absolute
        target ABS_SHARE rel_tol A_lo(e1) / e^{e1} (docs/accountant.md §9.4), else to rel_tol alone (or to
        ``b_tol`` when given, without the absolute target); ``rough_b`` (get_epsilon's decide, §9.2, and the
        candidates of the split search, §9.6): leg B at rel_tol 0.1 first, kept where its bracket's width is within
        that target; tried where ``guess`` (decide's :meth:`_small_b`) or else :meth:`_rough_may_pass` says it
        may be; ``idle`` (the split search's candidates, §9.7): leg B at rel_tol alone where :meth:`_idle_target`
        shows its absolute target would neither stop it nor keep the bracket contract from re-certifying it so."""
        e1 = f * eps
        e2 = self._second(eps, e1)
        w = math.exp(e1)
        ra = self.leg(0, e1, rel_tol)
        # (a zero-out accountant without its randomizer, e.g. a test's, has no absolute target: rel_tol alone)
        absolute = absolute and self.SHORTCUTS and math.isfinite(w) and getattr(self.bottom, "randomizer", None) is not None
        neg = self.ABS_SHARE * rel_tol * ra.lower / (w * (1 + 4 * U)) if absolute else 0.0
        rough_b = rough_b and absolute and rel_tol < 0.1 and b_tol is None and (
            self._small_b(e2, neg / rel_tol) if guess else self._rough_may_pass(e2, neg))
        rb = self.leg(1, e2, 0.1, neg) if rough_b else None
        if rb is None or not (rb.upper < neg or rb.upper - rb.lower <= neg):
            if b_tol is not None:
                rb = self.leg(1, e2, b_tol)
            else:  # (to rel_tol alone where the target is idle: the leg _contract would certify, §9.7; §9.12: a
                # search's leg B of a small share at a looser rel_tol)
                bt = self._search_b_tol(e2, rel_tol, ra.lower / w) if absolute else rel_tol
                rb = loose_b(self, e1, e2, rel_tol, ra, neg) if absolute and bt == rel_tol else None  # (§9.26)
                rb = rb or self.leg(1, e2, bt, 0.0 if idle and self._idle_target(e2, neg) else neg)
        return chain(f, e1, ra, rb)

    def _mirror_b(self, e1: float, e2: float, rb: AccountantReport, rel_tol: float, width: float) -> AccountantReport | None:
        return mirror_b(self, e1, e2, rb, rel_tol, width)  # (docs/accountant.md §9.17)

    @staticmethod
    def _second(eps: float, e1: float) -> float:
        """The second leg e2 of the split at e1: eps - e1, lowered until e1 + e2 <= eps exactly (delta is
        non-increasing); fl(e1 + e2) <= eps does not imply it."""
        e2 = eps - e1
        while Fraction(e1) + Fraction(e2) > Fraction(eps):
            e2 = math.nextafter(e2, 0.0)
        return e2

    def report(self, eps: float, rel_tol: float) -> AccountantReport:
        """Replace-one through bot (class Notes): min over the split e1 + e2 = eps of
        A(e1) + e^{e1} B(e2), rounded outwards, capped at 1. Above the legs' eps_tau (the release
        sampler's charge, docs/sampling.md §4) the value at eps_tau is reported when it is within
        rel_tol of the sampler floor, below which no split at eps reports (docs/accountant.md §9.1);
        else the smaller of the two. Below eps_tau the reported split's lower value may be raised by leg B's
        mirror (docs/accountant.md §9.15, :func:`.via_bottom_mirror.raise_lower`)."""
        eps_in, eps = eps, min(eps, EPS_CAP)  # delta is non-increasing: the value there holds beyond
        et = float(getattr(self.bottom, "eps_tau", math.inf))
        if eps > et:
            at_tau = self.report(et, rel_tol)  # (valid at eps > et: delta is non-increasing)
            at_tau = replace(at_tau, epsilon=eps_in, terms=dict(at_tau.terms, note=f"value at eps_tau = {et:.6g}"))
            if at_tau.upper <= (1.0 + rel_tol) * self.sampler_floor(eps):
                return at_tau
            here = self._report_splits(eps, rel_tol, eps_in)
            return here if here.upper < at_tau.upper else at_tau
        self._last = None  # (the reported split, set by _as_report: its leg B's lower value raised by §9.15)
        return raise_lower(self, self._report_splits(eps, rel_tol, eps_in), self._last, rel_tol)

    def _report_splits(self, eps: float, rel_tol: float, eps_in: float) -> AccountantReport:
        """:meth:`report` by the split search at eps (<= 60), reported at eps_in."""
        if self.SHORTCUTS and not trivial_refuted(self, eps):  # (§9.22.5: no proof can report)
            # early stop (a) of §9 decided by one certified split on loose legs, the cover (every split's value
            # is >= 1: the cap, exactly), the same split on legs at rel_tol (docs/accountant.md §9.3)
            loose = (max(rel_tol, 0.1), self.PROBE_TOL)
            for i, proof in enumerate((lambda: self._cap_at_one_split(eps, rel_tol, loose),
                                       lambda: self._cap_closed(eps, rel_tol),
                                       lambda: self._cap_at_one_split(eps, rel_tol, (rel_tol, rel_tol)))):
                if (proved := proof()) is not None and (i == 1 or end_below(self, eps, loose[0]) is None):  # (§9.24)
                    return self._as_report(eps_in, proved)
                if i == 0 and (proved is not None or cap_refuted(self, eps, rel_tol)):  # (§9.18, §9.24: none can report)
                    break
        # the candidates on legs at ct: rel_tol, or max(rel_tol, 0.1) under the loose search of §9.11 (where one of them
        # is below 1: the cap stops read legs at rel_tol, so at the cap the candidates of before)
        ct = max(rel_tol, 0.1) if self.SHORTCUTS and self.MODEL and limits.VIA_BOTTOM_LOOSE_SEARCH else rel_tol
        first = self._model_first(eps, ct) if ct != rel_tol else None
        if first is not None:  # (§9.11: the least split of the model's steps, certified at rel_tol as in §9.4)
            best = self._reported(eps, first.f, rel_tol, ct)
            self._hint = eps - best.e1 if best.upper < 1.0 else None
            return self._as_report(eps_in, best)
        if ct != rel_tol:  # (the model's splits below the floor; §9.22: the edge split of leg B's cliff, where the end)
            low = self._below_floor(eps, self._seen) or edge_first(self, eps, rel_tol, ct)
            if low is not None:
                return self._as_report(eps_in, low)
        if ct != rel_tol and max(self.split(eps, f, ct).upper for f in self._start(eps)) >= 1.0:
            if (capped := loose_cap(self, eps, ct, rel_tol)) is not None:  # (§9.23.7; §9.25: from an end below 1)
                return self._as_report(eps_in, capped)
            ct = rel_tol  # (the model's first splits, cached: near the cap, the candidates of before at once)
        cands = self._candidates(eps, ct, rel_tol, self.SPLITS)
        if ct != rel_tol and min(c.upper for c in cands) >= 1.0:
            ct, cands = rel_tol, self._candidates(eps, rel_tol, rel_tol, self.SPLITS)
        capped = self._at_cap(eps, cands, rel_tol)
        if capped is not None:
            return self._as_report(eps_in, capped)
        low = self._below_floor(eps, cands)
        if low is not None:
            return self._as_report(eps_in, low)
        f0 = min(cands, key=lambda c: c.upper).f
        # a chain bounded below by known legs at or above the smallest upper value is not the minimum (nor a tie that
        # min() would take: it comes later), so it is not certified (docs/accountant.md §9.4)
        cands = self._candidates(eps, ct, rel_tol, (min(f0 + 0.06, 1.0), max(f0 - 0.06, 0.0)), cands)
        best = min(cands, key=lambda c: c.upper)
        low = self._below_floor(eps, cands)
        if low is not None:
            return self._as_report(eps_in, low)
        # the objective is sharply V-shaped in f near its optimum (one leg falls steeply while the
        # other rises): a golden-section search around the best split on cheap (rel_tol 0.1) leg
        # values, continued beyond its window when its minimum is at an inner end (the vertex is then
        # a cliff of leg B outside it: §9.5); the split it finds certified at rel_tol; every split is a valid bound
        rt = max(rel_tol, 0.1)
        lo, hi = max(best.f - 0.06, 0.0), min(best.f + 0.06, 1.0)
        found = self._refine(eps, lo, hi, rt)
        if ct != rel_tol:  # (§9.11: every candidate on legs at rt, the least one alone certified at rel_tol below)
            cands.append(found)
        # its loose certified lower value above the smallest certified upper value: its value at rel_tol is
        # >= the chain >= that lower value, so it is not the minimum (nor a tie): not certified (§9.3)
        elif not (self.SHORTCUTS and found.lower > min(x.upper for x in cands)):
            cands.append(self.split(eps, found.f, rel_tol, rough_b=min(x.upper for x in cands) < 1.0, guess=False,
                                     idle=True))
        # the candidates' legs B may be the loose ones of rough_b (§9.6): the reported split is certified as in §9.4
        # (under §9.11 with §9.7's rule: its leg B at rt is cached)
        f = min(cands, key=lambda c: c.upper).f  # (§9.12: the loose search's split to its bracket's budget)
        best = self._reported(eps, f, rel_tol, ct) if ct != rel_tol else \
            self._contract(eps, self.split(eps, f, rel_tol), rel_tol)
        self._hint = eps - best.e1 if best.upper < 1.0 else None
        return self._as_report(eps_in, best)

    def _refine(self, eps: float, lo: float, hi: float, rt: float) -> Split:
        """The best split over f in [lo, hi] on legs at rel_tol ``rt`` (docs/accountant.md §9): the golden section's window
        (§9.10), continued beyond it where its best split is at an inner end (§9.5), or toward the edge of a cliff of leg B
        inside it (§9.5, §9.14). Inside it the legs B of §9.26 (``limits.REP49_LOOSE_B``)."""
        prev, self._in_refine = self._in_refine, True
        try:
            return self._refine_in(eps, lo, hi, rt)
        finally:
            self._in_refine = prev

    def _refine_in(self, eps: float, lo: float, hi: float, rt: float) -> Split:
        """:meth:`_refine`'s search."""
        found, b = self._window(eps, lo, hi, rt)
        sgn = 1.0 if hi < 1.0 and hi - found.f < self.SPLIT_TOL else -1.0 if 0.0 < lo and found.f - lo < self.SPLIT_TOL else 0.0
        if found.upper >= VALUE_FLOOR:  # (below it no rel_tol is targeted, §6.3: nothing to search for)
            if sgn != 0.0:
                found = self._beyond(eps, found, sgn, rt)
            elif math.exp(found.e1) * found.leg_b.upper <= self.CLIFF * found.upper:  # a cliff inside the bracket
                found = self._edge(eps, found, rt) if self._past_cliff(found) else self._shrink(eps, found, b, rt)
        return found

    def _candidates(self, eps: float, ct: float, rel_tol: float, fs: tuple[float, ...],
                    cands: tuple[Split, ...] | list[Split] = ()) -> list[Split]:
        """``cands`` and the splits at ``fs`` on legs at ``ct`` (the candidates of §9; rough_b and idle where ct is
        rel_tol, §9.6-§9.7), each skipped where :meth:`_worse` shows it is not below the least upper value before it
        while that is below 1 (the cap stops read every split of SPLITS: docs/accountant.md §9.4)."""
        out = list(cands)
        for f in fs:
            bar = min((c.upper for c in out), default=math.inf)
            if not (bar < 1.0 and self._worse(eps, f, ct, bar)):
                out.append(self.split(eps, f, ct, rough_b=bar < 1.0 and ct == rel_tol, guess=False, idle=ct == rel_tol))
        return out

    def _worse(self, eps: float, f: float, rel_tol: float, bar: float) -> bool:
        """True when a lower value of the split's chain at f is >= ``bar``: from the legs known already
        (:meth:`_known_floor`), else from leg A at rel_tol and leg B at the loose PROBE_TOL (as :meth:`_probe`)."""
        if self._known_floor(eps, f) >= bar:
            return True
        e1 = f * eps
        a, w = self.leg(0, e1, rel_tol).lower, math.exp(e1) * (1 - 4 * U)
        if a * (1 - 8 * U) >= bar:  # (B >= 0)
            return True
        # leg B stops once its upper value is below t, a hair below the B that decides: the same answer (§9.4)
        t = (bar / (1 - 8 * U) - a) / w * (1 - 1e-9) if self.SHORTCUTS and math.isfinite(w) \
            and getattr(self.bottom, "randomizer", None) is not None else 0.0  # (as split: a test's has no target)
        b = self.leg(1, self._second(eps, e1), self.PROBE_TOL, max(t, 0.0)).lower
        return (a + w * b) * (1 - 8 * U) >= bar

    def _known_floor(self, eps: float, f: float) -> float:
        """A lower value of the split's chain A(e1) + e^{e1} B(e2) at e1 = f eps from legs known already, rounded down."""
        e1 = f * eps
        return (self._known_lower(0, e1) + math.exp(e1) * (1 - 4 * U) * self._known_lower(1, self._second(eps, e1))) \
            * (1 - 8 * U)

    def _known_lower(self, j: int, at: float) -> float:
        """A lower value of leg j's D_up at ``at`` from the legs known already (no new certification): the largest
        lower value of a cached or closed-form leg j at some e >= at (legs non-increasing, §1.6), none above eps_tau
        (§9.1); 0 when there is none."""
        et = float(getattr(self.bottom, "eps_tau", math.inf))
        los = [r.lower for (i, e, _), r in self._leg_cache.items() if i == j and at <= e <= et]
        return max([0.0, *los, *(c[0] for (i, e), c in self._closed_cache.items() if i == j and at <= e <= et)])

    def _contract(self, eps: float, s: Split, rel_tol: float) -> Split:
        """The reported split with its bracket within rel_tol: ``s`` when (upper - lower) <= rel_tol lower (or
        at the cap, below VALUE_FLOOR, or leg B within rel_tol already), else the same split with leg B certified
        to rel_tol alone (the bracket of before, docs/accountant.md §9.4)."""
        rb = s.leg_b
        if s.upper - s.lower <= rel_tol * s.lower or not VALUE_FLOOR <= s.upper < 1.0 \
                or rb.upper - rb.lower <= rel_tol * rb.lower or penalty_bound(rb):  # (§9.20)
            return s
        return self.split(eps, s.f, rel_tol, absolute=False)

    def decide(self, eps: float, target: float) -> float:
        """A certified upper value of delta at eps for get_epsilon's search against ``target``
        (docs/accountant.md §9.2): one split's value A(e1) + e^{e1} B(e2), rounded outwards, capped
        at 1 and floored at 5e-324 as get_delta. With a best second leg e2 from an earlier search
        (the hint), the split search is local: the split e2 = hint first, then a walk in steps of
        SPLIT_TOL eps in e2 while the value decreases, stopping at the first split whose value is
        <= target (the comparison is decided); the full search of :meth:`report` when there is no
        hint, at eps above eps_tau or 60, or when the walk does not settle."""
        self._floor_bar = min(VALUE_FLOOR, math.nextafter(target, math.inf))  # (§9.13: below the floor, <= target)
        try:
            return self._decide(eps, target)
        finally:
            self._floor_bar = VALUE_FLOOR

    def _decide(self, eps: float, target: float) -> float:
        """:meth:`decide`."""
        rel_tol, rough = self.bottom.rel_tol, max(self.bottom.rel_tol, 0.1)
        h = self._hint
        if h is None or not 0.0 < h < eps or eps > min(EPS_CAP, float(getattr(self.bottom, "eps_tau", math.inf))):
            if self.SHORTCUTS and rough > rel_tol and eps <= EPS_CAP:
                rep = self.report(eps, rough)
                if rep.lower > self.FAR * target:
                    return min(max(rep.upper, TINY), 1.0)
            return min(max(self.report(eps, rel_tol).upper, TINY), 1.0)
        if self.SHORTCUTS and rough > rel_tol:  # far from the target: decided on legs at rel_tol 0.1 (§9.2)
            first = self.split(eps, 1.0 - h / eps, rough)
            if first.lower > self.FAR * target:
                walked = self._walk(eps, rough, target, first)  # (None: the full search at rel_tol 0.1, as below)
                rep = self._report_splits(eps, rough, eps) if walked is None else self._as_report(eps, walked)
                if rep.lower > target or rep.upper <= target:
                    if walked is not None:
                        self._hint = eps - walked.e1
                    return min(max(rep.upper, TINY), 1.0)
        best = self.split(eps, 1.0 - h / eps, rel_tol, rough_b=True)
        if best.upper > target:
            walked = self._walk(eps, rel_tol, target, best)
            if walked is None:  # the optimum is far from the hint: the full search (it sets the hint)
                return min(max(self._report_splits(eps, rel_tol, eps).upper, TINY), 1.0)
            best = walked
        self._hint = eps - best.e1
        return min(max(best.upper, TINY), 1.0)

    def _walk(self, eps: float, rel_tol: float, target: float, first: Split) -> Split | None:
        """From the split ``first``, steps of SPLIT_TOL eps in e2 in the direction where the value
        decreases, while it decreases (at most WALK_STEPS), then one split at the vertex of the legs'
        log-linear model through the best split's two neighbours (the value is sharply V-shaped in
        e2, docs/accountant.md §9.2); the first split whose value is <= target as soon as one is
        found, else the best split seen; None when the walk does not settle."""
        step = self.SPLIT_TOL * eps
        best, seen = first, [first]
        for sgn in (1.0, -1.0):
            moved = False
            for _ in range(self.WALK_STEPS):
                e2 = eps - best.e1 + sgn * step
                if not 0.0 < e2 < eps:
                    break
                c = self.split(eps, 1.0 - e2 / eps, rel_tol, rough_b=True)
                seen.append(c)
                if c.upper <= target:
                    return c
                if c.upper >= best.upper:
                    break
                best, moved = c, True
            else:
                return None
            if moved:
                break
        x = self._vertex(best, seen, step)
        if x is not None:
            e2 = min(max(eps - best.e1 + x, 0.0), eps)  # (a split: 0 <= e2 <= eps)
            c = self.split(eps, 1.0 - e2 / eps, rel_tol, rough_b=True)
            if c.upper < best.upper:
                best = c
        if VALUE_FLOOR <= best.upper < 1.0 and math.exp(best.e1) * best.leg_b.upper <= self.CLIFF * best.upper:
            # at a cliff of leg B (§9.5): the bisection toward its edge on legs at rel_tol 0.1 (a cliff's vertex
            # lies within a step: the walk's step alone misses it), its split certified at rel_tol where better
            rt = max(rel_tol, 0.1)
            s = self.split(eps, best.f, rt) if rt != rel_tol else best
            edge = self._edge(eps, s, rt) if self._past_cliff(s) else \
                self._shrink(eps, s, min(best.f + self.SPLIT_TOL, 1.0), rt)
            if edge.f != best.f:
                c = self.split(eps, edge.f, rel_tol, rough_b=True)
                best = c if c.upper < best.upper else best
        return best

    _vertex = staticmethod(vertex)  # (the vertex model of the walk: via_bottom_search.vertex)

    def _as_report(self, eps: float, best: Split) -> AccountantReport:
        """The report of one split, its values capped at 1 (the split kept as ``_last``)."""
        self._last, ra, rb = best, best.leg_a, best.leg_b
        r = ra if ra.upper >= rb.upper else rb
        terms = dict(r.terms, via_bottom=True, epsilon_split=best.e1, leg_upper=(ra.upper, rb.upper))
        return AccountantReport(eps, min(best.lower, 1.0), min(best.upper, 1.0), r.h, r.N, r.T, r.B, r.theta,
                                r.n_log_mgf, r.law_index, terms)

    def _at_cap(self, eps: float, cands: list[Split], rel_tol: float) -> Split | None:
        """The early stop at the cap (docs/accountant.md §9): when the split search cannot report
        below 1, the split of ``cands`` with the largest lower value (its upper value replaced by
        1 >= delta, its lower value by 1 where the legs' lower values prove A(e1) + e^{e1} B(e2) >= 1
        at every split); None when the search must go on. Where an end split is below 1 (§9.24, appended to
        ``cands``) the split search from it instead (docs/accountant.md §9.25), its reported split; None with that
        rule off."""
        if min(c.upper for c in cands) < 1.0:
            return None
        if end_found(self, eps, rel_tol, cands):  # (§9.24: an end split below 1; §9.25: the search from it)
            return end_search(self, eps, rel_tol, max(rel_tol, 0.1), cands[-1])
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

    def _leg_lower(self, j: int, e: float, rel_tol: float) -> float:
        """A lower value of leg j's D_up at e from :meth:`leg`; 0 above the legs' eps_tau (its bracket there is at eps_tau)."""
        if e > float(getattr(self.bottom, "eps_tau", math.inf)):
            return 0.0
        return self.leg(j, e, rel_tol).lower

    def _closed_leg(self, j: int, e: float, rel_tol: float) -> tuple[float, float]:
        """(lower, upper) of the blanket divergence D_up of leg j (0: x vs bot, 1: bot vs x) at e from the
        laws' closed forms alone (driver ``certify(closed_only=True)``, docs/accountant.md §6.9): the max
        over the leg's laws of their lower and upper values, without the sampler charge or surcharge
        (lower values of D_up only; the upper value serves as a bound on what a lower value can reach).
        (0, 1) beyond 60 nats (a value at 60 is no lower value beyond), where a law has none or without
        the randomizer."""
        key = (j, e)
        hit = self._closed_cache.get(key)
        if hit is not None:
            return hit
        lo, up = 0.0, 0.0
        zo, only = self.bottom, self.legs[j]
        rnd = getattr(zo, "randomizer", None)
        if not 0.0 <= e <= EPS_CAP or rnd is None:
            lo, up = 0.0, 1.0  # (no closed forms: a zero-out accountant without its randomizer, e.g. a test's)
        else:
            try:
                for i, (gamma, law) in enumerate(laws_for(rnd, e, "zero_out")):
                    if only is not None and i not in only:
                        continue
                    r = certify(law, float(gamma), zo.n, rel_tol, zo.threads, closed_only=True)
                    lo, up = max(lo, float(r.lower)), max(up, float(r.upper))
            except (RuntimeError, ValueError, ArithmeticError):
                lo, up = 0.0, 1.0
        if len(self._closed_cache) > 4096:
            self._closed_cache.clear()
        self._closed_cache[key] = (lo, up)
        return lo, up

    def _cap_at_one_split(self, eps: float, rel_tol: float, tols: tuple[float, float]) -> Split | None:
        """Early stop (a) of §9 from one certified split (docs/accountant.md §9.3): where the legs' closed-form
        lower values put every split of SPLITS at or above 1 (so are their certified upper values: the search
        of §9 would stop at the cap), the split of SPLITS with the largest closed-form chain is certified with
        legs A and B at the rel_tols ``tols``; if its certified lower value is >= 1 it is returned with the
        bracket (1, 1), the report the search of §9 gives there (its early stop (a) takes the split of largest
        lower value, >= this one's). None otherwise (the split's legs are cached)."""
        best, best_lo = None, -math.inf
        for f in self.SPLITS:
            e1 = f * eps
            e2 = self._second(eps, e1)
            lo = (self._closed_leg(0, e1, rel_tol)[0] + math.exp(e1) * (1 - 4 * U) * self._closed_leg(1, e2, rel_tol)[0]) \
                * (1 - 8 * U)
            if not lo >= 1.0:
                return None
            if lo > best_lo:
                best, best_lo = f, lo
        assert best is not None
        s = self.split(eps, best, tols[0], absolute=False, b_tol=tols[1])
        return replace(s, lower=1.0, upper=1.0) if s.lower >= 1.0 else None

    def _cap_closed(self, eps: float, rel_tol: float, tols: tuple[float, ...] | None = None) -> Split | None:
        """The cap proved before any split is certified (docs/accountant.md §9.3): the cover of the first legs
        (:func:`.via_bottom_cover.cap_closed`); None when it fails."""
        return cap_closed(self, eps, rel_tol, tols)

    @staticmethod
    def _interval_at_least_1(eps: float, a: float, e2: float, a_lo: float, b_lo: float) -> bool:
        """A_lo + e^a B_lo >= 1, rounded down, with B_lo a lower value of B at e2 >= eps - a
        (checked exactly): a lower value of A(e1) + e^{e1} B(e2') on a <= e1 <= b, e2' <= eps - e1."""
        if Fraction(e2) + Fraction(a) < Fraction(eps):
            return False
        return (a_lo + math.exp(a) * (1 - 4 * U) * b_lo) * (1 - 8 * U) >= 1.0

    def epsilon(self, delta: float, xtol: float, get_delta: Callable[[float], float],
                put: Callable[[float, float], float] | None = None,
                check: Callable[[], None] | None = None, end: float | None = None) -> float:
        """get_epsilon through bot (:func:`sharpdp.shuffle.accountant.via_bottom_search.epsilon_search`); ``check()`` (the accountant's get_delta(EPS_MAX) <= delta test,
        a ValueError naming delta otherwise; a full split search) runs only where the answer needs it:
        when the search reaches EPS_MAX, or when it fails with a ValueError (e.g. the zero-out answer at
        delta / 2 does not exist), whose own message stands if the check passes. ``end``: the search's upper end
        in place of EPS_MAX, a point whose value <= delta is in ``put``'s memo (:func:`.ends.bottom_end`, §9.9)."""
        try:
            e = epsilon_search(self, delta, xtol, get_delta, put, end)
        except ValueError:
            if check is not None:
                check()
            raise
        if e >= EPS_MAX and check is not None:
            check()  # get_delta(700) <= delta certifies EPS_MAX
        return e
