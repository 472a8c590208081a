"""get_epsilon's root search (docs/accountant.md §8) and the monotone memos (module step M of
:mod:`sharpdp.shuffle.accountant`).

:func:`search_epsilon` takes a first bracket from closed forms (the cap E[L_+] above, the lower
values of docs/accountant.md §8.1 below), models the root on the certified upper value alone
(phase 1: :func:`sharpdp.shuffle.accountant.driver.certify` in upper-only mode) and then finds it on
``get_delta`` itself (phase 2), both by the safeguarded secant search :func:`_root`; for laws that are
not all atom laws, phase 2's first value refits the model on the law that makes it (:func:`_refit`). With the
release sampler's charge, :func:`.ends.charge_end` gives the search's upper end below eps_tau (docs/accountant.md §8.3).
It sees the accountant only through :class:`_Evaluator` (no import of the public class: no cycle).
:func:`shrink` (re-exported from :mod:`.secant`) is the plain bracket shrinker, a reference of the tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

from sharpdp.shuffle.accountant import far_tail, limits
from sharpdp.shuffle.accountant.closed_forms import jensen_lower, plus, trivial_cap
from sharpdp.shuffle.accountant.closed_forms import single_user_lower as _single_user_lower
from sharpdp.shuffle.accountant.driver import certify, exact_two_atoms, upper_value
from sharpdp.shuffle.accountant.ends import CHARGE_STEPS, charge_end, end_cap  # noqa: F401  (re-exported: tests)
from sharpdp.shuffle.accountant.jump_guess import ONE_PASS, first_point, look_spared
from sharpdp.shuffle.accountant.jump_lower import jump_lower_max
from sharpdp.shuffle.accountant.limits import EPS_CAP, EPS_MAX, SHRINK_ITERS, TINY, VALUE_FLOOR
from sharpdp.shuffle.accountant.looks import LOOK_REACH_LARGE, closed_at, memoised, walks
from sharpdp.shuffle.accountant.plain import Bracket
from sharpdp.shuffle.accountant.few_users import few_user_lower, few_user_model
from sharpdp.shuffle.accountant.phase1_step import phase1_h_ratio, two_atoms
from sharpdp.shuffle.accountant.probe import probe
from sharpdp.shuffle.accountant.search_choices import look_rel, tie_lead
from sharpdp.shuffle.accountant.shape_start import shape_start
from sharpdp.shuffle.accountant.start_probe import body_start, start_look, start_probe
from sharpdp.shuffle.accountant.secant import decreasing_root, geometric_end, sharpened_root, shrink, upward_end  # noqa: F401
from sharpdp.shuffle.accountant.walk_model import shape_root, shape_step
from sharpdp.shuffle.accountant.zero_end import AtZero, ZeroEnd
from sharpdp.shuffle.accountant.zero_moments import zero_lower
from sharpdp.shuffle.contract import surcharge
from sharpdp.shuffle.laws import laws_for

#: phase 1 of two-atom laws stops once its model root lies within this (log eps) of its last point (a model only)
_REACH_TWO = 0.02
#: ... and of other laws within this, phase 1's own resolution (its tolerance max(xtol, 1e-2); docs/accountant.md §8.6)
_REACH = 0.01
#: phase 1 (not two-atom laws) places a model point beyond the model root by this fraction of the step from the last
#: point, so that the next pair straddles the root and its interpolation ends phase 1 (docs/accountant.md §8)
_STRADDLE = 0.3
#: phase 1 stops where its model root interpolates two evaluations on either side within this (log eps), at n below
#: _WALK_N; at n >= _WALK_N within the second (as before session 30: docs/accountant.md §8.9.1, §8.10.2)
_INTERP, _INTERP_LARGE = 0.1, 0.2
#: at n <= 500 where the few-user model held at the phase-1 root r1 (a root of lower values: at or below get_delta's),
#: phase 2's first point is r1 (1 + FEW_ABOVE xtol) (docs/accountant.md §8.15)
FEW_ABOVE = 0.3
#: the relative target of the loose report at the phase-1 root where a far-tail law led phase 1 (docs/accountant.md §8.4)
_LOOK_REL = 0.1
#: ... where it names phase 1's law, get_delta is still evaluated at r1 when the look's value puts r1 within this many
#: xtol of the root (its bias, 0.25-0.5 % above get_delta's, is up to ~0.5 xtol there; docs/accountant.md §8.4)
_LOOK_REACH = 2.0
#: the look's model value is the geometric middle of its bracket (docs/accountant.md §8.8); False: the rule before
MIDDLE = True
#: where the look's value moves the model root more than this many xtol from r1, further loose looks walk the model to
#: the root before phase 2 (docs/accountant.md §8.8) ...
_LOOK_FAR = 5.0
_LOOK_NEAR, _LOOK_WALK = 5.0, 4  # ... until the model root is within this many xtol of the last look, or this many looks
#: ... at n >= this only, where a loose look costs a fraction of a report (BMG, n = 1e8: 0.14-0.5 s against 0.6-1.4 s;
#: at n <= 1e6 about one report, and the walk's looks saved no probe there)
_WALK_N = 10**7


class _Evaluator(Protocol):
    """What the search asks of the accountant (:class:`sharpdp.shuffle.ShuffleAccountant`)."""

    randomizer: Any
    adjacency: str
    n: int
    rel_tol: float
    threads: int
    eps_tau: float  # above it the value at eps_tau (the release sampler's charge, docs/sampling.md §4)
    sampler_tau: float  # tau = n sampler_tv of that charge (1 + e^eps) tau

    def get_delta(self, epsilon: Any) -> Any: ...
    def report(self, epsilon: float) -> Any: ...
    def sampler_term(self, epsilon: float) -> float: ...
    def _cap_beyond(self, eps: float) -> tuple[float, float]: ...
    def _report(self, epsilon: float, rel_tol: float) -> Any: ...


def _guess_epsilon(acc: _Evaluator, delta: float) -> float:
    """Starting point only (asymptotics of docs/accountant.md §11, not a bound).

    Solves phi(a)/a^2 = delta chi sqrt(n).
    """
    try:
        pairs = laws_for(acc.randomizer, 0.0, acc.adjacency)
        chi = min(math.sqrt(g) / law.std() for g, law in pairs)
        lt = math.log(delta * chi * math.sqrt(acc.n))
        f = lambda a: -0.5 * a * a - 0.5 * math.log(2 * math.pi) - 2 * math.log(a) - lt  # noqa: E731
        a = decreasing_root(f, 1e-3, 60.0) if f(1e-3) > 0 > f(60.0) else 1.0
        return max(a / (chi * math.sqrt(acc.n)), 1e-8)
    except (ValueError, ZeroDivisionError, ArithmeticError):
        return 0.1


def _guess_slope(acc: _Evaluator, x: float) -> float | None:
    """The slope -d log(-log delta) / d log eps of :func:`_guess_epsilon`'s model at x (a starting slope of
    phase 1 only, not a bound; None where the model is not formed).

    The model delta(eps) = phi(a) / (a^2 chi sqrt(n)), a = eps chi sqrt(n) (docs/accountant.md §11) has
    d log delta / d log eps = -(a^2 + 2), so the slope of :func:`_root`'s model is (a^2 + 2) / log delta(x)."""
    try:
        pairs = laws_for(acc.randomizer, 0.0, acc.adjacency)
        chi = min(math.sqrt(g) / law.std() for g, law in pairs)
        a = x * chi * math.sqrt(acc.n)
        ld = -0.5 * a * a - 0.5 * math.log(2 * math.pi) - 2 * math.log(a) - math.log(chi * math.sqrt(acc.n))
    except (ValueError, ZeroDivisionError, ArithmeticError):
        return None
    return (a * a + 2.0) / ld if math.isfinite(ld) and ld < -1.0 and math.isfinite(a) else None


