"""The split search of replace-one through bot near its optimum (docs/accountant.md §9, §9.5): the golden section
on loose legs and the cliff vertices of leg B (:class:`CliffSearch`, a part of
:class:`sharpdp.shuffle.accountant.via_bottom.ViaBottom`), and :class:`Split`, one split's certified value."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.limits import VALUE_FLOOR
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.via_bottom_chord import chording, chording_search
from sharpdp.shuffle.accountant.via_bottom_edge import edge_fraction, leg_edge
from sharpdp.shuffle.accountant.via_bottom_gate import probe_first
from sharpdp.shuffle.accountant.via_bottom_loose_b import shrink_done


@dataclass(frozen=True)
class Split:
    """One split e1 + e2 = eps of the chain A(e1) + e^{e1} B(e2), rounded outwards."""

    f: float  # e1 / eps
    upper: float
    lower: float
    e1: float
    leg_a: AccountantReport  # x vs bot at e1
    leg_b: AccountantReport  # bot vs x at e2


class CliffSearch:
    """The golden section and the cliff searches of §9.5 (methods of ViaBottom; its constants and legs)."""

    SPLIT_TOL: float
    SLIDES: int
    PROBE_TOL: float
    BEYOND_TOL: float
    SHRINK_GAIN: float
    EDGE: float
    CLIFF: float
    # the vertex model of the legs first in the golden section's window (docs/accountant.md §9.10) and the loose search
    # of §9.11 (with limits.VIA_BOTTOM_LOOSE_SEARCH); False: the golden section alone (the search of before, a test reference)
    MODEL = True
    # the most model steps of the split search of §9.11 (:meth:`_model_first`)
    MODEL_STEPS = 4
    # ... a model step landing within MODEL_END in f of an end of [0, 1] tries that end instead (once per end)
    MODEL_END = 0.15
    # ... and settled where its last step gained less than MODEL_GAIN of the chain's estimate
    MODEL_GAIN = 1e-3
    _leg_cache: dict[tuple[int, float, float], AccountantReport]
    _seen: list[Split]  # the splits the last model search certified
    _edge_e2: list[float | None]  # leg B's closed-form edge (§9.14), once computed: [e2*] or [None]
    _floor_bar: float  # the level of §9.13's floor stop (BudgetSearch's)
    _chord_on = False  # leg A from the chord of §9.19 (inside the cliff searches, :func:`.via_bottom_chord.chording`)
    _bar = math.inf  # the bar of the comparison the split being certified is made for (:meth:`_split_below`, §9.26)

    def split(self, eps: float, f: float, rel_tol: float, absolute: bool = True, b_tol: float | None = None,
              rough_b: bool = False) -> Split:
        raise NotImplementedError  # (ViaBottom.split)

    def leg(self, j: int, e: float, rel_tol: float, negligible: float = 0.0) -> AccountantReport:
        raise NotImplementedError  # (ViaBottom.leg)

    @staticmethod
    def _second(eps: float, e1: float) -> float:
        raise NotImplementedError  # (ViaBottom._second)

    @chording_search
    def _golden(self, eps: float, lo: float, hi: float, rt: float) -> tuple[Split, float]:
        """The best split of a golden-section search of the split value over f in [lo, hi] (legs at rel_tol
        ``rt``) down to the width SPLIT_TOL, and the nearest f above it of a worse split or the bracket's end."""
        g = 0.5 * (math.sqrt(5.0) - 1.0)
        c, d = self.split(eps, hi - g * (hi - lo), rt), self.split(eps, lo + g * (hi - lo), rt)
        while hi - lo > self.SPLIT_TOL:
            if c.upper <= d.upper:
                hi, d = d.f, c
                # (§9.22: the new split probed against the kept one first; worse: strictly above d's upper value)
                c = self._golden_split(eps, hi - g * (hi - lo), rt, math.nextafter(d.upper, math.inf))
            else:
                lo, c = c.f, d
                d = self._golden_split(eps, lo + g * (hi - lo), rt, c.upper)
        best, other = (c, d) if c.upper <= d.upper else (d, c)
        return best, (other.f if other.f > best.f else hi)

    def _golden_split(self, eps: float, f: float, rt: float, bar: float) -> Split:
        """The golden section's new split at f (legs at rel_tol ``rt``), compared with the kept split by ``bar``: with
        ``limits.VIA_BOTTOM_GOLDEN_PROBE`` (docs/accountant.md §9.22), where a lower value of its chain is >= ``bar``
        (:meth:`_worse`: legs known already, else leg A at rt and leg B at PROBE_TOL to the decision's absolute target)
        the split is not certified at rt and stands as a split of upper value inf (every certified upper value of it is
        >= bar, so the section's comparison decides as on the certified split: it is the worse one, never returned,
        only its f read); else the split certified at rt (main's)."""
        if (limits.VIA_BOTTOM_GOLDEN_PROBE or probe_first(self, eps, f, bar)) and math.isfinite(bar) \
                and self._worse(eps, f, rt, bar):  # (§9.23: the probe where the legs beside it predict it worse)
            e1 = f * eps
            probed = AccountantReport(e1, 0.0, math.inf, terms={"note": "probed worse (docs/accountant.md §9.22)"})
            return Split(f, math.inf, 0.0, e1, probed, probed)
        return self._split_below(eps, f, rt, bar)

    def _split_below(self, eps: float, f: float, rt: float, bar: float) -> Split:
        """The split at f (legs at rel_tol ``rt``) for a comparison with ``bar`` (``_bar``, read by §9.26's loose leg B:
        a split whose lower value is >= bar is worse whatever its legs' rel_tol)."""
        prev, self._bar = self._bar, bar
        try:
            return self.split(eps, f, rt)
        finally:
            self._bar = prev

    @chording_search
    def _window(self, eps: float, lo: float, hi: float, rt: float) -> tuple[Split, float]:
        """The best split over f in [lo, hi] (legs at rel_tol ``rt``) and the nearest f above it of a worse split or
        the window's end: the golden section's first two splits, then one split at the vertex of the legs' log-linear
        model through them (and one more step of the model from it), kept where the model settles there
        (docs/accountant.md §9.10); else :meth:`_golden` (its first two splits are the cached ones)."""
        g = 0.5 * (math.sqrt(5.0) - 1.0)
        if self.MODEL and hi - lo > self.SPLIT_TOL:
            c, d = self.split(eps, hi - g * (hi - lo), rt), self.split(eps, lo + g * (hi - lo), rt)
            s = min(c, d, key=lambda x: x.upper)
            y = model_shift(c, d, s)
            if y is not None:
                f = min(max((s.e1 + y) / eps, lo), hi)
                v = self.split(eps, f, rt)
                near = min((c, d), key=lambda x: abs(x.e1 - v.e1))
                y2 = model_shift(v, near, v)
                # settled: the model through v moves less than half the golden section's resolution, or v is at an
                # end of the window and the model through it points beyond that end (the search of §9.5 goes on)
                out = (f == lo and 0.0 < lo) or (f == hi and hi < 1.0)
                if y2 is not None and v.upper < s.upper and all(self._balanced(x) for x in (c, d, v)) \
                        and (abs(y2) <= 0.5 * self.SPLIT_TOL * eps or out and (y2 < 0.0) == (f == lo)):
                    seen = [c, d, v]
                    if not out and abs(y2) > 0.05 * self.SPLIT_TOL * eps:  # one more model step, kept where better
                        w = self.split(eps, min(max((v.e1 + y2) / eps, lo), hi), rt)
                        seen.append(w)
                        v = w if w.upper < v.upper and self._balanced(w) else v
                    # a cliff of leg B can only lie left of every balanced split (B is non-increasing in e2): the
                    # split SPLIT_TOL / 2 left of them, balanced and not better, or the model is not kept
                    p = None if out else self.split(eps, max(min(x.f for x in seen) - 0.5 * self.SPLIT_TOL, 0.0), rt)
                    if p is None or (self._balanced(p) and p.upper >= v.upper):
                        return v, min([x.f for x in seen if x.f > v.f] + [hi])
        return self._golden(eps, lo, hi, rt)

    def _model_first(self, eps: float, rt: float) -> Split | None:
        """The split search of docs/accountant.md §9.11 on legs at rel_tol ``rt``, compared by the chains' estimates
        (:func:`_estimate`): from the splits f = 0.5 and 0.65 (two of SPLITS), steps to the vertex of the legs' log-linear
        model (:func:`model_shift` on the legs' :func:`_mid`) anchored at the best split, its slopes through the best
        split's balanced neighbours on both sides where it has them, else through it and its nearest neighbour; a step
        landing within MODEL_END of an end of [0, 1] tries that end instead (once). It stops when a step is at most
        SPLIT_TOL eps / 20, the best split's neighbours are SPLIT_TOL eps apart or the model points beyond the end the best
        split is at; after MODEL_STEPS steps where the last step is at most SPLIT_TOL eps / 2 or gained less than
        MODEL_GAIN of the estimate. The best split is returned where it and its model neighbour are balanced, every split
        seen is in [VALUE_FLOOR, 1) and no split left of the balanced ones can be better: leg A's lower value at the
        leftmost balanced split is at least the best estimate (A is non-increasing), else the split SPLIT_TOL / 2 left
        of it is balanced and not better (a cliff of leg B lies left of every balanced split, §9.10). None otherwise
        (the search of §9 follows; its splits at f = 0.5 and 0.65 are these, cached). Only a place to look: the caller
        certifies the split at rel_tol. With ``limits.VIA_BOTTOM_SETTLE_GAIN`` > 0 (docs/accountant.md §9.13): the steps
        also stop where :func:`settled`, the cliff check tolerates that gain, and a split of SPLITS toward the balanced
        side starts the model where neither first split is balanced; the splits certified are kept in ``_seen``."""
        start = self._start(eps)
        seen = self._seen = [self.split(eps, start[0], rt)]  # (§9.13: read by the floor stop)
        if limits.VIA_BOTTOM_FLOOR_FIRST and limits.VIA_BOTTOM_FLOOR_STOP and seen[0].upper < self._floor_bar:
            return None  # (§9.18: the first split below the floor is the search's end, §9.13's rule 4 reports it)
        seen.append(self.split(eps, start[1], rt))
        gain = limits.VIA_BOTTOM_SETTLE_GAIN if limits.VIA_BOTTOM_LOOSE_SEARCH else 0.0
        if gain > 0.0 and not any(self._balanced(x) for x in seen):
            # (§9.13: one leg's share negligible at both, the other's balanced: the split of SPLITS toward the first
            # leg's side (cached for that search); leg B before a cliff's edge at both (share <= EDGE: its values ~0)
            # leaves the search of §9.5)
            w = [math.exp(x.e1) * x.leg_b.upper > self.CLIFF * x.upper for x in seen]
            a = [x.leg_a.upper > self.CLIFF * x.upper for x in seen]
            side = (0.8,) if all(a) and not any(w) and any(map(self._past_cliff, seen)) else (0.35,) if all(w) and not any(a) else ()
            for f in side:
                seen.append(self.split(eps, f, rt))
                if self._balanced(seen[-1]):
                    break
        if not any(self._balanced(x) for x in seen):  # (leg B at a cliff or negligible at both: no model, §9.5)
            return None
        prev = seen[0]
        ends = [e for e in (0.0, 1.0) if e not in start]  # (an end of [0, 1] is tried once, in place of a model step
        # that lands near it; the end f = 0 of §9.18's start is seen already)
        pred: float | None = None  # the estimate the last model step predicted at its split (§9.13)
        for i in range(self.MODEL_STEPS + 1):
            if not all(VALUE_FLOOR <= x.upper < 1.0 for x in seen):
                return None
            best = min(seen, key=_estimate)
            others = [x for x in seen if x is not best and self._balanced(x)] or [x for x in seen if x is not best]
            near = min(others, key=lambda x: abs(x.e1 - best.e1))
            lft = max((x for x in others if x.e1 < best.e1), key=lambda x: x.e1, default=None)
            rgt = min((x for x in others if x.e1 > best.e1), key=lambda x: x.e1, default=None)
            # the legs' log slopes through the best split's neighbours on both sides where it has them (central), else
            # through it and its nearest neighbour; the vertex of their log-linear model anchored at the best split
            p, q = (lft, rgt) if lft is not None and rgt is not None else (best, near)
            y = model_shift(p, q, best, _mid)
            if y is None:
                return None
            f = min(max((best.e1 + y) / eps, 0.0), 1.0)
            step = abs(f * eps - best.e1)
            if gain > 0.0 and pred is not None and settled(p, q, best, seen[-1], pred, f * eps - best.e1, gain):
                break  # (§9.13: the model confirmed at its last split predicts less than ``gain`` from one more step)
            if (f == best.f and f in (0.0, 1.0)) or step <= 0.05 * self.SPLIT_TOL * eps or (
                    lft is not None and rgt is not None and rgt.e1 - lft.e1 <= self.SPLIT_TOL * eps):
                break  # (settled, bracketed to the golden section's resolution, or pointing beyond the end at best)
            if i == self.MODEL_STEPS:
                # (settled in value: the last step gained less than MODEL_GAIN of the estimate; or the step is short:
                # it is taken, and the better of the two kept)
                if seen[-1] is best and _estimate(prev) - _estimate(best) <= self.MODEL_GAIN * _estimate(best):
                    break
                if step > 0.5 * self.SPLIT_TOL * eps or any(x.f == f for x in seen):
                    return None
                last = self.split(eps, f, rt)
                seen.append(last)
                best = min(best, last, key=_estimate)
                break
            prev = best
            if any(x.f == f for x in seen):  # (a split seen already: the model makes no progress)
                return None
            end = [e for e in ends if abs(f - e) < self.MODEL_END and abs(best.f - e) > abs(f - e)]
            if end:
                ends.remove(end[0])
                f = end[0]
            pred = None if end else model_value(p, q, best, f * eps - best.e1)
            seen.append(self.split(eps, f, rt))
            if not (end or self._balanced(seen[-1])):  # (a model step at a cliff of leg B: the searches of §9.5)
                return None
        if not (self._balanced(best) and self._balanced(near)):
            return None
        left = min((x for x in seen if self._balanced(x)), key=lambda x: x.f)
        if left.leg_a.lower < _estimate(best) and left.f > 0.0:
            # (a cliff of leg B lies left of every balanced split; left of ``left`` every split's value is >= A there)
            # (§9.13: not better by more than ``gain``, the resolution the settled search asks for; 0: main's test)
            p = self.split(eps, max(left.f - 0.5 * self.SPLIT_TOL, 0.0), rt)
            if not (self._balanced(p) and _estimate(p) >= (1.0 - gain) * _estimate(best)):
                return None
        return best

    @staticmethod
    def _start(eps: float) -> tuple[float, float]:
        """The two splits (in f) the model search of §9.11 starts from: f = 0.5 and 0.65 (two of SPLITS), or, with
        0 < eps <= ``limits.VIA_BOTTOM_END_FIRST`` (docs/accountant.md §9.18), the end f = 0 and f = 0.5 (at a small
        eps the chain is nearly linear in f and its least value is most often at the end e1 = 0). A place to look only."""
        return (0.0, 0.5) if 0.0 < eps <= limits.VIA_BOTTOM_END_FIRST else (0.5, 0.65)

    def _balanced(self, s: Split) -> bool:
        """Each leg's share of the split's value is above CLIFF (no cliff of leg B near it, §9.5, §9.10)."""
        w = math.exp(s.e1) * s.leg_b.upper
        return w > self.CLIFF * s.upper and s.leg_a.upper > self.CLIFF * s.upper

    @chording
    def _beyond(self, eps: float, best: Split, sgn: float, rt: float) -> Split:
        """The search of §9.5 beyond the golden-section window from its best split ``best`` (legs at rel_tol
        ``rt``): steps in f of SPLIT_TOL, 2 SPLIT_TOL, 4 SPLIT_TOL, ... in direction ``sgn`` while the value
        decreases (at most SLIDES), then :meth:`_shrink` toward the first worse split; the best split seen."""
        step = self.SPLIT_TOL
        for _ in range(self.SLIDES):
            f = min(max(best.f + sgn * step, 0.0), 1.0)
            c = self._probe(eps, f, rt, best.upper) if f != best.f else None
            if c is None:
                break
            best, step = c, 2.0 * step
        return self._shrink(eps, best, best.f + sgn * step, rt)

    @chording
    def _shrink(self, eps: float, best: Split, other: float, rt: float) -> Split:
        """The bracket from ``best`` (legs at rel_tol ``rt``) to the worse split at f = ``other`` shrunk to
        BEYOND_TOL by bisection (:meth:`_probe` at the midpoint), unless a lower value of leg A at the larger first
        leg of the two (cached at ``other``, or ``best``'s own) shows it would gain less than SHRINK_GAIN; the best split seen (docs/accountant.md §9.5).
        From a split before a cliff of leg B (e^{e1} B(e2) <= EDGE x its value), a better midpoint past the
        cliff's edge (leg B's share above EDGE) ends the bracket there: the edge lies between."""
        other = min(max(other, 0.0), 1.0)
        # every split between has value >= A at the larger e1 of the two (A non-increasing in e1): at other when it
        # lies above best, else best's own leg A (docs/accountant.md §9.7)
        a_at = self._leg_cache.get((0, other * eps, rt)) if other > best.f else best.leg_a
        if a_at is not None and a_at.lower >= (1.0 - self.SHRINK_GAIN) * best.upper:
            return best
        seen = best
        fe = self._closed_edge(eps) if other > best.f and not self._past_cliff(best) else None
        if fe is not None and best.f < fe < other:
            # (§9.14: the edge of leg B's cliff from the laws' tops, then the split BEYOND_TOL past it; where that one is
            # better, the bisection of before goes on from the best split to it)
            c = self._probe(eps, fe, rt, best.upper)
            best = c if c is not None else best
            beyond = min(fe + self.BEYOND_TOL, other)
            d = self._probe(eps, beyond, rt, best.upper) if beyond > fe else None
            if d is None:
                return best
            other, seen = beyond, d
        while abs(other - best.f) > self.BEYOND_TOL:
            f = 0.5 * (best.f + other)
            c = self._probe(eps, f, rt, best.upper)
            if c is None:
                other = f
            elif self._past_cliff(best) or not self._past_cliff(c):
                best = c
            else:
                other = f  # (the edge is between best and c)
                seen = c if c.upper < seen.upper else seen
            if shrink_done(self, eps, best, other, rt):  # (§9.26: the gate of SHRINK_GAIN at every step)
                break
        return best if best.upper <= seen.upper else seen

    @chording
    def _edge(self, eps: float, past: Split, rt: float) -> Split:
        """From a split ``past`` beyond the edge of a cliff of leg B (:meth:`_past_cliff`; the edge is at a smaller
        f, where B(e2) falls to nothing), the split SPLIT_TOL below it and, when that one is before the edge, a
        bisection on which side of the edge the midpoint lies down to BEYOND_TOL (legs at rel_tol ``rt``); the
        best split seen (docs/accountant.md §9.5)."""
        if past.f <= 0.0:
            return past
        fe = self._closed_edge(eps)
        if fe is not None and past.f - self.SPLIT_TOL <= fe < past.f:
            # (§9.14: the split at the edge from the laws' tops and the one BEYOND_TOL past it, no bisection)
            at = self.split(eps, fe, rt)
            beyond = self.split(eps, min(fe + self.BEYOND_TOL, past.f), rt)
            return min(past, at, beyond, key=lambda c: c.upper)
        before = self.split(eps, max(past.f - self.SPLIT_TOL, 0.0), rt)
        best = min(past, before, key=lambda c: c.upper)
        if self._past_cliff(before):
            return best
        lo, hi = before.f, past.f
        while hi - lo > self.BEYOND_TOL:
            c = self.split(eps, 0.5 * (lo + hi), rt)
            best = c if c.upper < best.upper else best
            lo, hi = (lo, c.f) if self._past_cliff(c) else (c.f, hi)
        return best

    def _closed_edge(self, eps: float) -> float | None:
        """With ``limits.VIA_BOTTOM_CLOSED_EDGE`` (docs/accountant.md §9.14), the fraction f of the split at eps whose
        second leg is at the edge of leg B's cliff from the laws' closed-form tops (:func:`.via_bottom_edge.leg_edge`,
        computed once per object: it does not depend on eps or n); None without the switch, without such an edge or
        where it is not inside (0, eps). A place to look only: the split there is certified like any other."""
        if not limits.VIA_BOTTOM_CLOSED_EDGE:
            return None
        memo = self.__dict__.get("_edge_e2")
        if memo is None:
            # (ViaBottom's zero-out accountant and legs: leg B's laws)
            legs = getattr(self, "legs", (None, None))
            memo = self._edge_e2 = [leg_edge(getattr(getattr(self, "bottom", None), "randomizer", None), legs[1])]
        e2s = memo[0]
        return None if e2s is None or e2s <= 0.0 else edge_fraction(eps, e2s, self._second)

    def _worse(self, eps: float, f: float, rel_tol: float, bar: float) -> bool:
        raise NotImplementedError  # (ViaBottom._worse)

    def _past_cliff(self, s: Split) -> bool:
        """Leg B's share of the split's value is above EDGE (not before the edge of a cliff of leg B, §9.5)."""
        return math.exp(s.e1) * s.leg_b.upper > self.EDGE * s.upper

    def _probe(self, eps: float, f: float, rt: float, bar: float) -> Split | None:
        """The split at f with legs at rel_tol ``rt`` when its upper value is below ``bar``, else None; first a
        lower value of its chain (:meth:`ViaBottom._worse`: legs known already, else leg A at rt and leg B at the
        loose PROBE_TOL, that leg B to the absolute target of the decision), which at or above ``bar`` decides None
        at once: every upper value of the split is then >= bar (docs/accountant.md §9.5, §9.6)."""
        if self._worse(eps, f, rt, bar):
            return None
        c = self._split_below(eps, f, rt, bar)
        return c if c.upper < bar else None


