"""Certified calibration of the BMG for k composed rounds (``calibrate_bmg(..., rounds=k)``,
docs/calibration.md, docs/composition.md §4)."""

from __future__ import annotations

import math
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
# sigma_1 / sqrt(k) (mu-GDP), so the start is sigma_1 = sqrt(k) sigma_total. Each composed
# certification D (ComposedAccountant.get_delta(epsilon)) gives a shift c = log sigma_eff -
# (s - log sqrt(k)), sigma_eff the Gaussian noise with delta_G(epsilon; sigma_eff) = D; the next s
# puts the shifted Gaussian model at the target (an estimate; only certified candidates are
# returned). Larger s: more noise, smaller D, larger Err_1. If no candidate certifies, the fallback
# raises sigma0 of the last failed one at its gamma (a post-processing, so its true delta only drops).

# Composed certifications of the search; fallback steps (only after failures) at most this many more.
_ROUNDS_CERTS = 4
_ROUNDS_FALLBACK = 6
# Aim a little below the target (the certified value's own accuracy is ~1e-2 relative); stop once
# a certified value is within this factor of the target (the gain in Err_1 left is tiny: at eps = 4, 5 rounds, a
# candidate at 0.81 delta and the next at 0.995 delta differ by 0.4 % in sigma0, and the next cost 10 CPU s).
_ROUNDS_AIM, _ROUNDS_CLOSE = math.log(0.97), math.log(0.8)
# Smallest safe-side step in s (and in log sigma0 in the fallback) after a failure, doubled after
# each further failure up to _ROUNDS_MAX_STEP.
_ROUNDS_STEP, _ROUNDS_MAX_STEP = 0.02, 0.5
# Each candidate's dominating pair (docs/composition.md §4.2): _PAIR_POINTS even lattice points
# k Delta on [0, e_top], Delta = e_top / _PAIR_STEPS, e_top where the template model of the round
# (template_delta_estimate at the BMG's chi_lo) is _FLOOR_SHARE D / rounds, D the model of the
# composed delta (the template at chi_lo / sqrt(rounds), ~ the target in the search): the pair's
# infinity mass, charged in full to the composed delta, is then about that share of it. Only a
# resolution choice: a pair from certified upper values at ANY points is a certified dominating pair
# (docs/composition.md §2, Claim A), at any accountant accuracy: the values come from an accountant of
# rel_tol _PAIR_REL_TOL (a wider bracket, the same certified upper values; its far-tail values cost a
# fraction of those at 1e-2) and are not covered by their bracket gaps (cover_upper=False: that cover
# is no part of the certificate).
_PAIR_POINTS, _PAIR_STEPS, _FLOOR_SHARE, _PAIR_REL_TOL = 40, 400, 2e-3, 0.05
# If the certified value at e_top is above _MODEL_MISS x the floor (the model misses the round), e_top
# moves to the first doubling point from it with a certified value <= the floor (profile.doubling_epsilon),
# and the 40 points are taken again (once).
_MODEL_MISS = 10.0


def _first_below(f: Callable[[float], float], d: float) -> float:
    """The first eps (doubling from 1e-6, then bisection to 1e-3 relative; capped at 60 nats) with
    f(eps) <= d, for a non-increasing model f (no certified value)."""
    hi = 1e-6
    while hi < 60.0 and not f(hi) <= d:
        hi *= 2.0
    if hi >= 60.0:
        return 60.0
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
    """(Delta, sample eps): _PAIR_POINTS even lattice points on [0, ``top``], Delta = top / _PAIR_STEPS."""
    dx = min(max(top / _PAIR_STEPS, 1e-12), 1.0)
    ks = sorted({round(i * top / dx / (_PAIR_POINTS - 1)) for i in range(_PAIR_POINTS)})
    return dx, tuple(k * dx for k in ks)


