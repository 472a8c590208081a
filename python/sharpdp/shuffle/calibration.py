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
    sigma0 = 1.0 / math.sqrt(math.log1p(gamma / ((1.0 - gamma) ** 2 * chi * chi)))
    for _ in range(64):
        if BlanketMixedGaussian(gamma, sigma0, 1).chi_lo >= chi:
            break
        sigma0 = math.nextafter(sigma0, math.inf)
    return sigma0


def _err1_at_chi(a: np.ndarray, chi: float, dim: int) -> np.ndarray:
    """Err_1 of the BMG with 1 - gamma = a and chi_lo = chi (seed 001, Section 4.2)."""
    return dim / (a * a * np.log1p((1.0 - a) / (a * a * chi * chi))) + (1.0 - a) / a


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
    """
    chi_arr = np.asarray(chi, dtype=float)
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


def _make_accountant(randomizer, n: int, adjacency: str):
    """The certified accountant used by :func:`calibrate_bmg` (a seam for tests)."""
    from sharpdp.shuffle.accountant import ShuffleAccountant

    return ShuffleAccountant(randomizer, n, adjacency=adjacency)


# Relative width of the final bracket on chi at each gamma (Err_1 ~ chi^2, so
# the calibrated Err_1 is within ~2 * _CHI_RTOL of the certified optimum there).
_CHI_RTOL = 2e-4


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
    the smallest feasible sigma0, parametrised by chi_lo (regula falsi on
    log delta vs log chi, returned from the verified side, relative width
    2e-4 in chi). The outer search is a bounded Brent minimisation of the
    resulting Err_1 over log(1 - gamma), started from :func:`optimal_bmg` at
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
        Neighbouring relation passed to the accountant.
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

    from tqdm.auto import tqdm

    bar = tqdm(desc="calibrating BMG", unit=" accountant calls", file=sys.stderr, leave=False,
               disable=progress is False, delay=0.0 if progress else 1.0)
    best: list = [math.inf, None, None]  # Err_1, gamma, sigma0 of the best verified point

    def log_delta(gamma: float, chi: float) -> tuple[float, float]:
        sigma0 = _sigma0_for_chi(gamma, chi)
        bmg = BlanketMixedGaussian(gamma, sigma0, dim)
        d_up = float(_make_accountant(bmg, n, adjacency).get_delta(epsilon))
        bar.update(1)
        if d_up <= delta and bmg.mse_single < best[0]:
            best[:] = [bmg.mse_single, gamma, sigma0]
        return (math.log(d_up) if d_up > 0.0 else -math.inf), sigma0

    target = math.log(delta)
    chi_state = {"chi": _template_chi(n, epsilon, delta)}

    def smallest_chi(gamma: float) -> float:
        """Smallest verified-feasible chi at this gamma (bracket's safe end)."""
        c = chi_state["chi"]
        f, _ = log_delta(gamma, c)
        step = 1.05
        if f <= target:  # feasible: walk down until infeasible
            hi, f_hi = c, f
            lo, f_lo = c / step, None
            while True:
                f_lo, _ = log_delta(gamma, lo)
                if f_lo > target:
                    break
                hi, f_hi = lo, f_lo
                step *= 2.0
                lo = hi / step
                if lo < 1e-12:
                    chi_state["chi"] = hi
                    return hi
        else:  # infeasible: walk up until feasible
            lo, f_lo = c, f
            hi = c * step
            while True:
                f_hi, _ = log_delta(gamma, hi)
                if f_hi <= target:
                    break
                lo, f_lo = hi, f_hi
                step *= 2.0
                hi = lo * step
                if hi > 1e12:
                    raise RuntimeError("calibration: no feasible BMG found (certified delta did not drop)")
        side = 0
        while hi / lo - 1.0 > _CHI_RTOL:
            llo, lhi = math.log(lo), math.log(hi)
            if math.isfinite(f_hi) and f_lo > f_hi:  # Illinois regula falsi on (log chi, log delta)
                wl, wh = (0.5 if side == 1 else 1.0), (0.5 if side == -1 else 1.0)
                fl, fh = (f_lo - target) * wl, (f_hi - target) * wh
                m = llo + (lhi - llo) * fl / (fl - fh)
                m = min(max(m, llo + 0.05 * (lhi - llo)), lhi - 0.05 * (lhi - llo))
            else:
                m = 0.5 * (llo + lhi)
            mid = math.exp(m)
            f_mid, _ = log_delta(gamma, mid)
            if f_mid <= target:
                hi, f_hi = mid, f_mid
                side = 1
            else:
                lo, f_lo = mid, f_mid
                side = -1
        chi_state["chi"] = hi
        return hi

    def err_of_log_a(s: float) -> float:
        gamma = 1.0 - math.exp(s)
        chi = smallest_chi(gamma)
        return BlanketMixedGaussian(gamma, _sigma0_for_chi(gamma, chi), dim).mse_single

    try:
        a0 = 1.0 - optimal_bmg(chi_state["chi"], dim).gamma
        s0 = math.log(a0)
        cap = math.log1p(-1e-9)  # gamma >= 1e-9
        for _ in range(4):  # re-centre if the optimum lands on a bracket end
            lo, hi = s0 - 1.0, min(s0 + 1.0, cap)
            res = minimize_scalar(err_of_log_a, bounds=(lo, hi), method="bounded",
                                  options={"xatol": 0.01, "maxiter": 25})
            if res.x > lo + 0.05 and (res.x < hi - 0.05 or hi == cap):
                break
            s0 = res.x
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
