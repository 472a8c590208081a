"""Conversions between privacy notions, and the Gaussian mechanism's exact profile.

All logarithms are natural; epsilon is in nats. Every function here returns a
value rounded to the safe side (delta and epsilon never under-reported).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from sharpdp import _validation as V

# Assumed relative accuracy of scipy.special.log_ndtr / exp / expm1 (a few ulps
# in practice; we take 64 ulps to be safe). Used to inflate results upwards.
_FN_REL_ERR = 64.0 * np.finfo(float).eps


def _gaussian_delta_mu(epsilon: np.ndarray, mu: float) -> np.ndarray:
    """Certified upper value of the mu-GDP profile (Balle & Wang 2018, Thm 8).

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), evaluated as
    exp(log Phi(A)) * (-expm1(eps + log Phi(B) - log Phi(A))) so it stays finite
    and relatively accurate for eps >= 710, then inflated by its error bound.
    """
    eps = np.asarray(epsilon, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lA = log_ndtr(mu / 2.0 - eps / mu)
        lB = log_ndtr(-mu / 2.0 - eps / mu)
        x = eps + lB - lA
        x = np.minimum(x, -np.finfo(float).tiny)
        base = np.exp(lA) * -np.expm1(x)
        err_x = _FN_REL_ERR * (np.abs(eps) + np.abs(lA) + np.abs(lB)) + 4.0 * np.finfo(float).eps
        rel = _FN_REL_ERR * (1.0 + np.abs(lA)) + err_x * np.exp(x) / -np.expm1(x)
        out = base * (1.0 + 2.0 * rel)
    out = np.where(np.isinf(eps), 0.0, out)
    return np.minimum(out, 1.0)


def gaussian_mechanism_delta(epsilon, sigma: float, sensitivity: float = 1.0):
    """Exact (analytic) privacy profile of the Gaussian mechanism, rounded up.

    For ``M(D) = f(D) + N(0, sigma^2 I)`` with L2 sensitivity ``sensitivity``
    (Balle & Wang 2018, Theorem 8), with mu = sensitivity / sigma::

        delta(eps) = Phi(mu/2 - eps/mu) - exp(eps) * Phi(-mu/2 - eps/mu).

    Parameters
    ----------
    epsilon : float or array_like of float
        epsilon >= 0, in nats; any shape. ``inf`` gives 0.
    sigma : float
        Noise standard deviation, > 0.
    sensitivity : float, default 1.0
        L2 sensitivity, > 0.

    Returns
    -------
    float or numpy.ndarray of float64
        delta(epsilon), same shape as ``epsilon``; an upper bound on the exact
        value whose relative excess is below ~1e-12 (log-space evaluation,
        finite and accurate at epsilon >= 710).

    Raises
    ------
    ValueError
        If epsilon < 0 or NaN, or sigma, sensitivity not finite and > 0.
    """
    sigma = V.real("sigma", sigma, lo=0.0, lo_open=True)
    sensitivity = V.real("sensitivity", sensitivity, lo=0.0, lo_open=True)
    scalar = np.ndim(epsilon) == 0
    eps = V.real_array("epsilon", np.atleast_1d(epsilon), lo=0.0) if not np.any(np.isinf(epsilon)) else \
        _epsilon_with_inf(epsilon)
    out = _gaussian_delta_mu(eps, sensitivity / sigma)
    return float(out[0]) if scalar else out.reshape(np.shape(epsilon))


def _epsilon_with_inf(epsilon) -> np.ndarray:
    eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
    if np.any(np.isnan(eps)) or np.any(eps < 0):
        raise ValueError("epsilon must be >= 0 and not NaN")
    return eps


def _bisect_safe(pred, lo: float, hi: float, *, rel: float = 1e-12, iters: int = 200) -> float:
    """Smallest x in [lo, hi] with pred(x) true, returned from the safe (true) end.

    ``pred`` must be monotone (false ... false true ... true) and pred(hi) true.
    """
    for _ in range(iters):
        if hi - lo <= rel * max(abs(hi), 1e-300):
            break
        mid = 0.5 * (lo + hi) if hi < 4 * max(lo, 1e-300) or lo <= 0 else math.sqrt(lo * hi)
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return hi


def gaussian_mechanism_epsilon(delta: float, sigma: float, sensitivity: float = 1.0) -> float:
    """Smallest epsilon (nats) at which the Gaussian mechanism is (epsilon, delta)-DP.

    Bisection on the certified profile of :func:`gaussian_mechanism_delta`;
    the returned epsilon is the upper end of the final bracket (relative width
    1e-12), so its certified delta is <= ``delta``. Returns exactly 0.0 when
    delta(0) <= ``delta``.

    Raises
    ------
    ValueError
        If delta is not in (0, 1), or sigma, sensitivity are not > 0.
    """
    delta = V.probability_open("delta", delta)
    sigma = V.real("sigma", sigma, lo=0.0, lo_open=True)
    sensitivity = V.real("sensitivity", sensitivity, lo=0.0, lo_open=True)
    mu = sensitivity / sigma

    def ok(e: float) -> bool:
        return float(_gaussian_delta_mu(np.array([e]), mu)[0]) <= delta

    if ok(0.0):
        return 0.0
    hi = max(1.0, mu * mu)
    while not ok(hi):
        hi *= 2.0
    return _bisect_safe(ok, 0.0, hi)


def gaussian_mechanism_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest noise scale sigma making the Gaussian mechanism (epsilon, delta)-DP.

    Analytic Gaussian mechanism calibration (Balle & Wang 2018, Algorithm 1),
    by bisection on the certified profile; the returned sigma is the upper
    (safe) end of a bracket of relative width 1e-12.

    Parameters
    ----------
    epsilon : float
        Target epsilon >= 0 (nats).
    delta : float
        Target delta in (0, 1).
    sensitivity : float, default 1.0
        L2 sensitivity > 0; sigma scales linearly with it.

    Returns
    -------
    float
        sigma > 0.

    Raises
    ------
    ValueError
        If epsilon < 0, delta not in (0, 1), sensitivity <= 0, or any is NaN.
    """
    epsilon = V.real("epsilon", epsilon, lo=0.0)
    delta = V.probability_open("delta", delta)
    sensitivity = V.real("sensitivity", sensitivity, lo=0.0, lo_open=True)

    # delta is increasing in mu = sensitivity/sigma: large s = 1/mu is safe.
    def ok(s: float) -> bool:
        return float(_gaussian_delta_mu(np.array([epsilon]), 1.0 / s)[0]) <= delta

    hi = 1.0
    while not ok(hi):
        hi *= 2.0
    lo = hi / 2.0
    while ok(lo) and lo > 1e-300:
        hi, lo = lo, lo / 2.0
    return sensitivity * _bisect_safe(ok, lo, hi)
