"""The noise mechanisms of Section 5.1 of "Privacy-Preserving Cramer-Rao Lower Bound" and their ML estimators.

Helpers of :func:`sharpdp.apps.crlb_experiments.mechanism_comparison` (split from that module by concern;
every name is re-exported there): the log densities of the Gaussian-Laplace and Voigt (Gaussian-Cauchy)
convolutions, the additive-noise ML estimator, the raised-cosine sampler, the multiplicative mechanism and
its Gauss-Hermite likelihood, the BHHH ML iteration, and the probabilistic quantiser.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import scipy.integrate
from scipy.special import log_ndtr, voigt_profile


def log_gauss_laplace(sigma: float, b: float) -> Callable[[np.ndarray], np.ndarray]:
    """log density of N(0, sigma^2) + Laplace(0, b), stable in the tails."""
    c = math.log(1.0 / (2.0 * b)) + sigma**2 / (2.0 * b * b)

    def logf(x: np.ndarray) -> np.ndarray:
        t1 = -x / b + log_ndtr((x - sigma**2 / b) / sigma)
        t2 = x / b + log_ndtr((-x - sigma**2 / b) / sigma)
        return c + np.logaddexp(t1, t2)

    return logf


def log_voigt(sigma: float, gamma: float) -> Callable[[np.ndarray], np.ndarray]:
    """log density of N(0, sigma^2) + Cauchy(0, gamma) (the Voigt profile)."""
    return lambda x: np.log(voigt_profile(x, sigma, gamma))


def score(logf: Callable[[np.ndarray], np.ndarray], x: np.ndarray, h: float) -> np.ndarray:
    return (logf(x + h) - logf(x - h)) / (2.0 * h)


def ml_additive(z: np.ndarray, H: np.ndarray, logf: Callable[[np.ndarray], np.ndarray], scale: float,
                 g: np.random.Generator, iters: int = 100, starts: int = 24) -> np.ndarray:
    """ML of theta from z = H theta + e, e iid with log density logf, for the R rows of z at once.

    Start: the best (by likelihood) of least squares and ``starts`` exact fits
    through random n-row subsets (robust for heavy tails). Then Fisher scoring,
    theta -= t (J H^T H)^{-1} H^T g(r) with g = (log f)', J = E g(e)^2 by
    quadrature, and step t halved until the likelihood does not decrease.
    """
    m, n = H.shape
    h = 1e-6 * scale
    J = scipy.integrate.quad(lambda x: score(logf, np.array(x), h) ** 2 * math.exp(logf(np.array(x))),
                             -np.inf, np.inf, limit=200)[0]
    step = np.linalg.solve(J * (H.T @ H), H.T)  # (n, m)

    cands = [z @ np.linalg.pinv(H).T]
    for _ in range(starts):
        rows = g.choice(m, n, replace=False)
        if abs(np.linalg.det(H[rows])) > 1e-8:
            cands.append(z[:, rows] @ np.linalg.inv(H[rows]).T)
    C = np.stack(cands, axis=1)  # (R, c, n)
    ll = np.sum(logf(z[:, None, :] - C @ H.T), axis=-1)
    theta = C[np.arange(z.shape[0]), np.argmax(ll, axis=1)]
    cur = np.sum(logf(z - theta @ H.T), axis=1)
    active = np.ones(z.shape[0], dtype=bool)
    for _ in range(iters):
        zi, th, cu = z[active], theta[active], cur[active]
        d = -score(logf, zi - th @ H.T, h) @ step.T
        t = np.ones(zi.shape[0])
        trial = th + d
        new = np.sum(logf(zi - trial @ H.T), axis=1)
        ok = new >= cu - 1e-12 * np.abs(cu)
        for _ in range(19):  # halve the step only where the likelihood went down (the rows are independent)
            bad = np.flatnonzero(~ok)
            if bad.size == 0:
                break
            t[bad] *= 0.5
            trial[bad] = th[bad] + t[bad, None] * d[bad]
            new[bad] = np.sum(logf(zi[bad] - trial[bad] @ H.T), axis=1)
            ok[bad] = new[bad] >= cu[bad] - 1e-12 * np.abs(cu[bad])
        theta[active] = np.where(ok[:, None], trial, th)
        cur[active] = np.where(ok, new, cu)
        # converged rows (step below 1e-10 of the noise scale) drop out
        moved = ok & (np.max(np.abs(t[:, None] * d), axis=1) > 1e-10 * scale)
        idx = np.flatnonzero(active)
        active[idx[~moved]] = False
        if not active.any():
            break
    return theta


def sample_raised_cosine(rng: np.random.Generator, width: float, size: tuple[int, ...]) -> np.ndarray:
    """Draws from density (2/W) cos^2(pi x / W) on [-W/2, W/2] (mechanism (27)) by rejection."""
    out = np.empty(int(np.prod(size)))
    filled = 0
    while filled < out.size:
        need = out.size - filled
        x = rng.uniform(-0.5, 0.5, 2 * need + 16)
        keep = x[rng.uniform(size=x.size) < np.cos(math.pi * x) ** 2][:need]
        out[filled:filled + keep.size] = keep * width
        filled += keep.size
    return out.reshape(size)


# Multiplicative noise with stochastic truncation (Example 33, Remark 34): coordinates
# with |y_i| < eps are replaced by +-eps with P(+eps) = (y_i + eps) / (2 eps) (unbiased),
# then z_i = y'_i / V_i with V_i ~ N(1, tau^2) (the inverse of the multiplicative
# noise is an unbiased Gaussian). Pointwise Fisher information about y_i:
# (2 + 1/tau^2) / y_i^2 for |y_i| >= eps, and at most chi^2 / (4 eps^2) inside, where
# chi^2 = e^{4/tau^2} - 1 is the chi-square divergence between the laws of -eps/V
# and eps/V (worst case of the two-point mixture). Both derived for this module.
MULT_TAU = 1.3


def mult_info_constant(tau: float) -> float:
    return max(2.0 + 1.0 / tau**2, math.expm1(4.0 / tau**2) / 4.0)


def multiplicative_mechanism(y: np.ndarray, s: float, g: np.random.Generator) -> tuple[np.ndarray, float]:
    eps = math.sqrt(mult_info_constant(MULT_TAU) / s)  # sup_y I_z(y) = s
    inside = np.abs(y) < eps
    up = g.uniform(size=y.shape) < (y + eps) / (2 * eps)
    yt = np.where(inside, np.where(up, eps, -eps), y)
    v = 1.0 + MULT_TAU * g.standard_normal(y.shape)
    return yt / v, eps


GH_X, GH_W = np.polynomial.hermite.hermgauss(20)
GH_LOGW = np.log(GH_W / math.sqrt(math.pi))


def mult_loglik(z: np.ndarray, mu: np.ndarray, sig: float, eps: float) -> np.ndarray:
    """log p(z_i | mu_i) of the truncated multiplicative mechanism with y_i ~ N(mu_i, sig^2),
    by 20-node Gauss-Hermite quadrature over y_i."""
    y = mu[..., None] + sig * math.sqrt(2.0) * GH_X  # (..., nodes)
    zz = z[..., None]
    c = -math.log(math.sqrt(2 * math.pi) * MULT_TAU)

    def logfv(v):
        return c - (v - 1.0) ** 2 / (2 * MULT_TAU**2)

    lz2 = 2.0 * np.log(np.abs(zz))
    shape = np.broadcast_shapes(y.shape, zz.shape)
    y = np.broadcast_to(y, shape)
    # each branch only where it is used (the same elementwise operations as evaluating both
    # everywhere and choosing with np.where, so the same values)
    outside = np.abs(y) >= eps
    lp = np.empty(shape)
    yo, zo, lo = y[outside], np.broadcast_to(zz, shape)[outside], np.broadcast_to(lz2, shape)[outside]
    lp[outside] = logfv(yo / zo) + np.log(np.maximum(np.abs(yo), 1e-300)) - lo
    inside = ~outside
    yi = y[inside]
    p = np.clip((yi + eps) / (2 * eps), 0.0, 1.0)
    a_in = np.broadcast_to(logfv(eps / zz), shape)[inside]
    b_in = np.broadcast_to(logfv(-eps / zz), shape)[inside]
    with np.errstate(divide="ignore"):
        lp[inside] = (np.logaddexp(np.log(p) + a_in, np.log1p(-p) + b_in) + math.log(eps)
                      - np.broadcast_to(lz2, shape)[inside])
    lp += GH_LOGW
    top = lp.max(axis=-1)
    return top + np.log(np.sum(np.exp(lp - top[..., None]), axis=-1))


def ml_bhhh(z: np.ndarray, H: np.ndarray, loglik: Callable[[np.ndarray, np.ndarray], np.ndarray],
             starts: np.ndarray, scale: float, iters: int = 60) -> np.ndarray:
    """Vectorised ML over R rows of z (model: log-likelihood sum_i loglik(z_i, h_i^T theta)).

    Best start by likelihood among ``starts`` (R, c, n), then BHHH steps (outer product
    of per-observation scores, derivatives in mu by central differences) with
    backtracking so that the likelihood never decreases.
    """
    R = z.shape[0]
    ll_c = np.sum(loglik(z[:, None, :], starts @ H.T), axis=-1)
    theta = starts[np.arange(R), np.argmax(ll_c, axis=1)]
    cur = np.sum(loglik(z, theta @ H.T), axis=1)
    h = 1e-5 * scale
    active = np.arange(R)
    for _ in range(iters):
        za, th, cu = z[active], theta[active], cur[active]
        mu = th @ H.T
        gi = (loglik(za, mu + h) - loglik(za, mu - h)) / (2 * h)  # (r, m)
        grad = gi @ H
        bhhh = np.einsum("ri,ia,ib->rab", gi**2, H, H) + 1e-12 * np.eye(H.shape[1])
        d = np.linalg.solve(bhhh, grad[..., None])[..., 0]
        t = np.ones(active.size)
        trial = th + d
        new = np.sum(loglik(za, trial @ H.T), axis=1)
        ok = new >= cu - 1e-12 * np.abs(cu)
        for _ in range(12):  # halve the step only where the likelihood went down
            bad = np.flatnonzero(~ok)
            if bad.size == 0:
                break
            t[bad] *= 0.5
            trial[bad] = th[bad] + t[bad, None] * d[bad]
            new[bad] = np.sum(loglik(za[bad], trial[bad] @ H.T), axis=1)
            ok[bad] = new[bad] >= cu[bad] - 1e-12 * np.abs(cu[bad])
        theta[active] = np.where(ok[:, None], trial, th)
        cur[active] = np.where(ok, new, cu)
        moved = ok & (np.max(np.abs(t[:, None] * d), axis=1) > 1e-7 * scale)
        active = active[moved]
        if active.size == 0:
            break
    return theta


# Probabilistic quantisation with Gaussian dither (Example 35; output perturbation):
# z = Q(x + d), d ~ N(0, tau^2), Q the unbiased probabilistic quantiser of step Delta
# (rounds to a neighbouring grid point with probabilities linear in the distance). The
# dither is the stochastic smoothing that bounds the Fisher information (the bare
# quantiser's information 1/(Delta^2 t(1-t)) diverges at grid points). E z = x.
QUANT_RATIO = 0.5  # tau / Delta


def quant_info_constant(r: float = QUANT_RATIO) -> float:
    """sup_x of the Fisher information of z = Q(x + d) about x, for Delta = 1, tau = r.

    P(z = j | x) = R(a + 1) - 2 R(a) + R(a - 1), a = j - x, with R(u) = E (u + r Z)_+
    = u Phi(u/r) + r phi(u/r) (the quantiser's tent kernel smoothed by the dither).
    Evaluated on a 2001-point grid over one period and inflated by 1 %.
    """
    from scipy.special import ndtr as Phi

    x = np.linspace(0.0, 1.0, 2001)[:, None]
    j = np.arange(-int(10 * r) - 3, int(10 * r) + 4)[None, :]
    a = j - x

    def ramp(u):
        return u * Phi(u / r) + r * np.exp(-0.5 * (u / r) ** 2) / math.sqrt(2 * math.pi)

    P = ramp(a + 1) - 2 * ramp(a) + ramp(a - 1)
    dP = -(Phi((a + 1) / r) - 2 * Phi(a / r) + Phi((a - 1) / r))
    info = np.sum(np.where(P > 1e-300, dP**2 / np.maximum(P, 1e-300), 0.0), axis=1)
    return 1.01 * float(info.max())


def probabilistic_quantiser(x: np.ndarray, delta: float, g: np.random.Generator) -> np.ndarray:
    v = (x + QUANT_RATIO * delta * g.standard_normal(x.shape)) / delta
    lo = np.floor(v)
    return delta * (lo + (g.uniform(size=x.shape) < v - lo))
