"""Certified privacy profile of a shuffled round, and a discrete dominating pair built from it.

The privacy profile of a mechanism M is delta(eps) = sup over ordered neighbouring pairs
(D, D') of the hockey-stick divergence H_{e^eps}(M(D) || M(D')), for every real eps.
:class:`~sharpdp.shuffle.ShuffleAccountant` certifies upper values for eps >= 0 covering both
orders of every pair; for eps < 0 the swap identity (``docs/composition.md`` §1)

    H_{e^eps}(P || Q) = 1 - e^eps + e^eps H_{e^-eps}(Q || P)

turns them into upper values there too. :func:`dominating_pair` turns finitely many certified
values into a discrete pair of distributions (P, Q) on the privacy-loss lattice Delta Z whose
hockey-stick curve lies above the mechanism's at EVERY eps (a dominating pair in the sense of
Zhu, Dong & Wang, "Optimal Accounting of Differential Privacy via Characteristic Function",
Definition 7): the lower convex hull of the samples in t = e^eps, then the pessimistic
connect-the-dots distribution of Doroshenko, Ghazi, Kamath, Kumar & Manurangsi, "Connect the
Dots: Tighter Discrete Approximations of Privacy Loss Distributions" (Algorithm 1), with its
masses rounded so that the stored pair still dominates (``docs/composition.md`` §2-§3).
Dominating pairs compose (Zhu et al., Theorem 10): :class:`ComposedAccountant`, :mod:`sharpdp.interop.dp_accounting`."""

from __future__ import annotations

import inspect
import math
from contextlib import nullcontext
from functools import partial

import numpy as np

from sharpdp import _validation as V
from sharpdp.shuffle import contract, export_step, round_cache
from sharpdp.shuffle.accountant.driver import upper_first_sweep
from sharpdp.shuffle.accountant.plain import no_lower_values
from sharpdp.shuffle.accountant.plain_warm import warm_sweep
from sharpdp.shuffle.accountant.sweep_checks import check_sweep
from sharpdp.shuffle.bottom_values import level_decider
from sharpdp.shuffle.pair_accuracy import cap_tau, capped_cover
from sharpdp.shuffle.pair_ahead import bracket_ahead, pair_warm
from sharpdp.shuffle.pair_legs import LOOSE_TOL, leg_curves, leg_floor, leg_sampler
from sharpdp.shuffle.pair_budget import applies as budget_applies, segment_targets
from sharpdp.shuffle.pair_settled import ahead_tau, settled_margin, upper_sweep
from sharpdp.shuffle.profile_bottom import bottom_bounds
from sharpdp.shuffle.profile_eval import CHUNK, explicit_eval
from sharpdp.shuffle.profile_chords import chord_fill, chord_sweep
from sharpdp.shuffle.profile_stride import stride_eval
from sharpdp.shuffle.pair import DominatingPair, build_pair, check_interval, refine_points, seed_points, swap, via_bottom_eval
from sharpdp.shuffle.round_cache import (LOCK, PAIRS, check_accountant, clear_caches, lru_get, round_key,
                                         round_label, sibling_samples, value_cache)

