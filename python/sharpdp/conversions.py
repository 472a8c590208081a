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


_DOUBLINGS = 1100  # bound on the bracketing loops (2^1100 > 1e300 * 1e30)
_TINY = 5e-324  # smallest positive double: the reported floor of a positive delta


def _gaussian_delta_mu(epsilon: np.ndarray, mu: float) -> np.ndarray:
    """Certified upper value of the mu-GDP profile (Balle & Wang 2018, Thm 8), in [5e-324, 1].

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), evaluated as
    exp(log Phi(A)) * (-expm1(eps + log Phi(B) - log Phi(A))) so it stays finite
    and relatively accurate for eps >= 710, then inflated by its error bound. Where that bound
    is useless (huge eps/mu: log Phi(A) ~ -1e15, so x = eps + lB - lA carries an absolute error of
    order 1 and exp(lA) underflows), delta <= Phi(A) = exp(lA) is used instead (the second term
    is >= 0); the smaller of the two upper values is returned. The true delta is > 0 for every
    finite eps, so a value below the double range is reported as 5e-324 (docs/accountant_edges.md
    section 4); eps = inf gives exactly 0.
    """
    eps = np.asarray(epsilon, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        lA = log_ndtr(mu / 2.0 - eps / mu)
        lB = log_ndtr(-mu / 2.0 - eps / mu)
        x = eps + lB - lA
        x = np.minimum(x, -np.finfo(float).tiny)
        base = np.exp(lA) * -np.expm1(x)
        err_x = _FN_REL_ERR * (np.abs(eps) + np.abs(lA) + np.abs(lB)) + 4.0 * np.finfo(float).eps
        rel = _FN_REL_ERR * (1.0 + np.abs(lA)) + err_x * np.exp(x) / -np.expm1(x)
        out = base * (1.0 + 2.0 * rel)
        # delta <= Phi(A): exp(lA) rounded up (log_ndtr within _FN_REL_ERR (1 + |lA|) absolute)
        phiA = np.exp(lA + _FN_REL_ERR * (1.0 + np.abs(lA))) * (1.0 + 4.0 * np.finfo(float).eps)
        out = np.where(np.isnan(out), phiA, np.minimum(out, phiA))
        # delta <= P(B < Z < A) <= mu phi(m), m the point of [B, A] nearest 0 (drop e^eps Phi(B) >= 0;
        # the two-term form cancels when mu is small: its error floor was ~1e-14 at eps = 0)
        A, B = mu / 2.0 - eps / mu, -mu / 2.0 - eps / mu
        m = np.where((B <= 0) & (A >= 0), 0.0, np.minimum(np.abs(A), np.abs(B)))
        narrow = mu * np.exp(-0.5 * m * m + _FN_REL_ERR * (1.0 + m * m)) / math.sqrt(2.0 * math.pi)
        out = np.minimum(out, narrow * (1.0 + 8.0 * np.finfo(float).eps))
    out = np.where(np.isnan(out), 1.0, out)  # (not expected: the trivial bound)
    out = np.clip(out, _TINY, 1.0)
    return np.where(np.isinf(eps), 0.0, out)


def _epsilon_array(epsilon) -> np.ndarray:
    """epsilon (scalar or array_like of reals, >= 0, inf allowed) as a float64 array (at least 1-D)."""
    if epsilon is None or isinstance(epsilon, (str, bytes)):
        raise TypeError(f"epsilon must be a real number or an array of them, got {type(epsilon).__name__}")
    arr = np.asarray(epsilon)
    if arr.dtype.kind not in "iuf":  # complex, bool, object, strings
        raise TypeError(f"epsilon must be real (int or float), got dtype {arr.dtype}")
    arr = np.atleast_1d(arr.astype(float))
    if arr.size == 0:
        raise ValueError("epsilon must not be empty")
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        raise ValueError("epsilon must be >= 0 and not NaN")
    return arr


def gaussian_mechanism_delta(epsilon, sigma: float, sensitivity: float = 1.0):
    """Exact (analytic) privacy profile of the Gaussian mechanism, rounded up.

    For ``M(D) = f(D) + N(0, sigma^2 I)`` with L2 sensitivity ``sensitivity``
    (Balle & Wang 2018, Theorem 8), with mu = sensitivity / sigma::

        delta(eps) = Phi(mu/2 - eps/mu) - exp(eps) * Phi(-mu/2 - eps/mu).

    Parameters
    ----------
    epsilon : float or array_like of float
        epsilon >= 0, in nats; any non-empty shape. ``inf`` gives 0.
    sigma : float
        Noise standard deviation, > 0.
    sensitivity : float, default 1.0
        L2 sensitivity, > 0.

    Returns
    -------
    float or numpy.ndarray of float64
        delta(epsilon), same shape as ``epsilon``, in [5e-324, 1] for finite epsilon: an upper
        bound on the exact value whose relative excess is ~1e-12 in most of the range and
        below 1e-6 wherever the value is above ~1e-290 (the largest excesses, a few 1e-9, are
        the rounding bound of the two cancelling terms at small mu = sensitivity/sigma and
        epsilon ~ mu); log-space evaluation, finite and accurate at epsilon >= 710. A true
        value below the double range (it is > 0 for every finite epsilon) is reported as
        5e-324, never 0 (docs/accountant_edges.md section 4).

    Raises
    ------
    TypeError
        If epsilon is None, a string, complex or boolean.
    ValueError
        If epsilon < 0, NaN or empty, or sigma, sensitivity not finite and > 0.
    """
    sigma = V.real("sigma", sigma, lo=0.0, lo_open=True)
    sensitivity = V.real("sensitivity", sensitivity, lo=0.0, lo_open=True)
    scalar = np.ndim(epsilon) == 0
    eps = _epsilon_array(epsilon)
    out = _gaussian_delta_mu(eps, sensitivity / sigma)
    return float(out[0]) if scalar else out.reshape(np.shape(epsilon))


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
    for _ in range(_DOUBLINGS):  # (every delta in (0, 1) is met below eps ~ 1e300: delta is floored at 5e-324)
        if ok(hi):
            break
        hi *= 2.0
    else:
        raise ValueError(f"delta: {delta!r} is not certified at any epsilon up to {hi!r} (sigma={sigma!r})")
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
    for _ in range(_DOUBLINGS):  # at most ~1000 doublings up to sigma / sensitivity = 1e300
        if ok(hi):
            break
        hi *= 2.0
        if hi > 1e300:
            raise ValueError(f"delta: {delta!r} at epsilon={epsilon!r} would need sigma / sensitivity above 1e300 "
                             "(delta(0) ~ sensitivity / (sigma sqrt(2 pi))); no finite calibration is certified")
    lo = hi / 2.0
    while ok(lo) and lo > 1e-300:
        hi, lo = lo, lo / 2.0
    return sensitivity * _bisect_safe(ok, lo, hi)


def _zcdp_scalar_args(rho, delta) -> tuple[float, float]:
    return V.real("rho", rho, lo=0.0), V.probability_open("delta", delta)


def _map_rho(fn, rho, delta):
    if np.ndim(rho) == 0:
        return fn(rho, delta)
    arr = np.asarray(rho)
    return np.array([fn(float(x), delta) for x in arr.reshape(-1)]).reshape(arr.shape)


def _cks20_terms(t: float, rho: float, log_inv_delta: float) -> tuple[float, float, float, float]:
    """The four terms of the CKS20 bound at alpha = 1 + e^t, each with a few ulps of relative error.

    All terms are functions of the same float alpha - 1; log(1 - 1/alpha) is computed as
    -log1p(1/(alpha - 1)) (no cancellation), so |terms| bounds the rounding error.
    """
    am1 = math.exp(t)
    log_alpha = math.log1p(am1)
    return ((1.0 + am1) * rho, log_inv_delta / am1, -math.log1p(1.0 / am1), -log_alpha / am1)


def _zcdp_to_epsilon_scalar(rho, delta) -> float:
    rho, delta = _zcdp_scalar_args(rho, delta)
    if rho == 0.0:
        return 0.0
    lid = -math.log(delta)

    def f(t: float) -> float:
        return math.fsum(_cks20_terms(t, rho, lid))

    # coarse grid on t = log(alpha - 1), then Brent's bounded search around the best point;
    # any alpha gives a valid bound, so the search only affects tightness, never safety.
    from scipy.optimize import minimize_scalar

    grid = np.linspace(-60.0, 60.0, 241)
    vals = np.array([f(t) for t in grid])
    k = int(np.argmin(vals))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    res = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    t = float(res.x) if res.fun <= vals[k] else float(grid[k])
    terms = _cks20_terms(t, rho, lid)
    # each term carries a few ulps of error (log1p/exp/division): inflate by a bound on it
    err = 16.0 * np.finfo(float).eps * math.fsum(abs(x) for x in terms) + 1e-300
    return max(0.0, math.fsum(terms) + err)


def zcdp_to_epsilon(rho, delta):
    """Tight conversion from rho-zCDP to (epsilon, delta)-DP via the Renyi curve, rounded up.

    Canonne, Kamath & Steinke (2020), "The Discrete Gaussian for Differential Privacy",
    Proposition 12 / Corollary 13 (the same bound as Asoodeh et al. 2021), applied to the
    Renyi curve D_alpha <= alpha rho of rho-zCDP::

        epsilon = inf_{alpha > 1}  alpha rho + log(1 - 1/alpha) - (log delta + log alpha)/(alpha - 1)

    The infimum is located numerically over t = log(alpha - 1) (coarse grid plus Brent); the
    bound is then evaluated at that alpha with compensated summation and inflated by a bound
    on its floating-point error, so the result is never below the exact optimum (any alpha gives
    a valid bound; the search reaches the optimum to ~1e-12 relative). Clamped at 0 (an
    (epsilon < 0, delta) guarantee implies (0, delta)).

    Parameters
    ----------
    rho : float or array_like of float
        zCDP parameter rho >= 0 (nats); arrays are mapped elementwise.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    float or numpy.ndarray of float64
        epsilon >= 0 in nats (0.0 for rho = 0).

    Raises
    ------
    ValueError
        If rho < 0 or NaN or infinite, or delta not in (0, 1).
    """
    return _map_rho(_zcdp_to_epsilon_scalar, rho, delta)


def _bun_steinke_scalar(rho, delta) -> float:
    rho, delta = _zcdp_scalar_args(rho, delta)
    val = rho + 2.0 * math.sqrt(rho * -math.log(delta))
    return val * (1.0 + 8.0 * np.finfo(float).eps)


def zcdp_to_epsilon_bun_steinke(rho, delta):
    """Simple conversion rho-zCDP => (rho + 2 sqrt(rho log(1/delta)), delta)-DP, rounded up.

    Bun & Steinke (2016), Proposition 1.3 (quoted in *Better Privacy Guarantees for Larger Groups*,
    section 5.1). Looser than
    :func:`zcdp_to_epsilon`; kept for comparison.

    Parameters
    ----------
    rho : float or array_like of float
        rho >= 0 (nats).
    delta : float
        delta in (0, 1).

    Returns
    -------
    float or numpy.ndarray of float64
        epsilon in nats, inflated by 8 ulps so it is never below the exact formula.

    Raises
    ------
    ValueError
        If rho < 0 or NaN or infinite, or delta not in (0, 1).
    """
    return _map_rho(_bun_steinke_scalar, rho, delta)
