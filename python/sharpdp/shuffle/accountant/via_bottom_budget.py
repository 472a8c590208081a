"""The reported split of replace-one through bot certified to the bracket's budget and the targets of the legs B of a
split (docs/accountant.md §9.12, §9.6-§9.7): :class:`BudgetSearch`, a part of
:class:`sharpdp.shuffle.accountant.via_bottom.ViaBottom`, and :func:`chain`, one split's certified value from its two
legs."""

from __future__ import annotations

import math
from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.limits import EPS_CAP, U, VALUE_FLOOR
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.via_bottom_chord import engine_leg
from sharpdp.shuffle.accountant.via_bottom_cliff import CliffSearch, Split
from sharpdp.shuffle.accountant.via_bottom_loose_b import tight_b
from sharpdp.shuffle.accountant.via_bottom_penalty import penalty_bound


def chain(f: float, e1: float, ra: AccountantReport, rb: AccountantReport) -> Split:
    """The split e1 = f eps of the chain A(e1) + e^{e1} B(e2) from certified legs ``ra`` (x vs bot at e1) and ``rb``
    (bot vs x at e2, e1 + e2 <= eps exactly), rounded outwards (docs/accountant.md §9: one exp within 2 ulp,
    assumption F4, one product and one sum): its upper value bounds delta_replace(eps) by Lemma 9.1, its lower value
    is the chain's lower value at that split."""
    w = math.exp(e1)
    return Split(f, (ra.upper + w * rb.upper) * (1 + 8 * U), (ra.lower + w * rb.lower) * (1 - 8 * U), e1, ra, rb)


