"""The legs of a replace-one round bounded through bot, sampled for its dominating pair (``docs/composition.md`` §2.1,
§2.10): the leg samplers, and the second leg taken at a loose accuracy where its slack cannot move the pair.

Leg B (bot vs x) enters the pair's split bound V(k) = min over k1 of A(k1 Delta) + e^{k1 Delta} B((k - k1) Delta)
mostly as a small share of the optimal split (its cliff makes the optimum put e2 where e^{e1} B(e2) is a few percent
of A(e1)); where that holds its values need not be certified to the accountant's ``rel_tol``. Every leg value is
a certified bracket whatever its accuracy, so the pair dominates either way; :func:`tighten_loose_leg` only decides
which loose values are certified again at ``rel_tol`` (``docs/composition.md`` §2.10).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.bottom_values import LEG_TOL
from sharpdp.shuffle.pair import Curve, cover, leg_curve
from sharpdp.shuffle.pair_accuracy import cap_tau, capped_cover
from sharpdp.shuffle.pair_steps import resolve_steep
from sharpdp.shuffle.round_cache import TWINS

LOOSE_TOL = 0.03  # rel_tol of leg B's first values
CHECK_POINTS = 513  # lattice points of V where the loose values' slack is checked
SLACK_SHARE = 0.5  # ... against this share of the pair's rel_tol (10x below ACCURATE: its sampling target)
ACCURATE = 1e-12  # (the pair sampling's accurate floor, docs/composition.md §2.2)
_ROUNDS = 40  # at most this many rounds of re-certification (each certifies every flagged loose sample)
B_SHARE = 1e-2  # leg B refined down to this share of ACCURATE / e^{e_A} (docs/composition.md §2.14) ...
B_FLOOR_MIN = 1e-30  # ... but not below this


def leg_sampler(accountant, j: int, dx: float, fallback: Callable, tol: float | None = None,
                deep: tuple[float, float] | None = None):
    """``evaluate(ks)`` of leg j (0: x vs bot, 1: bot vs x) of a replace-one round bounded through bot at eps = k dx
    (a hair below): the zero-out certification of that order at ``tol`` (None: the accountant's ``rel_tol``; the
    accountant's own leg values, cached there), or ``fallback(zero_out_accountant, eps)`` (the zero-out value: the
    maximum over both orders) when the accountant does not expose its legs. Legs are sampled as brackets (an upper
    value first saves nothing on these laws: ``docs/composition.md`` §2.10), so ``need_lower`` and ``negligible``
    are unused. ``deep`` (level, tol2): a point beyond one whose upper value this sampler found <= level (the leg is
    non-increasing: its value there is <= level too) is certified at tol2 instead (docs/composition.md §2.15)."""
    leg = getattr(getattr(accountant, "_bottom", None), "leg", None)  # ViaBottom.leg(j, e, rel_tol)
    rel_tol = accountant.rel_tol if tol is None else max(tol, accountant.rel_tol)
    below = [math.inf]  # the least eps at which an upper value <= deep's level was found

    def evaluate(ks, need_lower=True, negligible=0.0):
        e = np.nextafter(np.asarray(ks, dtype=float) * dx, 0.0)
        e[np.asarray(ks) == 0] = 0.0
        if leg is None:
            return fallback(zero_out_twin(accountant), e)
        lo, up = np.empty(e.size), np.empty(e.size)
        for i, x in enumerate(e.tolist()):
            r = leg(j, x, deep[1] if deep is not None and x >= below[0] else rel_tol)
            lo[i], up[i] = r.lower, min(r.upper, 1.0)
            if deep is not None and up[i] <= deep[0]:
                below[0] = min(below[0], x)
        return lo, up

    return evaluate


def leg_floor(legs, dx: float, floor: float) -> float:
    """The refinement floor of the next leg of a round through bot, given the legs ``legs`` [(ka, la, ua)] sampled
    before it: ``floor`` for leg A (none sampled), and for leg B min(``floor``, B_SHARE ACCURATE e^{-e_A}), e_A the
    first of leg A's sampled eps = k ``dx`` whose upper value is <= ACCURATE / 10 (its last one if none is), at least
    B_FLOOR_MIN. Leg B enters the split bound as e^{e1} B(e2) with e1 up to about e_A where the bound is near
    ACCURATE, so its values down to ~1e-2 ACCURATE e^{-e1} decide the optimal split there (``docs/composition.md``
    §2.14). Only a choice of samples: every leg value is a certified bracket, so the pair dominates either way."""
    if not legs:
        return floor
    ka, _, ua = legs[0]
    below = np.flatnonzero(np.asarray(ua) <= 0.1 * ACCURATE)
    e_a = float(ka[below[0] if below.size else -1]) * dx
    return min(floor, max(B_SHARE * ACCURATE * math.exp(-e_a), B_FLOOR_MIN))


def zero_out_twin(accountant):
    """The zero-out accountant of a round bounded through bot (same randomizer, n, rel_tol), kept per accountant."""
    twin = TWINS.get(accountant)
    if twin is None:
        twin = getattr(getattr(accountant, "_bottom", None), "bottom", None)
        if not callable(getattr(twin, "get_delta_bounds", None)):
            twin = type(accountant)(accountant.randomizer, accountant.n, "zero_out", rel_tol=accountant.rel_tol)
        TWINS[accountant] = twin
    return twin


def _split_bound(ka, la, ua_c, kb, lb, ub, dx, ks):
    """V and its optimal first legs k1 at ``ks`` from leg A's covered values ``ua_c`` and leg B's bracket (lb, ub)
    (covered here, as the pair's curves are)."""
    ub_c = cover(lb, ub)
    ca = leg_curve(ka, ua_c, lb, ub_c, kb, dx)
    cb = leg_curve(kb, ub_c, la, ua_c, ka, dx)
    v, k1 = _splits(ca, cb, ks)
    return v, k1, ca, cb


def _splits(ca: Curve, cb: Curve, ks: np.ndarray):
    """(V, k1) at ``ks``: the split bound min over k1 of A(k1 Delta) + e^{k1 Delta} B((k - k1) Delta) of the hull
    curves and a split attaining it, over the splits at A's vertices and at k minus B's vertices (where the
    minimum over all splits in range lies: :func:`sharpdp.shuffle.pair.via_bottom_eval`), in one array pass (a
    check's estimate: the pair's own values come from ``via_bottom_eval``)."""
    dx = ca.dx
    kk = ks[:, None]
    with np.errstate(over="ignore"):
        k1a = np.broadcast_to(ca.k[None, :], (ks.size, ca.k.size))
        va = ca(ca.k)[None, :] + np.exp(ca.k * dx)[None, :] * cb(kk - k1a)
        k1b = kk - cb.k[None, :]
        vb = ca(k1b) + np.exp(k1b * dx) * cb(cb.k)[None, :]
    ia, ib = np.argmin(va, axis=1), np.argmin(vb, axis=1)
    r = np.arange(ks.size)
    use_a = va[r, ia] <= vb[r, ib]
    return np.where(use_a, va[r, ia], vb[r, ib]), np.where(use_a, k1a[r, ia], k1b[r, ib])


def _support(kb: np.ndarray, curve: Curve, pts: np.ndarray) -> np.ndarray:
    """Indices of the samples ``kb`` (sorted) that a hull curve's values at the lattice points ``pts`` depend on: the
    samples from one before the curve's vertex at or below each point to one after its vertex above it (the
    vertices, the samples between them, and the neighbours whose gaps ``cover`` takes)."""
    kv = curve.k
    j = np.clip(np.searchsorted(kv, pts, side="right") - 1, 0, kv.size - 1)
    lo = np.clip(np.searchsorted(kb, kv[j]) - 1, 0, kb.size - 1)
    hi = np.clip(np.searchsorted(kb, kv[np.minimum(j + 1, kv.size - 1)]) + 1, 0, kb.size - 1)
    out = [np.arange(a, b + 1) for a, b in zip(lo.tolist(), hi.tolist())]
    return np.unique(np.concatenate(out)) if out else np.empty(0, dtype=np.int64)


def tighten_loose_leg(ka, la, ua, kb, lb, ub, loose, dx: float, floor: float, rel_tol: float, certify_fine,
                      open_tol: float = LOOSE_TOL):
    """Leg B's samples (kb, lb, ub) with the loose ones (mask ``loose``) certified again where their slack may move
    the split bound V by more than SLACK_SHARE ``rel_tol`` (10x that where V < ACCURATE) at a check point with
    V >= ``floor``; returns (lb, ub, loose) (ub non-increasing).

    V_up is the split bound of the legs as they are (``cover`` of each leg, hull, swap: the pair's curves); V_low the
    same with every *open* loose sample of B (lower value L > 0, upper value <= (1 + ``open_tol``) L; LOOSE_TOL by
    default, docs/composition.md §2.15 for the profile's 0.1) replaced by [L, L],
    so V_low <= V of the same samples with the open ones certified at ``rel_tol`` (hull, running minimum, swap
    identity and ``cover`` are monotone in the values; ``docs/composition.md`` §2.10). *Settled* loose samples (no
    lower value, or a bracket wider than ``open_tol``: the engine's caps bound them) count as they are in both. Where
    V_up > (1 + s) V_low, the open samples of B's hull support at the optimal second leg of either bound (and at minus
    a negative first leg: A's curve there is the swap of B's samples) are certified by ``certify_fine(ks)`` -> (lower,
    upper), keeping the smaller upper value (both certified). Only a choice of which values are refined: every
    value used is a certified bracket, so the pair dominates whatever stays loose."""
    kb, lb, ub, loose = kb, lb.copy(), ub.copy(), loose.copy()
    ua_c = cover(la, ua)
    ks = np.unique(np.round(np.linspace(0, int(ka[-1]) + int(kb[-1]), CHECK_POINTS)).astype(np.int64))
    tol = SLACK_SHARE * rel_tol
    for _ in range(_ROUNDS):
        if not (loose & (np.nan_to_num(lb) > 0.0)).any():
            break
        v_up, k1_up, ca_up, cb_up = _split_bound(ka, la, ua_c, kb, lb, ub, dx, ks)
        # an open loose sample: its lower value, gap 0; a settled one (no lower value, or a gap beyond LOOSE_TOL: the
        # engine's caps bound it, and at rel_tol they do too, in practice) its upper value (§2.10)
        open_ = loose & (np.nan_to_num(lb) > 0.0) & (ub <= (1.0 + open_tol) * np.nan_to_num(lb))
        low = np.where(open_, np.nan_to_num(lb), ub)
        v_low, k1_low, ca_low, cb_low = _split_bound(ka, la, ua_c, kb, np.where(open_, low, lb), low, dx, ks)
        bad = (v_up >= floor) & (v_up > (1.0 + np.where(v_up < ACCURATE, 10.0 * tol, tol)) * v_low)
        if not bad.any():
            break
        parts = []
        for k1, ca, cb in ((k1_up[bad], ca_up, cb_up), (k1_low[bad], ca_low, cb_low)):
            parts.append(_support(kb, cb, ks[bad] - k1))  # B at the second leg
            if np.any(k1 < 0):  # A at a negative first leg: the swap of B's samples at -k1
                parts.append(_support(kb, cb, -k1[k1 < 0]))
        idx = np.unique(np.concatenate(parts))
        idx = idx[open_[idx]]
        if idx.size == 0:
            break
        lo_f, up_f = certify_fine(kb[idx])
        lb[idx], ub[idx] = lo_f, np.minimum(ub[idx], up_f)
        loose[idx] = False
    return lb, np.minimum.accumulate(ub), loose


CLIFF_SCALE = 64  # the legs' finer lattice Delta / 64 where a leg has a cliff (docs/composition.md §2.12)
CLIFF_DROP = 1e-3  # a cliff: consecutive lattice samples whose upper values fall by more than this factor ...
_CLIFF_PARTS = 8  # ... resolved in two levels of 8 parts (Delta / 8, then Delta / 64 around the steepest part)


def resolve_cliffs(kb, lb, ub, floor: float, sample_fine: Callable, bar=None, scale: int = CLIFF_SCALE):
    """Leg B's samples on the lattice Delta / CLIFF_SCALE with its cliffs resolved, or None where it has none.

    A cliff is a pair of consecutive lattice samples k, k + 1 with an upper value >= ``floor`` falling by more than
    the factor CLIFF_DROP (the leg's support ends there: GaussianRandomizer rounds at small n). The split bound puts
    its second leg just past the cliff, so a cliff resolved to one step Delta costs the first leg's fall over a step
    (``docs/composition.md`` §5.1, cause (iii)). Each cliff gets 7 samples at Delta / 8 and 7 more at Delta / 64 in
    the part where the values fall most (``sample_fine(ks)`` -> (lower, upper) at eps = k Delta / CLIFF_SCALE).
    Returns (kb, lb, ub) with every index in units of Delta / CLIFF_SCALE (upper values non-increasing). Only a
    choice of samples: every value is a certified bracket of the leg at its point, so the hull curve through them
    lies above the leg (Claim A, docs/composition.md §2.12). ``bar``: a progress bar whose total grows by the values
    to come."""
    ub_ = np.asarray(ub, dtype=float)
    cliff = (np.diff(kb) == 1) & (ub_[:-1] >= floor) & (ub_[1:] < CLIFF_DROP * ub_[:-1])
    if not cliff.any():
        return None
    s, p = scale, _CLIFF_PARTS
    if bar is not None:  # (a progress bar of the caller's: the cliffs' values at most)
        bar.total = (bar.total or 0) + round(math.log(s, p)) * (p - 1) * int(np.count_nonzero(cliff))
    vals = {int(k) * s: (float(a), float(b)) for k, a, b in zip(np.asarray(kb).tolist(), np.asarray(lb).tolist(),
                                                                  ub_.tolist())}
    for i in np.flatnonzero(cliff).tolist():
        a = int(kb[i]) * s
        step = s // p
        for _ in range(2):
            pts = np.arange(a + step, a + step * p, step, dtype=np.int64)
            lo_f, up_f = sample_fine(pts)
            vals.update({k: (x, y) for k, x, y in zip(pts.tolist(), np.asarray(lo_f).tolist(),
                                                        np.asarray(up_f).tolist())})
            row = np.concatenate([[a], pts, [a + step * p]])
            u = np.array([vals[k][1] for k in row.tolist()])
            with np.errstate(divide="ignore", invalid="ignore"):
                j = int(np.argmin(np.where(u[:-1] > 0.0, u[1:] / u[:-1], 1.0)))
            a, step = int(row[j]), step // p
            if step < 1:
                break
    ks = np.array(sorted(vals), dtype=np.int64)
    lo = np.array([vals[k][0] for k in ks.tolist()])
    up = np.minimum.accumulate(np.array([vals[k][1] for k in ks.tolist()]))
    return ks, lo, up


_BAR_CHUNK = 8  # leg values per call while a bar counts them (the bar moves during a long re-certification)


def _counted(evaluate: Callable, bar) -> Callable:
    """``evaluate(ks)`` -> (lower, upper) taken in chunks of _BAR_CHUNK in increasing order (the same values: each is
    certified on its own), ``bar`` updated after each chunk."""
    def run(ks, *args):
        ks = np.asarray(ks)
        lo, up = np.empty(ks.size), np.empty(ks.size)
        for a in range(0, ks.size, _BAR_CHUNK):
            lo[a:a + _BAR_CHUNK], up[a:a + _BAR_CHUNK] = evaluate(ks[a:a + _BAR_CHUNK], *args)
            bar.update(int(min(_BAR_CHUNK, ks.size - a)))
        return lo, up

    return run


def leg_samples(accountant, legs, dx: float, floor: float, rtol: float, loose: bool, lower: bool, fallback: Callable,
                progress: bool | None = False, cliff_tol: float | None = None, cliff_scale: int = CLIFF_SCALE,
                open_tol: float = LOOSE_TOL):
    """The two legs' samples of a round through bot, ready for their hull curves: ((ka, la, ua), (kb, lb, ub), scale)
    with every index on the lattice ``dx`` / scale (scale 1, or CLIFF_SCALE where leg B has a cliff): leg B's loose
    samples certified again where they can move the split bound (``loose``, docs/composition.md §2.10) and its cliffs
    resolved on Delta / CLIFF_SCALE (not for the ``lower`` reference; docs/composition.md §2.12). Each value is a
    certified bracket of its leg at eps = k dx / scale (a hair below: :func:`leg_sampler`). ``progress`` (None:
    after 1 s; True: at once; False, the default: never) shows these values on a bar (their number: at most one per
    loose sample, a budget, plus 7 per cliff level; docs/composition.md §2.15). ``cliff_tol`` (None: the accountant's
    rel_tol) and ``cliff_scale`` (a power of 8) are the cliffs' tolerance and lattice, ``open_tol`` the loose check's
    open criterion (:func:`tighten_loose_leg`)."""
    import sys

    from sharpdp._progress import progress_bar
    from sharpdp.shuffle.round_cache import round_label

    (ka, la, ua), (kb, lb, ub) = legs
    bar = progress_bar(total=int(kb.size) if loose else 0, desc=f"leg 2 of {round_label(accountant, 36)}: values "
                       "certified again where they move the split bound (budget)", unit=" values", file=sys.stderr,
                       leave=True, disable=progress is False or lower, delay=0.0 if progress else 1.0, budget=True)
    try:
        if loose:
            lb, ub, _ = tighten_loose_leg(ka, la, ua, kb, lb, ub, np.ones(kb.size, dtype=bool), dx, floor, rtol,
                                          _counted(leg_sampler(accountant, 1, dx, fallback), bar), open_tol)
        scale = 1
        if not lower:
            fine_b = resolve_cliffs(kb, lb, ub, floor, _counted(leg_sampler(accountant, 1, dx / cliff_scale, fallback,
                                                                            cliff_tol), bar), bar, cliff_scale)
            if fine_b is not None:
                scale, ka, (kb, lb, ub) = cliff_scale, ka * cliff_scale, fine_b
        bar.total = bar.n  # finished: nothing more to come
    finally:
        bar.close()
    return (ka, la, ua), (kb, lb, ub), scale


def leg_curves(accountant, legs, dx: float, floor: float, rtol: float, loose: bool, lower: bool, cover_upper: bool,
               fallback: Callable, progress: bool | None = False):
    """The two legs' hull curves of a round through bot from their samples ``legs`` [(ka, la, ua), (kb, lb, ub)] on
    the step ``dx``, and the lattice scale they live on (:func:`leg_samples`, ``progress`` its bar), each leg's values
    covered with the cap of ``pair_accuracy`` (``cover_upper``; the ``lower`` reference: the lower values as they
    are; docs/composition.md §2.12)."""
    (ka, la, ua), (kb, lb, ub), scale = leg_samples(accountant, legs, dx, floor, rtol, loose, lower, fallback, progress)
    if not lower and limits.PAIR_STEEP_STEPS:  # leg B's steep steps at the optimal splits (docs/composition.md §2.16)
        def sample(ks, left_upper, s):  # (B's share of V: its values at LEG_TOL, docs/composition.md §2.16)
            return leg_sampler(accountant, 1, dx / s, fallback, LEG_TOL)(ks)

        (ka, la, ua), (kb, lb, ub), scale = resolve_steep(ka, la, ua, kb, lb, ub, scale, dx, sample)
    dx_l = dx / scale
    if lower:
        ua, ub = la, lb
    elif cover_upper:
        tau = cap_tau(rtol)
        ua, ub = capped_cover(la, ua, tau, floor=floor), capped_cover(lb, ub, tau, floor=floor)
    return leg_curve(ka, ua, lb, ub, kb, dx_l), leg_curve(kb, ub, la, ua, ka, dx_l), scale