_REFINE_FLOOR = 1e-13  # below it the samples are not refined (docs/composition.md §2.2) ...
_LEG_FLOOR = 1e-15  # ... or below this for a round bounded through bot (legs and their split bound)
_ACCURATE_FLOOR, _LOOSE_FACTOR = 1e-12, 10.0  # below it (down to _REFINE_FLOOR) the interpolation target is 10x looser
_LEVELS = (16.0, 1.0)  # targets of the refinement stages, in units of rel_tol
_INITIAL = 17  # even points on [0, eps_max] before the refinement
def _positive_bounds(accountant, eps: np.ndarray, need_lower: bool = True, negligible: float = 0.0,
                     progress: bool | None = False):
    """Certified (lower, upper) of delta at eps >= 0 (a sorted array of distinct values), one sweep: values already
    computed for this round (any accountant with the same :func:`round_key`) are reused, the rest come from one
    ``get_delta_bounds`` call (sorted, so the accountant's grids and caches carry over), and the upper values are made
    non-increasing in eps (delta is: Up(e') certifies every e >= e'). ``need_lower`` False: upper values first
    (``get_delta_bounds(lower=False)`` in ``upper_first_sweep``, docs/composition.md §2.5), a lower value not computed
    is NaN (computed again when needed). ``negligible`` > 0 (``need_lower`` False): an upper value below it may be
    a cheap, looser one (docs/accountant_tail.md §16), marked and computed again for a request needing it finer.
    ``progress`` (None: after 1 s; True: at once; False: never, in one call): a bar over the values computed (§2.29)."""
    cache = value_cache(accountant)
    fn = accountant.get_delta_bounds
    params = inspect.signature(fn).parameters
    upper_first = not need_lower and "lower" in params
    neg = negligible if upper_first and negligible > 0.0 and "negligible" in params else 0.0

    def stale(e: float) -> bool:  # no usable value at e for this request
        return (v := cache.get(e)) is None or (need_lower and math.isnan(v[0])) or (len(v) > 2 and v[2] > neg)

    missing, chords = chord_fill(cache, np.array([e for e in eps.tolist() if stale(e)], dtype=float), accountant)
    if missing.size:
        kw = dict(lower=False, negligible=neg) if neg > 0.0 else dict(lower=False) if upper_first else {}
        with upper_first_sweep(upper_first):  # (strides inside privacy_profile's sweep: docs/composition.md §2.29)
            missing, lo, up, chords = stride_eval(lambda x: fn(x, **kw), missing, accountant, upper_first and not neg,
                                                  chords, f"privacy profile of {round_label(accountant)}", progress)
        for e, a, b in zip(missing.tolist(), np.atleast_1d(lo).tolist(), np.atleast_1d(up).tolist()):
            # a value computed with a level may be coarse (below it, or above it where a part of the value stopped
            # below it: docs/accountant_tail.md §16): marked by a third entry (that level); near or below the level
            # its lower value is dropped (NaN: its bracket gap would widen the neighbours' cover_upper factors)
            c = 0.0 < neg and b <= 2.0 * neg
            cache[e] = (math.nan if (upper_first and a == 0.0) or c else a, b) + ((neg,) if neg > 0.0 else ())
    keys = np.array(sorted(cache), dtype=float)
    ups = np.minimum.accumulate(np.array([cache[k][1] for k in keys.tolist()]))
    idx = np.searchsorted(keys, eps)
    lo = np.array([cache.get(e, (math.nan,))[0] for e in eps.tolist()])
    return lo, chords(eps, ups[idx])


def privacy_profile_bounds(accountant, epsilons, *, progress: bool | None = None):
    """Certified (lower, upper) values of the privacy profile delta(eps) at any real eps.

    Parameters
    ----------
    accountant : ShuffleAccountant
        The shuffled round (randomizer, n, adjacency).
    epsilons : float or array_like of float
        eps in nats, any sign, any shape; +-inf allowed (delta(-inf) = 1).

    Returns
    -------
    (lower, upper) : floats or float64 arrays of ``epsilons``' shape
        ``upper`` is the certified upper value of delta(eps), maximised over both orders of
        every neighbouring pair (``ShuffleAccountant.get_delta`` for eps >= 0, the swap identity
        of the module docstring for eps < 0, rounded up). ``lower`` is the accountant's
        certified lower value of the same blanket bound (a quality check, not a lower bound on
        the mechanism's delta).

    Other Parameters
    ----------------
    progress : bool or None
        None (default): a progress bar on stderr (values computed / not cached yet) after 1 s; True: at once.

    Raises
    ------
    ValueError
        NaN in ``epsilons``.
    TypeError
        ``progress`` not None or a bool.
    """
    return _profile_bounds(accountant, epsilons, True, progress=progress)


def _profile_bounds(accountant, epsilons, need_lower: bool, negligible: float = 0.0, progress: bool | None = False):
    """:func:`privacy_profile_bounds`; ``need_lower`` False: the lower values may be NaN (not computed), upper
    values below ``negligible`` coarse (:func:`_positive_bounds`), ``progress`` its bar (TypeError unless a bool or None)."""
    check_accountant(accountant)
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be None, True or False, got {type(progress).__name__} {progress!r}")
    arr = V.epsilon_values("epsilons", epsilons)
    flat = arr.ravel()
    a = np.abs(flat)
    uniq = np.unique(a)
    one = lambda e: _positive_bounds(accountant, e, need_lower, negligible, progress)  # noqa: E731
    got = bottom_bounds(accountant, uniq, need_lower, one, partial(_sample_profile, progress=progress),
                        _positive_bounds) if uniq.size else None  # (through bot, many eps: docs/composition.md §2.13)
    lo_u, up_u = got if got is not None else one(uniq) if uniq.size else (uniq, uniq)
    i = np.searchsorted(uniq, a)
    lo, up = lo_u[i] if uniq.size else np.empty(0), up_u[i] if uniq.size else np.empty(0)
    neg = flat < 0
    if np.any(neg):
        with np.errstate(over="ignore", invalid="ignore"):
            sl, su = swap(a[neg], a[neg], lo[neg], up[neg])
        lo, up = lo.copy(), up.copy()
        lo[neg], up[neg] = np.where(np.isinf(a[neg]), 1.0, sl), np.where(np.isinf(a[neg]), 1.0, su)
    return V.pair_like(arr, lo, up)


