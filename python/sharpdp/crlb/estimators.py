"""Mechanisms and estimators that attain the privacy-preserving CRLB.

Source: "Privacy-Preserving Cramer-Rao Lower Bound", Sections 3.4 and 4.3.

- :func:`gaussian_mechanism` and :func:`efficient_estimator`: (18)-(19), exact
  attainment for one Gaussian measurement block.
- :func:`ml_private_estimator`: the ML-based private estimator (21) under the
  trace constraint of Theorem 30 (rate attainment, non-Gaussian noise).
- :func:`distributed_identification`: Algorithm 4 (average consensus on a
  weighted graph), converging to the centralised efficient estimate (33).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.optimize

from sharpdp import _validation as V
from sharpdp.crlb import _checks as C
from sharpdp.crlb import _release as G
from sharpdp.crlb.bounds import require_identifiable, spd_inverse, ppcrlb

__all__ = [
    "gaussian_mechanism",
    "efficient_estimator",
    "MLPrivateEstimate",
    "ml_private_estimator",
    "DistributedResult",
    "distributed_identification",
]


def gaussian_mechanism(
    y: Any, S: Any, *, mu_w: Any = None, rng: Any = None, threads: int | None = None, grid_bits: int | None = None
) -> np.ndarray:
    """Gaussian mechanism (18): ``z = S (y - mu_w) + d``, ``d ~ N(0, S)``, released on a grid.

    The continuous mechanism has ``I_z(y) = S`` exactly (on the range of ``S``), the privacy level of
    Theorem 14. What is released is its floating-point-safe version (docs/sampling.md §9): with
    ``S = L L^T`` (``L = V_r Lambda_r^{1/2}``, r = rank S), ``z = L xi'`` where ``xi'`` is an exact
    multiple of ``h = 2^-grid_bits`` in every coordinate: the whitened statistic
    ``w = L^T (y - mu_w)`` stochastically rounded onto ``h Z^r`` plus ``h D``, ``D`` i.i.d.
    rounded-Gaussian integers ``round(Z / h)`` (128-bit table, C++). Its cost
    (:func:`sharpdp.crlb.grid_release` ``(r, grid_bits)``): Fisher information
    ``I_z(y) <= fisher_factor * S`` (1 + 3e-8 at the default grid) for the exact grid mechanism, noise
    covariance at most ``(1 + h^2 / 3) S``, and, for DP use with a whitened sensitivity Delta of
    ``w``, a Gaussian mechanism of sensitivity ``Delta + h sqrt(r)`` plus a sampler TV of
    ``r eta`` (about 1.6e-34 r) per row.

    Parameters
    ----------
    y : array_like, shape (m,) or (R, m)
        Sensitive measurement(s); rows of a 2-D input are independent releases.
    S : array_like, shape (m, m)
        Privacy level, symmetric PSD (may be singular; eigenvalues at or below ``m 1e-13`` times
        the largest are treated as 0: nothing is released in those directions).
    mu_w : array_like, shape (m,), optional
        Mean of the measurement noise (default 0).
    rng : numpy.random.Generator, int, SeedSequence or None
        Noise source; ``None`` (default) keys ChaCha20 with fresh OS entropy. A seed makes the
        release reproducible and **not private unless the seed is secret** (docs/sampling.md §1.2).
    threads : int, optional
        Worker threads (default all cores); the output does not depend on it.
    grid_bits : int, optional
        k in [0, 14], grid step h = 2^-k noise standard deviations (default 12).

    Returns
    -------
    ndarray, same shape as ``y``

    Raises
    ------
    ValueError
        Bad shapes, NaN/inf, ``S`` not symmetric PSD, ``grid_bits`` outside [0, 14], or a whitened
        value ``|w_i| >= 2^(52 - grid_bits)``.
    """
    yy = V.real_array("y", y)
    if yy.ndim not in (1, 2):
        raise ValueError(f"y must have shape (m,) or (R, m), got {yy.shape}")
    m = yy.shape[-1]
    Sm = C.psd("S", S, m)
    mu = np.zeros(m) if mu_w is None else V.real_array("mu_w", mu_w, ndim=1, shape=(m,))
    L = G.whitener("S", Sm)
    return G.release_gaussian((yy - mu) @ L, L, grid_bits=grid_bits, rng=rng, threads=threads)


def efficient_estimator(z: Any, H: Any, S: Any, Sigma_w: Any) -> np.ndarray:
    """Efficient estimator (19): ``theta_hat = Sigma_PPCR H^T (S Sigma_w + I)^{-1} z``.

    Applied to the output of :func:`gaussian_mechanism` under Gaussian noise
    ``w ~ N(mu_w, Sigma_w)``, it is unbiased with covariance exactly
    ``Sigma_PPCR`` (:func:`~sharpdp.crlb.ppcrlb`).

    Parameters
    ----------
    z : array_like, shape (m,) or (R, m)
    H : array_like, shape (m, n)
    S : array_like, shape (m, m), symmetric PSD, ``H^T S H`` invertible
    Sigma_w : array_like, shape (m, m), symmetric positive definite

    Returns
    -------
    ndarray, shape (n,) or (R, n)

    Raises
    ------
    ValueError
        Bad shapes (``z`` not (m,) or (R, m)), NaN/inf, ``S`` not symmetric PSD, ``Sigma_w`` not symmetric
        positive definite, or ``H^T S H`` singular (theta not identifiable: Theorem 12); the message names the
        parameter.
    """
    Hm = C.matrix("H", H)
    m = Hm.shape[0]
    zz = V.real_array("z", z)
    if zz.ndim not in (1, 2) or zz.shape[-1] != m:
        raise ValueError(f"z must have shape ({m},) or (R, {m}), got {zz.shape}")
    Sm = C.psd("S", S, m)
    Sw = C.pd("Sigma_w", Sigma_w, m)
    gain = ppcrlb(Hm, Sm, Sw) @ Hm.T @ np.linalg.inv(Sm @ Sw + np.eye(m))  # (n, m)
    return zz @ gain.T


@dataclass(frozen=True)
class MLPrivateEstimate:
    """Result of :func:`ml_private_estimator`.

    Attributes
    ----------
    estimate : ndarray (n,)
        The released private estimate ``z_K = theta_ML + d_K``.
    ml_estimate : ndarray (n,)
        The non-private ML estimate (never released; for diagnostics).
    noise_cov : ndarray (n, n)
        Covariance of ``d_K``.
    fisher_trace : float
        Exact ``trace I_{z_K}(Ybar_K)`` at the realised data,
        ``trace(noise_cov^{-1} J J^T)`` with ``J = d theta_ML / d Ybar_K``.
    """

    estimate: np.ndarray
    ml_estimate: np.ndarray
    noise_cov: np.ndarray
    fisher_trace: float


def _lad(y: np.ndarray, H: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least absolute deviations (the Laplace ML) and its Jacobian d theta / d y."""
    K, n = H.shape
    J = np.zeros((n, K))
    if n == 1:
        h = H[:, 0]
        keep = np.flatnonzero(h != 0)
        r, w = y[keep] / h[keep], np.abs(h[keep])
        order = np.argsort(r, kind="stable")
        cw = np.cumsum(w[order])
        j = order[int(np.searchsorted(cw, 0.5 * cw[-1]))]  # weighted median
        J[0, keep[j]] = 1.0 / h[keep[j]]
        return np.array([r[j]]), J
    c = np.concatenate([np.zeros(n), np.ones(2 * K)])
    A_eq = np.hstack([H, np.eye(K), -np.eye(K)])
    bounds = [(None, None)] * n + [(0, None)] * (2 * K)
    res = scipy.optimize.linprog(c, A_eq=A_eq, b_eq=y, bounds=bounds, method="highs")
    if res.status != 0:  # pragma: no cover - LP is always feasible and bounded
        raise RuntimeError(f"LAD linear program failed: {res.message}")
    theta = res.x[:n]
    basis = np.argsort(np.abs(y - H @ theta), kind="stable")[:n]
    J[:, basis] = np.linalg.inv(H[basis])
    return theta, J


