"""Numba kernels for seed 000 (count-dependent zCDP histograms).

- Renyi divergences between Gaussians (eq. 11, Lemma 7.1) in closed form;
- composite Gauss-Legendre quadrature of D_alpha between the *released* laws of the
  shifted-log Gaussian mechanism (clipped at 0, optionally stochastically rounded);
- entropy and moments of the quantised truncated-Gaussian prior of Corollary 6.7, and of the
  continuous truncated Gaussian Z_L.

Imported only inside the functions that need it (JIT on first call). No fastmath.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sharpdp._quadrature import gauss_legendre

_GL_X, _GL_W = (np.array(a) for a in gauss_legendre(16))  # writable copies for Numba
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT2 = math.sqrt(2.0)


# ---------------------------------------------------------------- Gaussian Renyi divergences
@njit(cache=True)
def renyi_finite(alpha, s_p, s_q):
    """Lemma 7.1: D_alpha(N(., s_p^2) || N(., s_q^2)) < inf iff alpha s_q^2 + (1 - alpha) s_p^2 > 0."""
    return alpha * s_q * s_q + (1.0 - alpha) * s_p * s_p > 0.0


@njit(cache=True)
def renyi_gaussian(alpha, mu_p, s_p, mu_q, s_q):
    """D_alpha(N(mu_p, s_p^2) || N(mu_q, s_q^2)) in nats for alpha > 1 (inf when Lemma 7.1 fails).

    Equal variances reduce to eq. (11): alpha (mu_p - mu_q)^2 / (2 s^2).
    """
    s_a2 = alpha * s_q * s_q + (1.0 - alpha) * s_p * s_p
    if s_a2 <= 0.0:
        return math.inf
    d = mu_p - mu_q
    return (math.log(s_q / s_p) + math.log(s_q * s_q / s_a2) / (2.0 * (alpha - 1.0))
            + alpha * d * d / (2.0 * s_a2))


# ---------------------------------------------------------------- quadrature helpers
@njit(cache=True)
def _log_norm_pdf(t, m, s):
    z = (t - m) / s
    return -0.5 * z * z - math.log(s) - _LOG_SQRT_2PI


@njit(cache=True)
def _norm_cdf(x):
    return 0.5 * math.erfc(-x / _SQRT2)


@njit(cache=True)
def log_tilted_integral(alpha, m_p, m_q, sigma, lo, gx, gw):
    """log of int_lo^inf phi_P(t)^alpha phi_Q(t)^(1-alpha) dt for equal-variance Gaussians.

    Composite Gauss-Legendre (400 panels) over a 40-sigma window around the tilted mean
    alpha m_p + (1 - alpha) m_q, clipped to [lo, inf), evaluated with log-sum-exp.
    """
    m_a = alpha * m_p + (1.0 - alpha) * m_q
    a = max(lo, m_a - 40.0 * sigma)
    b = max(a, m_a) + 40.0 * sigma
    npan = 400
    h = (b - a) / npan
    vals = np.empty(npan * gx.size)
    k = 0
    for p in range(npan):
        c0 = a + (p + 0.5) * h
        for i in range(gx.size):
            t = c0 + 0.5 * h * gx[i]
            vals[k] = (alpha * _log_norm_pdf(t, m_p, sigma) + (1.0 - alpha) * _log_norm_pdf(t, m_q, sigma)
                       + math.log(0.5 * h * gw[i]))
            k += 1
    mx = vals.max()
    return mx + math.log(np.exp(vals - mx).sum())


@njit(cache=True)
def rounded_pmf(m, sigma, c, kmax, gx, gw):
    """pmf on {0, ..., kmax} of the stochastically rounded, clipped release.

    The clipped release is Y = [e^T - c]_+ with T ~ N(m, sigma^2); rounding sends y in
    [j, j+1] to j with probability j + 1 - y and to j + 1 otherwise. Each unit cell is
    integrated in t = log(y + c) by composite Gauss-Legendre with panels of width <= sigma/4.
    Entry k gets the atom at 0 (k = 0) and both adjacent cells; entries are exact for
    k <= kmax (cells beyond kmax are not visited).
    """
    p = np.zeros(kmax + 1)
    p[0] = _norm_cdf((math.log(c) - m) / sigma)
    for j in range(kmax):
        t0 = math.log(j + c)
        t1 = math.log(j + 1.0 + c)
        # skip cells carrying no mass at double precision (> 40 sigma away)
        if t1 < m - 40.0 * sigma or t0 > m + 40.0 * sigma:
            continue
        npan = max(1, int(math.ceil((t1 - t0) / (0.25 * sigma))))
        h = (t1 - t0) / npan
        low = 0.0
        up = 0.0
        for q in range(npan):
            c0 = t0 + (q + 0.5) * h
            for i in range(gx.size):
                t = c0 + 0.5 * h * gx[i]
                w = 0.5 * h * gw[i] * math.exp(_log_norm_pdf(t, m, sigma))
                frac = math.exp(t) - c - j  # position of y inside the cell, in [0, 1]
                frac = min(max(frac, 0.0), 1.0)
                low += w * (1.0 - frac)
                up += w * frac
        p[j] += low
        if j + 1 <= kmax:
            p[j + 1] += up
    return p


# ---------------------------------------------------------------- truncated-Gaussian prior
@njit(cache=True)
def _phi(z):
    return math.exp(-0.5 * z * z - _LOG_SQRT_2PI)


@njit(cache=True)
def _gl_phi(a, b, gx, gw):
    """int_a^b phi(z) dz by composite Gauss-Legendre (panels of width <= 1/4)."""
    if b <= a:
        return 0.0
    npan = max(1, int(math.ceil((b - a) / 0.25)))
    h = (b - a) / npan
    s = 0.0
    for q in range(npan):
        c0 = a + (q + 0.5) * h
        for i in range(gx.size):
            s += 0.5 * h * gw[i] * _phi(c0 + 0.5 * h * gx[i])
    return s


@njit(cache=True)
def quantised_truncnorm_stats(S, L, gx, gw):
    """Entropy (nats), mean and second moment of Q_S = round(S Z_L), Z_L = N(0,1) | [-L, L].

    Cell k has mass int over [(k - 1/2)/S, (k + 1/2)/S] cut to [-L, L] of phi, divided by
    Z = erf(L / sqrt 2); masses come from Gauss-Legendre quadrature (Lemma 6.6 / Cor. 6.7).
    Returns (H, E Q, E Q^2, sum of masses).
    """
    Z = math.erf(L / _SQRT2)
    kmax = int(math.floor(L * S + 0.5))
    H = 0.0
    m1 = 0.0
    m2 = 0.0
    tot = 0.0
    for k in range(-kmax, kmax + 1):
        a = max(-L, (k - 0.5) / S)
        b = min(L, (k + 0.5) / S)
        pk = _gl_phi(a, b, gx, gw) / Z
        if pk > 0.0:
            H -= pk * math.log(pk)
            m1 += pk * k
            m2 += pk * k * k
            tot += pk
    return H, m1, m2, tot


@njit(cache=True)
def truncnorm_entropy_var(L, gx, gw):
    """Differential entropy h_L (nats) and variance tau_L^2 of Z_L, by quadrature."""
    Z = math.erf(L / _SQRT2)
    npan = max(1, int(math.ceil(2.0 * L / 0.125)))
    h = 2.0 * L / npan
    ent = 0.0
    var = 0.0
    for q in range(npan):
        c0 = -L + (q + 0.5) * h
        for i in range(gx.size):
            z = c0 + 0.5 * h * gx[i]
            f = _phi(z) / Z
            w = 0.5 * h * gw[i]
            ent -= w * f * (-0.5 * z * z - _LOG_SQRT_2PI - math.log(Z))
            var += w * f * z * z
    return ent, var
