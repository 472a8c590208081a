"""Closed-form privacy-preserving Cramer-Rao bounds.

Source: "Privacy-Preserving Cramer-Rao Lower Bound", Sections 2-3.2 and 4.2-4.3.

Source: J. Ke, J. Wang, J.-F. Zhang, "Privacy-Preserving Cramer-Rao Lower Bound"
(the paper). Model (1): ``y = H theta + w`` with ``y`` in R^m, ``theta`` in R^n
and Gaussian-equivalent noise information ``I_y(H theta) = Sigma_w^{-1}``.
The privacy constraint is the Fisher-information bound ``I_z(y) <= S``.

All matrices are float64; units are those of ``y`` (a covariance has units of
``y``^2 divided by those of ``H``^2; ``S`` has units of 1/``y``^2).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg

from sharpdp import _validation as V
from sharpdp.crlb import _checks as C

__all__ = [
    "pp_fisher_information",
    "is_identifiable",
    "ppcrlb",
    "classical_crlb",
    "crlb_gap_lower_bound",
    "dp_lower_bound",
    "bayesian_ppcrlb",
    "consensus_lower_bound",
]


def _model(H: Any, S: Any, Sigma_w: Any | None, *, noise_pd: bool = True) -> tuple[np.ndarray, np.ndarray, Any]:
    H = C.matrix("H", H)
    m = H.shape[0]
    S = C.psd("S", S, m)
    Sw = None if Sigma_w is None else (C.pd if noise_pd else C.psd)("Sigma_w", Sigma_w, m)
    return H, S, Sw


def spd_inverse(name: str, a: np.ndarray) -> np.ndarray:
    try:
        c = scipy.linalg.cho_factor(a, lower=True)
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"{name} is not positive definite and cannot be inverted") from exc
    inv = scipy.linalg.cho_solve(c, np.eye(a.shape[0]))
    return 0.5 * (inv + inv.T)


def _pp_info(H: np.ndarray, S: np.ndarray, Sw: np.ndarray) -> np.ndarray:
    L = C.psd_sqrt(S)
    inner = L @ Sw @ L + np.eye(S.shape[0])  # eigenvalues >= 1: always invertible
    LH = L @ H
    out = LH.T @ scipy.linalg.solve(inner, LH, assume_a="pos")
    return 0.5 * (out + out.T)


def pp_fisher_information(H: Any, S: Any, Sigma_w: Any) -> np.ndarray:
    """Privacy-preserving Fisher information matrix PI_{y|S}(theta) (Definition 21).

    ``PI = H^T S^{1/2} (S^{1/2} Sigma_w S^{1/2} + I_m)^{-1} S^{1/2} H``, with the
    symmetric square root of ``S``. Singular ``S`` is allowed (directions with zero
    privacy level contribute nothing), as in the paper.

    Parameters
    ----------
    H : array_like, shape (m, n)
        Measurement matrix.
    S : array_like, shape (m, m)
        Privacy level, symmetric positive semidefinite.
    Sigma_w : array_like, shape (m, m)
        Noise covariance ``I_y(H theta)^{-1}``, symmetric PSD. A singular
        ``Sigma_w`` (noise-free directions, infinite ``I_y``) is allowed: the
        formula is continuous there (``Sigma_w = 0`` gives ``H^T S H``).

    Returns
    -------
    ndarray, shape (n, n)
        Symmetric PSD; singular when the system is not identifiable.

    Raises
    ------
    ValueError
        Wrong shapes, non-finite entries, non-symmetric or indefinite ``S`` or
        ``Sigma_w`` (each error names the parameter).
    """
    H, S, Sw = _model(H, S, Sigma_w, noise_pd=False)
    return _pp_info(H, S, Sw)


def is_identifiable(H: Any, S: Any) -> bool:
    """Identifiability under privacy level ``S`` (Theorem 12): ``H^T S H`` invertible.

    Decided as ``rank(S^{1/2} H) == n`` with numpy's default SVD rank tolerance
    (``rank(H^T S H) = rank(S^{1/2} H)``), which is better conditioned than testing
    ``H^T S H`` itself.

    Parameters
    ----------
    H : array_like, shape (m, n)
    S : array_like, shape (m, m), symmetric PSD

    Returns
    -------
    bool
    """
    H = C.matrix("H", H)
    S = C.psd("S", S, H.shape[0])
    return int(np.linalg.matrix_rank(C.psd_sqrt(S) @ H)) == H.shape[1]


def require_identifiable(H: np.ndarray, S: np.ndarray) -> None:
    if int(np.linalg.matrix_rank(C.psd_sqrt(S) @ H)) != H.shape[1]:
        raise ValueError(
            "H^T S H is singular: theta is not identifiable under privacy level S (Theorem 12), "
            "so no finite privacy-preserving CRLB exists"
        )


def ppcrlb(H: Any, S: Any, Sigma_w: Any) -> np.ndarray:
    """Privacy-preserving CRLB Sigma_PPCR of Theorem 14.

    ``Sigma_PPCR = PI^{-1}`` with ``PI`` of :func:`pp_fisher_information`. Every
    unbiased estimator built on any admissible mechanism with ``I_z(y) <= S`` has
    MSE matrix ``>= Sigma_PPCR``. Equivalent form (Lemma A.2):
    ``(H^T (I + S Sigma_w)^{-1} S H)^{-1}``. Isotropic case ``S = s I``,
    ``Sigma_w = sigma^2 I``: ``(sigma^2 + 1/s) (H^T H)^{-1}``.

    Parameters
    ----------
    H : array_like, shape (m, n)
    S : array_like, shape (m, m), symmetric PSD (may be singular)
    Sigma_w : array_like, shape (m, m), symmetric PSD (singular allowed, as in
        :func:`pp_fisher_information`; ``Sigma_w = 0`` gives ``(H^T S H)^{-1}``)

    Returns
    -------
    ndarray, shape (n, n)

    Raises
    ------
    ValueError
        Bad shapes/values (naming the parameter), or ``H^T S H`` singular
        (not identifiable, Theorem 12) -- no pseudo-inverse is substituted.
    """
    H, S, Sw = _model(H, S, Sigma_w, noise_pd=False)
    require_identifiable(H, S)
    return spd_inverse("the privacy-preserving Fisher information", _pp_info(H, S, Sw))


def classical_crlb(H: Any, Sigma_w: Any) -> np.ndarray:
    """Classical CRLB ``Sigma_CR = (H^T Sigma_w^{-1} H)^{-1}`` (no privacy constraint).

    Parameters
    ----------
    H : array_like, shape (m, n), full column rank
    Sigma_w : array_like, shape (m, m), symmetric positive definite

    Returns
    -------
    ndarray, shape (n, n)
    """
    H = C.matrix("H", H)
    Sw = C.pd("Sigma_w", Sigma_w, H.shape[0])
    if int(np.linalg.matrix_rank(H)) != H.shape[1]:
        raise ValueError("H must have full column rank for the classical CRLB")
    info = H.T @ scipy.linalg.solve(Sw, H, assume_a="pos")
    return spd_inverse("H^T Sigma_w^{-1} H", 0.5 * (info + info.T))


def crlb_gap_lower_bound(H: Any, S: Any, Sigma_w: Any) -> np.ndarray:
    """Lower bound of Corollary 18 on the privacy-preserving CRLB.

    Returns ``Sigma_CR + (H^T S H)^{-1}``, and Corollary 18 states
    ``Sigma_PPCR >= Sigma_CR + (H^T S H)^{-1}``: the privacy cost (the gap
    ``Sigma_PPCR - Sigma_CR``) is at least ``(H^T S H)^{-1}``, which is the
    returned matrix minus :func:`classical_crlb`.

    Equality holds in the isotropic case ``S = s I``, ``Sigma_w = sigma^2 I``
    (both sides equal ``(sigma^2 + 1/s)(H^T H)^{-1}``); the gap is strict only for
    non-isotropic ``S`` or correlated noise and can be tiny, so compare with a
    tolerance.

    Parameters
    ----------
    H : array_like, shape (m, n), full column rank
    S : array_like, shape (m, m), symmetric PSD with ``H^T S H`` invertible
    Sigma_w : array_like, shape (m, m), symmetric positive definite

    Returns
    -------
    ndarray, shape (n, n)

    Raises
    ------
    ValueError
        Bad input, or ``H^T S H`` singular (Theorem 12).
    """
    H, S, Sw = _model(H, S, Sigma_w)
    require_identifiable(H, S)
    hsh = H.T @ S @ H
    return classical_crlb(H, Sw) + spd_inverse("H^T S H", 0.5 * (hsh + hsh.T))


def _h_stack(H_list: Any) -> tuple[np.ndarray, int]:
    if isinstance(H_list, np.ndarray) and H_list.ndim in (2, 3):
        blocks = list(H_list) if H_list.ndim == 3 else [row[None, :] for row in H_list]
    elif isinstance(H_list, (list, tuple)):
        blocks = list(H_list)
    else:
        raise TypeError("H_list must be a sequence of (m_k, n) matrices or an array of shape (K, m, n) or (K, n)")
    if not blocks:
        raise ValueError("H_list must not be empty")
    mats = []
    for k, h in enumerate(blocks):
        a = V.real_array(f"H_list[{k}]", h)
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or a.shape[1] != (mats[0].shape[1] if mats else a.shape[1]):
            raise ValueError(f"H_list[{k}] must be a 2-D (m_k, n) matrix with the same n as H_list[0], got {a.shape}")
        mats.append(a)
    return np.vstack(mats), len(mats)


def dp_lower_bound(H_list: Any, Sigma_cr: Any, epsilon: float) -> np.ndarray:
    """MSE lower bound under epsilon-differential privacy (Corollary 19).

    ``Sigma_CR + (sum_k H_k^T H_k)^{-1} / (K epsilon^2)`` for the multi-measurement
    system (14), valid for every unbiased estimator built on any epsilon-DP
    mechanism in the sense of Definition 6 (neighbouring sequences differ in one
    ``y_k``; the privacy loss scales with ``max_k ||y_k - y_k'||``, Remark 7).

    It comes from Proposition 8 (epsilon-DP implies ``trace I_z(Y) <= K eps^2``)
    and the trace relaxation ``H^T S H <= trace(S) H^T H``. Which mechanism attains
    it: Gaussian *output* perturbation whose Fisher trace equals ``K eps^2`` -- a
    mechanism that is not itself epsilon-DP. The epsilon-DP Laplace output
    perturbation pays twice the privacy term. So this is a valid lower bound, not
    the MSE of an epsilon-DP mechanism.

    Parameters
    ----------
    H_list : sequence of array_like (m_k, n), or ndarray (K, m, n) or (K, n)
        Measurement matrices ``H_1..H_K`` (a 1-D entry is one row);
        ``sum H_k^T H_k`` must be invertible.
    Sigma_cr : array_like, shape (n, n)
        Classical CRLB ``(I_Y(theta))^{-1}``, symmetric PSD.
    epsilon : float
        Privacy parameter, > 0 (nats per unit of ``||y_k - y_k'||``).

    Returns
    -------
    ndarray, shape (n, n)

    Raises
    ------
    ValueError
        ``epsilon <= 0`` or non-finite, bad shapes, non-PSD ``Sigma_cr``,
        singular ``sum H_k^T H_k``.
    """
    eps = V.real("epsilon", epsilon, lo=0.0, lo_open=True)
    Hs, K = _h_stack(H_list)
    n = Hs.shape[1]
    Scr = C.psd("Sigma_cr", Sigma_cr, n)
    if int(np.linalg.matrix_rank(Hs)) != n:
        raise ValueError("H_list: sum_k H_k^T H_k must be invertible (Corollary 19)")
    return Scr + spd_inverse("sum_k H_k^T H_k", Hs.T @ Hs) / (K * eps * eps)


def bayesian_ppcrlb(H: Any, S: Any, Sigma_w: Any, prior_cov: Any) -> np.ndarray:
    """Bayesian privacy-preserving CRLB of Section 4.2 for a Gaussian prior.

    Prior ``theta ~ N(mu, P)`` with ``P = prior_cov``: ``J_theta = P^{-1}``; the
    induced marginal ``Y ~ N(H mu, H P H^T + Sigma_w)`` has prior information
    ``J_Y = (H P H^T + Sigma_w)^{-1}``. Under the Bayesian constraint
    ``BI_z(Y) <= S`` (which needs ``S - J_Y`` PSD), with ``S' = S - J_Y`` and the
    Gaussian noise information ``I_Y(H theta) = Sigma_w^{-1}`` (constant, so the
    expectation over the prior is trivial),

    ``Sigma_BPPCR = (H^T S'^{1/2} (S'^{1/2} Sigma_w S'^{1/2} + I)^{-1} S'^{1/2} H + J_theta)^{-1}``.

    For the dynamic model (28) pass the batch form (29): ``H = diag(C_0..C_K)``,
    ``prior_cov`` the covariance of the stacked trajectory.

    Parameters
    ----------
    H : array_like, shape (m, n)
    S : array_like, shape (m, m), symmetric PSD with ``S >= J_Y``
    Sigma_w : array_like, shape (m, m), symmetric positive definite
    prior_cov : array_like, shape (n, n), symmetric positive definite

    Returns
    -------
    ndarray, shape (n, n)

    Raises
    ------
    ValueError
        Bad input, or ``S - J_Y`` not PSD (the constraint cannot be met even by an
        output independent of ``Y``).
    """
    H, S, Sw = _model(H, S, Sigma_w)
    P = C.pd("prior_cov", prior_cov, H.shape[1])
    J_theta = spd_inverse("prior_cov", P)
    J_Y = spd_inverse("H P H^T + Sigma_w", H @ P @ H.T + Sw)
    S_eff = S - J_Y
    ev = np.linalg.eigvalsh(0.5 * (S_eff + S_eff.T))
    if ev[0] < -C.SYM_RTOL * max(abs(ev[-1]), float(np.max(np.abs(S))), 1e-300):
        raise ValueError(
            f"S must dominate the prior information J_Y = (H P H^T + Sigma_w)^{{-1}} (smallest eigenvalue of "
            f"S - J_Y is {ev[0]:.3g}); the Bayesian constraint BI_z(Y) <= S is infeasible"
        )
    S_eff = 0.5 * (S_eff + S_eff.T)  # tiny negative eigenvalues are clipped by the square root
    return spd_inverse("the Bayesian information", _pp_info(H, S_eff, Sw) + J_theta)


def consensus_lower_bound(S: Any, sigma_w: float = math.inf) -> float:
    """MSE lower bound for privacy-preserving average consensus (Corollary 38).

    Agents ``i = 1..N`` hold ``y_i = theta + w_i``, ``w_i ~ N(0, sigma_w^2)``; any
    admissible mechanism with ``I_Z(y_i) <= S_i`` whose consensus value ``ybar``
    satisfies ``E[ybar | y] = mean(y)`` has

    ``E (ybar - mean(y))^2 >= sum_i a_i / S_i / (N sum_i a_i)``,
    ``a_i = S_i sigma_w^2 / (S_i sigma_w^2 + 1)``,

    which tends to the corollary's ``(1/N^2) sum_i 1/S_i`` as ``sigma_w -> inf``
    (the default, the maximum-entropy prior). The finite-``sigma_w`` form follows
    the proof with its 1/N factors restored (the printed proof drops them) and its
    second inequality an equality (the cross term vanishes because
    ``E[ybar | y] = mean(y)``). The bound is attained by ``z_i = S_i y_i + d_i``,
    ``d_i ~ N(0, S_i)`` and ``ybar = mean(z_i / S_i)`` when ``sigma_w = inf``.

    Parameters
    ----------
    S : array_like, shape (N,)
        Scalar privacy levels ``S_i > 0`` (units 1/``y``^2).
    sigma_w : float, optional
        Measurement-noise standard deviation, > 0; ``math.inf`` by default.

    Returns
    -------
    float
        Lower bound on the mean squared consensus error (units ``y``^2).
    """
    s = V.real_array("S", S, ndim=1, lo=0.0)
    if np.any(s <= 0):
        raise ValueError("S must be > 0 everywhere (Corollary 38 needs S_i > 0)")
    sig = V.real("sigma_w", sigma_w, lo=0.0, lo_open=True, allow_inf=True)
    N = s.size
    if math.isinf(sig):
        return float(np.sum(1.0 / s) / N**2)
    a = s * sig**2 / (s * sig**2 + 1.0)
    return float(np.sum(a / s) / (N * np.sum(a)))