def ml_private_estimator(
    y: Any,
    H: Any,
    s_K: float,
    *,
    noise: str = "gaussian",
    rng: Any = None,
    threads: int | None = None,
    grid_bits: int | None = None,
) -> MLPrivateEstimate:
    """ML-based private estimator (21) with the trace constraint of Theorem 30.

    ``z_K = theta_ML(Ybar_K) + d_K``, ``d_K ~ N(0, n c / s_K (sum_k H_k^T H_k)^{-1})``
    with ``c = E[l''(w)^2] / (E l''(w))^2`` and ``l = ln f_w``. Theorem 30: as
    ``K -> inf``, ``trace I_{z_K}(Ybar_K) / s_K -> 1`` and the MSE is
    ``Sigma_CR,K + O(1/K^2) + n c / s_K (sum H_k^T H_k)^{-1}`` -- equation (22);
    the printed proof says "(30) can be obtained by (21)" where (22) is meant.
    This is an asymptotic calibration, not a finite-K guarantee; the exact
    realised trace is returned as ``fisher_trace``.

    The release is floating-point safe (docs/sampling.md §9): with ``noise_cov = L L^T``,
    ``z_K = L xi'``, ``xi'`` the whitened statistic ``L^{-1} theta_ML`` stochastically rounded onto
    ``h Z^n`` (h = 2^-grid_bits) plus rounded-Gaussian noise ``h D``. ``fisher_trace`` is that of the
    continuous mechanism; the exact grid mechanism's is at most ``fisher_factor`` times it
    (:func:`sharpdp.crlb.grid_release`, 1 + 3e-8 by default), and its noise covariance at most
    ``(1 + h^2 / 3) noise_cov``.

    Noise models (scalar measurements ``y_k = H_k theta + w_k``):

    - ``"gaussian"``: ML = least squares, ``c = 1``; ``fisher_trace == s_K`` exactly.
    - ``"laplace"``: ML = least absolute deviations (the scale does not enter),
      solved exactly (weighted median for n = 1, HiGHS linear program otherwise).
      ``l''`` vanishes almost everywhere, so ``c`` is undefined; following
      Remark 29 and the paper's Section 5.3 we use ``c = 1``. The LAD estimate
      depends locally on only ``n`` observations, so the realised
      ``fisher_trace`` exceeds ``s_K`` (by a factor of order ``K / n``): the
      trace constraint then holds only in the paper's asymptotic sense. Check
      ``fisher_trace`` before relying on it.

    Parameters
    ----------
    y : array_like, shape (K,)
        Sensitive scalar measurements.
    H : array_like, shape (K, n)
        Regressors (rows ``H_k``); ``H^T H`` invertible.
    s_K : float
        Trace privacy budget, > 0 (units 1/``y``^2).
    noise : {"gaussian", "laplace"}
    rng : numpy.random.Generator, int, SeedSequence or None
        ``None`` (default): ChaCha20 keyed by OS entropy; a seed is reproducible and not private
        unless secret.
    threads : int, optional
        Worker threads (default all cores); the output does not depend on it.
    grid_bits : int, optional
        k in [0, 14], grid step 2^-k whitened units (default 12).

    Returns
    -------
    MLPrivateEstimate

    Raises
    ------
    ValueError
        Bad shapes, NaN/inf, ``s_K <= 0``, unknown ``noise``, ``H`` rank deficient, ``grid_bits``
        outside [0, 14].
    """
    Hm = C.matrix("H", H)
    K, n = Hm.shape
    yy = V.real_array("y", y, ndim=1, shape=(K,))
    s = V.real("s_K", s_K, lo=0.0, lo_open=True)
    if noise not in ("gaussian", "laplace"):
        raise ValueError(f"noise must be 'gaussian' or 'laplace', got {noise!r}")
    if int(np.linalg.matrix_rank(Hm)) != n:
        raise ValueError("H must have full column rank")
    gram_inv = spd_inverse("H^T H", Hm.T @ Hm)
    if noise == "gaussian":
        theta = gram_inv @ (Hm.T @ yy)
        J = gram_inv @ Hm.T
    else:
        theta, J = _lad(yy, Hm)
    cov = n / s * gram_inv
    L = G.whitener("noise_cov", cov)
    z = G.release_gaussian(np.linalg.lstsq(L, theta, rcond=None)[0], L, grid_bits=grid_bits, rng=rng, threads=threads)
    ftr = float(np.trace(np.linalg.solve(cov, J @ J.T)))
    return MLPrivateEstimate(z, theta, cov, ftr)


