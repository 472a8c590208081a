"""Choosing blanket-mixed Gaussian parameters.

Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Sections 4.2 and 5.

* :func:`optimal_bmg` — the (gamma, sigma0) minimising the worst-case single-user
  MSE ``Err_1`` under a lower shuffle index constraint ``chi_lo >= chi``
  (numerical optimisation of the paper's closed forms).
* :func:`calibrate_bmg` — the BMG with the smallest ``Err_1`` whose *certified*
  shuffled delta(epsilon) at n users is below a target, from the certified
  accountant :class:`sharpdp.shuffle.ShuffleAccountant`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import math
import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import ndtr

from sharpdp import _validation as V
from sharpdp._progress import progress_bar
from sharpdp.shuffle.randomizers import BlanketMixedGaussian, GaussianRandomizer


def _sigma0_for_chi(gamma: float, chi: float) -> float:
    """sigma0 with chi_lo(gamma, sigma0) = chi exactly (the shuffle paper, eq. (exact-t)), rounded up.

    1/sigma0^2 = log(1 + gamma / ((1 - gamma)^2 chi^2)); chi_lo increases with
    sigma0, so nudging sigma0 up by a few ulps makes chi_lo >= chi hold in
    floating point.
    """
    log_x = math.log(gamma) - 2.0 * math.log1p(-gamma) - 2.0 * math.log(chi)
    sigma0 = 1.0 / math.sqrt(float(np.logaddexp(0.0, log_x)))  # log1p(x) without overflow
    for _ in range(64):
        if BlanketMixedGaussian(gamma, sigma0, 1).chi_lo >= chi:
            return sigma0
        sigma0 = math.nextafter(sigma0, math.inf)
    raise ValueError(f"chi: no BMG with chi_lo >= {chi} is representable in double precision "
                     f"(its closed form under- or overflows at gamma = {gamma})")


def _err1_at_chi(a: np.ndarray, chi: float, dim: int) -> np.ndarray:
    """Err_1 of the BMG with 1 - gamma = a and chi_lo = chi (the shuffle paper, Section 4.2)."""
    # log(1 + (1 - a)/(a^2 chi^2)) in log space: no overflow/underflow of a^2 chi^2 at tiny chi
    with np.errstate(divide="ignore", over="ignore"):
        return dim / (a * a * np.logaddexp(0.0, np.log1p(-a) - 2.0 * np.log(a) - 2.0 * math.log(chi))) + (1.0 - a) / a


def optimal_bmg(chi: float, dim: int) -> BlanketMixedGaussian:
    """BMG minimising the worst-case single-user MSE subject to ``chi_lo >= chi``.

    Minimises, over A = 1 - gamma in (0, 1), the paper's reduced objective
    (the shuffle paper, Section 4.2, and eq. (exact-t) in the proof of Theorem
    "gaussian-blanket-mixture-minimax")::

        Err_1(A) = d / (A^2 log(1 + (1 - A) / (A^2 chi^2))) + (1 - A) / A,

    obtained by putting the constraint at equality, chi_lo = chi. The
    minimisation is numerical (a log-spaced grid over A, then bounded Brent
    refinement), *not* the paper's asymptotic choice A = chi^(-2/3): that
    choice is near-optimal only for large chi (at chi = 2, d = 1 the optimum
    is Err_1 = 10.75, whereas d chi^2 (1 + 1.5 chi^(-2/3)) = 7.78 is only the
    asymptotic expansion, not a bound). As chi -> infinity the optimum
    satisfies Err_1 = d chi^2 (1 + 1.5 chi^(-2/3) + O(chi^(-4/3))).

    Parameters
    ----------
    chi : float
        Target lower shuffle index, chi > 0 (dimensionless).
    dim : int
        Dimension d >= 1.

    Returns
    -------
    BlanketMixedGaussian
        The optimising randomizer; ``sigma0`` is rounded up so that its
        ``chi_lo >= chi`` holds exactly in floating point (the constraint is
        active to ~1e-15 relative). Its ``mse_single`` is the optimal Err_1
        (squared data units, summed over coordinates).

    Raises
    ------
    ValueError
        If chi is not finite and > 0, or dim < 1.
    """
    chi = V.real("chi", chi, lo=0.0, lo_open=True)
    dim = V.integer("dim", dim, lo=1)
    # The optimum sits near A = chi^(-2/3) for large chi; the grid covers it
    # with a wide margin on both sides (Err_1 -> inf as A -> 0 and A -> 1).
    lo = max(-(2.0 / 3.0) * math.log(max(chi, 1.0)) - 12.0, -300.0)
    s = np.linspace(lo, 0.0, 600)[:-1]
    with np.errstate(divide="ignore", over="ignore"):
        err = _err1_at_chi(np.exp(s), chi, dim)
    k = int(np.nanargmin(err))
    a_lo = s[max(k - 1, 0)]
    a_hi = s[k + 1] if k + 1 < len(s) else -1e-16
    res = minimize_scalar(lambda v: float(_err1_at_chi(np.exp(v), chi, dim)), bounds=(a_lo, a_hi),
                          method="bounded", options={"xatol": 1e-10})
    a = float(np.exp(res.x)) if res.fun <= err[k] else float(np.exp(s[k]))
    gamma = 1.0 - a
    if not 0.0 < gamma < 1.0:  # pragma: no cover - A is kept inside (0, 1) above
        raise ValueError(f"chi: no representable optimum for chi = {chi}")
    return BlanketMixedGaussian(gamma, _sigma0_for_chi(gamma, chi), dim)


def template_delta_estimate(chi: Any, n: int, epsilon: float) -> Any:
    """Asymptotic *estimate* (not a bound) of the shuffled delta(epsilon) from the shuffle index.

    The finite-a form of the template f_{n,eps}(chi) of the shuffle paper (Lemma
    "shuffle-index-profile-seq-no-t"), with a = chi eps sqrt(n)::

        delta ~ (phi(a) - a Phi(-a)) / (chi sqrt(n)),

    capped at 1. It is an estimate only: for heavy-tailed randomizers at
    moderate n it can be *below* the true value. Used here only to start the
    certified search of :func:`calibrate_bmg`.

    Parameters
    ----------
    chi : float or array_like of float
        Lower shuffle index > 0.
    n : int
        Number of users >= 1.
    epsilon : float
        epsilon >= 0 (nats).

    Returns
    -------
    float or numpy.ndarray of float64
        Same shape as ``chi``.

    Raises
    ------
    ValueError, TypeError
        chi not finite and > 0 (or empty), n not an integer >= 1, epsilon not finite and >= 0.
    """
    chi_arr = V.real_array("chi", chi, lo=0.0).reshape(np.shape(chi))  # real_array makes 0-d inputs 1-d
    if chi_arr.size and chi_arr.min() <= 0.0:
        raise ValueError(f"chi must be > 0, found {chi_arr.min()}")
    n = V.integer("n", n, lo=1)
    epsilon = V.real("epsilon", epsilon, lo=0.0)
    a = chi_arr * epsilon * math.sqrt(n)
    val = (np.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi) - a * ndtr(-a)) / (chi_arr * math.sqrt(n))
    out = np.minimum(val, 1.0)
    return float(out) if out.ndim == 0 else out


def _phi_bar(z: float) -> float:
    """P(Z > z), Z ~ N(0, 1) (scalar, no cancellation on the right)."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _lognormal_stop_loss(k: float, b: float, r: float, z_lo: float = -math.inf) -> float:
    """E[(b exp(r Z - r^2/2) - k)_+; Z > z_lo] for Z ~ N(0, 1), b > 0, r > 0 (Black-Scholes form)."""
    if k <= 0.0:  # the whole (truncated) mean minus k
        return b * _phi_bar(z_lo - r) - k * _phi_bar(z_lo)
    z = max((math.log(k / b) + 0.5 * r * r) / r, z_lo)  # b e^{rz - r^2/2} > k  <=>  Z > z
    return max(b * _phi_bar(z - r) - k * _phi_bar(z), 0.0)


