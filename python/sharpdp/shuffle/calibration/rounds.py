"""Certified calibration of the BMG for k composed rounds (``calibrate_bmg(..., rounds=k)``,
docs/calibration.md, docs/composition.md §4)."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

from sharpdp.shuffle.calibration.search import (
    CalibrationReport,
    Progress,
    delta_floor,
    make_accountant,
)
from sharpdp import _validation as V
from sharpdp.shuffle.adjacency import check_adjacency
from sharpdp.shuffle.randomizers import BlanketMixedGaussian

# ----------------------------------------------------------------------------------------------
# Calibration for k composed rounds (calibrate_bmg(..., rounds=k)).
#
# One parameter s = log sigma_1: each candidate is the single-round calibration at the Gaussian
# mechanism's (epsilon / sqrt(k), delta_G(epsilon / sqrt(k); sigma_1)), a point of the profile of
# a Gaussian round of noise sigma_1. k such Gaussian rounds compose to a Gaussian of noise
# sigma_1 / sqrt(k) (mu-GDP), so the start is sigma_1 = sqrt(k) sigma_total. The second candidate
# moves s by the Gaussian-equivalent shift of the first composed certification D (the s whose
# shifted Gaussian model puts D at the aim); from then on the step is a secant in s through the two
# last certified values of -log sigma_eff(D) (the Gaussian-equivalent noise: the Gaussian model is a
# line of slope -1 there), regula falsi inside (s_fail, s_pass) once both sides are known (where D is
# steep in s the Gaussian shift alone overshoots: the candidates bounced around the target); see
# _next_s and docs/composition.md §4.1. These are estimates; only certified candidates are returned. Larger s: more
# noise, smaller D, larger Err_1. If no candidate certifies, the fallback raises sigma0 of the last
# failed one at its gamma (a post-processing, so its true delta only drops).

# Composed certifications of the search; fallback steps (only after failures) at most this many more.
_ROUNDS_CERTS = 4
_ROUNDS_FALLBACK = 6
# The Gaussian start aims a little below the target (the certified value's own accuracy is ~1e-2 relative); stop once
# a certified value is within this factor of the target (the gain in Err_1 left is tiny: at eps = 4, 5 rounds, a
# candidate at 0.81 delta and the next at 0.995 delta differ by 0.4 % in sigma0).
_ROUNDS_AIM, _ROUNDS_CLOSE = math.log(0.97), math.log(0.8)
# The steps after the first aim at 0.95 delta, further inside the stop window than the start (the first
# candidate's miss shows the Gaussian model is off there: a step past delta costs one more candidate; measured
# on the flights grid, 0.9 lost ~0.35 % in mse_single on the two-candidate cells and saved no candidate).
_ROUNDS_STEP_AIM = math.log(0.95)
# Smallest safe-side step in s (and in log sigma0 in the fallback) after a failure, doubled after
# each further failure up to _ROUNDS_MAX_STEP.
_ROUNDS_STEP, _ROUNDS_MAX_STEP = 0.02, 0.5
# Each candidate's dominating pair (docs/composition.md §4.2): _PAIR_POINTS points spread evenly over
# [0, e_top], each rounded to a multiple k Delta of the lattice step Delta = e_top / _PAIR_STEPS (so about
# 10 Delta apart), e_top where the template model of the round (template_delta_estimate at the BMG's
# chi_lo) is _FLOOR_SHARE D / rounds, D the model of the composed delta (the template at chi_lo / sqrt(rounds),
# ~ the target in the search): the pair's infinity mass, charged in full to the composed delta, is then about
# that share of it. Only a resolution choice: a pair from certified upper values at ANY points is a certified dominating pair
# (docs/composition.md §2, Claim A), at any accountant accuracy: the values come from an accountant of
# rel_tol _PAIR_REL_TOL (a wider bracket, the same certified upper values; its far-tail values cost a
# fraction of those at 1e-2) and are not covered by their bracket gaps (cover_upper=False: that cover
# is no part of the certificate).
_PAIR_POINTS, _PAIR_STEPS, _FLOOR_SHARE, _PAIR_REL_TOL = 40, 400, 2e-3, 0.05
# If the certified value at e_top is above _MODEL_MISS x the floor (the model misses the round: e.g. a heavy-tailed
# round at large epsilon, 7e-4 where the model says 1e-9), e_top moves by secant steps on the log of certified upper
# values (:func:`_tail_top`) to a point whose certified value is <= the floor, before the 40 points are taken.
_MODEL_MISS = 10.0
# A candidate whose composed value is above the target by at most this factor is certified again from a
# pair of twice the point density (the same certified values plus the midpoints), at most _REFINE_TIMES times:
# 40 points can be ~25 % looser than the default pair where the round's profile bends within their spacing.
_REFINE_WITHIN, _REFINE_TIMES = 1.5, 2
# Largest per-round epsilon / sqrt(k) the k-round search accepts (docs/composition.md §4.1, "Range"): beyond it a
# round's composed delta is flat in the noise (a single-big-jump plateau) and then falls off a cliff, far from the
# Gaussian model the search steps by, and each candidate's certified tail values cost tens of seconds.
ROUNDS_EPS_PER_ROUND_MAX = 5.0
# _tail_top: secant steps aim this factor below the floor (the log-profile of a shuffled round is usually convex
# in its tail, so a secant from the left falls short); at most _TAIL_STEPS of them, each at least _TAIL_MIN_STEP
# x the current eps further, then profile.doubling_epsilon.
_TAIL_AIM, _TAIL_STEPS, _TAIL_MIN_STEP = 0.5, 6, 0.1
# The farthest top (nats): a top there means no point reached the floor.
_TAIL_CAP = 60.0
# model_composition without a target: the points are placed once more if the composed value is off the estimate
# that set the floor (:func:`_composed_estimate`) by more than this factor.
_REDO = 10.0


def _first_below(f: Callable[[float], float], d: float) -> float:
    """The first eps (doubling from 1e-6, then bisection to 1e-3 relative; capped at 60 nats) with
    f(eps) <= d, for a non-increasing model f (no certified value)."""
    hi = 1e-6
    while hi < _TAIL_CAP and not f(hi) <= d:
        hi *= 2.0
    if hi >= _TAIL_CAP:
        return _TAIL_CAP
    lo = 0.5 * hi if hi > 1e-6 else 0.0
    while hi - lo > 1e-3 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if f(mid) <= d else (mid, hi)
    return hi


def _pair_top(bmg: Any, n: int, rounds: int, epsilon: float, delta: float | None = None,
              adjacency: str = "zero_out") -> tuple[float, float]:
    """(floor, e_top) of a candidate's dominating pair in the k-round search (the comment above); with the
    search's target ``delta``, D is the target (the model of the composed delta can be far below the
    certified value, e.g. ~1e-300 at epsilon = 1 for a round with delta(0) ~ 4e-3: its floor then put e_top
    at tens of nats, the pair's step Delta = e_top / 400 far too coarse)."""
    from sharpdp.shuffle.calibration.estimates import template_delta_estimate

    # replace-one: the template at chi_lo / 2, as the single-round calibration's model (the zero-out chi_lo put
    # a replace round's points 0.039 apart over 1.57 nats: 3.25x the default pair's composed value)
    chi = float(bmg.chi_lo) / (2.0 if adjacency == "replace" else 1.0)
    composed = delta if delta is not None else float(template_delta_estimate(chi / math.sqrt(rounds), n, epsilon))
    floor = _FLOOR_SHARE * min(max(composed, 1e-300), 1.0) / rounds
    return floor, _first_below(lambda e: float(template_delta_estimate(chi, n, e)), floor)