@dataclass(frozen=True)
class DistributedResult:
    """Result of :func:`distributed_identification`.

    Attributes
    ----------
    estimates : ndarray (iterations + 1, N, n)
        ``theta_hat_{i,k} = r_{i,k}^{-1} x_{i,k}``; NaN where ``r_{i,k}`` is still
        singular (a node that has not yet heard enough of the network).
    centralized : ndarray (n,)
        The privacy-preserving efficient estimate (33) all nodes converge to.
    covariance : ndarray (n, n)
        ``Sigma'_PPCR`` of (33), the MSE matrix of ``centralized``.
    outputs : list of ndarray
        The released ``z_i`` of mechanism (32).
    """

    estimates: np.ndarray
    centralized: np.ndarray
    covariance: np.ndarray
    outputs: list


def _connected(adj: np.ndarray) -> bool:
    """Whether the undirected graph of the symmetric boolean adjacency matrix ``adj`` is connected (a search
    from node 0; what scipy.sparse.csgraph.connected_components(adj, directed=False)[0] == 1 says, without its
    per-call overhead)."""
    seen = np.zeros(adj.shape[0], dtype=bool)
    seen[0] = True
    todo = [0]
    while todo:
        new = np.flatnonzero(adj[todo.pop()] & ~seen)
        seen[new] = True
        todo.extend(new.tolist())
    return bool(seen.all())


