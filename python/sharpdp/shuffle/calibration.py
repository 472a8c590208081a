"""Choosing blanket-mixed Gaussian parameters (seed 001, Sections 4.2 and 5).

* :func:`optimal_bmg` — the (gamma, sigma0) minimising the worst-case single-user
  MSE ``Err_1`` under a lower shuffle index constraint ``chi_lo >= chi``
  (numerical optimisation of the seed's closed forms).
* :func:`calibrate_bmg` — the BMG with the smallest ``Err_1`` whose *certified*
  shuffled delta(epsilon) at n users is below a target, from the certified
  accountant :class:`sharpdp.shuffle.ShuffleAccountant`.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import ndtr

from sharpdp import _validation as V
from sharpdp.shuffle.mechanisms import BlanketMixedGaussian


def _sigma0_for_chi(gamma: float, chi: float) -> float:
    """sigma0 with chi_lo(gamma, sigma0) = chi exactly (seed 001, eq. (exact-t)), rounded up.

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
    """Err_1 of the BMG with 1 - gamma = a and chi_lo = chi (seed 001, Section 4.2)."""
    # log(1 + (1 - a)/(a^2 chi^2)) in log space: no overflow/underflow of a^2 chi^2 at tiny chi
    with np.errstate(divide="ignore", over="ignore"):
        return dim / (a * a * np.logaddexp(0.0, np.log1p(-a) - 2.0 * np.log(a) - 2.0 * math.log(chi))) + (1.0 - a) / a