def _pair_points(top: float) -> tuple[float, tuple[float, ...]]:
    """(Delta, sample eps): _PAIR_POINTS points spread evenly over [0, ``top``], each rounded to a multiple of the
    lattice step Delta = top / _PAIR_STEPS (consecutive points about _PAIR_STEPS / (_PAIR_POINTS - 1) Delta apart)."""
    dx = min(max(top / _PAIR_STEPS, 1e-12), 1.0)
    ks = sorted({round(i * top / dx / (_PAIR_POINTS - 1)) for i in range(_PAIR_POINTS)})
    return dx, tuple(k * dx for k in ks)


def model_composition(bmg: Any, n: int, adjacency: str, rounds: int, epsilon: float,
                      progress: bool | None = False, delta: float | None = None) -> Any:
    """Certified composition of ``rounds`` runs of a BMG round from a few model-placed profile points.

    The round's dominating pair is built from 40 certified upper values at points spread evenly over [0, e_top]
    (:func:`_pair_points`), e_top placed by the round's template model (docs/composition.md §4.2). A pair
    from certified upper values at any points is a certified dominating pair (docs/composition.md §2,
    Claim A), so the composition is certified; it is a little looser than the default adaptive pair's
    (1-6 % measured) at a fraction of its cost, and sharp near ``epsilon``.

    Parameters
    ----------
    bmg : BlanketMixedGaussian
        The round's randomizer.
    n : int
        Number of users, >= 1.
    adjacency : {"zero_out", "replace"}
        Neighbouring relation.
    rounds : int
        Number of composed rounds k, >= 1.
    epsilon : float
        Composed epsilon (nats, >= 0) the points are placed for.
    progress : bool or None, default False
        The round's privacy-profile bar: None after 1 s, True at once, False never.
    delta : float or None, default None
        The calibration's composed target in (0, 1); it sets the pair's floor (the last point's certified
        value, charged in full as the pair's infinity mass) to 2e-3 delta / k. None: an estimate from the
        round's certified value at epsilon / sqrt(k) sets it (the points placed once more from the composed
        value if that is > 10x off it), and a round whose certified values never reach the floor gets the
        default adaptive pair instead (docs/composition.md §4.2).

    Returns
    -------
    ComposedAccountant
        The certified composition (``get_delta_bounds(epsilon)``: reference lower value, certified upper).

    Raises
    ------
    ValueError
        Bad ``n``, ``rounds``, ``epsilon``, ``delta`` or ``adjacency`` (the message names it).
    TypeError
        ``bmg`` not a :class:`~sharpdp.shuffle.BlanketMixedGaussian`.
    """
    if not isinstance(bmg, BlanketMixedGaussian):
        raise TypeError(f"bmg: expected a BlanketMixedGaussian, got {type(bmg).__name__}")
    n = V.integer("n", n, lo=1)
    rounds = V.integer("rounds", rounds, lo=1)
    epsilon = V.real("epsilon", epsilon, lo=0.0)
    if delta is not None:
        delta = V.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    check_adjacency(adjacency)
    from sharpdp.shuffle.composition import ComposedAccountant

    acc, dx, points = _model_points(bmg, n, adjacency, rounds, epsilon, delta, progress)
    if delta is None and points[-1] < 0.999 * _TAIL_CAP:
        # the estimate of D set the floor; a composed value more than _REDO x off it (the round's profile is far
        # from Gaussian-like scaling: e.g. 2.9x the default pair at k = 4, eps = 2, n = 1275, where the floor's
        # infinity mass dominated) places the points once more, from the floor of that certified value
        guess = _composed_estimate(acc, rounds, epsilon)
        up = float(ComposedAccountant([(acc, rounds)], dx, epsilons=points, cover_upper=False,
                                      progress=progress)._route_upper(epsilon))  # (at epsilon itself: §4.4)
        if 0.0 < up < 1.0 and not guess / _REDO <= up <= _REDO * guess:
            acc, dx, points = _model_points(bmg, n, adjacency, rounds, epsilon, up, progress)
    if delta is None and points[-1] >= 0.999 * _TAIL_CAP:
        # no point reached the floor (the accountant's values level off above it): 40 points over 60 nats would
        # give a coarse lattice and a loose figure (6.9e-6 where the default pair certifies 1.1e-18); the default
        # adaptive pair instead (docs/composition.md §4.2)
        return ComposedAccountant([(make_accountant(bmg, n, adjacency), rounds)], None, progress=progress)
    return ComposedAccountant([(acc, rounds)], dx, epsilons=points, cover_upper=False, progress=progress)