def _block_diag(blocks: list[np.ndarray]) -> np.ndarray:
    """The block-diagonal matrix of 2-D float blocks (as scipy.linalg.block_diag: zeros elsewhere, the same
    entries), without its per-call overhead."""
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype=np.result_type(*blocks))
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def distributed_identification(
    y: Any,
    H: Any,
    Sigma_w: Any,
    S: Any,
    weights: Any,
    *,
    iterations: int = 100,
    rng: Any = None,
    threads: int | None = None,
    grid_bits: int | None = None,
) -> DistributedResult:
    """Privacy-preserving distributed identification by average consensus (Algorithm 4).

    Node ``i`` releases ``z_i = S_i y_i + d_i``, ``d_i ~ N(0, S_i)`` (32), forms
    ``x_{i,0} = H_i^T (S_i Sigma_w,i + I)^{-1} z_i`` and
    ``r_{i,0} = H_i^T (S_i Sigma_w,i + I)^{-1} S_i H_i``, then runs
    ``x_{i,k} = sum_j a_ij x_{j,k-1}`` (same for ``r``) and
    ``theta_hat_{i,k} = r_{i,k}^{-1} x_{i,k}`` (Proposition 36). On a connected
    graph every node converges to the centralised estimate (33), which is
    unbiased with covariance ``Sigma'_PPCR`` for zero-mean Gaussian ``w_i``.

    Every ``z_i`` is released as by :func:`gaussian_mechanism` (on the grid ``2^-grid_bits``
    in whitened units, docs/sampling.md §9), so ``centralized`` is unbiased with covariance at
    most ``Sigma'_PPCR`` plus the grid's ``h^2 / 3`` relative share of the privacy noise.

    Parameters
    ----------
    y, H, Sigma_w, S : sequences of length N
        Per node: measurement (m_i,), matrix (m_i, n), noise covariance
        (m_i, m_i) positive definite, privacy level (m_i, m_i) PSD.
    weights : array_like, shape (N, N)
        ``a_ij = a_ji >= 0``, rows summing to 1, ``a_ij > 0`` exactly on the
        edges of a connected graph (diagonal entries are the self weights).
    iterations : int
        Number of consensus steps (>= 0).
    rng : numpy.random.Generator, int, SeedSequence or None
        ``None`` (default): ChaCha20 keyed by OS entropy; a seed is reproducible and not private
        unless secret.
    threads : int, optional
        Worker threads (default all cores); the output does not depend on it.
    grid_bits : int, optional
        k in [0, 14], grid step 2^-k whitened units (default 12).

    Returns
    -------
    DistributedResult
    """
    if not all(isinstance(v, (list, tuple)) for v in (y, H, Sigma_w, S)):
        raise TypeError("y, H, Sigma_w and S must be sequences with one entry per node")
    N = len(H)
    if N == 0 or not (len(y) == len(Sigma_w) == len(S) == N):
        raise ValueError(f"y, H, Sigma_w, S must all have the same non-zero length (got {len(y)}, {N}, {len(Sigma_w)}, {len(S)})")
    A = C.matrix("weights", weights, N, N)
    if np.any(A < 0) or np.max(np.abs(A - A.T)) > 1e-12:
        raise ValueError("weights must be symmetric and non-negative")
    if np.max(np.abs(A.sum(axis=1) - 1.0)) > 1e-12:
        raise ValueError("weights: every row must sum to 1")
    adj = (A - np.diag(np.diag(A))) > 0
    if N > 1 and not _connected(adj | adj.T):
        raise ValueError("weights: the communication graph must be connected")
    iters = V.integer("iterations", iterations, lo=0)
    G.check_grid_bits(grid_bits)
    Hs, ys, Sws, Ss = [], [], [], []
    for i in range(N):
        h = C.matrix(f"H[{i}]", H[i])
        if Hs and h.shape[1] != Hs[0].shape[1]:
            raise ValueError(f"H[{i}] must have {Hs[0].shape[1]} columns, got {h.shape[1]}")
        m = h.shape[0]
        Hs.append(h)
        ys.append(V.real_array(f"y[{i}]", np.atleast_1d(y[i]), ndim=1, shape=(m,)))
        Sws.append(C.pd(f"Sigma_w[{i}]", np.atleast_2d(Sigma_w[i]), m))
        Ss.append(C.psd(f"S[{i}]", np.atleast_2d(S[i]), m))
    n = Hs[0].shape[1]
    require_identifiable(np.vstack(Hs), _block_diag(Ss))
    x = np.zeros((N, n))
    r = np.zeros((N, n, n))
    # (32) for every node at once: one grid release of the stacked whitened statistics
    Ls = [G.whitener(f"S[{i}]", Ss[i]) for i in range(N)]
    L_all = _block_diag(Ls)
    z_all = G.release_gaussian(np.concatenate([ys[i] @ Ls[i] for i in range(N)]), L_all, grid_bits=grid_bits,
                               rng=rng, threads=threads)
    zs = np.split(z_all, np.cumsum([h.shape[0] for h in Hs])[:-1])
    for i in range(N):
        m = Hs[i].shape[0]
        z = zs[i]
        W = Hs[i].T @ np.linalg.inv(Ss[i] @ Sws[i] + np.eye(m))
        x[i], r[i] = W @ z, W @ Ss[i] @ Hs[i]
    r_sum, x_sum = r.sum(axis=0), x.sum(axis=0)
    cov = spd_inverse("sum_i H_i^T (S_i Sigma_w,i + I)^{-1} S_i H_i", 0.5 * (r_sum + r_sum.T))
    out = np.full((iters + 1, N, n), np.nan)
    for k in range(iters + 1):
        if k:
            x = A @ x
            r = np.einsum("ij,jab->iab", A, r)
        for i in range(N):
            ev = np.linalg.eigvalsh(0.5 * (r[i] + r[i].T))
            if ev[-1] > 0 and ev[0] > 1e-10 * ev[-1]:
                out[k, i] = np.linalg.solve(r[i], x[i])
    return DistributedResult(out, cov @ x_sum, cov, zs)