def privacy_profile(accountant, epsilons, *, progress: bool | None = None):
    """Certified upper values of the privacy profile delta(eps) for eps of any sign.

    Parameters
    ----------
    accountant : ShuffleAccountant
    epsilons : float or array_like of float
        eps in nats, any sign, any shape (+-inf allowed).

    Returns
    -------
    float or numpy.ndarray of float64
        Upper values of delta(eps) in [0, 1], shape of ``epsilons``; for eps < 0 through
        delta(eps) = 1 - e^eps + e^eps delta_swapped(-eps) (``docs/composition.md`` §1).
        All eps share one sweep (:func:`privacy_profile_bounds`), upper values first (lower values
        skipped where they cost extra: docs/embedding.md §3.2), the plain engine's refinements started from
        the previous eps's (``docs/composition.md`` §2.18: other certified values than one eps at a time, within the
        accountant's rel_tol), their values from the upper lattice law alone at a step aimed from the last measured gap
        (§2.19); an eps between two of the round's cached certified values may take their chord in e^eps (§2.24).

    Other Parameters
    ----------------
    progress : bool or None
        None (default): a progress bar on stderr (values computed / not cached yet) after 1 s; True: at once.

    Raises
    ------
    ValueError
        NaN in ``epsilons``.
    TypeError
        ``progress`` not None or a bool.
    """
    # (no lower value read: docs/accountant_atoms.md §14. The plain engine warm-started along the sweep:
    # docs/composition.md §2.18; a pair's samples, whose covered values are meant to lie above get_delta, are not,
    # nor a round through bot's legs; the driver's idle shortcuts skipped along the sweep: §2.20; chords: §2.24)
    plain = not getattr(accountant, "via_bottom", False)
    with no_lower_values(), warm_sweep() if plain else nullcontext(), check_sweep() if plain else nullcontext(), \
            chord_sweep() if plain else nullcontext():
        return _profile_bounds(accountant, epsilons, False, progress=progress)[1]


# ----------------------------------------------------------------------------- sampling

_FAR_BELOW = math.log(100.0)  # a point predicted this far (log) below the target is costly to certify ...
_PROBE_AIM = math.log(10.0)  # ... so a nearer point, predicted this far below it, is tried first
_PROBES = 4  # at most this many such nearer points per step


def _probe(e0: float, u0: float, e1: float, u1: float, e_next: float, target: float) -> float | None:
    """A point in (e1, e_next) worth certifying before e_next, or None.

    Certified values cost most where delta is tiny (far-tail terms, large FFTs: seconds at delta ~
    1e-20 against ~0.05 s at 1e-6 for a heavy-tailed round), and a search for the first point of a
    sequence with delta <= ``target`` usually overshoots it by many orders. Since delta is
    non-increasing, any eps' <= e_next with a certified value <= target shows the same for e_next.
    With log delta extrapolated linearly in eps through (e0, u0), (e1, u1) (e0 < e1, target <
    u1 < u0): when e_next is predicted more than 100x below ``target``, the point predicted 10x
    below it is returned. Only the cost of the search depends on this estimate, never its result
    or any certified value."""
    if not (e0 < e1 < e_next and 0.0 < u1 < u0 and u1 > target > 0.0):
        return None
    slope = (math.log(u1) - math.log(u0)) / (e1 - e0)
    if not (slope < 0.0 and math.isfinite(slope)):
        return None
    lt = math.log(target)
    if math.log(u1) + slope * (e_next - e1) >= lt - _FAR_BELOW:
        return None
    e = e1 + (lt - _PROBE_AIM - math.log(u1)) / slope
    return e if e1 < e < e_next else None


