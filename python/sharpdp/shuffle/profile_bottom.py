"""The privacy profile of a replace-one round bounded through bot from its two legs' profiles
(``docs/composition.md`` §2.13).

The accountant of such a round reports at each eps the certified value of one split of the weak triangle inequality,
A(e1) + e^{e1} B(e2) with e1 + e2 <= eps (A: x vs bot, B: bot vs x, each a zero-out certification; the split found by
a search of up to a dozen leg certifications per eps: ``docs/accountant.md`` §9). Many eps at once share one pair of
leg profiles instead: each leg is sampled as the dominating pair samples it (``docs/composition.md`` §2.2, §2.10,
§2.12), its samples' lower convex hull in t = e^eps (Claim A of ``docs/composition.md`` §2; at eps < 0 the swap of the
other leg's samples) is an upper value of the leg at EVERY real eps, and at each requested eps the bound is minimised
over every real split of the two hull curves (its minimum lies at a split through a vertex of one of them). The
curves live on the floats at which the legs were certified, so a requested eps need not lie on a lattice.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from sharpdp.shuffle.bottom_values import LEG_TOL
from sharpdp.shuffle.pair import Curve, hull, swap

_U = 2.0**-53
MIN_POINTS = 32  # fewer distinct eps in [0, top]: the accountant's split search per eps (cheaper than two leg profiles)
STEPS = 1024  # the legs' lattice step: the largest requested eps / STEPS (about the export step, docs/composition.md §5.1)
RATIO_TOL = 1.0  # an eps whose value exceeds (1 + RATIO_TOL) x the certified lower value of every split bound ...
_FALLBACK_MAX = 16  # ... takes the accountant's split search instead, at most this many eps per call (the largest first)


class FloatCurve(Curve):
    """Upper values at any real eps of a piecewise-linear curve in t = e^eps through vertices at the float points
    ``e`` (increasing) with values ``h`` (upper values of a convex, non-increasing hockey-stick curve there: by
    Claim A of ``docs/composition.md`` §2 the interpolation in t lies above it), constant h[-1] beyond the last vertex,
    1 below the first: :class:`~sharpdp.shuffle.pair.Curve` on the floats (step 1.0: the differences e - a, b - e,
    b - a of floats, each correctly rounded, relative error <= u; so each weight of ``pair.chord`` is within ~200 u of
    its value and the sum of the two non-negative terms too, covered by the margin 1e-12, ~4500 u:
    ``docs/composition.md`` §2.13)."""

    index = float

    def __init__(self, e: np.ndarray, h: np.ndarray):
        super().__init__(e, h, 1.0)

    @property
    def e(self) -> np.ndarray:
        return self.k


def certified_points(ks: np.ndarray, dx: float) -> np.ndarray:
    """The floats at which the leg samplers certify the lattice points ``ks`` (``pair_legs.leg_sampler``: a hair below
    k dx, 0 at k = 0)."""
    e = np.nextafter(np.asarray(ks, dtype=float) * dx, 0.0)
    e[np.asarray(ks) == 0] = 0.0
    return e


def float_leg_curve(e_pos, up_pos, e_other, lo_other, up_other) -> FloatCurve:
    """The hull curve of one leg from certified upper values ``up_pos`` at the floats ``e_pos`` >= 0 and, at -x for
    the other leg's points x = ``e_other`` > 0, the swap identity on its values (an upper value at -x: it increases in
    x, evaluated at the upper end of [x, nextafter(x)]; ``pair.swap``): :func:`sharpdp.shuffle.pair.leg_curve` on floats."""
    pos = e_other > 0
    x = e_other[pos]
    _, su = swap(x, np.nextafter(x, np.inf), lo_other[pos], up_other[pos])
    e = np.concatenate([-x[::-1], e_pos])
    h = np.minimum.accumulate(np.minimum(np.concatenate([su[::-1], up_pos]), 1.0))
    keep = hull(np.exp(e), h)
    return FloatCurve(e[keep], h[keep])


def _second(eps: float, e1: float) -> float:
    """The largest float e2 with e1 + e2 <= eps exactly (as rationals): fl(eps - e1), lowered while it exceeds."""
    e2 = eps - e1
    while Fraction(e1) + Fraction(e2) > Fraction(eps):
        e2 = math.nextafter(e2, -math.inf)
    return e2


def split_bound(ca: FloatCurve, cb: FloatCurve, eps: float) -> tuple[float, float]:
    """(value, e1): a certified upper value of min over the splits e1 + e2 = eps, e1, e2 >= 0 (the accountant's
    splits, docs/accountant.md §9), of A(e1) + e^{e1} B(e2) (A, B the hull curves) and the first leg of the split it
    is. For fixed eps the objective is piecewise linear in t1 = e^{e1} (A is, and t1 B(t / t1) is linear in t1 on each
    piece of B), with breakpoints at A's vertices and at eps minus B's vertices: its minimum over [0, eps] is at one of
    them inside or at an end. The candidates are compared in floats; the chosen split is then evaluated with e2
    lowered until e1 + e2 <= eps exactly, and rounded up by (1 + 8u) (one exp within 2 ulp, a product, a sum:
    docs/accountant.md §9)."""
    with np.errstate(over="ignore", invalid="ignore"):
        e1 = np.concatenate([[0.0, eps], ca.e, eps - cb.e])
        e1 = e1[(e1 >= 0.0) & (e1 <= eps)]
        val = ca(e1) + np.exp(e1) * cb(eps - e1)
    x = float(e1[int(np.argmin(val))])
    e2 = _second(eps, x)
    with np.errstate(over="ignore"):
        v = (float(ca(np.array([x]))[0]) + math.exp(x) * float(cb(np.array([e2]))[0])) * (1 + 8 * _U)
    return min(v, 1.0), x


def lower_split_bound(ea, la, eb, lb, eps: float) -> float:
    """A certified lower value of min over e1 in [0, eps] of D_A(e1) + e^{e1} D_B(eps - e1), D_A, D_B the legs'
    blanket bounds (non-increasing), from their certified lower values ``la`` at the floats ``ea`` (increasing,
    ea[0] = 0) and ``lb`` at ``eb`` (increasing; NaN counts as 0): every split value the accountant's search can
    report at eps (its splits are in [0, eps], docs/accountant.md §9), and the split bound of :func:`split_bound`, is
    at least it. With Lb(y) the largest lb at a point >= y (0 if none; D_B(y) >= it) and Sa_i the largest la at or
    beyond ea[i]: at e1 = 0 the chain is >= la[0] + Lb(eps); on (ea[i-1], ea[i]] (ea[i-1] < eps) it is >= Sa_i +
    e^{ea[i-1]} Lb(eps - ea[i-1]); beyond ea[-1] (< eps) it is >= e^{ea[-1]} Lb(eps - ea[-1])
    (``docs/composition.md`` §2.13). Rounded down."""
    la = np.nan_to_num(np.asarray(la, dtype=float))
    lb = np.nan_to_num(np.asarray(lb, dtype=float))
    sa = np.maximum.accumulate(la[::-1])[::-1]  # the largest lower value at or beyond each point
    sb = np.append(np.maximum.accumulate(lb[::-1])[::-1], 0.0)
    # a float >= the real eps - ea: round to nearest gives one of the two floats around it, so the next one up is >= it
    y = np.nextafter(eps - ea, np.inf)
    b_at = sb[np.searchsorted(eb, y, side="left")]  # Lb at a point >= the real difference: a lower value of D_B there
    b_eps = sb[np.searchsorted(eb, eps, side="left")]
    m = int(np.searchsorted(ea, eps, side="left"))  # ea[:m] < eps
    with np.errstate(over="ignore", invalid="ignore"):
        lows = [la[0] + b_eps]
        if m >= 1:
            top = min(m, ea.size - 1)  # intervals (ea[i-1], ea[i]] for 1 <= i <= top
            lows.extend((sa[1:top + 1] + np.exp(ea[:top]) * b_at[:top]).tolist())
            if m == ea.size:  # eps beyond the last point
                lows.append(float(np.exp(ea[-1]) * b_at[-1]))
    return float(max(min(lows) * (1 - 16 * _U), 0.0))


def bottom_bounds(accountant, eps: np.ndarray, need_lower: bool, per_point: Callable, sample: Callable,
                  fallback: Callable, tol: float | None = None):
    """Certified (lower, upper) of a round bounded through bot at the sorted distinct eps >= 0 from its two legs'
    profiles, or None where the accountant's split search per eps is used instead (fewer than MIN_POINTS eps in
    [0, top], top = min(60, the legs' eps_tau), or a round without its legs).

    ``sample(evaluate, k_lim, dx, floor, max_evaluations, rel_tol, refine_floor=, label=)`` samples one leg (the
    pair's adaptive sampling, ``docs/composition.md`` §2.2) -> (ks, lower, upper); ``fallback`` is the zero-out value
    of ``pair_legs.leg_sampler``; ``per_point(e)`` -> (lower, upper) is the accountant's own value (its split
    search), taken at the eps above top and at most
    _FALLBACK_MAX eps whose upper value exceeds (1 + ``tol``) x its lower value (the largest excess first). Upper:
    the split bound of the legs' hull curves (:func:`split_bound`); lower: :func:`lower_split_bound`, a certified
    lower value of every split bound of the round at eps (not a lower bound on the mechanism's delta; NaN where not
    ``need_lower`` and the value is the legs'), or the accountant's lower value where its value is taken."""
    from sharpdp.shuffle.bottom_values import bottom_of
    from sharpdp.shuffle.pair_legs import LOOSE_TOL, leg_samples, leg_sampler
    from sharpdp.shuffle.round_cache import round_label

    vb = bottom_of(accountant)
    if vb is None:
        return None
    tol = RATIO_TOL if tol is None else tol
    top = min(60.0, float(getattr(vb.bottom, "eps_tau", math.inf)))
    inside = eps <= top
    if int(np.count_nonzero(inside)) < MIN_POINTS:
        return None
    e_max = float(eps[inside][-1])
    if not e_max > 0.0:
        return None
    dx = e_max / STEPS
    k_lim = STEPS + 1
    loose = accountant.rel_tol < LOOSE_TOL
    legs = [sample(leg_sampler(accountant, j, dx, fallback, LOOSE_TOL if j == 1 and loose else None,
                               _DEEP if j == 1 and loose else None), k_lim, dx,
                   1e-18, 400, _RTOL, refine_floor=_LEG_FLOOR, label=f"leg {j + 1} of " + round_label(accountant, 36))
            for j in (0, 1)]
    progress = getattr(sample, "keywords", {}).get("progress")  # (the legs' bars' setting: a partial's keyword)
    (ka, la, ua), (kb, lb, ub), scale = leg_samples(accountant, legs, dx, _LEG_FLOOR, _SLACK_RTOL, loose, False, fallback,
                                                    progress, _CLIFF_TOL, _CLIFF_SCALE, _OPEN_TOL)
    ea, eb = certified_points(ka, dx / scale), certified_points(kb, dx / scale)
    ca = float_leg_curve(ea, np.minimum.accumulate(ua), eb, lb, ub)
    cb = float_leg_curve(eb, np.minimum.accumulate(ub), ea, la, ua)
    lo = np.full(eps.size, np.nan)
    up = np.full(eps.size, np.inf)
    for i in np.flatnonzero(inside).tolist():
        up[i] = split_bound(ca, cb, float(eps[i]))[0]
        # (capped at 1 as the value is: a lower value of min(1, every split bound), docs/accountant.md §9)
        lo[i] = min(lower_split_bound(ea, la, eb, lb, float(eps[i])), 1.0)
    # the accountant's value where the legs' is far above every split bound's lower value (legs not resolved there),
    # and above top
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = np.where(inside & (up > (1.0 + tol) * lo), up / lo, 0.0)
    worst = np.argsort(-excess, kind="stable")[:_FALLBACK_MAX]
    redo = np.union1d(worst[excess[worst] > 0.0], np.flatnonzero(~inside)).astype(np.int64)
    if redo.size:
        lo_r, up_r = per_point(eps[redo])
        lo[redo] = np.where(np.asarray(up_r) < up[redo], lo_r, lo[redo])
        up[redo] = np.where(inside[redo], np.minimum(up[redo], up_r), up_r)
    if not need_lower:
        lo[:] = np.nan
    return lo, np.minimum.accumulate(up)


# the legs' refinement floor: the pair's is 1e-15 (docs/composition.md §2.2), but a profile value near 1e-13 at
# e1 ~ 6 nats rests on e^{e1} B(e2) with B ~ 1e-16: with 1e-15 such values were up to 54 % above the split search's
# (GaussianRandomizer(1, 1), n = 1e4), with 1e-18 within 0.7 % (docs/composition.md §2.13)
_LEG_FLOOR = 1e-18
_RTOL = 2e-3  # the legs' sampling target (the pair's default rel_tol)
# The profile's own accuracy budget (docs/composition.md §2.15; only a choice of which certified values are taken):
_SLACK_RTOL = 5e-3  # leg B's loose values certified again where they may move V by > 0.5 x this (10x below 1e-12)
_DEEP = (1e-13, LEG_TOL)  # leg B beyond a point found <= 1e-13: certified at rel_tol LEG_TOL (0.1) ...
_OPEN_TOL = LEG_TOL  # ... so a loose value is open (checked by its lower value) where its bracket is within this
_CLIFF_TOL, _CLIFF_SCALE = LEG_TOL, 8  # leg B's cliffs on the step / 8 (one level), their values at LEG_TOL
