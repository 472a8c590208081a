"""Asmussen-Kroese conditional Monte Carlo of the blanket divergence D_up(eps) = E[S_+] / (n gamma), S = L_1 + ... + L_M,
M ~ Bin(n, gamma), L_i i.i.d. (docs/accountant.md Theorem 1.3), for the review tests rev28 (not collected by pytest).

The largest term is integrated out in closed form: by exchangeability (ties only at an atom below 0, where S < 0)
E[S_+ | M] = M E[(s + L)_+ ; L > m] = M E[s P(L > t) + E[L; L > t]], t = max(m, -s), with s and m the sum and the
largest of the other M - 1 terms, sampled. The estimator is unbiased and its variance small where one large term makes
S positive (the single-big-jump regime of these cells), unlike plain Monte Carlo of E[L_1 1{L_1 + S' > 0}], which
misses the rare negative contributions (a large L_2 with L_1 typical) and is biased upwards in practice.

Two laws: the one-term lognormal L = a + b e^{rZ - r^2/2} (Z ~ N(0, 1), b of either sign; the blanket-mixed Gaussian's
laws, parameters given), and the Gaussian randomizer's x-vs-bot law from the mechanism's densities (an atom g - e^eps
of mass 1/2 and ratio g e^{2y/s^2} - e^eps for y > 0 of density phi_s(y + 1)/g, g = 2 Phibar(1/s)).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats


class OneTerm:
    """L = a + b e^{rZ - r^2/2}."""

    def __init__(self, a: float, b: float, r: float):
        self.a, self.b, self.r = float(a), float(b), float(r)

    def sample(self, rng, shape):
        return self.a + self.b * np.exp(self.r * rng.standard_normal(shape) - 0.5 * self.r ** 2)

    def tail(self, t):
        """(P(L > t), E[L; L > t]) elementwise."""
        a, b, r = self.a, self.b, self.r
        t = np.asarray(t, float)
        with np.errstate(invalid="ignore", divide="ignore"):
            if b > 0:  # L > t <=> Z > z
                z = np.where(t <= a, -np.inf, (np.log((t - a) / b) + 0.5 * r * r) / r)
                return special.ndtr(-z), a * special.ndtr(-z) + b * special.ndtr(r - z)
            z = np.where(t >= a, -np.inf, (np.log((a - t) / -b) + 0.5 * r * r) / r)  # L > t <=> Z < z
            return special.ndtr(z), a * special.ndtr(z) + b * special.ndtr(z - r)


class GaussXBot:
    """The Gaussian randomizer's x-vs-bot law (sigma0 = s, zero-out)."""

    def __init__(self, s: float, eps: float):
        self.s, self.E = float(s), math.exp(eps)
        self.g = 2.0 * float(special.ndtr(-1.0 / s))

    def sample(self, rng, shape):
        s, g, E = self.s, self.g, self.E
        u = rng.random(shape)
        # y > 0 with probability 1/2: y + 1 ~ N(0, s^2) conditioned on > 1 (inverse cdf on the small side)
        z = -special.ndtri(rng.random(shape) * special.ndtr(-1.0 / s))
        y = s * z - 1.0
        return np.where(u < 0.5, g - E, g * np.exp(2.0 * y / s ** 2) - E)

    def tail(self, t):
        s, g, E = self.s, self.g, self.E
        t = np.asarray(t, float)
        with np.errstate(invalid="ignore", divide="ignore"):
            yt = np.where(t + E > g, s * s / 2 * np.log((t + E) / g), 0.0)
        p = special.ndtr(-(yt + 1) / s) / g
        e = special.ndtr(-(yt - 1) / s) - E * p
        atom = (g - E) > t  # (never for t >= the atom)
        return p + 0.5 * atom, e + 0.5 * (g - E) * atom


def d_up_ak(law, gamma: float, n: int, N: int, seed: int = 5) -> tuple[float, float]:
    """(estimate, standard error) of D_up by conditional Monte Carlo, N samples per value of M (M >= 2)."""
    rng = np.random.default_rng(seed)
    pm = stats.binom.pmf(np.arange(n + 1), n, gamma)
    tot, var = 0.0, 0.0
    for M in range(1, n + 1):
        if pm[M] < 1e-13:
            continue
        if M == 1:
            tot += pm[M] * float(law.tail(0.0)[1])
            continue
        L = law.sample(rng, (N, M - 1))
        s, m = L.sum(axis=1), L.max(axis=1)
        t = np.maximum(m, -s)
        p, e = law.tail(t)
        g = s * p + e
        tot += pm[M] * M * g.mean()
        var += (pm[M] * M) ** 2 * g.var(ddof=1) / N
    return tot / (n * gamma), math.sqrt(var) / (n * gamma)


def d_up_ak_at_mean(law, gamma: float, n: int, N: int, seed: int = 1) -> tuple[float, float]:
    """(estimate, standard error) of E[S_+ | M] / M at M = round(n gamma), the same conditional Monte Carlo: D_up to
    O(1 / (n gamma)) relative (M's binomial spread; for large n, where the loop over M would cost too much)."""
    rng = np.random.default_rng(seed)
    M = int(round(n * gamma))
    rows = max(1, 2_000_000 // max(M - 1, 1))  # (sampled in blocks of ~2e6 terms: memory)
    parts = []
    for i in range(0, N, rows):
        L = law.sample(rng, (min(rows, N - i), M - 1))
        s, m = L.sum(axis=1), L.max(axis=1)
        p, e = law.tail(np.maximum(m, -s))
        parts.append(s * p + e)
    g = np.concatenate(parts)
    return float(g.mean()), float(g.std(ddof=1) / math.sqrt(N))