def doubling_epsilon(accountant, delta: float, start: float = 1e-6) -> float:
    """The first eps = start 2^j (j = 0, 1, ...) whose certified upper delta(eps) is <= ``delta``,
    capped at the randomizer's local epsilon (pure LDP) and at 60 nats.

    The plain doubling search's point (``while privacy_profile(acc, e) > delta: e *=
    2``) on the round's monotone certified values, found with fewer and cheaper values: delta is
    non-increasing, so after j = 0, j = 13 is tried (all smaller j are above ``delta`` when it is)
    and binary search below it; above it, before certifying a doubling point predicted far below
    ``delta`` (costly), a nearer point (:func:`_probe`) whose certified value <= ``delta`` settles
    the answer; values below ``delta`` may be coarse (``get_delta_bounds(negligible=delta)``: still
    certified, so the point found is a valid answer, and the same one unless a coarse value falls below
    ``delta`` where the fine one does not). A replace-one round bounded through bot decides most
    comparisons from its zero-out legs (:func:`sharpdp.shuffle.bottom_values.level_decider`: "above" by
    the legs' lower values, the full split search's decision; "at most" by one split's certified value,
    ``docs/composition.md`` §2.11). Only a resolution choice (lattice steps of
    :func:`dominating_pair`), never a certified value itself.

    Parameters
    ----------
    accountant : ShuffleAccountant or ExactShuffleAccountant
    delta : float
        Target in (0, 1).
    start : float, default 1e-6
        First point (nats), > 0.

    Returns
    -------
    float
        eps in nats, in [start, 60].

    Raises
    ------
    TypeError
        ``accountant`` not the accountant of one shuffled round.
    ValueError
        ``delta`` not in (0, 1), ``start`` not in (0, 60].
    """
    check_accountant(accountant)
    delta = V.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    start = V.real("start", start, lo=0.0, hi=60.0, lo_open=True)
    cap = contract.local_epsilon(getattr(accountant, "randomizer", None))
    top = min(float(cap), 60.0) if cap is not None else 60.0
    j_top = 0  # first j with start 2^j >= top (there the search stops: the answer is top)
    while math.ldexp(start, j_top) < top:
        j_top += 1

    quick = level_decider(accountant, delta)  # (a round through bot: most comparisons from its legs, §2.11)

    def up(e: float) -> float:  # (a value below delta may be a coarse one: it decides the comparison alike)
        v = quick(e) if quick is not None else None
        return v if v is not None else float(_profile_bounds(accountant, e, False, delta)[1])

    def above(j: int) -> bool:
        return j < j_top and up(math.ldexp(start, j)) > delta

    if not above(0):
        return min(start, top)
    js = min(13, j_top)
    if above(js) and up(math.ldexp(start, js)) >= up(start):
        # no decrease over 13 doublings: the raw certified values rose again far out (valid but loose there,
        # e.g. 2.1e-16 at 50 nats after 9.9e-28 at 0.012; privacy_profile's running minimum then gives the
        # value at start): the far point says nothing about the nearer ones, so certify them upward
        for j in range(1, js):
            if not above(j):
                return min(math.ldexp(start, j), top)
    elif not above(js):  # the answer is at 0 < j <= js: binary search
        lo, hi = 0, js
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if above(mid) else (lo, mid)
        return min(math.ldexp(start, hi), top)
    pts = [(math.ldexp(start, js), up(math.ldexp(start, js)))]
    j = js
    while True:
        if j + 1 >= j_top:
            return top
        e_next = math.ldexp(start, j + 1)
        for _ in range(_PROBES):
            e_p = _probe(*pts[-2], *pts[-1], e_next, delta) if len(pts) >= 2 else None
            if e_p is None:
                break
            u_p = up(e_p)
            if u_p <= delta:
                return e_next  # delta(e_next) <= delta(e_p) <= delta; delta(start 2^j) > delta
            pts.append((e_p, u_p))
        u = up(e_next)
        if u <= delta:
            return e_next
        pts.append((e_next, u))
        j += 1


def _grid_eval(accountant, ks: np.ndarray, dx: float, need_lower: bool = True, negligible: float = 0.0):
    """(lower, upper) at eps = k dx for integer k >= 0, evaluated a hair below the real product k * dx (delta is
    non-increasing: the value there certifies k * dx); lower NaN where not needed and not computed, upper values
    below ``negligible`` possibly coarse (:func:`_positive_bounds`)."""
    e = np.nextafter(ks.astype(float) * dx, 0.0)
    e[ks == 0] = 0.0
    return _positive_bounds(accountant, e, need_lower, negligible)