def _template_scalar(chi: float, n: int, epsilon: float) -> float:
    """:func:`template_delta_estimate` for one chi > 0 (no validation; the search's inner loop).

    phi(a) - a Phibar(a) cancels for large a; there it is phi(a) (1/a^2 - 3/a^4 + 15/a^6 - 105/a^8)
    (the Mills-ratio series; relative error below 1e-3 for a >= 6).
    """
    a = chi * epsilon * math.sqrt(n)
    if a < 6.0:
        val = math.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi) - a * _phi_bar(a)
    else:
        u = 1.0 / (a * a)
        val = math.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi) * u * (1.0 - 3.0 * u + 15.0 * u * u - 105.0 * u ** 3)
    return min(val / (chi * math.sqrt(n)), 1.0)


def _big_jump_estimate(gamma: float, sigma0: float, n: int, epsilon: float) -> float:
    """Single-big-jump *estimate* (not a bound) of the shuffled delta(epsilon) at n users.

    The heavy right tail of the privacy amplification variable L of one user (the increasing
    lognormal law of :func:`sharpdp.shuffle.laws.bmg.bmg_laws`: BMG x vs bot, or the Gaussian
    randomizer's infimum blanket), with the n - 1 others at their mean:
    ``tau(T) = E[(L - T)_+]``, ``T = (n - 1) w (e^eps - 1)``, w the blanket weight (gamma for
    the BMG; E[L] = 1 - e^eps). This is the leading term of the accountant's far-tail
    decomposition (docs/accountant_tail.md §2, E[phi(A')] with A' at its mean), which carries
    nearly all of delta where the Gaussian-limit template fails (large n or large epsilon). The
    replace-one law has the same increasing part (its decreasing part is dropped). Used only to
    model the search; never as a privacy figure.
    """
    ee1 = math.expm1(epsilon)
    if gamma > 0.0:  # L = gamma - e^eps + (1 - gamma) exp(rZ - r^2/2), r = 1/sigma0
        t = (n - 1) * gamma * ee1
        return _lognormal_stop_loss(t - gamma + ee1 + 1.0, 1.0 - gamma, 1.0 / sigma0)
    # Gaussian randomizer: weight 1/g on Z > 1/s of -e^eps + g exp(r2 Z - r2^2/2), r2 = 2/s
    g = 2.0 * _phi_bar(1.0 / sigma0)
    if g <= 0.0:
        return 1.0
    t = (n - 1) * g * ee1
    return _lognormal_stop_loss(t + ee1 + 1.0, g, 2.0 / sigma0, 1.0 / sigma0) / g


def _jump_regime(n: int, weight: float, epsilon: float) -> bool:
    """True where :func:`_big_jump_estimate` is a fair model: the others' mean shift (n - 1) w (e^eps - 1)
    dominates their fluctuation, of order sqrt(n w), by the factor _JUMP_GATE (w the blanket weight)."""
    return math.sqrt(n * weight) * math.expm1(epsilon) >= _JUMP_GATE