def _mid(r: AccountantReport) -> float:
    """A leg's estimate from its certified bracket (§9.11, a place to look only): the midpoint, or the upper value
    where the lower value is 0."""
    return 0.5 * (r.lower + r.upper) if r.lower > 0.0 else r.upper


def _estimate(s: Split) -> float:
    """The chain's estimate at a split from its legs' :func:`_mid` (§9.11: :meth:`CliffSearch._model_first` compares
    these; a loose leg's upper value carries an error of up to its bracket's width)."""
    return _mid(s.leg_a) + math.exp(s.e1) * _mid(s.leg_b)


def _upper(r: AccountantReport) -> float:
    """A leg's upper value (the estimate of :func:`model_shift` by default)."""
    return r.upper


def _slopes(p: Split, q: Split, at: Split, value: Callable[[AccountantReport], float]) -> tuple[float, ...] | None:
    """(a, b, A, W) of the legs' log-linear model around the split ``at``: a and b the legs' log slopes through the
    splits ``p`` and ``q``, A and W = e^{e1} B(e2) the legs' values at ``at`` (docs/accountant.md §9.10); None where a
    leg is not positive, a slope not positive or p, q coincide."""
    if p.e1 == q.e1:
        return None
    lo, hi = (p, q) if p.e1 < q.e1 else (q, p)
    vals = tuple(value(r) for r in (lo.leg_a, hi.leg_a, lo.leg_b, hi.leg_b, at.leg_a, at.leg_b))
    if not min(vals) > 0.0:
        return None
    de = hi.e1 - lo.e1
    a = (math.log(vals[0]) - math.log(vals[1])) / de
    b = (math.log(vals[3]) - math.log(vals[2])) / de
    if not (a > 0.0 and b > 0.0 and math.isfinite(a) and math.isfinite(b)):
        return None
    return a, b, vals[4], math.exp(at.e1) * vals[5]