def _k_limit(accountant, dx: float) -> int:
    """Largest lattice index worth sampling: values at eps >= 60 are constant, an eps0-LDP randomizer's 0 from eps0."""
    k_lim = int(math.ceil(60.0 / dx))
    cap = contract.local_epsilon(getattr(accountant, "randomizer", None))
    if cap is not None:
        k_lim = min(k_lim, int(math.ceil(float(cap) / dx)) + 1)
    return k_lim


def _sample_profile(evaluate, k_lim: int, dx: float, floor: float, max_evaluations: int, rel_tol: float,
                    progress: bool | None = None, refine_floor: float = _REFINE_FLOOR, upper_first: bool = False,
                    label: str = "", seed: dict | None = None, budget: bool = False, ahead: float | None = None):
    """Adaptive grid 0 <= k <= k_lim (eps = k dx) and the certified (lower, upper) values there,
    ``evaluate(ks)`` giving them for an int64 array of lattice indices (``upper_first``: the doubling points
    and the last refinement stage call ``evaluate(ks, False)``, upper values first: lower values NaN where not
    computed; the 17 even points and the first stage keep their brackets for ``cover_upper``).

    eps_max by doubling (delta <= ``floor`` or the local epsilon), 17 even points up to the last
    doubling point above the floor (the profile's tail below the refinement floor is the costliest
    part to certify and needs few samples), then rounds of :func:`_refine_points` (worst segments first) until every segment above the
    refinement floor meets ``rel_tol`` or the budget is spent. ``seed`` {k: (lower, upper)}: samples taken as they are
    (:func:`~sharpdp.shuffle.pair.seed_points`); when one is at or below the floor the doubling and the even points
    are skipped and the refinement starts from them (docs/composition.md §2.4). ``budget``: the last stage's targets
    per segment from the export's budget left by the samples' gaps (``pair_budget.segment_targets``, §2.17)."""
    import sys

    from sharpdp._progress import progress_bar, progress_stage

    vals: dict = {}
    # total: the budget (an upper bound, said so: its time left too), then the values computed (left at 100 %);
    # staged: no time left until the refinement starts (the first values cost the most, docs/embedding.md §3.2)
    bar = progress_bar(total=max_evaluations, desc=f"privacy profile{' of ' * bool(label)}{label}, step {dx:.3g} "
                       "(budget; stops when accurate)", unit=" values", file=sys.stderr, leave=True, disable=progress is False,
                       delay=0.0 if progress else 1.0, budget=True, staged=True)

    def ev(klist, need_lower: bool = True, negligible: float = 0.0):
        ks_all = np.array(sorted(set(int(k) for k in klist) - set(vals)), dtype=np.int64)
        # in increasing chunks (the same order of evaluation as one call), so the bar moves during a
        # stage of a hundred or more values (one update per stage froze it for minutes)
        for start in range(0, ks_all.size, CHUNK):
            ks = ks_all[start:start + CHUNK]
            lo, up = evaluate(ks) if need_lower else evaluate(ks, False, negligible) if negligible > 0.0 else \
                evaluate(ks, False)
            for k, a, b in zip(ks.tolist(), lo.tolist(), up.tolist()):
                # an upper-first value's lower value (if any) is a by-product, often far looser than the bracket the
                # accountant reports there: NaN, so that cover_upper takes its neighbours' gaps (docs/composition.md
                # §5.1; docs/embedding.md §3.2)
                vals[k] = (a if need_lower else math.nan, b)
            bar.update(int(ks.size))

    seeded = bool(seed) and min(u for _, u in seed.values()) <= floor
    vals.update(seed if seed and seeded else {})
    ev([0])
    k_top = 0  # the last doubling point above the floor (samples beyond it are costly, few needed)
    if vals[0][1] > floor and not seeded:
        k = 1
        while True:
            # (doubling and probe points: their upper values decide; below the floor a cheap one suffices)
            ev([k], not upper_first, floor if upper_first else 0.0)
            if vals[k][1] <= floor or k >= k_lim:
                break
            k_prev, k_top = k_top, k
            k_next = min(2 * k, k_lim)
            # a doubling point predicted far below the floor is costly: a nearer one predicted 10x
            # below it is certified first (:func:`_probe`); a point <= the floor ends the search
            below = False
            for _ in range(_PROBES):
                e_p = _probe(k_prev * dx, vals[k_prev][1], k_top * dx, vals[k_top][1], k_next * dx, floor)
                k_p = None if e_p is None else int(math.ceil(e_p / dx))
                if k_p is None or not k_top < k_p < k_next:
                    break
                ev([k_p], not upper_first, floor if upper_first else 0.0)
                if vals[k_p][1] <= floor:
                    below = True
                    break
                k_prev, k_top = k_top, k_p
            if below:
                break
            k = k_next
    if k_top > 1:
        ev(np.unique(np.round(np.linspace(0, k_top, _INITIAL)).astype(np.int64)).tolist())
    levels = list(_LEVELS)
    progress_stage(bar)
    for _ in range(60):
        if len(vals) >= max_evaluations:
            break
        ks = np.array(sorted(vals), dtype=np.int64)
        up = np.minimum.accumulate(np.array([vals[k][1] for k in ks.tolist()]))
        tg = segment_targets(np.array([vals[k][0] for k in ks.tolist()]), up, rel_tol) if budget and len(levels) == 1 \
            else None
        new = refine_points(ks, up, dx, rel_tol * levels[0], max(floor, refine_floor),
                             loose_below=_ACCURATE_FLOOR, loose_factor=_LOOSE_FACTOR, targets=tg)
        if not new:
            if len(levels) == 1:
                break
            levels.pop(0)
            continue
        room = max_evaluations - len(vals)
        take: list = []
        for pts in new:  # worst segments first, whole segments while the budget lasts
            if len(take) + len(pts) > room:
                pts = pts[: max(room - len(take), 0)]
            take.extend(pts)
            if len(take) >= room:
                break
        # the last stage's points need upper values only: the lower values (bracket gaps) of the earlier
        # samples around them stand in for theirs in cover_upper (docs/embedding.md §3.2)
        first = bracket_ahead(vals, take, ahead) if upper_first and len(levels) == 1 else []  # (§2.22)
        ev(first)
        ev(sorted(set(take) - set(first)), not upper_first or len(levels) > 1)
    bar.total = bar.n  # finished: nothing more to come
    bar.close()
    ks = np.array(sorted(vals), dtype=np.int64)
    lo = np.array([vals[k][0] for k in ks.tolist()])
    up = np.minimum.accumulate(np.array([vals[k][1] for k in ks.tolist()]))
    return ks, lo, up


