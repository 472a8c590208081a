"""rev46 (not collected by pytest): the blanket divergence D_n of the 1-D BMG / Gaussian randomizer (zero-out) at
n <= 3 by nested quadrature (scipy's adaptive quad, double precision, relative 1e-11 per piece), from the mechanism's
output densities as in tests/_bmg_reference.py (``Pair``: the amplification variable L(y) = (p - e^eps q)(y) / r(y),
y ~ R_BG, and its closed-form stop-loss E[(L + c)_+]; ported to floats here; the mpmath module checks it at n = 2):

    D_n = sum_k C(n, k) g^k (1 - g)^(n - k) E[(L_1 + .. + L_k)_+] / (n g)     (g the blanket mass, B_i ~ Bern(g))

with E[(L_1)_+] = stoploss(0), E[(L_1 + L_2)_+] = E_y stoploss(L(y)) and E[(L_1 + L_2 + L_3)_+] = E_y F2(L(y)),
F2(c) = E_y' stoploss(L(y') + c). Each quadrature is cut at the densities' centres, +-12 s, and the y where L(y)
reaches a branch end of the stop-loss (``_inverse``); L's atom (gamma = 0: L constant on y <= 0) adds the outer cuts
of F2's kinks. For values >= ~1e-10 (cancellation in the closed forms below that).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import integrate
from scipy.special import ndtr

SQ2PI = math.sqrt(2 * math.pi)


def _pb(x):  # P(N(0,1) > x)
    return float(ndtr(-x))


def _p(x):
    return float(ndtr(x))


class FPair:
    """tests/_bmg_reference.py's ``Pair`` in floats (kinds xb, bx: gamma > 0; xb0, bx0: gamma = 0)."""

    def __init__(self, gamma, s, eps, kind):
        self.g, self.s, self.ee, self.kind = float(gamma), float(s), math.exp(eps), kind
        self.g0 = 2 * _pb(1 / self.s) if kind in ("xb0", "bx0") else None

    def gamma_law(self):
        return self.g if self.g0 is None else self.g0

    def L(self, y):
        g, s, ee = self.g, self.s, self.ee
        if self.kind == "xb":
            return g - ee + (1 - g) * math.exp((2 * y - 1) / (2 * s * s))
        if self.kind == "bx":
            return 1 - ee * g - ee * (1 - g) * math.exp((2 * y - 1) / (2 * s * s))
        ratio = 1.0 if y <= 0 else math.exp(2 * y / (s * s))
        return self.g0 * ratio - ee if self.kind == "xb0" else 1 - ee * self.g0 * ratio

    def stoploss(self, c):
        g, s, ee = self.g, self.s, self.ee
        if self.kind == "xb":
            a0 = g - ee + c
            if a0 >= 0:
                return a0 + (1 - g)
            ys = 0.5 + s * s * math.log(-a0 / (1 - g))
            return max(a0 * _pb(ys / s) + (1 - g) * _pb((ys - 1) / s), 0.0)
        if self.kind == "bx":
            a0 = 1 - ee * g + c
            if a0 <= 0:
                return 0.0
            ys = 0.5 + s * s * math.log(a0 / (ee * (1 - g)))
            return max(a0 * _p(ys / s) - ee * (1 - g) * _p((ys - 1) / s), 0.0)
        g0 = self.g0
        if self.kind == "xb0":
            k = (ee - c) / g0
            neg = (1 - k) * _p(-1 / s) if k < 1 else 0.0
            if k <= 0:
                pos = _pb(-1 / s) + (-k) * _pb(1 / s)
            else:
                ys = max(s * s * math.log(k) / 2, 0.0)
                pos = _pb((ys - 1) / s) - k * _pb((ys + 1) / s)
            return max(neg + pos, 0.0)
        k = (1 + c) / g0
        neg = (k - ee) * _p(-1 / s) if k > ee else 0.0
        if k <= ee:
            return neg
        y2 = s * s * math.log(k / ee) / 2
        pos = k * (_p((y2 + 1) / s) - _p(1 / s)) - ee * (_p((y2 - 1) / s) - _p(-1 / s))
        return max(neg + pos, 0.0)

    def dens(self, y):
        s = self.s
        if self.g0 is not None:
            return math.exp(-0.5 * ((abs(y) + 1) / s) ** 2) / (s * SQ2PI) / self.g0
        return math.exp(-0.5 * (y / s) ** 2) / (s * SQ2PI)

    def inverse(self, t):
        """The y (beyond L's flat part) with L(y) = t, or None (L is monotone there)."""
        g, s2, ee = self.g, self.s * self.s, self.ee
        if self.kind == "xb":
            x = (t - g + ee) / (1 - g)
            return 0.5 + s2 * math.log(x) if x > 0 else None
        if self.kind == "bx":
            x = (1 - ee * g - t) / (ee * (1 - g))
            return 0.5 + s2 * math.log(x) if x > 0 else None
        ratio = (t + ee) / self.g0 if self.kind == "xb0" else (1 - t) / (ee * self.g0)
        return s2 * math.log(ratio) / 2 if ratio > 1 else None

    def branch_targets(self, c):
        """The values of L(y') at which stoploss(L(y') + c) switches branch."""
        g, ee = self.g, self.ee
        if self.kind == "xb":
            return [ee - g - c]
        if self.kind == "bx":
            return [ee * g - 1 - c]
        if self.kind == "xb0":
            return [ee - c, ee - self.g0 - c]
        return [-1 - c, ee * self.g0 - 1 - c]

    def base_points(self):
        s = self.s
        if self.g0 is not None:
            return [-1 - 12 * s, -1.0, 0.0, 1 - 12 * s, 1.0, 1 + 12 * s]
        return [-12 * s, 0.0, 0.5, 12 * s, 1 - 12 * s, 1.0, 1 + 12 * s]