def _template_chi(n: int, epsilon: float, delta: float) -> float:
    """chi at which :func:`template_delta_estimate` equals delta (an initial guess only)."""
    f = lambda lc: math.log(max(template_delta_estimate(math.exp(lc), n, epsilon), 1e-300)) - math.log(delta)
    lo, hi = -30.0, 30.0
    if f(lo) <= 0.0:
        return math.exp(lo)
    if f(hi) >= 0.0:
        return math.exp(hi)
    return math.exp(brentq(f, lo, hi, xtol=1e-6))


# ----------------------------------------------------------------------------------------------
# Certified calibration with few accountant evaluations.
#
# (docs/calibration.md.) The search runs on an *estimate* of log delta: the log-midpoint of the
# accountant's certified bracket [Lo, Up], modelled as a base (the log of the asymptotic template
# at chi_lo plus, where it applies, the single-big-jump estimate _big_jump_estimate; or the
# template alone, whichever the first evaluation is nearer) plus a local quadratic correction
# fitted to the evaluations. A point is returned only if the certified upper value of an
# evaluation at the accountant's default accuracy (rel_tol = _CERT_REL_TOL) is <= delta; after a
# failure the search steps to the safe side (larger sigma0 at the same gamma). The models are
# never used as a bound.

# Accuracy of the search evaluations. Equal to _CERT_REL_TOL: an evaluation at rel_tol 1e-2 costs
# little more than one at 0.1, and every evaluation is then a candidate answer. (A looser value
# makes the search points cheap estimates that are certified again at _CERT_REL_TOL; the tests
# exercise that path.)
_SEARCH_REL_TOL = 0.01
# Accuracy of the certifying evaluations (the accountant's default).
_CERT_REL_TOL = 1e-2
# Evaluation budget of one calibration (search + certification). Only a failing certification
# may exceed it (fallback steps towards the safe side, at most _FALLBACK_EVALS more).
_MAX_EVALS = 10
_FALLBACK_EVALS = 30
# A further certified step is taken only if the model predicts a relative gain above this.
_GAIN_RTOL = 1e-4
# Search box: log sigma0 (below 0.1 the laws are so heavy-tailed that one evaluation takes
# very long; chi_lo < 1e-12 there for every gamma, as in the previous search's limit), and
# logit(gamma).
_X_BOX = (math.log(0.1), math.log(1e12))
_T_BOX = (-20.7, 34.5)
# Model fit and step tuning (see _Search).
_W_X, _P_XX, _OVERSHOOT, _MU_STEP, _MU0 = 0.02, 0.03, 1.5, 5e-4, 1e-4
# Trust region of a certification step in x (log sigma0): at most _X_TRUST, and at most a step the
# steepest observed slope of log delta in x turns into a change of _V_TRUST in log delta (where
# delta falls steeply, at large n and large epsilon, a step of 0.25 in x is a factor e^7 in delta).
_X_TRUST, _V_TRUST = 0.25, 1.5
# The base is dropped from the model (which is then purely local) when the chosen one misses the
# first evaluation by more than this in log delta (the Gaussian-limit template alone can be off by
# a factor e^100 where the single big jump carries delta, and its slopes in x and gamma are then
# wrong too).
_TEMPLATE_OFF = 3.0
# The big-jump estimate enters the base model only where sqrt(n w) (e^eps - 1) >= this (_jump_regime).
_JUMP_GATE = 1.5
# Stage 2 (the probes in gamma) is skipped when the big jump dominates the base and the base is this
# close (in log delta) to the evaluation where stage 1 ended: the model's optimum in gamma is then
# the start's.
_MODEL_OK = 0.02
# The start's search in logit(gamma) around the template's optimal BMG.
_START_T = 4.0
# Stage 1 stops within this of the target (log delta of the cheap estimate).
_STAGE1_TOL = 0.03
# Stage 2 probes at logit(gamma) +- _PROBE_DT; stage 3 moves logit(gamma) by at most _T_RADIUS.
_PROBE_DT, _T_RADIUS = 0.25, 1.0