def _model_points(bmg: Any, n: int, adjacency: str, rounds: int, epsilon: float, delta: float | None,
                  progress: bool | None) -> tuple[Any, float, tuple[float, ...]]:
    """(accountant at _PAIR_REL_TOL, Delta, sample eps) of :func:`model_composition` (validated arguments)."""
    acc = make_accountant(bmg, n, adjacency, _PAIR_REL_TOL)
    if delta is None:  # no target: D from the round's certified value, not the template (docs/composition.md §4.2)
        delta = _composed_estimate(acc, rounds, epsilon)
    floor, top = _pair_top(bmg, n, rounds, epsilon, delta, adjacency)
    top = _tail_top(acc, floor, top, progress)
    dx, points = _pair_points(top)
    return acc, dx, points


def _composed_estimate(acc: Any, rounds: int, epsilon: float) -> float:
    """An estimate (no certificate) of the composed delta of ``rounds`` runs of ``acc``'s round at ``epsilon``:
    the round's certified upper value at epsilon / sqrt(rounds) (k mu-GDP rounds compose to one sqrt(k) mu-GDP
    mechanism, so for a Gaussian-like round the two are of the same order; docs/composition.md §4.2), in
    [1e-300, 1]. The template model at chi_lo / sqrt(k) was used before: 1.5e-58 for the README's 3-round
    round (d = 4), whose composed delta is 9.2e-7; its floor was out of the accountant's reach and the pair
    was spread over 60 nats."""
    from sharpdp.shuffle.profile import privacy_profile_bounds

    up = float(privacy_profile_bounds(acc, epsilon / math.sqrt(rounds))[1])
    return min(max(up, 1e-300), 1.0) if up == up else 1.0