class BudgetSearch(CliffSearch):
    """The reported split of the loose split search of §9.11 certified to the width its bracket may have
    (docs/accountant.md §9.12; methods of ViaBottom, its legs and contract)."""

    bottom: Any  # the zero-out accountant of the legs (ViaBottom's)
    ABS_SHARE: float
    SHORTCUTS: bool
    _hint: float | None
    # the level below which a split search stops at its first split (§9.13): VALUE_FLOOR, or get_epsilon's target
    # where that is lower (ViaBottom.decide: a split at most the target decides the comparison)
    _floor_bar: float = VALUE_FLOOR
    # leg B of the reported split at the loosest of these rel_tols (above the call's) that the bracket's budget left
    # by leg A allows (docs/accountant.md §9.12)
    BUDGET_TOLS = (0.05, 0.03, 0.02, 0.015)

    # a search's leg B (rel_tol >= 0.1) at the loosest of these rel_tols that its share of the chain allows
    SEARCH_B_TOLS = (1.0, 0.3)

    def _search_b_tol(self, e2: float, rel_tol: float, a_share: float) -> float:
        """The rel_tol of a split search's leg B at e2 (docs/accountant.md §9.12; a choice of target only): with
        ``limits.VIA_BOTTOM_SEARCH_B`` (and the loose search of §9.11 on) and rel_tol >= 0.1, the loosest t of SEARCH_B_TOLS with t e^{e1} B <= rel_tol
        A_lo(e1) (``a_share`` = A_lo / e^{e1}), B guessed by the least upper value of a cached leg B at some e in
        [0.9 e2, e2] (B non-increasing: at least B(e2)); rel_tol where there is none or none fits."""
        if not (limits.VIA_BOTTOM_SEARCH_B and limits.VIA_BOTTOM_LOOSE_SEARCH and rel_tol >= 0.1 and a_share > 0.0):
            return rel_tol
        near = [r.upper for (j, e, _), r in self._leg_cache.items() if j == 1 and 0.9 * e2 <= e <= e2]
        if not near:
            return rel_tol
        b = min(near)
        return max((t for t in self.SEARCH_B_TOLS if t > rel_tol and t * b <= rel_tol * a_share), default=rel_tol)

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

    # the targets of leg B of a split (docs/accountant.md §9.2, §9.6, §9.7): speed only
    def _rough_may_pass(self, e2: float, neg: float) -> bool:
        """False (speed only: the rough leg B is then not tried, docs/accountant.md §9.6) where the legs known already
        show that leg B at rel_tol 0.1 cannot meet the absolute target ``neg``: a cached rel_tol-0.1 leg B at e2 wider
        than it and above it, or a known lower value of B(e2) above 20 neg (its bracket at 0.1 is then ~2 neg wide)."""
        hit = self._leg_cache.get((1, e2, 0.1))
        if hit is not None and not (hit.upper < neg or hit.upper - hit.lower <= neg):
            return False
        return not self._known_lower(1, e2) > 20.0 * neg

    def _idle_target(self, e2: float, neg: float) -> bool:
        """True (speed only, docs/accountant.md §9.7) where the cached leg B at e2 at rel_tol t = 0.1 (or, where the
        search certified it so, §9.12, at the tightest of SEARCH_B_TOLS) missed that rel_tol (upper - lower > t lower;
        lower 0 included) with an upper value >= ``neg`` / ABS_SHARE (= rel_tol A_lo(e1) / e^{e1}): leg B at rel_tol is
        then expected to miss both rel_tol and its absolute target ``neg``, so that :meth:`_contract` would certify it
        to rel_tol alone again."""
        t, hit = next(((t, h) for t, h in ((t, self._leg_cache.get((1, e2, t))) for t in (0.1, *self.SEARCH_B_TOLS[::-1]))
                       if h is not None), (0.1, None))
        return neg > 0.0 and hit is not None and hit.upper - hit.lower > t * hit.lower \
            and hit.upper >= neg / self.ABS_SHARE

    def _small_b(self, e2: float, share: float) -> bool:
        """A guess (speed only) that e^{e1} B(e2) <= 0.2 A(e1) (share = ABS_SHARE A_lo / e^{e1}): from the nearest cached leg B."""
        near = [(abs(e - e2), r.upper) for (j, e, _), r in self._leg_cache.items() if j == 1 and abs(e - e2) <= 0.05 * e2]
        return bool(near) and min(near)[1] <= 2.0 * share

    def _known_lower(self, j: int, at: float) -> float:
        raise NotImplementedError  # (ViaBottom._known_lower)

    def _contract(self, eps: float, s: Split, rel_tol: float) -> Split:
        raise NotImplementedError  # (ViaBottom._contract)

    def _mirror_b(self, e1: float, e2: float, rb: AccountantReport, rel_tol: float, width: float) -> AccountantReport | None:
        raise NotImplementedError  # (ViaBottom._mirror_b: via_bottom_mirror.mirror_b, docs/accountant.md §9.17)

    def _within(self, s: Split, rel_tol: float) -> bool:
        """The split's bracket meets the budget VIA_BOTTOM_BUDGET_SHARE rel_tol of §9.12 inside the range where
        rel_tol is targeted (VALUE_FLOOR <= upper < 1, §6.3)."""
        return VALUE_FLOOR <= s.upper < 1.0 and s.lower > 0.0 \
            and s.upper - s.lower <= limits.VIA_BOTTOM_BUDGET_SHARE * rel_tol * s.lower

    def _below_floor(self, eps: float, splits: list[Split]) -> Split | None:
        """With ``limits.VIA_BOTTOM_FLOOR_STOP``, the least of ``splits`` (certified) where its upper value is below
        VALUE_FLOOR (at most get_epsilon's target where that is lower, ``_floor_bar``): the search's end
        (docs/accountant.md §9.13: no rel_tol is targeted there, §6.3; the hint of §9.2 set); else None."""
        if not (limits.VIA_BOTTOM_FLOOR_STOP and self.SHORTCUTS and splits):
            return None
        low = min(splits, key=lambda c: c.upper)
        if not low.upper < self._floor_bar:
            return None
        self._hint = eps - low.e1
        return low

    def _reported(self, eps: float, f: float, rel_tol: float, rt: float) -> Split:
        """The split at f that the loose search of §9.11 (legs at ``rt``) reports, certified: with
        ``limits.VIA_BOTTOM_BUDGET`` (docs/accountant.md §9.12) the first of (1) the search's own legs at rt (cached),
        (2) leg A at rel_tol and the search's leg B, (3) leg A at rel_tol and leg B at the loosest rel_tol of BUDGET_TOLS
        that the budget left by leg A's bracket allows, whose bracket is within VIA_BOTTOM_BUDGET_SHARE rel_tol
        (relative to its lower value); else, and with the switch off, the split at rel_tol with its leg B as in §9.4
        and §9.7 and the contract of §9.4 (the report of §9.11)."""
        if limits.VIA_BOTTOM_BUDGET and rt > rel_tol:
            e1 = f * eps
            e2 = self._second(eps, e1)
            # (the search's leg B: at rt, or at a looser rel_tol of SEARCH_B_TOLS)
            rb = next((r for r in (self._leg_cache.get((1, e2, t)) for t in (rt, *self.SEARCH_B_TOLS[::-1]))
                       if r is not None), None) or engine_leg(self, 1, e2, (rt, *self.SEARCH_B_TOLS[::-1]))  # (§9.19)
            w = math.exp(e1)
            if rb is not None and math.isfinite(w):
                ra = self._leg_cache.get((0, e1, rt))
                if ra is not None and self._within(chain(f, e1, ra, rb), rel_tol):
                    return chain(f, e1, ra, rb)
                ra = self.leg(0, e1, rel_tol)
                s = chain(f, e1, ra, rb)
                if self._within(s, rel_tol):
                    return s
                if (tight := tight_b(self, e2)) is not None:  # (§9.26: the search's loose leg B over the budget)
                    rb = tight
                    s = chain(f, e1, ra, rb)
                    if self._within(s, rel_tol):
                        return s
                # (§9.17: leg B's lower value from the mirror of §9.15 where leg B's own bracket is the width's larger part)
                mb = self._mirror_b(e1, e2, rb, rel_tol, limits.VIA_BOTTOM_BUDGET_SHARE * rel_tol * s.upper
                                    - (ra.upper - ra.lower))
                if mb is not None and self._within(chain(f, e1, ra, mb), rel_tol):
                    return chain(f, e1, ra, mb)
                if penalty_bound(rb):  # (§9.20: a tighter leg B is not expected to close a penalty-held bracket)
                    return s
                # the relative width of leg B (against its loose upper value) that the budget left by leg A allows
                room = (limits.VIA_BOTTOM_BUDGET_SHARE * rel_tol * s.lower - (ra.upper - ra.lower)) / (w * rb.upper) \
                    if rb.upper > 0.0 else 0.0
                t = max((x for x in self.BUDGET_TOLS if rel_tol < x <= room and x < rt), default=None)
                if t is not None:
                    s = chain(f, e1, ra, self.leg(1, e2, t))
                    if self._within(s, rel_tol):
                        return s
        return self._contract(eps, self.split(eps, f, rel_tol, idle=True), rel_tol)

    def split(self, eps: float, f: float, rel_tol: float, absolute: bool = True, b_tol: float | None = None,
              rough_b: bool = False, guess: bool = True, idle: bool = False) -> Split:
        raise NotImplementedError  # (ViaBottom.split)