def model_shift(p: Split, q: Split, at: Split, value: Callable[[AccountantReport], float] = _upper) -> float | None:
    """The shift y of e1 from the split ``at`` minimising A e^{-a y} + W e^{(b + 1) y}, the log-linear model of the chain
    A(e1 + y) + e^{e1 + y} B(e2 - y) around ``at`` (A, W = e^{e1} B(e2) its legs' upper values), with a and b the legs'
    log slopes through the splits ``p`` and ``q`` (docs/accountant.md §9.10); None where a leg is not positive, a
    slope not positive or p, q coincide. Only a place to look: the split there is certified like any other."""
    m = _slopes(p, q, at, value)
    if m is None:
        return None
    a, b, A, W = m
    return math.log(a * A / ((b + 1.0) * W)) / (a + b + 1.0)


def model_value(p: Split, q: Split, at: Split, y: float) -> float:
    """The chain's estimate A e^{-a y} + W e^{(b + 1) y} at the shift y of e1 from the split ``at`` by the log-linear
    model of :func:`model_shift` on the legs' :func:`_mid` (docs/accountant.md §9.13; an estimate only); nan where the
    model has none."""
    m = _slopes(p, q, at, _mid)
    if m is None:
        return math.nan
    a, b, A, W = m
    return A * math.exp(-a * y) + W * math.exp((b + 1.0) * y)


# the model is confirmed at a split where the estimate it predicted there is within CONFIRM x the gain asked for
CONFIRM = 10.0


def settled(p: Split, q: Split, best: Split, last: Split, pred: float, y: float, gain: float) -> bool:
    """The loose split search of §9.11 settled in value (docs/accountant.md §9.13; a choice of where to stop only): the
    model's estimate ``pred`` at the ``last`` split, predicted by the step that placed it, is within CONFIRM ``gain``
    of that split's estimate (relative: the model confirmed there), and the model through ``p``, ``q`` anchored at ``best`` predicts less
    than ``gain`` (relative) from the step y to its vertex."""
    est = _estimate(last)
    if not abs(est - pred) <= CONFIRM * gain * est:
        return False
    v = _estimate(best)
    return v - model_value(p, q, best, y) <= gain * v