def _refined(dx: float, points: tuple[float, ...]) -> tuple[float, tuple[float, ...]]:
    """The points at twice the density: Delta / 2, every point kept (k Delta = 2k (Delta / 2) exactly in
    floating point: the certified values already computed are reused) and the lattice point nearest each
    midpoint added."""
    ks = [round(e / dx) for e in points]
    new = sorted({2 * k for k in ks} | {a + b for a, b in zip(ks, ks[1:])})
    half = 0.5 * dx
    return half, tuple(k * half for k in new)


def _tail_top(acc: Any, floor: float, top: float, progress: bool | None = False) -> float:
    """``top`` if its certified upper value is <= _MODEL_MISS x ``floor``; else (the model missed the round) a
    point with a certified value <= ``floor``, by secant steps on log delta through the certified values at 0 and
    ``top`` first, then the last two points (each step aims _TAIL_AIM x the floor, at least _TAIL_MIN_STEP x eps
    further, capped at 60 nats), profile.doubling_epsilon after _TAIL_STEPS. Only a resolution choice: the
    pair built on [0, top] is certified for any top (docs/composition.md §2, Claim A); a top far past the
    floor costs time (values near delta 1e-13 cost ~1 s each), one short of it a looser composed value.
    ``progress`` False: no bar; else a bar over the secant's values (its budget _TAIL_STEPS), None: after 0.5 s."""
    from sharpdp._progress import progress_bar
    from sharpdp.shuffle.profile import doubling_epsilon, privacy_profile_bounds

    def value(e: float) -> float:  # the certified value at the pair's last point for top e (cached for the pair)
        return float(privacy_profile_bounds(acc, math.nextafter(_pair_points(e)[1][-1], 0.0))[1])

    up = value(top)
    if not (up > _MODEL_MISS * floor and top < _TAIL_CAP):
        return top
    # (the method: this docstring; the bar's description stays short for an 80-column terminal)
    bar = progress_bar(total=_TAIL_STEPS, desc="pair's top (tail secant)", unit=" values", file=sys.stderr, leave=True,
                       disable=progress is False, delay=0.0 if progress else 0.5)  # (tail values: the costly ones)
    try:
        pts = [(0.0, float(privacy_profile_bounds(acc, 0.0)[1])), (top, up)]
        for _ in range(_TAIL_STEPS):
            (e0, u0), (e1, u1) = pts[-2], pts[-1]
            slope = (math.log(u1) - math.log(u0)) / (e1 - e0) if 0.0 < u1 < u0 else 0.0
            nxt = e1 + (math.log(_TAIL_AIM * floor) - math.log(u1)) / slope if slope < 0.0 else 2.0 * e1
            e = min(max(nxt, (1.0 + _TAIL_MIN_STEP) * e1), _TAIL_CAP)
            u = value(e)
            bar.update(1)
            if u <= floor or e >= _TAIL_CAP:
                return e
            pts.append((e, u))
        return doubling_epsilon(acc, min(max(floor, 1e-300), 0.5), start=pts[-1][0])
    finally:
        bar.total = bar.n
        bar.close()


