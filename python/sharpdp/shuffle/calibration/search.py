"""The certified calibration search: few accountant evaluations on a model of log delta, a point
returned only when its certified upper value meets the target (docs/calibration.md)."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from sharpdp._progress import progress_bar
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.limits import TINY, VALUE_FLOOR
from sharpdp.shuffle.calibration.checks import check_progress, check_targets, delta_floor  # noqa: F401  (re-exported)
from sharpdp.shuffle.calibration.few_evals import first_rho, loose_rel
from sharpdp.shuffle.calibration.start import T_BOX, X_BOX, expit, model_root, model_start  # noqa: F401  (re-exported)

# ----------------------------------------------------------------------------------------------
# Certified calibration with few accountant evaluations.
#
# (docs/calibration.md.) The search runs on an *estimate* of log delta: the log-midpoint of the
# accountant's certified bracket [Lo, Up], modelled as a base (the log of the asymptotic template
# at chi_lo plus, where it applies, the single-big-jump estimate big_jump_estimate; or the
# template alone, whichever the first evaluation is nearer) plus a local quadratic correction
# fitted to the evaluations. A point is returned only if the certified upper value of an
# evaluation at rel_tol CERT_REL_TOL (CAL_CERT_REL_TOL_LOOSE, loose search: calibration.md §12) is <= delta; after a
# failure the search steps to the safe side (larger sigma0 at the same gamma). The models are
# never used as a bound.

# Search accuracy: CERT_REL_TOL (each a candidate); 0.1 at n >= 1e7, eps <= 0.01 (calibration.md §6; §13 at n >= 1e8)
_SEARCH_REL_TOL, _SEARCH_REL_TOL_LARGE, _LOOSE_N, _LOOSE_EPS = 0.01, 0.1, 10**7, 0.01
# Accuracy of the certifying evaluations (the accountant's default).
CERT_REL_TOL = 1e-2
# Evaluation budget (search + certification); only a failing certification exceeds it, by <= _FALLBACK_EVALS.
_MAX_EVALS = 10
_FALLBACK_EVALS = 30
# A further certified step is taken only if the model predicts a relative gain above this.
_GAIN_RTOL = 1e-4
# ... at n >= _LOOSE_N (a certifying evaluation 0.5-2 s) once a point is certified: the tolerance the optimality tests
# hold the search to (docs/calibration.md §3.1, §7)
GAIN_RTOL_LARGE = 1e-3
# Search box: log sigma0 and logit(gamma) (calibration.start: X_BOX, T_BOX).
# Model fit and step tuning (see Search).
_W_X, _P_XX, _OVERSHOOT, _MU_STEP, _MU0 = 0.02, 0.03, 1.5, 5e-4, 1e-4
# Trust region of a certification step in x (log sigma0): at most _X_TRUST, and at most a step the steepest observed
# slope of log delta in x turns into a change of _V_TRUST in log delta (where delta falls steeply, at large n and large
# epsilon, a step of 0.25 in x is a factor e^7 in delta); that bound grows after accurate steps (Search.grow).
_X_TRUST, _V_TRUST = 0.25, 1.5
# The base is dropped from the model (which is then purely local) when the chosen one misses the first evaluation by
# more than this in log delta (the Gaussian-limit template alone can be off by a factor e^100 where the single big jump
# carries delta, and its slopes in x and gamma are then wrong too).
_TEMPLATE_OFF = 3.0
# Stage 2 (the probes in gamma) is skipped when the big jump dominates the base and the base is this close (in log
# delta) to the evaluation where stage 1 ended: the model's optimum in gamma is then the start's.
MODEL_OK = 0.02
STAGE1_TOL = 0.03  # stage 1 stops within this of the target (log delta of the cheap estimate)
# ... and, on loose evaluations (n >= 1e7, eps <= 0.01), once two of them bracket the target within this of it on
# either side: stage 3's first certifying evaluation interpolates them (docs/calibration.md §8)
STAGE1_BRACKET = 0.15
# The decision step (docs/accountant.md §6.9): at 2 <= n <= DECIDE_N_MAX each evaluation first takes the
# accountant's closed-form bracket (closed_form_bounds, milliseconds); it is the evaluation's certified value
# when its relative width (Up - Lo)/Lo is at most DECIDE_WIDTH or it already decides the target (Up <= delta:
# certified; Lo > delta: refuted). A point whose narrow closed-form bracket straddles delta counts as a
# failed certification (the search steps to the safe side) instead of paying the lattice / far-tail
# evaluation; the answer's sigma0 is then at most the bracket's width (in delta) above the refined one.
DECIDE_N_MAX = 500
DECIDE_WIDTH = 0.5
# The learned gain (docs/accountant.md §6.10): once a full evaluation of the search has improved the closed-form upper
# value by less than GAIN_SMALL (Up_closed / Up_full), a point whose closed-form upper value exceeds delta by more than
# GAIN_MARGIN times the largest gain seen is not expected to certify by a full evaluation either: it counts as a failed
# certification on its closed-form bracket (the search steps to the safe side), as a narrow straddling bracket does.
GAIN_SMALL = 2.0
GAIN_MARGIN = 1.5
# Stage 2 probes at logit(gamma) +- PROBE_DT; stage 3 moves logit(gamma) by at most T_RADIUS.
PROBE_DT, T_RADIUS = 0.25, 1.0


def make_accountant(randomizer: Any, n: int, adjacency: str, rel_tol: float = CERT_REL_TOL) -> Any:
    """The certified accountant used by the calibrations (a seam for tests)."""
    from sharpdp.shuffle.accountant import ShuffleAccountant

    return ShuffleAccountant(randomizer, n, adjacency=adjacency, rel_tol=rel_tol)


@dataclass(frozen=True)
class CalibrationReport:
    """Outcome of a certified calibration.

    Attributes
    ----------
    randomizer : BlanketMixedGaussian or GaussianRandomizer
        The calibrated local randomizer.
    epsilon, delta_target : float
        The target (epsilon in nats, delta in (0, 1)).
    delta_bounds : tuple of float
        Certified ``(lower, upper)`` bracket of the shuffled blanket divergence at
        ``epsilon`` from ``ShuffleAccountant(randomizer, n, adjacency, rel_tol=rel_tol)`` (1e-2; 0.02 on the loose search)
        (``get_delta_bounds``), or at 2 <= n <= 500 possibly its ``closed_form_bounds(epsilon)`` (a
        certified bracket from closed forms, docs/accountant.md §6.9): see ``certificate``;
        ``upper <= delta_target``.
    evaluations : int
        Accountant evaluations (``get_delta_bounds`` calls; not counting ``closed_form_bounds``) the
        calibration made (for
        ``rounds > 1``: those of the single-round calibrations of its candidates).
    rounds : int, default 1
        Number k of composed rounds the guarantee is for. For ``rounds > 1``, ``delta_bounds``
        is the k-fold composition of the round's 40-value model pair (docs/composition.md §4.2; a
        full-accuracy ``ComposedAccountant`` is a few % lower): ``upper`` certified (``<= delta_target``),
        ``lower`` a reference value (not a lower bound on the mechanism's delta).
    composed_certifications : int, default 0
        One per candidate, plus one per narrow failure re-decided on 80 or 160 points (0 if ``rounds == 1``).
    certificate : str, default "get_delta_bounds"
        The ``ShuffleAccountant`` method that gave ``delta_bounds`` (single round):
        ``"get_delta_bounds"`` or ``"closed_form_bounds"``.
    decisions : int, default 0
        Candidates decided by ``closed_form_bounds`` alone (docs/accountant.md §6.9; single round).
    rel_tol : float, default 1e-2
        The accountant's rel_tol behind ``delta_bounds`` (single round): 1e-2, ``CAL_CERT_REL_TOL_LOOSE`` (0.02) at n >= 1e7,
        eps <= 0.01, or 0.1 (CAL43_CHEAP_CERT; docs/calibration.md §12, §15); a fresh accountant at it reproduces it.
    """

    randomizer: Any  # BlanketMixedGaussian or GaussianRandomizer
    epsilon: float
    delta_target: float
    delta_bounds: tuple
    evaluations: int
    rounds: int = 1
    composed_certifications: int = 0
    certificate: str = "get_delta_bounds"
    decisions: int = 0
    rel_tol: float = CERT_REL_TOL


class Progress:
    """One progress bar over accountant evaluations (:func:`sharpdp._progress.progress_bar`: tqdm
    when installed, else plain lines). Its total is the budget (at most that many evaluations are
    made unless every certification fails; only then does it grow, one at a time), and it ends at
    100 % (the total is set to the evaluations made when the calibration finishes). ``progress``:
    None shows it only once the calibration has run for one second, True at once, False never.
    """

    def __init__(self, desc: str, progress: bool | None, budget: int, unit: str = " accountant evaluations") -> None:
        self.bar = progress_bar(desc=desc, total=budget, unit=unit, file=sys.stderr,
                                leave=False, disable=progress is False, delay=0.0 if progress else 1.0, budget=True)

    def update(self, done: int) -> None:
        """``done`` evaluations made (the total grows past the budget only in a fallback)."""
        if done > self.bar.total:
            self.bar.total = done + 1
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        self.bar.total = self.bar.n  # finished: nothing more to come (the bar shows 100 %)
        shown = not getattr(self.bar, "disable", True) and time.time() - getattr(self.bar, "start_t", math.inf) \
            >= getattr(self.bar, "delay", 0.0)
        if shown and hasattr(self.bar, "refresh"):  # tqdm: redraw at 100 % (a delayed bar not yet shown stays so)
            self.bar.refresh()
        self.bar.close()


def jensen_start(n: int, epsilon: float) -> bool:
    """Whether the calibration's start aims on the big jump with its Jensen correction (docs/calibration.md §10): at
    n >= 1e7 where the search's evaluations certify (eps > 0.01), so that the start, one certifying evaluation of
    0.05-0.5 s, certifies at once. A choice of points only: a point is returned only on its certified upper value."""
    return n >= _LOOSE_N and epsilon > _LOOSE_EPS


def _log_estimate(lo: float, up: float) -> float:
    """Cheap estimate of log D from a certified bracket: the log-midpoint (log Up if Lo = 0; log TINY if Up = 0)."""
    if not up >= 0.0 or up == math.inf:
        return math.inf
    if up == 0.0:
        return math.log(TINY) if limits.CAL_ZERO_AS_TINY else -math.inf  # (docs/calibration.md §13.3)
    return 0.5 * (math.log(lo) + math.log(up)) if lo > 0.0 else math.log(up)


class Search:
    """Certified boundary search in (x, t) with a fitted template model (see the comment above).

    x is the scale coordinate (log sigma0; the certified delta decreases in it: a larger sigma0
    is a post-processing), t the shape coordinate (logit gamma; None for one-dimensional
    searches). The model of the estimate v = log delta is ``base(x, t) + c0 + cx dx + ct dt +
    ctt dt^2 + cxx dx^2 (+ cf at full accuracy)``, dx = x - xc, dt = t - tc, fitted by weighted
    least squares to the evaluations near the centre (xc, tc); ``base`` is the one of ``bases``
    (log estimates of delta) nearest the first evaluation, or 0 if all miss it by more than
    _TEMPLATE_OFF.
    """

    def __init__(self, make: Callable[..., Any], bases: tuple[Callable[..., float], ...],
                 objective: Callable[..., float], n: int, epsilon: float, delta: float,
                 adjacency: str, progress: bool | None, desc: str,
                 t_box: tuple[float, float] | None = None) -> None:
        self.make, self.objective = make, objective
        # the base in use: the first of ``bases`` until the first evaluation picks the one nearest it
        self.bases, self.template = bases, bases[0]
        self.use_template = True  # False once the first evaluation shows every base is far off
        self.n, self.epsilon, self.delta, self.adjacency = n, epsilon, delta, adjacency
        self.t_box = t_box
        self.pts: list[tuple[float, float | None, float, bool, float, float]] = []  # (x, t, v, fine, lo, up)
        self.count = 0
        # (objective, x, t, lo, up) of the best certified point
        self.best: tuple[float, float, float | None, float, float] | None = None
        self.source: dict[tuple[float, float | None], str] = {}  # the accountant method behind each point
        self.full = 0  # of self.count: get_delta_bounds evaluations (the others: closed_form_bounds decisions)
        self.gain = 0.0  # largest Up_closed / Up_full seen (0: no full evaluation with a closed form yet)
        self.grow = 1.0  # the trust region's growth after accurate steps to its edge (docs/calibration.md §13.2)
        self.bar = Progress(desc, progress, _MAX_EVALS)
        self.loose = n >= _LOOSE_N and epsilon <= _LOOSE_EPS  # (the loose search: docs/calibration.md §6, §12)
        self.search_rel = ((loose_rel(n, limits.CAL_LOOSE_REL_TOL, t_box is None) if n >= limits.CAL_LOOSE_REL_TOL_N
                            else _SEARCH_REL_TOL_LARGE) if self.loose else _SEARCH_REL_TOL)  # (§13.1, §21.3)
        self.gain_rtol = GAIN_RTOL_LARGE if n >= _LOOSE_N else _GAIN_RTOL  # (stage 3's stop: docs/calibration.md §7)
        self.cert_rel = limits.CAL_CERT_REL_TOL_LOOSE if self.loose else CERT_REL_TOL  # (certifying evaluations)
        self.safe_slope: Callable[[float], float | None] | None = None  # (docs/calibration.md §20: set by the caller)

    def base(self, x: float, t: float | None) -> float:
        """The model's base: the log template while it is usable, else 0 (a purely local model)."""
        return self.template(x, t) if self.use_template else 0.0

    def _pick_base(self, x: float, t: float | None, v: float) -> Callable[..., float]:
        """The base nearest the evaluation v at (x, t); the first base (with the big jump) only if it
        also exceeds the last (the template alone) by log 2 there, i.e. the jump term dominates."""
        best = min(self.bases, key=lambda b: abs(v - b(x, t)))
        first, last = self.bases[0], self.bases[-1]
        if best is first and first is not last and first(x, t) - last(x, t) < math.log(2.0):
            return last
        return best

    # -- evaluations
    def evaluate(self, x: float, t: float | None, fine: bool) -> float:
        """log-estimate at (x, t) (``fine``: at the certifying accuracy); a point already evaluated at
        that accuracy is not evaluated again."""
        for p in self.pts:
            if p[0] == x and p[1] == t and (p[3] == fine or self.search_rel == CERT_REL_TOL):
                return p[2]
        skip = self.delta * GAIN_MARGIN * self.gain if 0.0 < self.gain < GAIN_SMALL else math.inf
        lo, up, src, up_closed = closed_then_full(self.make(x, t), self.n, self.adjacency, self.epsilon,
                                                  self.delta, self.cert_rel if fine else self.search_rel, skip)
        if src == "get_delta_bounds" and math.isfinite(up_closed) and up > 0.0:
            self.gain = max(self.gain, up_closed / up)
        self.source[(x, t)] = src
        self.count += 1
        self.full += src == "get_delta_bounds"
        self.bar.update(self.count)
        v = _log_estimate(lo, up)
        if not self.pts and math.isfinite(v):  # the first evaluation picks the base (see _pick_base)
            self.template = self._pick_base(x, t, v)
            self.use_template = abs(v - self.template(x, t)) <= _TEMPLATE_OFF
        self.pts.append((x, t, v, fine, lo, up))
        if (fine or self.search_rel == CERT_REL_TOL) and up <= self.delta:
            f = self.objective(x, t)
            if self.best is None or f < self.best[0]:
                self.best = (f, x, t, lo, up)
        return v

    # -- model
    def fit(self, xc: float, tc: float | None) -> tuple[float, ...]:
        """Weighted least-squares coefficients (c0, cx, ct, ctt, cxx, cf) of the correction at (xc, tc).

        cf is the offset of the full-accuracy estimates from the cheap ones.

        Weights fall off over 0.05 in x and 1.5 in t; full-accuracy points count three times,
        a point at the centre a hundred times (the model goes through it); weak priors keep the
        slopes and curvatures at the template's own where the points do not determine them.
        """
        rows, rhs = [], []
        for x, t, v, fine, *_ in self.pts:
            if not math.isfinite(v):
                continue
            dx, dt = x - xc, (0.0 if tc is None or t is None else t - tc)
            w = (3.0 if fine else 1.0) / (1.0 + (dx / _W_X) ** 2 + (dt / 1.5) ** 2)
            if dx == 0.0 and dt == 0.0:
                w *= 100.0
            rows.append([w, w * dx, w * dt, w * dt * dt, w * dx * dx, w * fine])
            rhs.append(w * (v - self.base(x, t)))
        if not rows:
            return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        prior = np.diag([0.0, 0.003, 0.03, 0.03, _P_XX, 0.03])[1:]
        c, *_ = np.linalg.lstsq(np.vstack([np.array(rows), prior]), np.concatenate([rhs, np.zeros(5)]), rcond=None)
        return tuple(float(v) for v in c)

    def model(self, x: float, t: float | None, coef: tuple[float, ...], xc: float, tc: float | None,
              fine: bool = False) -> float:
        """Modelled estimate at (x, t); ``fine``: at full accuracy (plus the fitted offset between the two)."""
        dx, dt = x - xc, (0.0 if tc is None or t is None else t - tc)
        return (self.base(x, t) + coef[0] + coef[1] * dx + coef[2] * dt + coef[3] * dt * dt + coef[4] * dx * dx
                + (coef[5] if fine else 0.0))

    def slope(self, x: float, t: float | None, coef: tuple[float, ...]) -> float:
        """d model / dx at (x, t), clipped below zero (the certified delta decreases in x)."""
        h = 1e-4
        return min((self.base(x + h, t) - self.base(x - h, t)) / (2 * h) + coef[1], -0.05)

    def trust(self, xc: float, tc: float | None, coef: tuple[float, ...]) -> float:
        """Half-width in x of the trust region at (xc, tc) (see _V_TRUST): the steeper of the model's
        slope and the secant through the two evaluations at tc nearest xc."""
        steep = abs(self.slope(xc, tc, coef))
        line = sorted((p for p in self.pts if p[1] == tc and math.isfinite(p[2])), key=lambda p: abs(p[0] - xc))
        if len(line) >= 2 and line[0][0] != line[1][0]:
            steep = max(steep, -(line[1][2] - line[0][2]) / (line[1][0] - line[0][0]))
        return min(_X_TRUST, self.grow * _V_TRUST / steep)

    def root(self, target: float, t: float | None, coef: tuple[float, ...], xc: float, tc: float | None,
             fine: bool = False) -> float:
        """x nearest to xc where the model meets target at this t (clipped to xc +- 4).

        Steps out from xc in both directions with doubling steps (the model is only locally
        monotone) until the sign changes, then Brent's method on that cell.
        """
        f = lambda x: self.model(x, t, coef, xc, tc, fine) - target  # noqa: E731
        f0 = f(xc)
        if f0 == 0.0:
            return xc
        d = 1e-3 if f0 > 0.0 else -1e-3  # above the target: the root lies at larger x
        a = xc
        while abs(d) <= 4.0:
            b = min(max(xc + d, X_BOX[0]), X_BOX[1])
            fb = f(b)
            if (fb > 0.0) != (f0 > 0.0):
                return brentq(f, min(a, b), max(a, b), xtol=1e-10)
            if b in X_BOX:
                return b
            a, d = b, 2.0 * d
        return min(max(xc + (4.0 if f0 > 0.0 else -4.0), X_BOX[0]), X_BOX[1])

    # -- stage 1: the boundary along x at fixed t, on the cheap estimate
    def bracket(self, x0: float, t: float | None, target: float, tol: float, max_evals: int) -> float:
        """Point of stage 1 closest to the target: the template model's first step, then secant
        steps (overshooting by 1.5 or doubling while unbracketed; Illinois-like and kept inside
        the bracket once bracketed), to within ``tol`` of the target or ``max_evals`` evaluations."""
        lo = hi = None  # (x, v): estimate above / at or below the target
        x, last = x0, None  # last: (step, value before it)
        side = prev_side = None  # infeasible (True) / feasible (False) estimate at the last two points
        for k in range(max_evals):
            v = self.evaluate(x, t, False)
            if v > target:
                lo = (x, v)
            else:
                hi = (x, v)
            if abs(v - target) <= tol or (lo and hi and hi[0] - lo[0] <= 1e-3):
                break
            if self.search_rel != CERT_REL_TOL and lo and hi and max(lo[1] - target, target - hi[1]) <= STAGE1_BRACKET:
                break  # (loose points bracketing the target closely: stage 3 interpolates them, docs/calibration.md §8)
            if hi is not None and hi[0] <= X_BOX[0] and v <= target:
                break  # feasible at the smallest scale searched
            mine = [p for p in self.pts[-k - 1:] if math.isfinite(p[2])]
            if len(mine) >= 2 and mine[-1][0] != mine[-2][0]:  # secant through the last two points
                (x1, _, v1, *_), (x2, _, v2, *_) = mine[-2], mine[-1]
                xn = x2 + (target - v2) / min((v2 - v1) / (x2 - x1), -0.05)
            else:  # the template model through the first point
                xn = self.root(target, t, self.fit(x, t), x, t)
                if not self.use_template:  # a local model knows no slope yet: a bounded first step
                    xn = min(max(xn, x - _X_TRUST), x + _X_TRUST)
            side, prev_side = (v > target), side
            if lo is not None and hi is not None:
                if prev_side == side:  # same side twice: aim past the root (Illinois-like)
                    xn = x + 2.0 * (xn - x)
                xn = min(max(xn, lo[0] + 0.1 * (hi[0] - lo[0])), hi[0] - 0.1 * (hi[0] - lo[0]))
            else:  # extend past the predicted root; double the step once a step has fallen short
                step = (1.2 if last is None else _OVERSHOOT) * (xn - x)
                if last is not None and abs(v - target) > 0.75 * abs(last[1] - target) and (step > 0) == (last[0] > 0):
                    step = max(step, 2.0 * last[0]) if step > 0 else min(step, 2.0 * last[0])
                if step == 0.0:
                    step = 0.05 if v > target else -0.05
                xn = min(max(x + step, X_BOX[0]), X_BOX[1])
                if xn == x:
                    if v > target:
                        ups = [p[5] for p in self.pts if p[5] is not None]
                        raise RuntimeError(
                            f"calibration: no feasible randomizer found for delta = {self.delta!r}: the certified "
                            f"delta did not drop below it at sigma0 = {math.exp(x):.3g} (the search's limit); the "
                            f"smallest certified upper value was {min(ups, default=math.nan)!r} (it includes the "
                            f"release sampler's charge (1 + e^epsilon) n sampler_tv, which grows with sigma0, "
                            f"docs/sampling.md §4)")
                    break
                last = (step, v)
            x = xn
        near = min(self.pts, key=lambda p: abs(p[2] - target))
        return near[0]

    # -- stage 3: certify (and improve) on full-accuracy evaluations
    def certify(self, x: float, t: float | None, t_radius: float = 1.0) -> None:
        """Evaluate the model's optimum at full accuracy until one is certified and no gain is left.

        The model is refitted after each evaluation (it learns the offset between cheap and full-accuracy values).
        While nothing is certified, a failed certification is followed by a fallback step out along x (the safe side)
        at the failed point's t, by at least 1.5 times the linearised excess and 0.002 * 2^(k-1) after k failures, with
        a margin that grows. Every proposal is then kept inside the bracket the evaluations on its line already give
        (:meth:`_safeguard`): never past the smallest x whose certified upper value (cheap or full accuracy) is <= delta
        — that point itself is certified when the model aims beyond it —, regula falsi between the certified-bad and
        the known-good point after a failure, and with no known-good point at most _X_TRUST past the last failure.
        """
        ld = math.log(self.delta)
        rho = first_rho(self, CERT_REL_TOL)  # expected log(Up / midpoint) at full accuracy (docs/calibration.md §21.1)
        mu = min(_MU0 * abs(self.slope(x, t, self.fit(x, t))), 10.0 * _MU0)  # margin: <= _MU0 in x
        fails, last_fail, repair, tried = 0, None, False, False
        xc, tc = x, t
        f_start = self.objective(x, t)
        while True:
            if self.best is not None:
                if self.best[0] <= f_start:  # (a certified point worse than the start: e.g. a discarded start)
                    xc, tc = self.best[1], self.best[2]
                if self.count >= _MAX_EVALS:
                    return
            coef = self.fit(xc, tc)
            if repair:
                # fallback after a failed certification: out along x at the failed point's t,
                # by at least the linearised excess (margins included) and 4e-4 * 2^(k-1) after k failures
                ts = last_fail[1]
                xt = max(self.trust(last_fail[0], ts, coef), 2.0 * _MU0 * 2.0 ** (fails + 1))
                step = min(max(last_fail[2] * xt / _V_TRUST, _MU0 * 2.0 ** (fails + 1)), xt)
                xs = min(max(self.root(ld - rho - mu, ts, coef, xc, tc, True), last_fail[0] + step),
                         last_fail[0] + xt, X_BOX[1])
                # kept inside what the evaluations on this line already show (see _safeguard)
                xs = self._safeguard(xs, ts, ld - rho - mu, True, xc)
                repair = self.best is None or self.objective(xs, ts) < self.best[0] * (1.0 - _GAIN_RTOL)
            if not repair:
                xs, ts = self._argmin(ld - rho - mu, coef, xc, tc, t_radius)
                xs = self._safeguard(xs, ts, ld - rho - mu, False, xc)
                if (tried and self.best is not None
                        and self.objective(xs, ts) >= self.best[0] * (1.0 - self.gain_rtol)):
                    return  # (after one evaluation here at least: it learns the bracket's width rho)
            if self.count >= _MAX_EVALS + _FALLBACK_EVALS or (last_fail is not None and last_fail[0] >= X_BOX[1]):
                why = (f"below {VALUE_FLOOR:g} the accountant certifies loose caps, docs/accountant.md §6.3"
                       if self.delta < VALUE_FLOOR else "the release sampler's charge grows with sigma0")
                raise RuntimeError(f"calibration: re-check failed, no certified delta <= {self.delta} found: the "
                                   f"smallest certified upper value of {self.count} evaluations was "
                                   f"{min(p[5] for p in self.pts):.4g} ({why}; docs/calibration.md §5)")
            if not tried and not repair and self.search_rel != CERT_REL_TOL:
                xs, ts = self._loose_good(xs, ts)
                xs = self._safe_first(xs, ts, xc, coef)
            pred, edge = self.model(xs, ts, coef, xc, tc, True), abs(xs - xc) >= 0.99 * self.trust(xc, tc, coef)
            self.evaluate(xs, ts, True)
            tried = True
            *_, v, _, lo, up = next(p for p in reversed(self.pts) if p[0] == xs and p[1] == ts)
            if limits.CAL_TRUST_GROW and edge and up <= self.delta and abs(v - pred) <= 0.1:
                self.grow = min(2.0 * self.grow, 8.0)
            if up > 0.0 and math.isfinite(v):
                rho = max(math.log(up) - v, 0.0)
            repair = not up <= self.delta
            if repair:
                excess = math.log(up) - ld + rho + mu if 0.0 < up < math.inf else 1.0
                fails, last_fail = fails + 1, (xs, ts, excess)
                mu = mu + _MU_STEP  # (the refit already knows the failed point)

    def _safe_first(self, xs: float, ts: float | None, xc: float, coef: tuple[float, ...]) -> float:
        """Stage 3's first certifying x after a single evaluation (loose, one-dimensional search) with
        ``limits.CAL48_SAFE_STEP`` (docs/calibration.md §20): the model's step from that point lengthened where it goes
        up in x (shortened where it goes down: both towards larger sigma0, the safe side) by the factor
        1 + K max(s_model / s_safe - 1, 0), s_model the model's slope of log delta in x there, s_safe =
        ``self.safe_slope`` (a slope model of the caller, e.g. the accountant's shape model) and K =
        ``limits.CAL48_SAFE_STEP_K`` (the step is the model's where the two slopes agree); at most
        the trust region from it. Else (or where ``safe_slope`` gives no negative finite slope) ``xs``. A choice of
        points only: the point is certified by its own evaluation."""
        if not (limits.CAL48_SAFE_STEP and ts is None and len(self.pts) == 1 and not self.pts[0][3]
                and self.safe_slope is not None):
            return xs
        k = float(limits.CAL48_SAFE_STEP_K)
        if not (math.isfinite(k) and k >= 1.0):
            raise ValueError(f"limits.CAL48_SAFE_STEP_K must be a finite number >= 1, got {k!r}")
        x1 = self.pts[0][0]
        s_safe = self.safe_slope(x1)
        if not (s_safe is not None and math.isfinite(s_safe) and s_safe < 0.0):
            return xs
        factor = 1.0 + k * max(self.slope(x1, ts, coef) / s_safe - 1.0, 0.0)  # (both slopes negative)
        step = xs - x1
        return min(x1 + step * (factor if step > 0.0 else 1.0 / factor), x1 + self.trust(x1, ts, coef))

    def _loose_good(self, xs: float, ts: float | None) -> tuple[float, float | None]:
        """Stage 3's first certifying point on loose search evaluations (docs/calibration.md §8): the loose point of
        least objective whose certified upper value is already <= delta, where the proposal (xs, ts) would gain less
        than ``gain_rtol`` (relative) on it; else the proposal. A choice of points only: the point is certified by its
        own evaluation at CERT_REL_TOL."""
        good = [(self.objective(p[0], p[1]), p[0], p[1]) for p in self.pts if not p[3] and 0.0 <= p[5] <= self.delta]
        if good:
            f, x, t = min(good, key=lambda g: g[0])
            if self.objective(xs, ts) >= f * (1.0 - self.gain_rtol):
                return x, t
        return xs, ts

    def _safeguard(self, xs: float, ts: float | None, aim: float, repair: bool, xc: float) -> float:
        """The proposed x at shape ts, kept inside the bracket the evaluations at ts already give.

        On the line t = ts: ``bad`` is the largest x certified above the target (a full-accuracy
        upper value above delta, or any certified lower value above delta), ``good`` the smallest x
        with a certified upper value <= delta at either accuracy (a cheap one is then certified at
        full accuracy when chosen). A proposal outside (bad, good) — the model can put its root far
        beyond where the evaluations already show the boundary — and every step after a failed
        certification is replaced by the chord of log(upper value) between the nearest point above
        ``aim`` and ``good`` (regula falsi; kept at least a tenth of the bracket from its ends and at
        most ``good``). With no ``good`` point yet, a proposal moves at most _X_TRUST past ``bad``
        (or past xc).
        """
        line = [p for p in self.pts if p[1] == ts and p[5] >= 0.0]
        bad = max((p[0] for p in line if (p[3] and p[5] > self.delta) or p[4] > self.delta), default=-math.inf)
        good = min((p[0] for p in line if p[5] <= self.delta and p[0] > bad), default=math.inf)
        if good == math.inf:
            return min(xs, max(bad, xc) + self.trust(max(bad, xc), ts, self.fit(xc, ts)))
        if bad < xs < good and not repair:
            return xs
        above = [p for p in line if bad <= p[0] < good and p[5] > 0.0 and math.log(p[5]) > aim]
        if not above:  # nothing known above the target below ``good``: a small step down from it
            return good - _MU0 * 10.0 if xs < good else good
        xa, ua = max((p[0], p[5]) for p in above)
        ug = min(p[5] for p in line if p[0] == good)
        lo_end = max(xa, bad)
        if ug > 0.0:
            xr = xa + (aim - math.log(ua)) * (good - xa) / (math.log(ug) - math.log(ua))
        else:
            xr = 0.5 * (lo_end + good)
        return min(max(xr, lo_end + 0.1 * (good - lo_end)), good)

    def _argmin(self, target: float, coef: tuple[float, ...], xc: float, tc: float | None,
                t_radius: float) -> tuple[float, float | None]:
        """Model-feasible point of least objective inside the trust region.

        The region: x within :meth:`trust` of xc (a root beyond it on the unsafe side is not
        model-feasible; one beyond it on the safe side is replaced by the edge), t within
        t_radius of tc and at most 0.25 beyond the evaluated t's (the model is fitted there).
        """
        xt = self.trust(xc, tc, coef)

        def at(t: float | None) -> tuple[float, float]:
            x = self.root(target, t, coef, xc, tc, True)
            if x > xc + xt:
                return math.inf, x
            x = max(x, xc - xt)
            return self.objective(x, t), x

        if tc is None:
            return at(None)[1], None
        t_seen = [p[1] for p in self.pts if p[1] is not None]
        lo_t = max(tc - t_radius, min(t_seen) - 0.25, self.t_box[0])
        hi_t = min(tc + t_radius, max(t_seen) + 0.25, self.t_box[1])
        ts = np.linspace(lo_t, hi_t, 41)
        vals = [at(t)[0] for t in ts]
        k = int(np.argmin(vals))
        if not math.isfinite(vals[k]):  # nothing model-feasible nearby: step out at tc
            return min(self.root(target, tc, coef, xc, tc, True), xc + xt), tc
        a, b = ts[max(k - 1, 0)], ts[min(k + 1, len(ts) - 1)]
        t_best = float(ts[k])
        if b > a:
            with np.errstate(all="ignore"):  # an infeasible t has objective inf: capped, no inf - inf in Brent
                res = minimize_scalar(lambda t: min(at(t)[0], 1e300), bounds=(a, b), method="bounded",
                                      options={"xatol": 1e-3})
            if res.fun < vals[k]:
                t_best = float(res.x)
        return at(t_best)[1], t_best


def decide_bounds(randomizer: Any, n: int, adjacency: str, epsilon: float, delta: float,
                  rel_tol: float = CERT_REL_TOL) -> tuple[float, float, str]:
    """Certified (lower, upper) bracket at epsilon for deciding "certified delta <= delta", and its source.

    At 2 <= n <= DECIDE_N_MAX the accountant's ``closed_form_bounds`` first (docs/accountant.md §6.9):
    returned when it decides the target (upper <= delta or lower > delta) or is within DECIDE_WIDTH
    (a straddling narrow bracket: the caller treats the point as not certified); otherwise, and at
    other n, ``get_delta_bounds`` at ``rel_tol``. Both are certified brackets of the accountant's
    blanket value.

    Returns
    -------
    (lower, upper, source) : (float, float, str)
        ``source`` is ``"closed_form_bounds"`` or ``"get_delta_bounds"``.
    """
    return closed_then_full(randomizer, n, adjacency, epsilon, delta, rel_tol)[:3]


def closed_then_full(randomizer: Any, n: int, adjacency: str, epsilon: float, delta: float,
                     rel_tol: float = CERT_REL_TOL, skip_above: float = math.inf) -> tuple[float, float, str, float]:
    """:func:`decide_bounds` with the closed-form upper value (inf when none was computed) as a fourth
    value; the closed-form bracket is also returned (not certified: its upper value is above delta)
    when its upper value exceeds ``skip_above`` (the learned gain of :class:`Search`)."""
    acc = make_accountant(randomizer, n, adjacency, rel_tol)
    closed = getattr(acc, "closed_form_bounds", None)
    up_closed = math.inf
    if closed is not None and 2 <= n <= DECIDE_N_MAX:
        lo, up = closed(epsilon)
        up_closed = up
        if up <= delta or lo > delta or (lo > 0.0 and up - lo <= DECIDE_WIDTH * lo) or up > skip_above:
            return lo, up, "closed_form_bounds", up_closed
    lo, up = (float(v) for v in acc.get_delta_bounds(epsilon))
    return lo, up, "get_delta_bounds", up_closed
