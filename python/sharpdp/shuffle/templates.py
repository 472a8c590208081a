"""Asymptotic templates of the shuffled privacy profile (seed 001, Section 2.3 and Section 3).

:func:`asymptotic_delta` (the template f_{n,eps}(chi) of the seed's Lemma "Privacy profile
bounds"), :func:`mse_lower_bound` (d chi_up^2, the HCR-type bound of the seed's Theorem
"hcr-chiup-lower-bound") and Chua et al.'s Gaussian index :func:`gaussian_chi_chua`. None of
them is a certified privacy figure: the certified delta(eps) comes from
:class:`sharpdp.shuffle.ShuffleAccountant`.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp import _validation as V

__all__ = ["asymptotic_delta", "gaussian_chi_chua", "gaussian_chua_variance", "mse_lower_bound"]


def _scalar_or_array(out: np.ndarray, *inputs):
    """A float when every input was a scalar, else the array."""
    if all(np.ndim(x) == 0 for x in inputs):
        return float(out.reshape(-1)[0])
    return out


def asymptotic_delta(n, epsilon, chi):
    """Asymptotic template f_{n,eps}(chi) of the shuffled privacy profile (an **estimate**, not a bound).

    Seed 001, Lemma "Privacy profile bounds" (Section 2.3)::

        f_{n,eps}(chi) = exp(-chi^2 eps^2 n / 2) / (sqrt(2 pi) chi^3 eps^2 n^(3/2)).

    The true profile delta(eps_n) lies between f(chi_up)(1 + o(1)) and f(chi_lo)(1 + o(1)) only
    **asymptotically** (eps_n = omega(n^-1/2), O(sqrt(log n / n))). At finite n the template can
    be far off in either direction (spec fft_accountant.md Section 6: 15-30 % above the finite-a
    form at practical delta, and for heavy-tailed l below the true value). Never use it as a
    privacy guarantee; use the certified accountant.

    Parameters
    ----------
    n : float or array_like
        Number of users, >= 1 (broadcast).
    epsilon : float or array_like
        Privacy parameter in nats, > 0.
    chi : float or array_like
        Shuffle index, > 0 (dimensionless).

    Returns
    -------
    float or numpy.ndarray
        The template value (float64; a float for scalar inputs). Computed in log space, so it
        underflows gracefully to 0.0 instead of producing NaN.

    Raises
    ------
    ValueError
        If any argument is NaN, infinite or out of range.
    """
    n_a = V.real_array("n", n, lo=1.0)
    e_a = V.real_array("epsilon", epsilon, lo=0.0)
    c_a = V.real_array("chi", chi, lo=0.0)
    if np.any(e_a == 0.0):
        raise ValueError("epsilon must be > 0")
    if np.any(c_a == 0.0):
        raise ValueError("chi must be > 0")
    n_b, e_b, c_b = np.broadcast_arrays(n_a, e_a, c_a)
    log_f = (-0.5 * (c_b * e_b) ** 2 * n_b - 0.5 * np.log(2 * np.pi) - 3 * np.log(c_b)
             - 2 * np.log(e_b) - 1.5 * np.log(n_b))
    return _scalar_or_array(np.exp(log_f), n, epsilon, chi)


def mse_lower_bound(chi_up, dim):
    """HCR-type lower bound d * chi_up^2 on the single-user error (seed 001, Theorem "hcr-chiup-lower-bound").

    For one user, every unbiased estimator x_hat of a randomizer with upper shuffle index chi_up
    has worst-case squared error Err_1 >= d chi_up^2. For the n-user shuffled protocol the value
    d chi^2 / n is the minimax MSE only **asymptotically** (seed Theorem "Gaussian Limit
    Correspondence", sigma-high privacy regime): read ``mse_lower_bound(chi, d) / n`` as an
    asymptotic estimate of the best achievable n-user MSE, not as a finite-n guarantee.

    Parameters
    ----------
    chi_up : float or array_like
        Upper shuffle index, >= 0 (dimensionless).
    dim : int
        Dimension d >= 1.

    Returns
    -------
    float or numpy.ndarray
        d chi_up^2, in squared data units (sum over the d coordinates).
    """
    c = V.real_array("chi_up", chi_up, lo=0.0)
    d = V.integer("dim", dim, lo=1)
    return _scalar_or_array(d * c**2, chi_up)


def gaussian_chua_variance(sigma0: float) -> float:
    """V(sigma0^2) = e^{4a} - 2 e^{2a} + e^{a}, a = 1/sigma0^2 (seed 001, Appendix "gaussian", eq. var-ell0-gauss).

    The variance of l_0(Y; e, 0, R_{-e}) for the Gaussian randomizer N(x, sigma0^2 I). Written
    as e^a (expm1(3a) - 2 expm1(a)) to avoid cancellation for large sigma0.
    """
    s = V.real("sigma0", sigma0, lo=0.0, lo_open=True)
    a = 1.0 / (s * s)
    return math.exp(a) * (math.expm1(3 * a) - 2 * math.expm1(a))


def gaussian_chi_chua(sigma0: float) -> float:
    """chi_chua of the Gaussian local randomizer N(x, sigma0^2 I_d) (seed 001, Section 4.3 / Appendix "gaussian").

    chi_chua = 1 / sqrt(V(sigma0^2)), V = e^{4/s^2} - 2 e^{2/s^2} + e^{1/s^2}; its series is
    chi_chua^2 = s^2 - 9/2 + (145/12)/s^2 - 27/s^4 + O(s^-6). Dimensionless, independent of d.
    chi_chua bounds the profile only under the (open) conjecture 3.2 of Chua et al. 2024, so it
    is an index for comparison, never a certified figure. (To be attached to
    ``GaussianRandomizer.chi_chua`` by the owner of mechanisms.py.)
    """
    return 1.0 / math.sqrt(gaussian_chua_variance(sigma0))
