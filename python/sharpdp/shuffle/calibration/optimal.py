"""The BMG minimising the worst-case single-user MSE Err_1 under a lower shuffle-index constraint
(*Shuffling-Aware Optimization for Private Vector Mean Estimation*, Section 4.2: the paper's closed forms
optimised numerically)."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize_scalar
from sharpdp import _validation as V
from sharpdp.shuffle.randomizers import BlanketMixedGaussian


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