def dominating_pair(accountant, value_discretization_interval: float | None = None, *, epsilons=None,
                    delta_floor: float = 1e-18, max_evaluations: int = 400, rel_tol: float = 2e-3,
                    cover_upper: bool = True, lower: bool = False,
                    progress: bool | None = None) -> DominatingPair:
    """Discrete dominating pair of a shuffled round from its certified privacy profile.

    Parameters
    ----------
    accountant : ShuffleAccountant
        The round (randomizer, n, adjacency); its certified upper values are sampled.
    value_discretization_interval : float or None, default None
        Lattice step Delta (nats) in [1e-12, 1]; None: the round's export step (docs/composition.md §4.6), shared pair.
    epsilons : array_like of float, optional
        Explicit sample points eps >= 0 (each a multiple of Delta within 1e-9 relative). By
        default they are chosen adaptively (``docs/composition.md`` §2.2): eps_max (delta <=
        ``delta_floor``, or the local epsilon of a pure-LDP randomizer) by doubling, 17 even
        points, then each segment whose estimated interpolation error (a quarter of the triangle
        between the chord in t = e^eps and the neighbouring segments' extended chords) exceeds
        the target is split into the number of even parts the estimate asks for, first at
        16 ``rel_tol``, then at ``rel_tol``, up to ``max_evaluations``.
    delta_floor : float, default 1e-18
        Values of delta below it are not resolved (they land in the infinity mass: never an
        under-report).
    max_evaluations : int, default 400
        Budget of profile evaluations (each one certified accountant call; per leg for a round
        bounded through bot).
    rel_tol : float, default 2e-3
        Interpolation target of the adaptive sampling (estimated relative error of the chord in
        t = e^eps between samples, where delta >= 1e-13; 1e-15 through bot).
    cover_upper : bool, default True
        Multiply each sampled value by 1 + g, g the largest bracket gap (upper - lower)/lower the
        accountant achieved at that sample and its two neighbours (g <= 0.05). The pair then lies
        above the accountant's own upper value ``get_delta(eps)`` at every eps where its bracket
        gap is <= the neighbouring samples' g, not only above the true delta
        (``docs/composition.md`` §2). False gives the tightest pair (still certified), about g
        below.
    lower : bool, default False
        Build the same construction from the accountant's LOWER values (a reference for tests
        and benchmarks; ``certified`` is then False and the pair dominates nothing).
    progress : bool or None
        None (default): a progress bar on stderr (values computed out of ``max_evaluations``, an
        upper bound on the work, until the sampling stops; then left at 100 %; with ``epsilons``:
        out of their number, exact) appears only after 1 s; True: at once; False: never.

    Returns
    -------
    DominatingPair
        Masses on multiples of Delta for both signs of the loss: eps samples on the negative side
        come from the swap identity. Certified construction: ``docs/composition.md`` §2-§3. For a replace-one
        round bounded through bot (``accountant.via_bottom``) the samples are the triangle-inequality bound over
        every lattice split of the two legs' hull curves (``docs/composition.md`` §2.1), each leg sampled as
        above: certified, and tighter than ``get_delta`` (whose split search is coarser) by up to ~20 %.

        Built once per process for each round and options: every accountant of the same round
        (:func:`round_key`) gets the same object (its arrays read-only) from a bounded cache
        (``docs/composition.md`` §2.3; :func:`clear_caches` empties it).

    Raises
    ------
    TypeError
        ``accountant`` not the accountant of one shuffled round (a ``ComposedAccountant`` too);
        ``cover_upper`` or ``lower`` not a bool, ``progress`` not None or a bool.
    ValueError
        Delta not in [1e-12, 1], ``epsilons`` negative, not finite, above 2^62 Delta (int64 lattice) or off grid,
        ``delta_floor`` not in (0, 1), ``max_evaluations`` < 2, ``rel_tol`` not in (0, 1).
    """
    check_accountant(accountant)
    dx = export_step.pair_step(accountant, value_discretization_interval, doubling_epsilon)  # (None: export step)
    floor = V.real("delta_floor", delta_floor, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    max_ev = V.integer("max_evaluations", max_evaluations, lo=2)
    rtol = V.real("rel_tol", rel_tol, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    for name, flag in (("cover_upper", cover_upper), ("lower", lower)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {type(flag).__name__} {flag!r}")
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be None, True or False, got {type(progress).__name__} {progress!r}")
    e_arr = None if epsilons is None else V.real_array("epsilons", epsilons, ndim=1, lo=0.0, hi=2.0**62 * dx)
    key = round_key(accountant)
    if key is None:
        return _build(accountant, dx, e_arr, floor, max_ev, rtol, bool(cover_upper), bool(lower), progress)
    pkey = (key, dx, None if e_arr is None else tuple(e_arr.tolist()), floor, max_ev, rtol, bool(cover_upper),
            bool(lower))
    with LOCK:
        hit = PAIRS.get(pkey)
        if hit is not None:
            PAIRS.move_to_end(pkey)
            return hit[0]
    # values of this round's pairs on other steps seed this one (docs/composition.md §2.4)
    seed = None if e_arr is not None or lower or getattr(accountant, "via_bottom", False) else seed_points(
        value_cache(accountant), sibling_samples(pkey), dx, _k_limit(accountant, dx), rtol, floor)
    pair = _build(accountant, dx, e_arr, floor, max_ev, rtol, bool(cover_upper), bool(lower), progress, seed)
    for a in (pair.losses, pair.probs, pair.sample_epsilons, pair.sample_deltas):
        a.setflags(write=False)  # shared by every caller: read-only
    # (the randomizer rides along so an object-keyed entry keeps its id alive)
    return lru_get(PAIRS, pkey, round_cache.MAX_PAIRS, lambda: (pair, accountant.randomizer))[0]


def _build(accountant, dx, e_arr, floor, max_ev, rtol, cover_upper, lower, progress, seed=None) -> DominatingPair:
    """The construction of :func:`dominating_pair` on validated arguments (no cache)."""
    epsilons = e_arr
    adjacency = getattr(accountant, "adjacency", "zero_out")
    evaluate = upper_sweep(accountant, partial(_grid_eval, accountant, dx=dx), lower or e_arr is not None)  # §2.26
    k_lim = _k_limit(accountant, dx) if epsilons is None else 0
    if getattr(accountant, "via_bottom", False):
        # replace-one through bot: the triangle inequality on the two legs' hull curves, at every
        # split of the lattice (docs/composition.md §2.1)
        legs: list = []
        loose = not lower and accountant.rel_tol < LOOSE_TOL  # leg B loose first (docs/composition.md §2.10)
        for j in (0, 1):  # leg B refined below _LEG_FLOOR where e^{e1} lifts it (docs/composition.md §2.14)
            ev_j = leg_sampler(accountant, j, dx, _positive_bounds, LOOSE_TOL if j == 1 and loose else None)
            f_j = leg_floor(legs, dx, _LEG_FLOOR)
            legs.append(_sample_profile(ev_j, _k_limit(accountant, dx), dx, min(floor, f_j), max_ev, rtol, progress, f_j,
                                        label=f"leg {j + 1} of " + round_label(accountant, 36)))
        curve_a, curve_b, scale = leg_curves(accountant, legs, dx, _LEG_FLOOR, rtol, loose, lower, cover_upper,
                                             _positive_bounds, progress)
        evaluate = via_bottom_eval(curve_a, curve_b, scale)
        if epsilons is None:
            k_lim = min(k_lim, (int(curve_a.k[-1]) + int(curve_b.k[-1])) // scale + 2)
    if epsilons is not None:
        e = epsilons
        kf = e / dx
        ki = np.round(kf)
        if np.any(np.abs(kf - ki) > 1e-9 * np.maximum(1.0, np.abs(kf))):
            bad = e[np.argmax(np.abs(kf - ki))]
            raise ValueError(f"epsilons must lie on the discretisation grid (multiples of "
                             f"value_discretization_interval = {dx}); {bad} does not")
        ks = np.unique(np.concatenate([[0], ki.astype(np.int64)]))
        lo_v, up_v = explicit_eval(evaluate, ks, progress, round_label(accountant))
        up_v = np.minimum.accumulate(up_v)
    else:
        own = not lower and not getattr(accountant, "via_bottom", False)  # (§2.22, §2.23: the pair's own sampling)
        with warm_sweep() if own and pair_warm() else nullcontext():
            ks, lo_v, up_v = _sample_profile(evaluate, max(k_lim, 1), dx, floor, max_ev, rtol, progress,
                                             _LEG_FLOOR if getattr(accountant, "via_bottom", False) else _REFINE_FLOOR,
                                             upper_first=not lower, label=round_label(accountant), seed=seed,
                                             budget=budget_applies(accountant, cover_upper, lower),
                                             ahead=ahead_tau(accountant, cap_tau(rtol)) if own and cover_upper else None)
    if cover_upper and not lower:  # cover's factor capped by the samples' lower values (docs/composition.md §2.12)
        smooth = contract.local_epsilon(getattr(accountant, "randomizer", None)) is None  # (no atoms: §4.10's check)
        up_v = capped_cover(lo_v, up_v, cap_tau(rtol), lambda idx: _grid_eval(accountant, ks[idx], dx),
                            at=ks * dx if smooth else None, settled=settled_margin(accountant))
    vals = lo_v if lower else up_v
    # negative side from the swap identity, at the same lattice points
    pos = ks > 0
    xk = ks[pos].astype(float) * dx
    x_hi = np.nextafter(xk, np.inf)
    sl, su = swap(xk, x_hi, lo_v[pos], up_v[pos])
    neg_vals = sl if lower else su
    ks_full = np.concatenate([-ks[pos][::-1], ks])
    H_full = np.concatenate([neg_vals[::-1], vals])
    H_full = np.minimum.accumulate(np.minimum(H_full, 1.0))  # delta is non-increasing in eps
    samples = (ks.astype(float) * dx, up_v.copy())
    # a pair from upper values of a law that is itself only estimated (a GeneralRandomizer without
    # log_curvature: the accountant's values are estimates) certifies nothing either
    certified = not lower and bool(getattr(accountant.randomizer, "certified", True))
    return build_pair(ks_full, H_full, dx, adjacency, certified, samples)


__all__ = ["DominatingPair", "check_accountant", "check_interval", "clear_caches", "dominating_pair", "doubling_epsilon",
           "privacy_profile", "privacy_profile_bounds", "round_key"]