def _make_accountant(randomizer: Any, n: int, adjacency: str, rel_tol: float = _CERT_REL_TOL) -> Any:
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
        ``epsilon`` from ``ShuffleAccountant(randomizer, n, adjacency, rel_tol=1e-2)``
        (``get_delta_bounds``); ``upper <= delta_target``.
    evaluations : int
        Accountant evaluations (``get_delta_bounds`` calls) the calibration made (for
        ``rounds > 1``: those of the single-round calibrations of its candidates).
    rounds : int, default 1
        Number k of composed rounds the guarantee is for. For ``rounds > 1``, ``delta_bounds``
        is ``ComposedAccountant([(ShuffleAccountant(randomizer, n, adjacency), k)])
        .get_delta_bounds(epsilon)``: ``upper`` the certified composed delta (``<= delta_target``),
        ``lower`` that class's reference value (not a lower bound on the mechanism's delta).
    composed_certifications : int, default 0
        Composed certifications (``ComposedAccountant`` evaluations) made (0 when ``rounds == 1``).
    """

    randomizer: Any  # BlanketMixedGaussian or GaussianRandomizer
    epsilon: float
    delta_target: float
    delta_bounds: tuple
    evaluations: int
    rounds: int = 1
    composed_certifications: int = 0


class _Progress:
    """One progress bar over accountant evaluations (:func:`sharpdp._progress.progress_bar`: tqdm
    when installed, else plain lines). Its total is the budget (at most that many evaluations are
    made unless every certification fails; only then does it grow, one at a time), and it ends at
    100 % (the total is set to the evaluations made when the calibration finishes). ``progress``:
    None shows it only once the calibration has run for one second, True at once, False never.
    """

    def __init__(self, desc: str, progress: bool | None, budget: int, unit: str = " accountant evaluations") -> None:
        self.bar = progress_bar(desc=desc, total=budget, unit=unit, file=sys.stderr,
                                leave=False, disable=progress is False, delay=0.0 if progress else 1.0)

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


def _log_estimate(lo: float, up: float) -> float:
    """Cheap estimate of log D from a certified bracket: the log-midpoint (log Up if Lo = 0)."""
    if not up >= 0.0 or up == math.inf:
        return math.inf
    if up == 0.0:
        return -math.inf
    return 0.5 * (math.log(lo) + math.log(up)) if lo > 0.0 else math.log(up)


class _Search:
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
        self.bar = _Progress(desc, progress, _MAX_EVALS)

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
            if p[0] == x and p[1] == t and (p[3] == fine or _SEARCH_REL_TOL == _CERT_REL_TOL):
                return p[2]
        r = self.make(x, t)
        lo, up = (float(v) for v in _make_accountant(r, self.n, self.adjacency,
                                                     _CERT_REL_TOL if fine else _SEARCH_REL_TOL)
                  .get_delta_bounds(self.epsilon))
        self.count += 1
        self.bar.update(self.count)
        v = _log_estimate(lo, up)
        if not self.pts and math.isfinite(v):  # the first evaluation picks the base (see _pick_base)
            self.template = self._pick_base(x, t, v)
            self.use_template = abs(v - self.template(x, t)) <= _TEMPLATE_OFF
        self.pts.append((x, t, v, fine, lo, up))
        if (fine or _SEARCH_REL_TOL == _CERT_REL_TOL) and up <= self.delta:
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
        return min(_X_TRUST, _V_TRUST / steep)

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
        a, fa = xc, f0
        while abs(d) <= 4.0:
            b = min(max(xc + d, _X_BOX[0]), _X_BOX[1])
            fb = f(b)
            if (fb > 0.0) != (f0 > 0.0):
                return brentq(f, min(a, b), max(a, b), xtol=1e-10)
            if b in _X_BOX:
                return b
            a, fa, d = b, fb, 2.0 * d
        return min(max(xc + (4.0 if f0 > 0.0 else -4.0), _X_BOX[0]), _X_BOX[1])

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
            if hi is not None and hi[0] <= _X_BOX[0] and v <= target:
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
                xn = min(max(x + step, _X_BOX[0]), _X_BOX[1])
                if xn == x:
                    if v > target:
                        raise RuntimeError("calibration: no feasible randomizer found (certified delta did not drop)")
                    break
                last = (step, v)
            x = xn
        near = min(self.pts, key=lambda p: abs(p[2] - target))
        return near[0]

    # -- stage 3: certify (and improve) on full-accuracy evaluations
    def certify(self, x: float, t: float | None, t_radius: float = 1.0) -> None:
        """Evaluate the model's optimum at full accuracy until one is certified and no gain is left.

        The model is refitted after each evaluation (it learns the offset between cheap and
        full-accuracy values). While nothing is certified, a failed certification is followed by a
        fallback step out along x (the safe side) at the failed point's t, by at least 1.5 times
        the linearised excess and 0.002 * 2^(k-1) after k failures, with a margin that grows.
        Every proposal is then kept inside the bracket the evaluations on its line already give
        (:meth:`_safeguard`): never past the smallest x whose certified upper value (cheap or full
        accuracy) is <= delta — that point itself is certified when the model aims beyond it —,
        regula falsi between the certified-bad and the known-good point after a failure, and
        with no known-good point at most _X_TRUST past the last failure.
        """
        ld = math.log(self.delta)
        rho = 0.5 * math.log1p(_CERT_REL_TOL)  # expected log(Up / midpoint) at full accuracy
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
                         last_fail[0] + xt, _X_BOX[1])
                # kept inside what the evaluations on this line already show (see _safeguard)
                xs = self._safeguard(xs, ts, ld - rho - mu, True, xc)
                repair = self.best is None or self.objective(xs, ts) < self.best[0] * (1.0 - _GAIN_RTOL)
            if not repair:
                xs, ts = self._argmin(ld - rho - mu, coef, xc, tc, t_radius)
                xs = self._safeguard(xs, ts, ld - rho - mu, False, xc)
                if (tried and self.best is not None
                        and self.objective(xs, ts) >= self.best[0] * (1.0 - _GAIN_RTOL)):
                    return  # (after one evaluation here at least: it learns the bracket's width rho)
            if self.count >= _MAX_EVALS + _FALLBACK_EVALS or (last_fail is not None and last_fail[0] >= _X_BOX[1]):
                raise RuntimeError(f"calibration: re-check failed, no certified delta <= {self.delta} found")
            self.evaluate(xs, ts, True)
            tried = True
            *_, v, _, lo, up = next(p for p in reversed(self.pts) if p[0] == xs and p[1] == ts)
            if up > 0.0 and math.isfinite(v):
                rho = max(math.log(up) - v, 0.0)
            repair = not up <= self.delta
            if repair:
                excess = math.log(up) - ld + rho + mu if 0.0 < up < math.inf else 1.0
                fails, last_fail = fails + 1, (xs, ts, excess)
                mu = mu + _MU_STEP  # (the refit already knows the failed point)

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


def _model_root(base: Callable[..., float], t: float | None, target: float) -> float:
    """x in _X_BOX where the base model meets ``target`` at shape t (the box's end if it does not)."""
    f = lambda x: base(x, t) - target  # noqa: E731  (decreasing in x)
    lo, hi = _X_BOX
    if f(lo) <= 0.0:
        return lo
    if f(hi) >= 0.0:
        return hi
    return brentq(f, lo, hi, xtol=1e-6)


def _model_start(base: Callable[..., float], objective: Callable[..., float], target: float,
                 t_guess: float) -> tuple[float, float]:
    """(x, t) of least objective on the base model's boundary, t within _START_T of t_guess."""
    def err(t: float) -> float:
        return objective(_model_root(base, t, target), t)

    lo_t, hi_t = max(t_guess - _START_T, _T_BOX[0]), min(t_guess + _START_T, _T_BOX[1])
    ts = np.linspace(lo_t, hi_t, 25)
    vals = [err(t) for t in ts]
    k = int(np.argmin(vals))
    a, b = ts[max(k - 1, 0)], ts[min(k + 1, len(ts) - 1)]
    t_best = float(ts[k])
    res = minimize_scalar(err, bounds=(a, b), method="bounded", options={"xatol": 1e-2})
    if res.fun < vals[k]:
        t_best = float(res.x)
    return _model_root(base, t_best, target), t_best


def _expit(t: float) -> float:
    return 1.0 / (1.0 + math.exp(-t)) if t >= 0 else math.exp(t) / (1.0 + math.exp(t))


def _bmg_err(x: float, t: float, dim: int) -> float:
    """Err_1 of the BMG with logit(gamma) = t and sigma0 = e^x (the shuffle paper, Section 4.2)."""
    g, a = _expit(t), _expit(-t)
    return dim * math.exp(2.0 * x) / (a * a) + g / a


def _bmg_chi_lo(t: float, x: float) -> float:
    """chi_lo of the BMG with logit(gamma) = t and sigma0 = e^x (0 when it underflows)."""
    g, a = _expit(t), _expit(-t)
    try:
        return math.sqrt(g / (a * a * math.expm1(math.exp(-2.0 * x))))
    except (OverflowError, ZeroDivisionError):
        return 0.0


def calibrate_bmg_report(n: int, epsilon: float, delta: float, dim: int, *, adjacency: str = "zero_out",
                         progress: bool | None = None, rounds: int = 1) -> CalibrationReport:
    """:func:`calibrate_bmg` with its certificate: the certified bracket and the evaluation count.

    Parameters and errors as :func:`calibrate_bmg`.

    Returns
    -------
    CalibrationReport
        ``randomizer`` is the calibrated :class:`BlanketMixedGaussian`; ``delta_bounds`` its
        certified (lower, upper) at ``epsilon`` from the accountant at rel_tol 1e-2 (for
        ``rounds > 1``: from the composed accountant, see :class:`CalibrationReport`).
    """
    n = V.integer("n", n, lo=1)
    epsilon = V.real("epsilon", epsilon, lo=0.0)
    delta = V.probability_open("delta", delta)
    dim = V.integer("dim", dim, lo=1)
    if not isinstance(adjacency, str):
        raise TypeError(f"adjacency must be a string, got {type(adjacency).__name__}")
    if adjacency not in ("zero_out", "replace"):
        raise ValueError(f"adjacency must be 'zero_out' or 'replace', got {adjacency!r}")
    rounds = V.integer("rounds", rounds, lo=1)
    if rounds > 1:
        return _calibrate_bmg_rounds(n, epsilon, delta, dim, rounds, adjacency, progress)

    def make(x: float, t: float) -> BlanketMixedGaussian:
        return BlanketMixedGaussian(_expit(t), math.exp(x), dim)

    # replace-one: the antipodal pair has sensitivity 2, so the template is taken at chi / 2
    # (an estimate of where the boundary lies, not a bound)
    scale = 0.5 if adjacency == "replace" else 1.0

    def template(x: float, t: float) -> float:
        chi = _bmg_chi_lo(t, x)
        return _template_scalar(scale * chi, n, epsilon) if chi > 0.0 else 1.0

    def base(x: float, t: float) -> float:  # log of the template plus the single-big-jump estimate
        return math.log(max(template(x, t) + _big_jump_estimate(_expit(t), math.exp(x), n, epsilon), 1e-300))

    def log_template(x: float, t: float) -> float:
        return math.log(max(template(x, t), 1e-300))

    chi0 = _template_chi(n, epsilon, delta) / scale
    b0 = optimal_bmg(chi0, dim)
    bases = (base, log_template) if _jump_regime(n, b0.gamma, epsilon) else (log_template,)
    err = lambda x, t: _bmg_err(x, t, dim)  # noqa: E731
    s = _Search(make, bases, err, n, epsilon, delta, adjacency, progress, "calibrating BMG", _T_BOX)
    try:
        target = math.log(delta) - 0.5 * math.log1p(_CERT_REL_TOL)
        # the start: the optimum of Err_1 on the base model near the template's optimal BMG
        t_guess = math.log(b0.gamma) - math.log1p(-b0.gamma)
        x0, t0 = _model_start(bases[0], err, target, t_guess)
        s.evaluate(x0, t0, False)  # picks the base: if another is nearer, start on it
        if s.use_template and s.template is not bases[0]:
            x0, t0 = _model_start(s.template, err, target, t_guess)
        # stage 1: the boundary at that gamma (3% in delta)
        xb = s.bracket(x0, t0, target, _STAGE1_TOL, 5)
        # where the single big jump carries most of delta and the base model is exact to _MODEL_OK
        # where stage 1 ended, its optimum in gamma (the start) is kept and only x is refined (at
        # large n or epsilon, where evaluations are slow)
        vb = next(p[2] for p in reversed(s.pts) if p[0] == xb and p[1] == t0)
        exact = (s.use_template and s.template is base and abs(vb - base(xb, t0)) <= _MODEL_OK
                 and _big_jump_estimate(_expit(t0), math.exp(xb), n, epsilon) >= template(xb, t0))
        if not exact:
            # stage 2: two probes of the gamma dependence, at the boundary chi of stage 1
            coef = s.fit(xb, t0)
            xt = s.trust(xb, t0, coef)
            xr = min(max(s.root(target, t0, coef, xb, t0), xb - xt), xb + xt)
            for dt in (-_PROBE_DT, _PROBE_DT):
                if _T_BOX[0] <= t0 + dt <= _T_BOX[1]:
                    s.evaluate(xr, t0 + dt, False)
        # stage 3: model optimum, certified; improved while the model predicts a gain
        s.certify(xb, t0, t_radius=0.0 if exact else _T_RADIUS)
    finally:
        s.bar.close()
    if s.best is None:  # (certify returns only with a certified point)
        raise RuntimeError("calibration: no certified point")
    _, x, t, lo, up = s.best
    if t is None:  # (the 2-D search evaluates at a shape coordinate t)
        raise RuntimeError("calibration: no certified point")
    return CalibrationReport(make(x, t), epsilon, delta, (lo, up), s.count)


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
# a certified value is within this factor of the target (the gain in Err_1 left is tiny).
_ROUNDS_AIM, _ROUNDS_CLOSE = math.log(0.97), math.log(0.9)
# Smallest safe-side step in s (and in log sigma0 in the fallback) after a failure, doubled after
# each further failure up to _ROUNDS_MAX_STEP.
_ROUNDS_STEP, _ROUNDS_MAX_STEP = 0.02, 0.5


def _composed_bounds(bmg: Any, n: int, adjacency: str, rounds: int, epsilon: float) -> tuple[float, float]:
    """Certified (reference lower, upper) composed delta of ``rounds`` runs of ``bmg`` (docs/composition.md §4)."""
    from sharpdp.shuffle.composition import ComposedAccountant

    ca = ComposedAccountant([(_make_accountant(bmg, n, adjacency), rounds)], progress=False)
    lo, up = ca.get_delta_bounds(epsilon)
    return float(lo), float(up)


def _calibrate_bmg_rounds(n: int, epsilon: float, delta: float, dim: int, rounds: int, adjacency: str,
                          progress: bool | None) -> CalibrationReport:
    """calibrate_bmg_report for rounds > 1 (validated arguments; method: the comment above)."""
    from sharpdp.conversions import gaussian_mechanism_delta, gaussian_mechanism_sigma

    half_log_k = 0.5 * math.log(rounds)
    e1 = epsilon / math.sqrt(rounds)

    def log_sigma_eff(d: float) -> float:  # Gaussian noise whose delta_G(epsilon) is d
        return math.log(gaussian_mechanism_sigma(epsilon, min(max(d, 1e-300), 1.0 - 1e-12)))

    def candidate(s: float) -> CalibrationReport:
        d1 = float(gaussian_mechanism_delta(e1, math.exp(min(s, 600.0))))
        d1 = min(d1, 0.5) if d1 > 1e-300 else 1e-300  # (NaN or underflow: the noisy end)
        return calibrate_bmg_report(n, e1, d1, dim,
                                    adjacency=adjacency, progress=False)

    aim = log_sigma_eff(delta * math.exp(_ROUNDS_AIM))
    s = aim + half_log_k  # shift 0: the Gaussian start
    bar = _Progress(f"calibrating BMG for {rounds} rounds", progress, _ROUNDS_CERTS, unit=" candidates")
    best = None  # (Err_1, randomizer, composed bounds) of the best certified candidate
    s_pass, s_fail = math.inf, -math.inf  # smallest certified s, largest failed s
    count = evals = fails = 0
    try:
        while count < _ROUNDS_CERTS:  # search on s
            rep = candidate(s)
            bounds = _composed_bounds(rep.randomizer, n, adjacency, rounds, epsilon)
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
            bounds = _composed_bounds(last, n, adjacency, rounds, epsilon)
            count, step = count + 1, min(2.0 * step, _ROUNDS_MAX_STEP)
            if bounds[1] <= delta:
                best = (last.mse_single, last, bounds)
            bar.update(count)
        bar.update(count)
    finally:
        bar.close()
    _, bmg, bounds = best
    return CalibrationReport(bmg, epsilon, delta, bounds, evals, rounds, count)


def calibrate_bmg(n: int, epsilon: float, delta: float, dim: int, *, adjacency: str = "zero_out",
                  progress: bool | None = None, rounds: int = 1) -> BlanketMixedGaussian:
    """BMG with the smallest worst-case single-user MSE whose certified shuffled delta(epsilon) <= delta.

    Searches (gamma, sigma0) for the blanket-mixed Gaussian randomizer (seed
    001, Algorithm "Blanket-Mixed Gaussian Mechanism") minimising ``Err_1 =
    d sigma0^2/(1-gamma)^2 + gamma/(1-gamma)`` (Section 4.2) subject to
    ``ShuffleAccountant(bmg, n, adjacency).get_delta(epsilon) <= delta``, the
    *certified* upper bound on the privacy profile of the shuffled protocol
    (Appendix "Computing the shuffled (epsilon, delta) guarantee"), at the
    accountant's default accuracy (rel_tol = 1e-2).

    Method (at most 10 accountant evaluations unless every certification fails;
    ``docs/calibration.md``): the coordinates are x = log sigma0 and t = logit(gamma). Every
    evaluation is ``get_delta_bounds`` at rel_tol = 1e-2, and any evaluated point whose certified
    upper value is <= delta is a candidate answer. The search models log delta (the log-midpoint
    of the certified bracket) as a base plus a local quadratic correction in (x, t) fitted to the
    evaluations. The base is the log of the asymptotic template at chi_lo
    (:func:`template_delta_estimate`, the finite-a form of f_{n,eps}(chi), Lemma
    "shuffle-index-profile-seq-no-t"; for "replace" at chi_lo / 2, sensitivity 2) plus, where
    sqrt(n gamma) (e^eps - 1) >= 1.5, a single-big-jump estimate (the stop-loss E[(L - T)_+] of
    one user's amplification variable at T = (n - 1) gamma (e^eps - 1), the others at their
    mean: the leading term of the accountant's far tail, which carries delta at large n or
    epsilon); the first evaluation keeps that base or the template alone, whichever is nearer.
    Both are estimates, never bounds. (1) Start at the base model's optimum of Err_1 (within
    4 in logit(gamma) of :func:`optimal_bmg` at the chi where the template meets delta) and find
    the boundary along x at that gamma (safeguarded secant steps, to 3 % in delta). (2) Two
    probes at logit(gamma) +- 0.25 give the gamma dependence; they are skipped where the big
    jump dominates and the base matches the stage-1 evaluation to 2 % (the base's gamma optimum
    is then kept). (3) The model's constrained optimum of Err_1 (inside a trust region: at most
    0.25 in x, and at most a step the steepest observed slope turns into a factor e^1.5 in
    delta) is evaluated; after a failure the next step is a fallback along x to the safe side at
    the same gamma (by the linearised excess, or by regula falsi towards the smallest sigma0 at
    that gamma whose certified upper value is already <= delta; no step goes past that point);
    the model is refitted and re-aimed while it predicts a relative gain in Err_1 above 1e-4
    and the budget of 10 evaluations lasts.

    Parameters
    ----------
    n : int
        Number of users, 1 <= n <= 1e9 (the accountant's range).
    epsilon : float
        Target epsilon >= 0 (nats).
    delta : float
        Target delta in (0, 1).
    dim : int
        Dimension d >= 1 (delta does not depend on it; Err_1 does).
    adjacency : {"zero_out", "replace"}
        Neighbouring relation passed to the accountant ("replace": the antipodal unit pair,
        see ``ShuffleAccountant``; the template start guess is the zero-out one).
    progress : bool or None
        ``None`` (default): one progress bar on stderr (tqdm if installed, plain lines
        otherwise) over the accountant evaluations, its total the budget of 10 (it grows only
        in a fallback after failed certifications) and set to the evaluations made when the
        calibration ends (100 %), appearing only if the calibration runs longer than one
        second; ``True``: shown at once; ``False``: never. (For ``rounds > 1`` the bar counts
        candidates, each a single-round calibration plus one composed certification; total 4.)
    rounds : int, default 1
        Number k >= 1 of rounds the guarantee covers: the returned BMG, run k times on the
        same data (adaptively composed, zero-out or replace adjacency as above), is certified
        (epsilon, delta)-DP in total: ``ComposedAccountant([(ShuffleAccountant(bmg, n,
        adjacency), k)]).get_delta(epsilon) <= delta`` (``docs/composition.md`` §4) was
        checked before returning. ``rounds=1`` is the single-round calibration above, unchanged.
        For k > 1 the search is a heuristic on a one-parameter family, not the constrained
        optimum: per-round targets (epsilon / sqrt(k), delta_G(epsilon / sqrt(k); sigma))
        on the Gaussian mechanism's profile delta_G (Balle & Wang, "Improving the Gaussian
        Mechanism for Differential Privacy", Theorem 8), started where k Gaussian rounds of
        noise sigma compose to (epsilon, delta) (sigma_1 = sqrt(k) sigma_total: mu-GDP
        composition, Dong, Roth & Su, "Gaussian Differential Privacy", Corollary 3.3), each
        calibrated by the single-round method, then corrected from at most 4 composed
        certifications (a Gaussian-equivalent shift fitted to each certified value; after a
        failure the step goes to the safe side); if none of them certifies, the last failed
        BMG's sigma0 is increased at the same gamma (a post-processing: more noise) in growing
        steps, at most 6 more certifications. Each composed certification builds a
        dominating pair (a few hundred accountant profile evaluations).

    Returns
    -------
    BlanketMixedGaussian
        The calibrated randomizer, with ``0 < gamma < 1``, whose certified delta(epsilon) at
        rel_tol 1e-2 was verified <= delta. Its ``mse_single`` is near the minimum over the
        searched parameters (within a few 1e-4 relative: the model's predicted gain 1e-4 and
        the certification margins). :func:`calibrate_bmg_report` also returns the
        certified bracket and the number of evaluations.

    Raises
    ------
    ValueError
        If n < 1 or > 1e9, epsilon < 0, delta not in (0, 1), dim < 1, any is NaN,
        ``adjacency`` is not one of the above, or ``rounds`` is not an integer >= 1.
    TypeError
        If ``adjacency`` is not a string, or ``rounds`` is not a number (e.g. a bool).
    RuntimeError
        If no parameters with a certified delta <= delta are found (never expected: the
        certified delta drops to 0 as chi grows).
    """
    return calibrate_bmg_report(n, epsilon, delta, dim, adjacency=adjacency, progress=progress,
                                rounds=rounds).randomizer


def calibrate_gaussian_report(n: int, epsilon: float, delta: float, *, adjacency: str = "zero_out",
                              progress: bool | None = False) -> CalibrationReport:
    """:func:`calibrate_gaussian` with its certificate (bracket and evaluation count).

    Parameters and errors as :func:`calibrate_gaussian`.

    Returns
    -------
    CalibrationReport
        ``randomizer`` is the calibrated :class:`GaussianRandomizer` (dim 1).
    """
    from sharpdp.shuffle.templates import gaussian_chi_chua

    n = V.integer("n", n, lo=1)
    epsilon = V.real("epsilon", epsilon, lo=0.0)
    delta = V.probability_open("delta", delta)
    if not isinstance(adjacency, str):
        raise TypeError(f"adjacency must be a string, got {type(adjacency).__name__}")
    from sharpdp.shuffle.adjacency import check_adjacency

    check_adjacency(adjacency)

    scale = 0.5 if adjacency == "replace" else 1.0  # (as in calibrate_bmg_report)

    def chi(x: float) -> float:
        try:
            return gaussian_chi_chua(math.exp(x))
        except (OverflowError, ZeroDivisionError, ValueError):
            return 0.0

    def template(x: float) -> float:
        c = chi(x)
        return _template_scalar(scale * c, n, epsilon) if c > 0.0 else 1.0

    def base(x: float, t=None) -> float:  # log of the template plus the single-big-jump estimate
        return math.log(max(template(x) + _big_jump_estimate(0.0, math.exp(x), n, epsilon), 1e-300))

    def log_template(x: float, t=None) -> float:
        return math.log(max(template(x), 1e-300))

    target = math.log(delta) - 0.5 * math.log1p(_CERT_REL_TOL)
    x_t = _model_root(log_template, None, target)  # the blanket weight 2 Phibar(1/sigma0) there gates the jump
    bases = (base, log_template) if _jump_regime(n, 2.0 * _phi_bar(math.exp(-x_t)), epsilon) else (log_template,)
    s = _Search(lambda x, t: GaussianRandomizer(math.exp(x), 1), bases, lambda x, t: math.exp(2.0 * x),
                n, epsilon, delta, adjacency, progress, "calibrating Gaussian")
    try:
        x0 = _model_root(bases[0], None, target)  # the start: where the base model meets the target
        s.evaluate(x0, None, False)  # picks the base: if another is nearer, start on it
        if s.use_template and s.template is not bases[0]:
            x0 = _model_root(s.template, None, target)
        xb = s.bracket(x0, None, target, _STAGE1_TOL, 6)
        s.certify(xb, None)
    finally:
        s.bar.close()
    if s.best is None:  # (certify returns only with a certified point)
        raise RuntimeError("calibration: no certified point")
    _, x, _, lo, up = s.best
    return CalibrationReport(GaussianRandomizer(math.exp(x), 1), epsilon, delta, (lo, up), s.count)


def calibrate_gaussian(n: int, epsilon: float, delta: float, *, adjacency: str = "zero_out",
                       progress: bool | None = False):
    """The 1-D Gaussian local randomizer (gamma = 0) with the smallest sigma0 certified at (epsilon, delta, n).

    Uses the accountant's infimum blanket for the Gaussian randomizer (the shuffle paper, Section
    4.3; docs/accountant.md); the certified delta decreases in sigma0 (a larger
    sigma0 is a post-processing). Same method as :func:`calibrate_bmg` in one dimension
    (x = log sigma0; every evaluation at rel_tol 1e-2 is a candidate answer): the base model is
    the template at Chua et al.'s index chi_chua(sigma0) plus, where sqrt(n w) (e^eps - 1) >= 1.5
    (w = 2 Phibar(1/sigma0) the infimum blanket's weight), the single-big-jump estimate (both
    estimates only); the start is where it meets delta; then safeguarded secant steps, and the
    model's boundary point (never beyond the smallest searched sigma0 whose certified upper value
    is already <= delta; regula falsi between certified-bad and known-good sigma0 after a failed
    certification), refined while it predicts a relative gain in sigma0^2 above 1e-4.
    At most 10 accountant evaluations unless every certification fails.

    Parameters
    ----------
    n : int
        Number of users, 1 <= n <= 1e9.
    epsilon : float
        Target epsilon >= 0 (nats).
    delta : float
        Target delta in (0, 1).
    adjacency : {"zero_out", "replace"}
        Neighbouring relation passed to the accountant ("replace" is bounded through bot, see
        ``ShuffleAccountant``; each evaluation then costs about 12 zero-out certifications).
    progress : bool or None, default False
        As in :func:`calibrate_bmg` (default: no bar).

    Returns
    -------
    GaussianRandomizer
        With ``dim = 1`` (the accountant supports the Gaussian randomizer in one dimension),
        whose certified delta(epsilon) at rel_tol 1e-2 was verified <= delta.

    Raises
    ------
    ValueError
        If n < 1 or > 1e9, epsilon < 0, delta not in (0, 1), any is NaN, or an unknown
        ``adjacency``.
    RuntimeError
        If no certified sigma0 is found (never expected).
    """
    return calibrate_gaussian_report(n, epsilon, delta, adjacency=adjacency, progress=progress).randomizer
