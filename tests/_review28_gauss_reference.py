"""Independent estimates of the blanket divergence D_up^{x vs bot}(eps) of GaussianRandomizer(s, 1), zero-out, for the
review tests rev28 (not collected by pytest). Derived from the mechanism's densities alone, not from
``sharpdp.shuffle.laws``: the blanket is R_BG(y) = phi_s(|y| + 1) / g, g = 2 Phibar(1/s); the privacy-amplification
variable is L = ratio - e^eps with ratio = R_1(y) / R_BG(y) = g e^{2y/s^2} for y > 0 and g for y <= 0 (an atom of mass
1/2), y ~ R_BG; D_up = E[(B_1 L_1 + ... + B_n L_n)_+] / (n g), B_i ~ Bern(g) (docs/accountant.md Theorem 1.3, §1.5).

Two estimates (each with its own error indicator; neither is a bound):

* ``d_up_edgeworth``: the exact identity D_up = E[L_1 1{L_1 + S' > 0}] (exchangeability: E[S_+] = n g E[L_1 1{S > 0}
  | B_1 = 1]) with the law of the body S' = sum_{i >= 2} B_i L_i replaced by its Edgeworth expansion (first and second
  order, cumulants from the closed-form moments E[ratio^k; y > 0] = g^{k-1} e^{2k(k-1)/s^2} Phi((2k - 1)/s)); the
  outer expectation over L_1 by adaptive quadrature. Valid where the body reaches 0 within a few standard deviations
  and its standardised cumulants are small; the size of the second-order term is the error indicator.
* ``d_up_jump``: the single big jump of user 1 over the body, D_up ~ E[SL(-S')] restricted to the body below the
  point where its own excursions (other users' jumps) take over, SL(t) = E[(L - t)_+] in closed form; for cells far
  in the tail (the body's mean many standard deviations below 0). The first-order Edgeworth term is the indicator.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, special


def _Phibar(x: float) -> float:
    return float(special.ndtr(-x))


def _pdf(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi) if abs(x) < 38.0 else 0.0


class _GR:
    def __init__(self, s: float, eps: float):
        self.s, self.E = float(s), math.exp(eps)
        self.g = 2.0 * _Phibar(1.0 / s)

    def eratio(self, k: int) -> float:  # E[ratio^k; y > 0]
        if k == 0:
            return 0.5
        s, g = self.s, self.g
        return g ** (k - 1) * math.exp((4 * k * k - 4 * k) / (2 * s * s)) * float(special.ndtr((2 * k - 1) / s))

    def raw(self, k: int) -> float:  # E[L^k]
        E, g = self.E, self.g
        return 0.5 * (g - E) ** k + sum(math.comb(k, j) * self.eratio(j) * (-E) ** (k - j) for j in range(k + 1))

    def sl(self, t: float) -> float:  # E[(L - t)_+]
        s, g, E = self.s, self.g, self.E
        atom = 0.5 * max(g - E - t, 0.0)
        yt = s * s / 2 * math.log((t + E) / g) if t + E > g else 0.0
        return _Phibar((yt - 1) / s) - (t + E) * _Phibar((yt + 1) / s) / g + atom

    def body(self, n: int) -> tuple[float, float, float, float]:
        """Mean, sd, skewness, excess kurtosis of S' = sum_{i = 2..n} B_i L_i."""
        N, g = n - 1, self.g
        r1, r2, r3, r4 = (g * self.raw(k) for k in (1, 2, 3, 4))
        c2 = r2 - r1 ** 2
        c3 = r3 - 3 * r2 * r1 + 2 * r1 ** 3
        c4 = r4 - 4 * r3 * r1 - 3 * r2 ** 2 + 12 * r2 * r1 ** 2 - 6 * r1 ** 4
        return N * r1, math.sqrt(N * c2), c3 / math.sqrt(N) / c2 ** 1.5, c4 / N / c2 ** 2


def d_up_edgeworth(s: float, eps: float, n: int) -> tuple[float, float, float]:
    """(second-order estimate, first-order estimate, z = -mean/sd of the body) of D_up^{x vs bot}."""
    G = _GR(s, eps)
    mu, sd, sk, ku = G.body(n)
    s_, g, E = G.s, G.g, G.E

    def Q(t: float, order: int) -> float:  # P(S' > t)
        z = (t - mu) / sd
        q = _Phibar(z)
        if abs(z) < 37.0:
            q += sk / 6 * (z * z - 1) * _pdf(z)
            if order >= 2:
                q += _pdf(z) * (ku / 24 * (z ** 3 - 3 * z) + sk ** 2 / 72 * (z ** 5 - 10 * z ** 3 + 15 * z))
        return q

    out = []
    for order in (2, 1):
        La = g - E
        val = 0.5 * La * Q(-La, order)

        def f(y: float) -> float:
            L = g * math.exp(2 * y / s_ ** 2) - E
            return L * Q(-L, order) * _pdf((y + 1) / s_) / s_ / g

        y0 = max(s_ ** 2 / 2 * math.log(E / g), 0.0)
        pts = [0.0, y0, y0 + 1, y0 + 4, y0 + 10, y0 + 20, y0 + 40, y0 + 80]
        val += sum(integrate.quad(f, a, b, epsabs=0, epsrel=1e-11, limit=200)[0]
                   for a, b in zip(pts[:-1], pts[1:]) if b > a)
        out.append(val)
    return out[0], out[1], -mu / sd


def d_up_jump(s: float, eps: float, n: int) -> tuple[float, float]:
    """(first-order Edgeworth body, Gaussian body) estimates of D_up^{x vs bot} by user 1's single big jump."""
    G = _GR(s, eps)
    mu, sd, sk, _ = G.body(n)
    out = []
    for ew in (True, False):
        def f(x: float) -> float:
            base = _pdf(x) * ((1 + sk / 6 * (x ** 3 - 3 * x)) if ew else 1.0)
            return G.sl(-(mu + sd * x)) * base

        x0 = -mu / sd
        xs = np.linspace(-8.0, x0 - 0.25, 1000)
        fv = np.array([f(float(x)) for x in xs])
        k = int(np.argmax(fv))
        k += int(np.argmin(fv[k:]))
        cut = float(xs[k])
        pts = [p for p in (-8.0, -4.0, -2.0, 0.0, 1.0, 2.0, 3.0, 4.0, 6.0) if p < cut] + [cut]
        out.append(sum(integrate.quad(f, a, b, epsabs=0, epsrel=1e-11, limit=200)[0]
                       for a, b in zip(pts[:-1], pts[1:])))
    return out[0], out[1]