def _composed_bounds(bmg: Any, n: int, adjacency: str, rounds: int, epsilon: float,
                     progress: bool | None = False, delta: float | None = None) -> tuple[float, float]:
    """Certified (reference lower, upper) composed delta of ``rounds`` runs of ``bmg`` (docs/composition.md §4)
    at ``epsilon`` by :func:`model_composition`'s pair (``progress`` and the target ``delta`` as there); a
    value above ``delta`` by at most _REFINE_WITHIN x is decided again on a pair of twice the point density
    (:func:`_refined`), at most _REFINE_TIMES times."""
    from sharpdp.shuffle.composition import ComposedAccountant

    acc, dx, points = _model_points(bmg, n, adjacency, rounds, epsilon, delta, progress)
    for level in range(_REFINE_TIMES + 1):
        ca = ComposedAccountant([(acc, rounds)], dx, epsilons=points, cover_upper=False, progress=progress)
        try:
            lo, up = ca.get_delta_bounds(epsilon)
        except RuntimeError as exc:
            if "FFT length" not in str(exc):
                raise
            # the composed law's spread grows as sqrt(rounds): its grid no longer fits the FFT cap
            raise ValueError(f"rounds: {rounds} rounds are too many to certify: the composed privacy-loss grid "
                             f"exceeds the accountant's FFT size cap ({str(exc).split(';')[0]})") from None
        if delta is None or not delta < up <= _REFINE_WITHIN * delta or level == _REFINE_TIMES:
            break
        dx, points = _refined(dx, points)  # a narrow failure: the decision needs a sharper pair
    return float(lo), float(up)


def _next_s(s: float, up: float, ok: bool, fails: int, seen: list[tuple[float, float]], s_fail: float,
            s_pass: float, gauss: Callable[[float, float], float], target: float) -> float:
    """The search's next s after a certification at s with upper value ``up`` (``ok``: <= delta).

    ``seen``: (s, v) of every certification with 0 < D < 1, v a decreasing function of D that the search
    treats as locally linear in s (the search passes v = -log sigma_eff(D), sigma_eff the Gaussian noise
    whose delta_G(epsilon) is D: the Gaussian model has slope -1 there); ``target`` the v aimed at;
    ``gauss(s, D)`` the Gaussian-shift step. Regula falsi between the nearest failed and passed s once
    both exist (Illinois: an end kept for two steps counts half its distance to the target; D not in
    (0, 1): bisection), else a secant through the two last values (one not decreasing in s: the Gaussian
    shift; after a pass, the larger s of the secant and the Gaussian shift), the Gaussian shift after the
    first; after a failure to the safe side by at least _ROUNDS_STEP
    2^(fails - 1) and at most _ROUNDS_MAX_STEP; always strictly inside (s_fail, s_pass). A search choice,
    no certificate."""
    at = dict(seen)
    if s_fail in at and s_pass in at:  # bracketed: the chord between its ends
        (a, va), (b, vb) = (s_fail, at[s_fail]), (s_pass, at[s_pass])
        if len(seen) >= 2 and (seen[-1][0] <= a) == (seen[-2][0] <= a):  # one end kept twice (Illinois):
            if seen[-1][0] <= a:  # the chord's far end moves half-way to the target in log D
                vb = target + 0.5 * (vb - target)
            else:
                va = target + 0.5 * (va - target)
        nxt = a + (target - va) * (b - a) / (vb - va) if vb < va else 0.5 * (a + b)
        return min(max(nxt, a + 0.1 * (b - a)), b - 0.1 * (b - a))
    if not 0.0 < up < 1.0:  # no slope information: bisection once bracketed, else a growing step
        nxt = 0.5 * (s_fail + s_pass) if math.isfinite(s_fail + s_pass) else s + _ROUNDS_STEP * 2.0 ** fails
    elif len(seen) >= 2 and seen[-1][0] != seen[-2][0] and (seen[-1][1] - seen[-2][1]) / (seen[-1][0] - seen[-2][0]) < 0.0:
        (s1, v1), (s2, v2) = seen[-2], seen[-1]
        nxt = s2 + (target - v2) * (s2 - s1) / (v2 - v1)
        if ok:  # towards more delta, unbracketed: the more cautious of the secant and the Gaussian shift (a
            nxt = max(nxt, gauss(s, up))  # secant from two far points overshoots where D steepens near delta)
    else:
        nxt = gauss(s, up)
    if not ok:  # to the safe side, by at least a small step and at most _ROUNDS_MAX_STEP
        nxt = min(max(nxt, s + _ROUNDS_STEP * 2.0 ** (fails - 1)), s + _ROUNDS_MAX_STEP)
    else:
        nxt = max(nxt, s - _ROUNDS_MAX_STEP)
    if not s_fail < nxt < s_pass:
        nxt = 0.5 * (s_fail + s_pass) if math.isfinite(s_fail + s_pass) else s_pass - _ROUNDS_STEP
    return nxt