def _root(fun: Callable[[float], float], delta: float, lo: float, hi: float, tol: float, *,
          x0: float | None = None, slope: float | None = None, lower: Callable[[float], float] | None = None,
          converge: bool = False, reach: float = 0.0, interp: float = _INTERP,
          pts0: list[tuple[float, float]] | None = None,
          snap: bool = False, straddle: float = 0.0, one: bool = False) -> tuple[float, float, float | None, float | None]:
    """Safeguarded secant search on log fun (docs/accountant.md §8): fun(hi) <= delta < fun(lo) is kept (the ends given
    must satisfy it); returns (lo, hi, r, k) with r the last model root and k its slope -d log(-log fun) / d log eps
    (None when no model was formed). ``one``: the reach stop below from one evaluation with the given ``slope``
    (the single-big-jump model's: docs/accountant.md §8.11.3).

    The model is log(-log fun) linear in log eps (delta ~ exp(-c eps^a) locally: exact for a
    Gaussian tail, and a power law in log fun near the root). The next point is the root r of
    the secant through the last two evaluations (one evaluation: ``slope`` if given, else a probe
    2 % aside for a local slope), placed 0.3 tol r on the side of the bracket end farther from r,
    so that an accurate model closes the bracket in two evaluations; bisection (geometric on wide
    brackets) when the model falls outside the bracket or the bracket fails to halve in three
    steps. ``lower(x) > delta`` (a certified lower value of fun) marks x as a lower end without
    evaluating fun (checked where a lower end is expected). ``converge``: also stop once two
    successive model roots agree to 0.1 tol, or when the root interpolates the last two
    evaluations, on either side and within ``interp`` (in log eps, docs/accountant.md §8.10.2; the search only needs r and k then), or (``reach``
    > 0) when the model root lies within ``reach`` of the last evaluation in log eps (a short
    extrapolation of two evaluations: docs/accountant_atoms.md §10).
    ``pts0``: evaluations of fun made before (as (log x, f(x)) below), the model's first points; ``x0``
    is then still the first point evaluated here. ``snap``: a point placed 0.3 tol r beyond the model root r
    moves to the end's closing bound (0.95 tol from the other end) where that bound lies between r and the
    point, so that a point on the expected side closes the bracket (docs/accountant.md §8, step 6).
    Stops at hi - lo <= tol hi, at hi <= 1e-15, or after SHRINK_ITERS steps."""
    ld = math.log(-math.log(delta))
    pts: list[tuple[float, float]] = list(pts0 or [])  # evaluations (log x, f(x)), f = log(-log delta) - log(-log fun)
    first = True
    r = k = None
    widths: list[float] = []
    for _ in range(SHRINK_ITERS):
        w = hi - lo
        if not (w > tol * hi and hi > 1e-15):
            break
        widths.append(w)
        kk = slope if slope is not None and slope < 0 else None
        if len(pts) >= 2:
            (x1, f1), (x2, f2) = pts[-2], pts[-1]
            if x2 != x1 and (f2 - f1) / (x2 - x1) < 0:
                kk = (f2 - f1) / (x2 - x1)
        r_new = None
        if pts and kk is not None:
            z = pts[-1][0] - pts[-1][1] / kk  # log of the model root (a flat model: far outside)
            r_new = math.exp(z) if z < 700.0 else math.inf
        if converge and r_new is not None and (
                (r is not None and abs(r_new - r) <= 0.1 * tol * r_new)
                or (len(pts) >= 2 and (pts[-1][1] > 0) != (pts[-2][1] > 0) and abs(pts[-1][0] - pts[-2][0]) <= interp)
                or (reach > 0.0 and len(pts) >= 2 - one and r_new > 0.0 and abs(math.log(r_new) - pts[-1][0]) <= reach)):
            return lo, hi, r_new, kk  # (the model's root agrees, or interpolates two points <= 10 % apart)
        if r_new is not None:
            r, k = r_new, kk
        stalled = len(widths) > 5 and w > 0.5 * widths[-4]  # (the first two steps start the model)
        expect_lo = True  # (a point expected to be a lower end: worth a closed-form lower check)
        if x0 is not None and first and lo < x0 < hi:
            x = x0
        elif r_new is not None and lo < r_new < hi and not stalled:
            expect_lo = r_new - lo > hi - r_new
            x = r_new * (1.0 - 0.3 * tol) if expect_lo else r_new * (1.0 + 0.3 * tol)
            if straddle > 0.0 and len(pts) == 1:
                # beyond the model root, away from the last point by ``straddle`` times the step to it (at least
                # 0.3 tol): an error of the model's slope up to that fraction still gives a straddling pair
                z_r, z_l = math.log(r_new), pts[-1][0]
                x = math.exp(z_r + math.copysign(max(straddle * abs(z_r - z_l), 0.3 * tol), z_r - z_l))
                expect_lo = x < r_new
            elif snap and expect_lo and x < hi * (1.0 - 0.95 * tol) < r_new:
                x = hi * (1.0 - 0.95 * tol)
            elif snap and not expect_lo and x > lo / (1.0 - 0.95 * tol) > r_new:
                x = lo / (1.0 - 0.95 * tol)
        elif len(pts) == 1 and kk is None and not stalled:
            expect_lo = pts[0][1] <= 0
            x = math.exp(pts[0][0]) * (1.02 if pts[0][1] > 0 else 0.98)
        else:
            x = math.sqrt(lo * hi) if lo > 0 and hi > 4.0 * lo else 0.5 * (lo + hi)
        m = min(0.02 * w, 0.1 * tol * max(x, lo)) if max(x, lo) > 0 else 0.02 * w
        x = min(max(x, lo + m), hi - m)
        first = False
        if expect_lo and lower is not None and lower(x) > delta:
            lo = x
            continue
        u = fun(x)
        if 0 < u < 1 and x > 0:
            pts.append((math.log(x), ld - math.log(-math.log(u))))
        if u <= delta:
            hi = x
        else:
            lo = x
    return lo, hi, r, k