def _integrate(f, pts, s: float, split: int) -> float:
    """Integral of f over the line, cut at ``pts`` (and each finite piece in ``split``), tails to +-40 s beyond."""
    pts = sorted(set(p for p in pts if p is not None and math.isfinite(p)))
    lo, hi = pts[0] - 40 * s, pts[-1] + 40 * s
    pts = [lo] + pts + [hi]
    tot = []
    for a, b in zip(pts[:-1], pts[1:]):
        for j in range(split):
            x0, x1 = a + (b - a) * j / split, a + (b - a) * (j + 1) / split
            if x1 > x0:
                with warnings.catch_warnings():  # (quadpack's warnings at 1e-11: the split check measures the error)
                    warnings.simplefilter("ignore", integrate.IntegrationWarning)
                    tot.append(integrate.quad(f, x0, x1, epsabs=0.0, epsrel=1e-11, limit=200)[0])
    return math.fsum(tot)


def _cuts(p: FPair, c) -> list:
    return p.base_points() + [p.inverse(t) for t in p.branch_targets(c)]


def f2(p: FPair, c, split: int = 1) -> float:
    """E_y' stoploss(L(y') + c)."""
    return _integrate(lambda y: p.dens(y) * p.stoploss(p.L(y) + c), _cuts(p, c), p.s, split)


def e_sum(p: FPair, k: int, split: int = 1) -> float:
    """E[(L_1 + .. + L_k)_+] for k = 1, 2, 3."""
    if k == 1:
        return p.stoploss(0.0)
    if k == 2:
        pts = p.base_points() + [p.inverse(t / 2) for t in p.branch_targets(0.0)] + \
            [p.inverse(t) for t in p.branch_targets(0.0)]
        return _integrate(lambda y: p.dens(y) * p.stoploss(p.L(y)), pts, p.s, split)
    pts = p.base_points() + [p.inverse(t / k) for t in p.branch_targets(0.0) for k in (1, 2, 3)]
    if p.g0 is not None:  # L's atom a (y <= 0): F2(c) has kinks at c = -2a and where L' + c hits a branch end at a
        a = p.L(-1.0)
        pts += [p.inverse(-2 * a)] + [p.inverse(t - a) for t in p.branch_targets(0.0)] + \
            [p.inverse((t - a) / 2) for t in p.branch_targets(0.0)]
    return _integrate(lambda y: p.dens(y) * f2(p, p.L(y), split), pts, p.s, split)


def d_n(gamma, sigma0, eps, n: int, split: int = 1) -> float:
    """D_n(eps), zero-out (the max over the pair's two orders), n <= 3."""
    kinds = ("xb", "bx") if gamma > 0 else ("xb0", "bx0")
    out = []
    for kind in kinds:
        p = FPair(gamma, sigma0, eps, kind)
        g = p.gamma_law()
        tot = math.fsum(math.comb(n, k) * g**k * (1 - g) ** (n - k) * e_sum(p, k, split) for k in range(1, n + 1))
        out.append(tot / (n * g))
    return max(out)


__all__ = ["FPair", "d_n", "e_sum", "f2", "np"]