def check_rounds_range(epsilon: float, rounds: int) -> None:
    """Refuse a k-round calibration outside its supported range (docs/composition.md §4.1, "Range").

    Parameters
    ----------
    epsilon : float
        Composed epsilon, nats (validated by the caller).
    rounds : int
        Number of rounds k >= 1 (validated by the caller); k = 1 is never refused here.

    Raises
    ------
    ValueError
        epsilon / sqrt(rounds) > ROUNDS_EPS_PER_ROUND_MAX (5 nats) for rounds > 1; the message names
        ``epsilon``, gives the reason and the basic-composition alternative.
    """
    e1 = epsilon / math.sqrt(rounds)
    if rounds > 1 and e1 > ROUNDS_EPS_PER_ROUND_MAX:
        raise ValueError(
            f"epsilon: {epsilon:g} nats over {rounds} rounds is {e1:.3g} nats per round (epsilon / sqrt(rounds)), "
            f"above {ROUNDS_EPS_PER_ROUND_MAX:g}, the most the {rounds}-round calibration supports: there the composed "
            f"delta stays nearly flat as the noise drops, then jumps by orders of magnitude (flights table, epsilon = "
            f"50, 5 rounds: 9e-13 to 1e-5 between two candidates), far from the Gaussian model the search steps by, "
            f"and each candidate costs up to about a minute of certified tail values; calibrate one round at "
            f"(epsilon / {rounds}, delta / {rounds}) instead ({rounds} such releases are (epsilon, delta)-DP by basic "
            f"composition) or use a smaller epsilon")