def search_epsilon(acc: _Evaluator, delta: float, xtol: float, cap0: float | None,
                   hi_end: float | None = None) -> float:
    """get_epsilon's search after the checks (validated delta and xtol; ``cap0``: eps0 of a pure
    eps0-LDP randomizer under replace-one, else None; get_delta(700) <= delta already checked, or
    ``hi_end`` from :func:`.ends.charge_end`, a certified end that bounds the search instead of 700).
    docs/accountant.md §8."""
    rel = acc.rel_tol
    up_cache: dict[float, float] = {}
    # laws_for (immutable laws; the search revisits epsilons) and acc._cap_beyond (eps = 700), memoised per search
    laws_at = memoised(lambda e: laws_for(acc.randomizer, e, acc.adjacency), 256)
    cap_beyond: Callable[[float], tuple[float, float]] = memoised(acc._cap_beyond, 64)

    lead: list[int] = []  # phase 1's model: the index of the law that dominates by >= 10 % (once known)
    led_by: dict[float, int] = {}  # the law that made up(e)'s maximum (-1: a cap, or none) ...
    last_led = [-1]  # ... and at the last point phase 1 evaluated
    few_on = [True]  # phase 1's points so far all took the few-user model value (docs/accountant.md §8.15)
    few_at = memoised(lambda e: few_user_model(laws_at(e), acc.n) if 0.0 < e <= EPS_CAP else None, 256)  # (None: as before)

    def up(e: float, model: bool = False) -> float:
        """Certified upper value alone on the coarse grid h = phase1_h_ratio sd (sd/8 unless far
        negative atoms make sd, docs/accountant_atoms.md §6; phase 1). ``model``: phase 1's model
        only (not a bound): once one law dominated the others by 10 % at a model point, only that
        law is evaluated (docs/accountant_atoms.md §8)."""
        if e > acc.eps_tau:  # the sampler charge's rule (docs/sampling.md §4): the value at eps_tau
            return up(acc.eps_tau, model)
        if e > EPS_CAP:  # module step L: min(value at 60, E[L_+] at e)
            return min(up(EPS_CAP, model), cap_beyond(e)[1])
        if model and few_on[0]:  # (n <= 500: the few-user model value while it holds, docs/accountant.md §8.15)
            if (few_m := few_at(e)) is not None:
                last_led[0] = -1
                return plus(plus(max(few_m, TINY), surcharge(acc.randomizer, e, acc.adjacency)), acc.sampler_term(e))
            few_on[0] = False  # (from the first point where it does not hold on: upper-only passes, as before)
        if e in up_cache:
            last_led[0] = led_by.get(e, -1)
            return up_cache[e]
        # the laws in decreasing order of their cap E[L_+] (>= their value): a law whose cap is
        # below the maximum so far cannot change it, and one whose cap is far below delta or
        # below the value floor only needs the cap (get_delta itself reports the cap below the
        # floor, certify; the search needs no more there)
        pairs = laws_at(e)
        if model and not lead and len(pairs) > 1 and two_atoms(pairs):
            # two-atom laws: the law of largest cap is the largest at every cell measured
            # (docs/accountant_atoms.md §10); the model follows it alone from the first point
            lead.append(max(range(len(pairs)), key=lambda i: trivial_cap(pairs[i][1])))
        items = []
        for i, (gamma, law) in enumerate(pairs):
            if model and lead and i != lead[0]:
                continue
            items.append((trivial_cap(law) if law.top_bound() > 0 else 0.0, float(gamma), law, i))
        m = 0.0
        vals: dict[int, float] = {}
        last_led[0] = -1
        for c, gamma, law, i in sorted(items, key=lambda t: -t[0]):
            if c <= m:
                continue
            if c <= max(1e-6 * delta, VALUE_FLOOR):
                m = max(m, c)
            else:
                vals[i] = upper_value(law, gamma, acc.n, rel, acc.threads, delta, phase1_h_ratio(law, gamma))
                if vals[i] > m:
                    m, last_led[0] = vals[i], i
        led_by[e] = last_led[0]
        u = plus(plus(max(m, TINY), surcharge(acc.randomizer, e, acc.adjacency)), acc.sampler_term(e))
        if model and lead:
            return u  # (a single law's value: not stored as the maximum)
        if model and len(vals) == len(items) > 1:
            top2 = sorted(vals.values())[-2:]
            if top2[1] >= 1.1 * top2[0]:
                lead.append(max(vals, key=lambda i: vals[i]))
            elif (tied := tie_lead(vals)) is not None:  # (the largest two within 2 %: docs/accountant.md §8.14.2)
                lead.append(tied)
        if len(up_cache) < 512:
            up_cache[e] = u
        return u

    def up_at(e: float, f: float) -> float:
        """Phase 1's upper value at e, step times f, of the law that led its last point (sharpened_root's model)."""
        gamma, law = laws_at(e)[last_led[0]]
        u = upper_value(law, float(gamma), acc.n, rel, acc.threads, delta, f * phase1_h_ratio(law, float(gamma)))
        return plus(plus(u, surcharge(acc.randomizer, e, acc.adjacency)), acc.sampler_term(e))

    def lower_at(e: float) -> float:
        """max over laws of the closed-form lower values at e (Jensen, single active user):
        <= D_up <= every certified upper value, get_delta's included."""
        if e > EPS_CAP:
            return cap_beyond(e)[0]
        return max((max(jensen_lower(law, float(gamma), acc.n), _single_user_lower(law, float(gamma), acc.n))
                    for gamma, law in laws_at(e) if law.top_bound() > 0),
                   default=0.0)

    def cap_at(e: float) -> float:
        """max over laws of E[L_+] at e plus the surcharge: a cheap certified upper value."""
        if e > acc.eps_tau:
            return cap_at(acc.eps_tau)
        if e > EPS_CAP:
            return cap_beyond(e)[1]
        c = max((trivial_cap(law) for _, law in laws_at(e)
                 if law.top_bound() > 0), default=0.0)
        return plus(plus(c, surcharge(acc.randomizer, e, acc.adjacency)), acc.sampler_term(e))

    def loose_lower(e: float) -> float:
        """A certified lower value of D_up at e (0 when none is formed): the law of largest cap at
        e in mode Bracket with the loose target 0.5."""
        if e <= 0.0 or e > EPS_CAP:
            return 0.0
        laws = [(float(g), law) for g, law in laws_at(e) if law.top_bound() > 0]
        if not laws:
            return 0.0
        gamma, law = max(laws, key=lambda t: trivial_cap(t[1]))
        return certify(law, gamma, acc.n, 0.5, acc.threads, Bracket()).lower

    low0 = memoised(lambda _: zero_lower(acc) if limits.EPS41B_ZERO_LOWER else 0.0, 1)  # (D_up(0)'s moments: §8.21)

    def above_at(e: float) -> bool:  # (D_up(e) above delta: the big jump's closed form first, docs/accountant.md §8.12)
        return 0.0 < e <= EPS_CAP and jump_lower_max(laws_at(e), acc.n) > delta or low0(0.0) > delta \
            or loose_lower(e) > delta

    # exactly 0 iff the published value get_delta(0) meets the target; a certified lower value above delta at 0
    # (closed form now, else at half the phase-1 root below) rules that out without evaluating get_delta(0)
    known_above_0 = lower_at(0.0) > delta
    # the search never goes beyond cap: eps0 (delta = 0 there), hi_end (its fresh value <= delta: §8.3) or 700
    # (get_delta(700) <= delta was checked above, so cap itself is a certified answer)
    cap = cap0 if cap0 is not None else hi_end if hi_end is not None else EPS_MAX
    # (at 700 the value is final: nothing smaller below it. At eps0 it is not: delta there is 0 in exact
    # arithmetic, but the atoms' rounding charge keeps the upper value positive (e.g. 2.6e-15 for binary RR,
    # eps0 = 0.5), above values at smaller eps (4.9e-18 at 4e-4, n = 1e8); the search below still ends at eps0
    # when nothing smaller is certified)
    if cap0 is None and hi_end is None and not cap_at(cap) <= delta and up(cap) > delta:
        return 0.0 if not known_above_0 and acc.get_delta(0.0) <= delta else cap
    # a first bracket from the closed forms, searched from the asymptotic guess g in steps of 4
    # (then to 25 % for the upper end): upper end where the cap E[L_+] (>= up, >= get_delta's
    # value, law by law) is at most delta, lower end where the closed-form lower value still
    # exceeds delta (then up and get_delta exceed it too); any such ends are valid, their
    # closeness only saves steps (docs/accountant_atoms.md §8)
    if cap0 is not None and lower_at(cap0 * (1.0 - xtol)) > delta:
        return cap0  # (the answer eps0 decided by the closed forms alone: docs/accountant.md §8.10.3)
    g, k_j = first_point(laws_at, acc.n, delta, _guess_epsilon(acc, delta), cap)  # (one big jump: §8.11)
    c_hi = cap
    # two-atom laws (binary RR): the closed forms are far from the root (cap 8-300x above it, the lower
    # values 100x below), so the first bracket is only a safe frame: the upper end in steps of 4 from
    # the guess, and 0 as the lower end when it is certified above (docs/accountant_atoms.md §10)
    two = two_atoms(laws_at(min(g, cap)))
    if cap_at(cap) <= delta and not (two and exact_two_atoms()):  # (the exact sum's search needs no frame: §12.6)
        c_hi = (upward_end(lambda e: cap_at(e) <= delta, min(g, cap), cap) if two else
                geometric_end(lambda e: cap_at(e) <= delta, min(g, cap), 0.0, cap, 1.25)[1])
    j_lo, j_hi = 0.0, 0.0 if not known_above_0 or two else c_hi
    if known_above_0 and not two:
        j_lo, j_hi = geometric_end(lambda e: not lower_at(e) > delta, min(g, c_hi) / 4.0, 0.0, c_hi, 4.0)

    def lower_near(e: float) -> float:
        """lower_at where it may still exceed delta (below the bisection's upper end j_hi; a choice of speed only)."""
        return lower_at(e) if e < j_hi else 0.0

    # phase 1: a model of up near the root (upper-only values, coarse grid), from the guess if in the bracket, else its middle
    x0 = g if j_lo < g < c_hi or j_lo == 0.0 else math.sqrt(j_lo * c_hi)
    # two-atom laws on the exact sum (docs/accountant_atoms.md §12): every value final at once, no phase 1 (the guess)
    exact2 = two and exact_two_atoms()
    zero = ZeroEnd(acc, delta, known_above_0 or low0(0.0) > delta)  # (the answer 0 decided first: §8.10, §8.21)
    r1: float | None
    k1: float | None
    if exact2:
        lo1, hi1, r1, k1, skip, look0 = j_lo, c_hi, min(max(g, j_lo), c_hi), None, False, False
    else:
        # (from the guess, its model's slope replaces the probe 2 % aside for a first slope: docs/accountant.md §8)
        k0 = (k_j or _guess_slope(acc, g)) if x0 == g and not two else None
        sh = shape_start(laws_at, acc.n, delta, j_lo, c_hi, g) if k_j is None and not two else None  # (§8.24.1)
        x0, k0 = sh if sh is not None else (x0, k0)
        skip = (k_j is not None and x0 == g or sh is not None) and start_probe(laws_at, acc.n, x0, k0, j_lo, c_hi, sh is None)
        x0, skip = (x0, skip) if skip or sh is None else body_start(laws_at, acc.n, x0, k0, j_lo, c_hi, xtol, delta)  # (§8.28)
        look0 = sh is not None and not skip and start_look(laws_at, acc.n, x0, k0, j_lo, c_hi, last_led)  # (§8.26.3)
        try:  # (a point near eps = 0: get_delta(0) first, docs/accountant.md §8.10)
            lo1, hi1, r1, k1 = (j_lo, c_hi, x0, k0) if skip or look0 else _root(zero.wrap(lambda e: up(e, True)), delta, j_lo, c_hi, max(xtol, 1e-2), x0=x0,
                                     slope=k0, lower=lower_near, converge=True, reach=_REACH_TWO if two else _REACH,
                                     straddle=0.0 if two else _STRADDLE, interp=_INTERP if acc.n < _WALK_N else _INTERP_LARGE, one=ONE_PASS and (k_j is not None or sh is not None and bool(limits.EPS44_SHAPE_ONE)))
        except AtZero:
            return 0.0
    modelled = r1 is not None and lo1 <= r1 <= hi1
    r1 = r1 if r1 is not None and modelled else hi1
    # (the answer 0: settled after phase 2 (docs/accountant_atoms.md §11), or at once by zero.check (docs/accountant.md §8.10))
    lows: list[float] = [0.0]  # certified lower values of D_up seen by phase 2 (probes and lower_far)
    # phase 2: the same search on get_delta itself from the phase-1 model (start r1, slope k1),
    # within the certified bracket [j_lo, c_hi]: get_delta(hi) <= delta at the returned hi
    # atom laws only (their loose pass is one cheap blocked pass; a heavy-tailed law's may cost
    # as much as get_delta itself)
    atoms = all(law.atoms() is not None for _, law in laws_at(min(r1, EPS_CAP)))

    def plain_at(e: float) -> bool:  # (laws not all atom laws, none on the far-tail path at e: docs/accountant.md §8.2)
        return not atoms and not any(far_tail.applicable(law, acc.n, rel, float(g)) for g, law in laws_at(e))

    # n <= 500 where the few-user model holds at r1 (a lower value's root): phase 2 from just above it, its expected
    # lower ends settled on that certified lower value, no sharpening or refit (docs/accountant.md §8.15)
    few = few_on[0] and not exact2 and not skip and modelled and 0.0 < r1 <= EPS_CAP and few_at(r1) is not None
    x_few = r1 * (1.0 + FEW_ABOVE * xtol)
    if not exact2 and not few and modelled and k1 is not None and k1 < 0.0 and cap0 is None and j_lo < r1 < c_hi \
            and r1 <= min(EPS_CAP, acc.eps_tau) and 0 <= last_led[0] < len(laws_at(r1)) and plain_at(r1):
        # plain lattice laws: phase 2 from the model root of the value at r1 on step h/2 (docs/accountant.md §8.2)
        r_s = sharpened_root(delta, r1, up_at(r1, 0.5), k1)
        r1 = r_s if r_s is not None and j_lo < r_s < c_hi else r1

    def lower_far(e: float) -> float:
        """lower_near, and for atom laws away from the phase-1 model's root (or without a model)
        the loose certified lower value of :func:`loose_lower`: a point far below the root is
        then settled by one cheap pass instead of a refined get_delta (docs/accountant_atoms.md §6); where the few-user rule
        runs (n <= 500), the few-user lower value (docs/accountant.md §8.15)."""
        lo_e = lower_near(e)
        if few and e != x_few and 0.0 < e <= EPS_CAP and not lo_e > delta:  # (not at phase 2's first point: its probe starts the model)
            lo_e = max(lo_e, few_user_lower(laws_at(e), acc.n))
        if not (lo_e > delta or not atoms or (modelled and e > 0.0 and r1 > 0.0 and abs(math.log(e / r1)) <= 0.05)):
            lo_e = max(lo_e, loose_lower(e))
        lows.append(lo_e)
        return lo_e

    def fun2(e: float, early: bool = True) -> float:  # (phase 2's function)
        zero.check(e)
        return probe(acc, e, delta, cap0, laws_at, lows, early)

    try:
        zero.check(r1)
        x2: float | None = x_few if few and j_lo < x_few < c_hi else r1
        pts2: list[tuple[float, float]] | None = None
        lo2, hi2, k2 = j_lo, c_hi, k1  # (_refit may change each)
        if not atoms and not exact2 and not few and not skip and modelled and k1 is not None and k1 < 0.0 and j_lo < r1 < c_hi \
                and r1 <= min(EPS_CAP, acc.eps_tau) and cap0 is None and not lower_far(r1) > delta:
            # a far-tail law led phase 1's last point: its upper-only value may be far from its bracket (the body's
            # Chernoff value), so r1 is first looked at on a loose report (docs/accountant.md §8.4)
            # (not where that law's value at r1 is the closed form of docs/accountant_tail.md §18: the look would cost a
            # report, and the check's work is get_delta's own at r1, memoised: docs/accountant.md §8.4)
            pairs_r1 = laws_at(r1)
            look = len(pairs_r1) > 1 and 0 <= last_led[0] < len(pairs_r1) and far_tail.applicable(
                pairs_r1[last_led[0]][1], acc.n, rel, float(pairs_r1[last_led[0]][0])) \
                and not closed_at(pairs_r1[last_led[0]][0], pairs_r1[last_led[0]][1], acc.n, rel) \
                and not (k_j is not None and acc.n < max(_WALK_N, limits.EPS49_LOOK_SPARED_N) and look_spared(pairs_r1, acc.n))  # §8.13.2
            # (its probe at r1 keeps the whole report, whose law it reads: docs/accountant.md §8.7)
            lo2, hi2, x2, k2, pts2 = _refit(acc, lambda e: fun2(e, False), delta, j_lo, c_hi, r1, k1, xtol, laws_at,
                                            -2 if look0 else last_led[0], look=look, lows=lows)
        lo, hi, _, _ = _root(fun2, delta, lo2, hi2, xtol, x0=x2, slope=k2, lower=None if exact2 else lower_far,
                             pts0=pts2, snap=not atoms and not exact2)
    except AtZero:
        return 0.0  # (get_delta(0) <= delta: the answer the check below would give)
    # get_delta(0) > delta when a certified lower value of D_up at some e >= 0 exceeds delta (D_up is
    # non-increasing in eps): one seen by phase 2, else as before the loose pass at half the phase-1 root,
    # then get_delta(0) (docs/accountant_atoms.md §11)
    if not zero.settled and not max(lows) > delta and not above_at(lo if exact2 and lo > 0.0 else 0.5 * r1) \
            and acc.get_delta(0.0) <= delta:
        return 0.0
    return min(hi, cap)