def optimal_bmg(chi: float, dim: int) -> BlanketMixedGaussian:
    """BMG minimising the worst-case single-user MSE subject to ``chi_lo >= chi``.

    Minimises, over A = 1 - gamma in (0, 1), the seed's reduced objective
    (seed 001, Section 4.2, and eq. (exact-t) in the proof of Theorem
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


def template_delta_estimate(chi, n: int, epsilon: float):
    """Asymptotic *estimate* (not a bound) of the shuffled delta(epsilon) from the shuffle index.

    The finite-a form of the template f_{n,eps}(chi) of seed 001 (Lemma
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


def _template_chi(n: int, epsilon: float, delta: float) -> float:
    """chi at which :func:`template_delta_estimate` equals delta (an initial guess only)."""
    f = lambda lc: math.log(max(template_delta_estimate(math.exp(lc), n, epsilon), 1e-300)) - math.log(delta)
    lo, hi = -30.0, 30.0
    if f(lo) <= 0.0:
        return math.exp(lo)
    if f(hi) >= 0.0:
        return math.exp(hi)
    return math.exp(brentq(f, lo, hi, xtol=1e-6))


# Accuracy asked of the accountant during calibration. Its upper value is certified at any
# rel_tol; a looser bracket only makes the calibrated parameters slightly conservative, and
# makes each call several times cheaper.
_SEARCH_REL_TOL = 0.1


def _make_accountant(randomizer, n: int, adjacency: str):
    """The certified accountant used by :func:`calibrate_bmg` (a seam for tests)."""
    from sharpdp.shuffle.accountant import ShuffleAccountant

    return ShuffleAccountant(randomizer, n, adjacency=adjacency, rel_tol=_SEARCH_REL_TOL)


# Relative width of the final bracket on chi at each gamma (Err_1 ~ chi^2, so
# the calibrated Err_1 is within ~2 * _CHI_RTOL of the certified optimum there).
_CHI_RTOL = 2e-4
# Resolution of the outer search on logit(gamma): a parabola vertex closer than this to an
# evaluated point is not evaluated. Err_1 is flat there (brute-force checks in the tests).
_LOGIT_TOL = 0.02


def _minimise_flat(f, t0: float, lo: float, hi: float, step: float = 0.3) -> None:
    """Minimise a smooth, flat-bottomed f(t) over [lo, hi] with few evaluations.

    A three-point stencil around t0 (spacing ``step``) is walked downhill until its middle
    point is the lowest, then the vertex of the parabola through the three best points is
    evaluated (refitted once). Each f evaluation costs a certified inner search, so the
    count matters more than a tight tolerance: Err_1 is flat near its optimum. The caller
    keeps the best verified point itself.
    """
    pts: dict = {}

    def ev(t: float) -> float:
        t = min(max(t, lo), hi)
        if t not in pts:
            pts[t] = f(t)
        return pts[t]

    c = min(max(t0, lo + step), hi - step)
    for _ in range(20):  # walk until the middle point is the lowest
        fl, fc, fr = ev(c - step), ev(c), ev(c + step)
        if fc <= fl and fc <= fr:
            break
        nc = c - step if fl < fr else c + step
        if not lo + step <= nc <= hi - step:
            break
        c = nc
    for _ in range(2):  # parabola through the three best points, evaluated at its vertex
        (x0, y0), (x1, y1), (x2, y2) = sorted(sorted(pts.items(), key=lambda kv: kv[1])[:3])
        den = (x0 - x1) * (x0 - x2) * (x1 - x2)
        a = (x2 * (y1 - y0) + x1 * (y0 - y2) + x0 * (y2 - y1)) / den
        b = (x2 * x2 * (y0 - y1) + x1 * x1 * (y2 - y0) + x0 * x0 * (y1 - y2)) / den
        if not a > 0:
            return
        v = min(max(-b / (2 * a), x0), x2)
        if min(abs(v - x) for x in pts) < _LOGIT_TOL:
            return
        ev(v)


def calibrate_bmg(n: int, epsilon: float, delta: float, dim: int, *, adjacency: str = "zero_out",
                  progress: bool | None = None) -> BlanketMixedGaussian:
    """BMG with the smallest worst-case single-user MSE whose certified shuffled delta(epsilon) <= delta.

    Searches (gamma, sigma0) for the blanket-mixed Gaussian randomizer (seed
    001, Algorithm "Blanket-Mixed Gaussian Mechanism") minimising ``Err_1 =
    d sigma0^2/(1-gamma)^2 + gamma/(1-gamma)`` (Section 4.2) subject to
    ``ShuffleAccountant(bmg, n, adjacency).get_delta(epsilon) <= delta``, the
    *certified* upper bound on the privacy profile of the shuffled protocol
    (Appendix "Computing the shuffled (epsilon, delta) guarantee").

    Method: at fixed gamma the certified delta decreases in sigma0 (a larger
    sigma0 is a post-processing of a smaller one); the inner search brackets
    the smallest feasible sigma0, parametrised by chi_lo (safeguarded secant
    steps on log delta vs log chi, returned from the verified side, relative
    width 2e-4 in chi). The outer search minimises the resulting Err_1 over
    logit(gamma) (a walked three-point stencil refined by parabolic
    interpolation, typically 5-7 inner searches), started from :func:`optimal_bmg` at
    the chi where the asymptotic template (:func:`template_delta_estimate`)
    meets delta — the template is only a starting guess, never a bound. The
    returned parameters are the best ones whose certified delta was verified
    <= delta, and are re-checked with a fresh accountant before returning.

    Parameters
    ----------
    n : int
        Number of users >= 1.
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
        ``None`` (default): a tqdm progress bar on stderr appears only if the
        calibration runs longer than one second; ``True``: shown at once;
        ``False``: never.

    Returns
    -------
    BlanketMixedGaussian
        The calibrated randomizer, with ``0 < gamma < 1``. Its ``mse_single``
        is the minimum over the searched parameters up to the tolerances
        above (a few 1e-4 relative).

    Raises
    ------
    ValueError
        If n < 1, epsilon < 0, delta not in (0, 1), dim < 1, any is NaN, or
        the accountant rejects ``adjacency``.
    RuntimeError
        If the final re-check of the certified delta fails (never expected:
        the accountant is deterministic).
    """
    n = V.integer("n", n, lo=1)
    epsilon = V.real("epsilon", epsilon, lo=0.0)
    delta = V.probability_open("delta", delta)
    dim = V.integer("dim", dim, lo=1)
    if not isinstance(adjacency, str):
        raise TypeError(f"adjacency must be a string, got {type(adjacency).__name__}")
    from sharpdp.shuffle.adjacency import check_adjacency

    check_adjacency(adjacency)

    from tqdm.auto import tqdm

    bar = tqdm(desc="calibrating BMG", unit=" accountant calls", file=sys.stderr, leave=False,
               disable=progress is False, delay=0.0 if progress else 1.0)
    best: list = [math.inf, None, None]  # Err_1, gamma, sigma0 of the best verified point
    target = math.log(delta)

    def log_delta(gamma: float, x: float) -> float:
        """log of the certified delta at (gamma, chi = e^x); +inf when not finite."""
        sigma0 = _sigma0_for_chi(gamma, math.exp(x))
        bmg = BlanketMixedGaussian(gamma, sigma0, dim)
        d_up = float(_make_accountant(bmg, n, adjacency).get_delta(epsilon))
        bar.update(1)
        if d_up <= delta and bmg.mse_single < best[0]:
            best[:] = [bmg.mse_single, gamma, sigma0]
        if d_up != d_up or d_up == math.inf:
            return math.inf
        return math.log(d_up) if d_up > 0.0 else -math.inf

    chi0 = _template_chi(n, epsilon, delta)
    # d log delta / d log chi of the template at chi0: the first slope guess (~ -a^2 - 1).
    a0 = chi0 * epsilon * math.sqrt(n)
    state = {"x": math.log(chi0), "slope": -(a0 * a0 + 1.0)}
    tol = math.log1p(_CHI_RTOL)

    def smallest_log_chi(gamma: float) -> float:
        """Smallest verified-feasible log chi at this gamma, to within tol (the bracket's safe end).

        Secant steps on (log chi, log delta) aimed just past the predicted root, alternately
        on its feasible and infeasible side, so a good prediction closes the bracket in two
        calls; bisection when the bracket fails to halve.
        """
        lo = hi = None  # (x, f): verified infeasible / feasible points
        x, slope = state["x"], state["slope"]
        side = 1.0  # aim just above (+1, feasible side) or below (-1) the predicted root
        width_before = math.inf
        last_step = 0.0
        for _ in range(200):
            f = log_delta(gamma, x)
            if f <= target:
                hi = (x, f)
            else:
                lo = (x, f)
            if lo is not None and hi is not None:
                width = hi[0] - lo[0]
                if width <= tol:
                    break
                if math.isfinite(lo[1]) and math.isfinite(hi[1]) and lo[1] > hi[1]:
                    slope = (hi[1] - lo[1]) / width
                aim = lo if abs(lo[1] - target) < abs(hi[1] - target) else hi
                r = aim[0] + (target - aim[1]) / slope if math.isfinite(aim[1]) else 0.5 * (lo[0] + hi[0])
                x = r + side * 0.5 * tol
                side = -side
                if width > 0.5 * width_before or not lo[0] < x < hi[0]:
                    x = 0.5 * (lo[0] + hi[0])  # safeguard: bisection
                width_before = width
            else:  # extend towards the missing side, by the predicted step (at least 2 tol), doubling
                known = hi if hi is not None else lo
                step = (target - known[1]) / slope if math.isfinite(known[1]) else 0.0
                last_step = max(abs(step) * 1.2, 2.0 * tol, 2.0 * last_step)
                x = known[0] + (last_step if hi is None else -last_step)
                if hi is not None and x < math.log(1e-12):
                    break  # feasible down to chi = 1e-12: nothing smaller is worth finding
                if hi is None and x > math.log(1e12):
                    raise RuntimeError("calibration: no feasible BMG found (certified delta did not drop)")
        if hi is None:  # pragma: no cover - the loop above always verifies a feasible point
            raise RuntimeError("calibration: no feasible BMG found")
        state["x"], state["slope"] = hi[0], slope
        return hi[0]

    def err_of_logit(t: float) -> float:
        gamma = 1.0 / (1.0 + math.exp(-t))
        chi = math.exp(smallest_log_chi(gamma))
        return BlanketMixedGaussian(gamma, _sigma0_for_chi(gamma, chi), dim).mse_single

    try:
        g0 = optimal_bmg(chi0, dim).gamma
        # outer variable: logit(gamma), gamma in [1e-9, 1 - 1e-15]
        _minimise_flat(err_of_logit, math.log(g0 / (1.0 - g0)), lo=-20.7, hi=34.5)
        # Re-check the returned parameters with a fresh accountant.
        _, gamma, sigma0 = best
        if gamma is None:  # pragma: no cover - smallest_chi always verifies a point
            raise RuntimeError("calibration: no verified feasible BMG")
        bmg = BlanketMixedGaussian(gamma, sigma0, dim)
        d_up = float(_make_accountant(bmg, n, adjacency).get_delta(epsilon))
        if not d_up <= delta:
            raise RuntimeError(f"calibration: re-check failed, certified delta {d_up} > {delta}")
        return bmg
    finally:
        bar.close()


def calibrate_gaussian(n: int, epsilon: float, delta: float, *, adjacency: str = "zero_out"):
    """The 1-D Gaussian local randomizer (gamma = 0) with the smallest sigma0 certified at (epsilon, delta, n).

    Bisection on sigma0 (the certified delta decreases in sigma0: a larger sigma0
    is a post-processing) using the accountant's infimum blanket for the
    Gaussian randomizer (seed 001, Section 4.3; spec ``fft_accountant.md``).
    The returned sigma0 is the upper end of the final bracket (relative width
    1e-3), whose certified delta(epsilon) <= delta was verified.

    Parameters
    ----------
    n : int
        Number of users >= 1.
    epsilon : float
        Target epsilon >= 0 (nats).
    delta : float
        Target delta in (0, 1).
    adjacency : {"zero_out", "replace"}
        Neighbouring relation passed to the accountant ("replace" is bounded through bot, see
        ``ShuffleAccountant``; each step then costs about 12 zero-out certifications). At small
        sigma0 (<~ 2: heavy-tailed privacy-amplification laws) one step takes seconds, so
        calibrations landing there take minutes (about 70 s for zero-out at n = 1000,
        (epsilon, delta) = (1, 1e-6), sigma0 = 1.39).

    Returns
    -------
    GaussianRandomizer
        With ``dim = 1`` (the accountant supports the Gaussian randomizer in one dimension).

    Raises
    ------
    ValueError
        If n < 1, epsilon < 0, delta not in (0, 1), or any is NaN.
    """
    from sharpdp.conversions import _bisect_safe
    from sharpdp.shuffle.mechanisms import GaussianRandomizer

    n = V.integer("n", n, lo=1)
    epsilon = V.real("epsilon", epsilon, lo=0.0)
    delta = V.probability_open("delta", delta)

    def ok(sigma0: float) -> bool:
        d_up = float(_make_accountant(GaussianRandomizer(sigma0, 1), n, adjacency).get_delta(epsilon))
        return d_up <= delta

    hi = 1.0
    while not ok(hi):
        hi *= 2.0
    lo = hi / 2.0
    while lo > 1e-6 and ok(lo):
        hi, lo = lo, lo / 2.0
    return GaussianRandomizer(_bisect_safe(ok, lo, hi, rel=1e-3), 1)