def model_composition(bmg: Any, n: int, adjacency: str, rounds: int, epsilon: float,
                      progress: bool | None = False, delta: float | None = None) -> Any:
    """Certified composition of ``rounds`` runs of a BMG round from a few model-placed profile points.

    The round's dominating pair is built from 40 certified upper values at even points on [0, e_top]
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
        value, charged in full as the pair's infinity mass) to 2e-3 delta / k. None: the model's composed
        value sets it.

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
    from sharpdp.shuffle.profile import doubling_epsilon

    acc = make_accountant(bmg, n, adjacency, _PAIR_REL_TOL)
    floor, top = _pair_top(bmg, n, rounds, epsilon, delta, adjacency)
    for _ in range(2):
        dx, points = _pair_points(top)
        ca = ComposedAccountant([(acc, rounds)], dx, epsilons=points, cover_upper=False, progress=progress)
        last = float(ca.pairs()[0].sample_deltas[-1])
        if not (last > _MODEL_MISS * floor and top < 60.0):
            break
        # the model placed the top far above the floor (e.g. a heavy-tailed round the template misses): the
        # first doubling point from there with a certified value <= the floor, and the points again
        top = doubling_epsilon(acc, min(max(floor, 1e-300), 0.5), start=top)
    return ca


def _composed_bounds(bmg: Any, n: int, adjacency: str, rounds: int, epsilon: float,
                     progress: bool | None = False, delta: float | None = None) -> tuple[float, float]:
    """Certified (reference lower, upper) composed delta of ``rounds`` runs of ``bmg`` (docs/composition.md §4)
    at ``epsilon`` by :func:`model_composition` (``progress`` and the target ``delta`` as there)."""
    ca = model_composition(bmg, n, adjacency, rounds, epsilon, progress, delta)
    try:
        lo, up = ca.get_delta_bounds(epsilon)
    except RuntimeError as exc:
        if "FFT length" not in str(exc):
            raise
        # the composed law's spread grows as sqrt(rounds): its grid no longer fits the FFT cap
        raise ValueError(f"rounds: {rounds} rounds are too many to certify: the composed privacy-loss grid "
                         f"exceeds the accountant's FFT size cap ({str(exc).split(';')[0]})") from None
    return float(lo), float(up)


def calibrate_bmg_rounds(n: int, epsilon: float, delta: float, dim: int, rounds: int, adjacency: str,
                         progress: bool | None, single: Callable[..., CalibrationReport]) -> CalibrationReport:
    """calibrate_bmg_report for rounds > 1 (validated arguments; method: the comment above); ``single`` is
    the single-round calibration (:func:`~sharpdp.shuffle.calibration.bmg.calibrate_bmg_report`)."""
    from sharpdp.conversions import gaussian_mechanism_delta, gaussian_mechanism_sigma

    half_log_k = 0.5 * math.log(rounds)
    e1 = epsilon / math.sqrt(rounds)

    def log_sigma_eff(d: float) -> float:  # Gaussian noise whose delta_G(epsilon) is d
        return math.log(gaussian_mechanism_sigma(epsilon, min(max(d, 1e-300), 1.0 - 1e-12)))

    # per-round targets stay above 1e-9 delta and far above the release sampler's floor (near it no sigma0
    # certifies, check_targets: the charge grows with sigma0); a candidate held at this bound is the
    # noisiest of the search (a search choice, not part of any certificate): if it fails, only the fallback
    # below adds noise
    d1_min = max(1e-9 * delta, 1e6 * delta_floor(n, e1, dim))

    def candidate(s: float) -> tuple[CalibrationReport, bool]:
        d1 = float(gaussian_mechanism_delta(e1, math.exp(min(s, 600.0))))
        d1 = min(d1, 0.5) if d1 > 1e-300 else 1e-300  # (NaN or underflow: the noisy end)
        return single(n, e1, max(d1, d1_min), dim, adjacency=adjacency, progress=False), d1 <= d1_min

    aim = log_sigma_eff(delta * math.exp(_ROUNDS_AIM))
    s = aim + half_log_k  # shift 0: the Gaussian start
    bar = Progress(f"calibrating BMG for {rounds} rounds ({_ROUNDS_CERTS} candidates budgeted, more only if none "
                   f"certifies; stops at the first certified one within 20 % of the target)", progress,
                   _ROUNDS_CERTS, unit=" candidates")
    bar.update(0)  # shown at once (a plain bar prints on updates only)
    # each candidate's composed certification builds a privacy profile (its explicit points: seconds): its
    # own bar (exact total; after 1 s) keeps the wait visible between two candidates
    inner = None if progress is not False else False
    best = None  # (Err_1, randomizer, composed bounds) of the best certified candidate
    s_pass, s_fail = math.inf, -math.inf  # smallest certified s, largest failed s
    count = evals = fails = 0
    try:
        while count < _ROUNDS_CERTS:  # search on s
            rep, held = candidate(s)
            bounds = _composed_bounds(rep.randomizer, n, adjacency, rounds, epsilon, inner, delta)
            count, evals = count + 1, evals + rep.evaluations
            ok = bounds[1] <= delta
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
            # next s: the shifted Gaussian model at the aim, kept strictly inside (s_fail, s_pass)
            if 0.0 < bounds[1] < 1.0:
                nxt = aim + half_log_k - (log_sigma_eff(bounds[1]) - (s - half_log_k))
            else:
                nxt = s + _ROUNDS_STEP * 2.0 ** fails
            if not ok:  # to the safe side, by at least a small step and at most _ROUNDS_MAX_STEP
                nxt = min(max(nxt, s + _ROUNDS_STEP * 2.0 ** (fails - 1)), s + _ROUNDS_MAX_STEP)
            if not s_fail < nxt < s_pass:
                nxt = 0.5 * (s_fail + s_pass) if math.isfinite(s_fail + s_pass) else s_pass - _ROUNDS_STEP
            s = nxt
            bar.update(count)
        # fallback (no candidate certified): the last failed BMG with a larger sigma0 at the same
        # gamma (a post-processing of it: more Gaussian noise, a smaller delta), growing steps
        step = _ROUNDS_STEP
        while best is None:
            if count >= _ROUNDS_CERTS + _ROUNDS_FALLBACK:
                raise RuntimeError(f"calibration: no BMG with a certified {rounds}-round delta <= {delta} "
                                   f"found in {count} composed certifications")
            last = BlanketMixedGaussian(last.gamma, last.sigma0 * math.exp(step), dim)
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
