"""An independent estimate of the blanket divergence D_up^{x vs bot}(eps) of BlanketMixedGaussian(gamma, sigma0, 1),
zero-out, for the review tests rev29 (not collected by pytest). Derived from the mechanism alone, not from
``sharpdp.shuffle.laws``: the blanket is R_BG = N(0, sigma0^2) (weight gamma), R_x = gamma R_BG + (1 - gamma)
N(x, sigma0^2) with |x| = 1, so the privacy-amplification variable is L = gamma - e^eps + (1 - gamma) e^{rZ - r^2/2},
r = 1/sigma0, Z ~ N(0, 1), and D_up = E[(B_1 L_1 + ... + B_n L_n)_+] / (n gamma), B_i ~ Bern(gamma) (docs/accountant.md
Theorem 1.3).

``d_up_edgeworth``: the exact identity D_up = E[L_1 1{L_1 + S' > 0}] (exchangeability), S' = sum_{i >= 2} B_i L_i,
with the law of S' replaced by its Edgeworth expansion of first and second order (cumulants from the closed-form
moments E[e^{k(rZ - r^2/2)}] = e^{k(k-1) r^2/2}), the outer expectation over Z by adaptive quadrature (the method of
tests/_review28_gauss_reference.py's ``d_up_edgeworth``, for this law). An estimate, not a bound: the difference of
the two orders is its error indicator; it is valid where the body reaches 0 within a few standard deviations and its
standardised cumulants are small.
"""

from __future__ import annotations

import math

from scipy import integrate, special


def params(gamma: float, sigma0: float, eps: float) -> tuple[float, float, float]:
    """(a, b, r) of L = a + b e^{rZ - r^2/2} for the BMG's x-vs-bot law (from the mechanism's densities)."""
    return gamma - math.exp(eps), 1.0 - gamma, 1.0 / sigma0


def _pdf(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi) if abs(x) < 38.0 else 0.0


def d_up_edgeworth(gamma: float, sigma0: float, eps: float, n: int) -> tuple[float, float, float]:
    """(second-order estimate, first-order estimate, z = -mean/sd of the body S') of D_up^{x vs bot}."""
    a, b, r = params(gamma, sigma0, eps)

    def raw(k: int) -> float:  # E[L^k]
        return sum(math.comb(k, j) * a ** (k - j) * b ** j * math.exp(j * (j - 1) * r * r / 2) for j in range(k + 1))

    r1, r2, r3, r4 = (gamma * raw(k) for k in (1, 2, 3, 4))  # raw moments of B L
    c2 = r2 - r1 ** 2
    c3 = r3 - 3 * r2 * r1 + 2 * r1 ** 3
    c4 = r4 - 4 * r3 * r1 - 3 * r2 ** 2 + 12 * r2 * r1 ** 2 - 6 * r1 ** 4
    N = n - 1
    mu, sd = N * r1, math.sqrt(N * c2)
    sk, ku = c3 / math.sqrt(N) / c2 ** 1.5, c4 / N / c2 ** 2

    def Q(t: float, order: int) -> float:  # P(S' > t)
        z = (t - mu) / sd
        q = float(special.ndtr(-z))
        if abs(z) < 37.0:
            q += sk / 6 * (z * z - 1) * _pdf(z)
            if order >= 2:
                q += _pdf(z) * (ku / 24 * (z ** 3 - 3 * z) + sk ** 2 / 72 * (z ** 5 - 10 * z ** 3 + 15 * z))
        return q

    # L(z) = a + b e^{rz - r^2/2} crosses 0 at z0 and -mu (the body's mean distance to 0) at z1
    z0 = (math.log(-a / b) + r * r / 2) / r
    z1 = (math.log((-mu - a) / b) + r * r / 2) / r if -mu - a > 0 else z0
    pts = sorted({-12.0, min(z0, z1) - 3, z0, z1 - 2, z1 - 1, z1, z1 + 1, z1 + 2, z1 + 4, z1 + 8, 14.0})
    pts = [p for p in pts if -12.0 <= p <= 14.0]
    out = []
    for order in (2, 1):
        def f(z: float) -> float:
            L = a + b * math.exp(r * z - r * r / 2)
            return L * Q(-L, order) * _pdf(z)

        out.append(sum(integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-11, limit=400)[0]
                       for lo, hi in zip(pts[:-1], pts[1:]) if hi > lo))
    return out[0], out[1], -mu / sd