def calibrate_bmg_rounds(n: int, epsilon: float, delta: float, dim: int, rounds: int, adjacency: str,
                         progress: bool | None, single: Callable[..., CalibrationReport]) -> CalibrationReport:
    """calibrate_bmg_report for rounds > 1 (validated arguments; method: the comment above); ``single`` is
    the single-round calibration (:func:`~sharpdp.shuffle.calibration.bmg.calibrate_bmg_report`)."""
    from sharpdp._progress import progress_label
    from sharpdp.conversions import gaussian_mechanism_delta, gaussian_mechanism_sigma

    half_log_k = 0.5 * math.log(rounds)
    e1 = epsilon / math.sqrt(rounds)
    check_rounds_range(epsilon, rounds)  # refused at once, before minutes of candidates

    def log_sigma_eff(d: float) -> float:  # Gaussian noise whose delta_G(epsilon) is d
        return math.log(gaussian_mechanism_sigma(epsilon, min(max(d, 1e-300), 1.0 - 1e-12)))

    # per-round targets stay above 1e-9 delta and far above the release sampler's floor (near it no sigma0
    # certifies, check_targets: the charge grows with sigma0); a candidate held at this bound is the
    # noisiest of the search (a search choice, not part of any certificate): if it fails, only the fallback
    # below adds noise
    d1_min = max(1e-9 * delta, 1e6 * delta_floor(n, e1, dim))
    # each phase of a candidate (its single-round calibration, its pair's privacy profile) has its own bar
    # (after 1 s; labelled by the candidate), so no wait between two candidates' updates is silent
    inner = None if progress is not False else False

    def candidate(s: float) -> tuple[CalibrationReport, bool]:
        d1 = float(gaussian_mechanism_delta(e1, math.exp(min(s, 600.0))))
        d1 = min(d1, 0.5) if d1 > 1e-300 else 1e-300  # (NaN or underflow: the noisy end)
        return single(n, e1, max(d1, d1_min), dim, adjacency=adjacency, progress=inner), d1 <= d1_min

    def gauss(s: float, d: float) -> float:  # the shifted Gaussian model of a certified d at the steps' aim
        return log_sigma_eff(delta * math.exp(_ROUNDS_STEP_AIM)) + half_log_k - (log_sigma_eff(d) - (s - half_log_k))

    s = log_sigma_eff(delta * math.exp(_ROUNDS_AIM)) + half_log_k  # shift 0: the Gaussian start
    desc = f"calibrating BMG for {rounds} rounds"  # short: an 80-column terminal shows the count and estimate
    if progress:  # the detail, once (docs/composition.md §4.1)
        print(f"{desc}: {_ROUNDS_CERTS} candidates budgeted (more only if none certifies), each certified by one "
              f"{rounds}-round composition; stops at the first certified one within 20 % of the target",
              file=sys.stderr, flush=True)
    bar = Progress(desc, progress, _ROUNDS_CERTS, unit=" candidates")
    bar.update(0)  # shown at once (a plain bar prints on updates only)
    best = None  # (Err_1, randomizer, composed bounds) of the best certified candidate
    s_pass, s_fail = math.inf, -math.inf  # smallest certified s, largest failed s
    seen: list[tuple[float, float]] = []  # (s, -log sigma_eff(D)) of the certifications with 0 < D < 1
    count = evals = fails = 0
    try:
        while count < _ROUNDS_CERTS:  # search on s
            with progress_label(f"candidate {count + 1}: "):
                rep, held = candidate(s)
                bounds = _composed_bounds(rep.randomizer, n, adjacency, rounds, epsilon, inner, delta)
            count, evals = count + 1, evals + rep.evaluations
            ok = bounds[1] <= delta
            if 0.0 < bounds[1] < 1.0:
                seen.append((s, -log_sigma_eff(bounds[1])))
            if ok:
                s_pass = min(s_pass, s)
                if best is None or rep.randomizer.mse_single < best[0]:
                    best = (rep.randomizer.mse_single, rep.randomizer, bounds)
                if bounds[1] >= delta * math.exp(_ROUNDS_CLOSE):
                    break
            else:
                fails, s_fail, last = fails + 1, max(s_fail, s), rep.randomizer
                if held:  # larger s gives this same candidate: more noise comes from the fallback only
                    break
            s = _next_s(s, bounds[1], ok, fails, seen, s_fail, s_pass, gauss,
                        -log_sigma_eff(delta * math.exp(_ROUNDS_STEP_AIM)))
            bar.update(count)
        # fallback (no candidate certified): the last failed BMG with a larger sigma0 at the same
        # gamma (a post-processing of it: more Gaussian noise, a smaller delta), growing steps
        step = _ROUNDS_STEP
        while best is None:
            if count >= _ROUNDS_CERTS + _ROUNDS_FALLBACK:
                raise RuntimeError(f"calibration: no BMG with a certified {rounds}-round delta <= {delta} "
                                   f"found in {count} composed certifications")
            last = BlanketMixedGaussian(last.gamma, last.sigma0 * math.exp(step), dim)
            with progress_label(f"candidate {count + 1} (fallback): "):
                bounds = _composed_bounds(last, n, adjacency, rounds, epsilon, inner, delta)
            count, step = count + 1, min(2.0 * step, _ROUNDS_MAX_STEP)
            if bounds[1] <= delta:
                best = (last.mse_single, last, bounds)
            bar.update(count)
        bar.update(count)
    finally:
        bar.close()
    _, bmg, bounds = best
    return CalibrationReport(bmg, epsilon, delta, bounds, evals, rounds, count)