def _look_value(lower: float, upper: float) -> float:
    """The look's value at the phase-1 root for the model (docs/accountant.md §8.8; not a bound): the geometric middle
    of its certified bracket [lower, upper] where MIDDLE and lower > 0, else its upper value (the rule before)."""
    return math.sqrt(lower * upper) if MIDDLE and 0.0 < lower <= upper else upper


def _walk(acc: _Evaluator, delta: float, lo: float, hi: float, pts: list[tuple[float, float]], k: float, xtol: float,
          lows: list[float] | None, laws_at: Callable[[float], Any] | None = None
          ) -> tuple[float, float, float | None, float, list[tuple[float, float]]]:
    """Loose looks walked to the root where the first look moved the model far from the phase-1 root
    (docs/accountant.md §8.8; a choice of points only). From the look's point ``pts`` (log eps, model value) and the
    slope ``k``, each step looks (the accountant's report at rel_tol ``_LOOK_REL``) at the model root, whose value
    (:func:`_look_value`) and the previous one give the secant's next root; it stops once the root lies within
    ``_LOOK_NEAR`` xtol of the last look, after ``_LOOK_WALK`` looks, or where the root leaves the bracket (lo, hi) or
    lies beyond min(60, eps_tau) (no look there).
    A look whose certified lower value exceeds delta becomes the lower end (get_delta there is at least that value,
    docs/accountant.md §8.4 case 1); its lower value joins ``lows``. No look is an upper end. Returns _refit's tuple:
    the bracket, phase 2's first point (the last model root; None outside the bracket), the slope and the looks'
    points (phase 2's model's first points). With ``laws_at``, each step's root is the shape model's
    (:func:`.walk_model.shape_root`, docs/accountant.md §8.20) where it is formed."""
    ld = math.log(-math.log(delta))
    ks: list[float] = []  # (the shape model's slope at its last root: phase 2's slope, without the looks' points)

    def shaped(z0: float) -> float:
        zm = shape_root(laws_at, acc.n, delta, pts, lo, hi) if laws_at is not None else None
        ks[:] = [] if zm is None else [zm[1]]
        return z0 if zm is None else zm[0]
    z = shaped(pts[-1][0] - pts[-1][1] / k)
    for _ in range(_LOOK_WALK):
        x = math.exp(z) if z < 700.0 else math.inf
        if not (lo < x < hi and x <= min(EPS_CAP, acc.eps_tau)):  # (the look's domain, as at r1: docs/accountant.md §8.4)
            break
        rep = acc._report(x, _LOOK_REL)
        if lows is not None:
            lows.append(float(rep.lower))
        if rep.lower > delta:
            lo = x  # get_delta(x) >= D_up(x) >= rep.lower > delta
        v = _look_value(float(rep.lower), float(rep.upper))
        if not 0.0 < v < 1.0:
            break
        zx, fx = math.log(x), ld - math.log(-math.log(v))
        z0, f0 = pts[-1]
        pts.append((zx, fx))
        if zx != z0 and (fx - f0) / (zx - z0) < 0.0:
            k = (fx - f0) / (zx - z0)
        z = shaped(zx - fx / k)
        if abs(z - zx) <= (float(limits.EPS41_WALK_NEAR) if ks else _LOOK_NEAR) * xtol:  # (§8.20: the shape's reach)
            break
    x = math.exp(z) if z < 700.0 else math.inf
    if ks and ks[0] < 0.0:  # (phase 2 from the shape model's root with its slope: docs/accountant.md §8.20)
        return lo, hi, (x if lo < x < hi else None), ks[0], []
    return lo, hi, (x if lo < x < hi else None), k, pts


