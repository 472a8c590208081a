"""Uncertified estimates of the shuffled delta that steer the calibrations: the asymptotic template
f_{n,eps}(chi) and the single-big-jump estimate (docs/calibration.md). Never used as a bound."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr
from sharpdp import _validation as V

# The big-jump estimate enters the base model only where sqrt(n w) (e^eps - 1) >= this (jump_regime).
_JUMP_GATE = 1.5


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


def phi_bar(z: float) -> float:
    """P(Z > z), Z ~ N(0, 1) (scalar, no cancellation on the right)."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _lognormal_stop_loss(k: float, b: float, r: float, z_lo: float = -math.inf) -> float:
    """E[(b exp(r Z - r^2/2) - k)_+; Z > z_lo] for Z ~ N(0, 1), b > 0, r > 0 (Black-Scholes form)."""
    if k <= 0.0:  # the whole (truncated) mean minus k
        return b * phi_bar(z_lo - r) - k * phi_bar(z_lo)
    z = max((math.log(k / b) + 0.5 * r * r) / r, z_lo)  # b e^{rz - r^2/2} > k  <=>  Z > z
    return max(b * phi_bar(z - r) - k * phi_bar(z), 0.0)


def template_scalar(chi: float, n: int, epsilon: float) -> float:
    """:func:`template_delta_estimate` for one chi > 0 (no validation; the search's inner loop).

    phi(a) - a Phibar(a) cancels for large a; there it is phi(a) (1/a^2 - 3/a^4 + 15/a^6 - 105/a^8)
    (the Mills-ratio series; relative error below 1e-3 for a >= 6).
    """
    a = chi * epsilon * math.sqrt(n)
    if a < 6.0:
        val = math.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi) - a * phi_bar(a)
    else:
        u = 1.0 / (a * a)
        val = math.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi) * u * (1.0 - 3.0 * u + 15.0 * u * u - 105.0 * u ** 3)
    return min(val / (chi * math.sqrt(n)), 1.0)


def big_jump_estimate(gamma: float, sigma0: float, n: int, epsilon: float) -> float:
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
    g = 2.0 * phi_bar(1.0 / sigma0)
    if g <= 0.0:
        return 1.0
    t = (n - 1) * g * ee1
    return _lognormal_stop_loss(t + ee1 + 1.0, g, 2.0 / sigma0, 1.0 / sigma0) / g


def big_jump_jensen(gamma: float, sigma0: float, n: int, epsilon: float) -> float:
    """Relative second-order *estimate* (not a bound) of how far the shuffled delta lies above
    :func:`big_jump_estimate` (docs/calibration.md §10).

    The big jump holds the n - 1 others at their mean; their sum's fluctuation Y (mean 0, variance
    V = (n - 1) (w E[L^2] - w^2 E[L]^2), w the blanket weight) raises the stop-loss, by Jensen's
    inequality: E[(L - T - Y)_+] ~ tau(T) + V f_L(T) / 2 to second order, f_L the density of L at T (the
    second derivative of tau). Returns V f_L(T) / (2 tau(T)) (0 where tau(T) = 0). Used only to aim the
    calibration's start; never as a privacy figure.
    """
    ee1 = math.expm1(epsilon)
    try:  # (e^{r^2} overflows at small sigma0: then no estimate, 0, as where it cannot be formed)
        if gamma > 0.0:  # L = gamma - e^eps + (1 - gamma) exp(rZ - r^2/2), r = 1/sigma0 (as in big_jump_estimate)
            w, b, r, z_lo = gamma, 1.0 - gamma, 1.0 / sigma0, -math.inf
            k = (n - 1) * gamma * ee1 - gamma + ee1 + 1.0
            var_l = b * b * math.expm1(r * r)
        else:  # the Gaussian randomizer's increasing part, weight 1/g on Z > 1/s (as in big_jump_estimate)
            w = 2.0 * phi_bar(1.0 / sigma0)
            if w <= 0.0:
                return 0.0
            b, r, z_lo = w, 2.0 / sigma0, 1.0 / sigma0
            k = (n - 1) * w * ee1 + ee1 + 1.0
            m1 = phi_bar(z_lo - r)
            var_l = max(w * math.exp(r * r) * phi_bar(z_lo - 2.0 * r) - m1 * m1, 0.0)
        tau = _lognormal_stop_loss(k, b, r, z_lo) / (1.0 if gamma > 0.0 else w)
        z = (math.log(k / b) + 0.5 * r * r) / r
        dens = (math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi) / (r * k) if z > z_lo else 0.0) \
            / (1.0 if gamma > 0.0 else w)
        var_y = (n - 1) * (w * (var_l + ee1 * ee1) - w * w * ee1 * ee1)
        return 0.5 * var_y * dens / tau if tau > 0.0 else 0.0
    except (OverflowError, ValueError, ZeroDivisionError):
        return 0.0


def jump_regime(n: int, weight: float, epsilon: float) -> bool:
    """True where :func:`big_jump_estimate` is a fair model: the others' mean shift (n - 1) w (e^eps - 1)
    dominates their fluctuation, of order sqrt(n w), by the factor _JUMP_GATE (w the blanket weight)."""
    return math.sqrt(n * weight) * math.expm1(epsilon) >= _JUMP_GATE


def template_chi(n: int, epsilon: float, delta: float) -> float:
    """chi at which :func:`template_delta_estimate` equals delta (an initial guess only)."""
    f = lambda lc: math.log(max(template_delta_estimate(math.exp(lc), n, epsilon), 1e-300)) - math.log(delta)
    lo, hi = -30.0, 30.0
    if f(lo) <= 0.0:
        return math.exp(lo)
    if f(hi) >= 0.0:
        return math.exp(hi)
    return math.exp(brentq(f, lo, hi, xtol=1e-6))