def _refit(acc: _Evaluator, fun: Callable[[float], float], delta: float, lo: float, hi: float, r1: float,
           k1: float, xtol: float, laws_at: Callable[[float], Any], led: int, *, look: bool = False,
           lows: list[float] | None = None) -> tuple[float, float, float | None, float, list[tuple[float, float]]]:
    """Phase 2's first evaluation at the phase-1 root r1 and, for laws that are not all atom laws, a model of
    get_delta itself refitted on it (docs/accountant.md §8, step 6; a choice of points only).

    Phase 1 follows the maximum over laws of coarse upper-only values, which may be led by another law than
    get_delta's value, a few % (in eps) off its root. The report at r1 names the law b that makes get_delta's value there; where it is not the law that led phase 1's last
    point (``led``; then k1 is another law's slope), the model is rho U_b(eps), U_b that law's
    upper-only value on phase 1's grid and rho = get_delta(r1) / U_b(r1), solved by the secant of
    :func:`_root`'s model (log(-log) against log eps) to 0.05 xtol. Returns the bracket, phase 2's first point
    (the refitted root 0.3 xtol towards the farther end; None: no refit), the slope and the r1 point.
    ``look`` (docs/accountant.md §8.4): the value at r1 is first the upper value of a report at rel_tol
    ``_LOOK_REL`` (a certified bracket, coarser than get_delta's; its lower value is appended to ``lows``). Its lower
    value above delta makes r1 a lower end without get_delta. Else get_delta is evaluated at r1 only where the
    look's value puts r1 within 0.5 xtol of the root (``_LOOK_REACH`` xtol where the look names phase 1's law);
    otherwise r1 is no bracket end and phase 2 starts at the model root from the look's value: one step with
    phase 1's slope where the look names phase 1's law, else the refit with the look's law b and level rho; at
    n >= ``_WALK_N``, where that root lies more than ``_LOOK_FAR`` xtol from r1, further looks walk to it (:func:`_walk`).
    The look's value is the geometric middle of its bracket (:func:`_look_value`, docs/accountant.md §8.8)."""
    ld = math.log(-math.log(delta))
    pairs = laws_at(r1)
    end = True  # (r1 becomes a bracket end: its value is get_delta's)
    if look:
        rep = acc._report(r1, look_rel(acc.n))  # (a certified bracket of D_up(r1): docs/accountant.md §8.4, §8.14.1)
        # the model's value: the bracket's geometric middle (a choice of points only, never a bound: §8.8)
        u, b = _look_value(float(rep.lower), float(rep.upper)), rep.law_index
        led = b if led == -2 else led  # (-2: the shape start's model, of no one law, follows the law named: §8.26.3)
        if lows is not None:
            lows.append(float(rep.lower))
        if rep.lower > delta:
            lo, end = r1, False  # get_delta(r1) >= D_up(r1) >= rep.lower > delta: a lower end without get_delta
        else:
            reach = abs((ld - math.log(-math.log(u))) / k1) if 0.0 < u < 1.0 else 0.0
            end = not (0.0 < u < 1.0 and 0 <= b < len(pairs)) or reach <= (
                (_LOOK_REACH if acc.n < _WALK_N else LOOK_REACH_LARGE) if b == led else 0.5) * xtol
    if end:
        u = fun(r1)
        lo, hi = (lo, r1) if u <= delta else (r1, hi)
        b = acc.report(r1).law_index  # (get_delta's report at r1: cached by the accountant, no second pass)
    led = b if led == -2 else led  # (-2: the shape start's model, of no one law, follows the law named: §8.26.3)
    if not 0.0 < u < 1.0:
        return lo, hi, None, k1, []
    f1 = ld - math.log(-math.log(u))
    pts = [(math.log(r1), f1)]
    if not end and look and acc.n >= _WALK_N and abs(f1 / k1) > _LOOK_FAR * xtol and walks(rep):  # (§8.9: the gate)
        return _walk(acc, delta, lo, hi, pts, k1, xtol, lows, laws_at)
    if not end and look and acc.n >= _WALK_N and (sr := shape_step(laws_at, acc.n, delta, pts, lo, hi)) is not None:
        return lo, hi, (math.exp(sr[0]) if lo < math.exp(sr[0]) < hi else None), sr[1], []  # (§8.20: the shape's step)
    if not end and b == led:  # phase 1 followed law b, r1 far from the root: one model step from the look's value
        r2 = sharpened_root(delta, r1, u, k1)
        return lo, hi, (r2 if r2 is not None and lo < r2 < hi else None), k1, pts
    if abs(f1 / k1) <= 0.5 * xtol or not 0 <= b < len(pairs) or b == led:
        return lo, hi, None, k1, pts  # (r1 within the model's reach, or phase 1 followed law b: no refit)
    gamma = float(pairs[b][0])

    def ub(e: float) -> float:
        law = laws_at(e)[b][1]
        return upper_value(law, gamma, acc.n, acc.rel_tol, acc.threads, delta, phase1_h_ratio(law, gamma))

    u_b = ub(r1)
    if not 0.0 < u_b < 1.0:
        return lo, hi, None, k1, pts
    rho = u / u_b
    z, k, zs, fs = math.log(r1), k1, [math.log(r1)], [f1]
    for _ in range(6):
        z_new = zs[-1] - fs[-1] / k
        if not (z_new < 700.0 and lo < math.exp(z_new) < hi):  # (a flat model: far outside)
            return lo, hi, None, k1, pts
        z = z_new
        if abs(z - zs[-1]) <= float(limits.EPS44_REFIT_STOP) * xtol:  # (0.05: main's; §8.24.2)
            break
        m = min(rho * ub(math.exp(z)), 0.5)
        if not m > 0.0:
            return lo, hi, None, k1, pts
        f = ld - math.log(-math.log(m))
        if f != fs[-1] and (f - fs[-1]) / (z - zs[-1]) < 0:
            k = (f - fs[-1]) / (z - zs[-1])
        zs.append(z)
        fs.append(f)
    r2 = math.exp(z)
    if not end:  # (no bracket end at r1: the model root itself, a point on either side closes in one more)
        return lo, hi, r2, k, pts
    x = r2 * (1.0 - 0.3 * xtol) if r2 - lo > hi - r2 else r2 * (1.0 + 0.3 * xtol)
    return lo, hi, x, k, pts

