"""Independent references of the blanket bound at n = 2, 3 for one-dimensional Gaussian-family randomizers.

Built from the mechanisms' output densities (not from ``sharpdp.shuffle.laws``): for a neighbouring order
("x_bot": x vs bot, "bot_x": bot vs x, "replace": 1 vs -1) the amplification variable l(y) with y ~ R_BG, its
stop-loss SL(t) = E[(l(Y) - t)_+] in closed form (l is monotone in y, so {l > t} is a half-line), and the blanket
bound D_up = E[(L_1 + ... + L_M)_+] / (n gamma), M ~ Bin(n, gamma), by Gauss-Legendre quadrature
(Balle et al. 2019, "The Privacy Blanket of the Shuffle Model", Lemma 5.3).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr


def Q(z):
    return ndtr(-z)


def gauss_pieces(s, eps, kind):
    """GaussianRandomizer(s), one dimension, inputs in [-1, 1]: blanket phi_s(|y| + 1) / gamma, gamma = 2 Q(1/s),
    R_1 / R_BG = gamma e^{2 y_+ / s^2}. kind "x_bot": l(y) = R_1/R_BG - e^eps; "bot_x": l(y) = 1 - e^eps R_1/R_BG.
    Returns gamma, the blanket density, l and SL(t) = E[(l(Y) - t)_+] in closed form."""
    E = math.exp(eps)
    g = 2 * Q(1 / s)

    def ratio(y):
        return g * np.exp(2 * np.maximum(y, 0) / (s * s))

    if kind == "x_bot":
        def lf(y):
            return ratio(y) - E

        def sl(t):
            ys = s * s / 2 * np.log(np.maximum((t + E) / g, 1.0))
            return np.where(t < g - E, 1 - E - t, Q((ys - 1) / s) - (E + t) * Q((ys + 1) / s) / g)
    else:
        def lf(y):
            return 1 - E * ratio(y)

        def sl(t):
            ys = s * s / 2 * np.log(np.where(t < 1 - E * g, (1 - t) / (E * g), 1.0))
            v = (1 - t) * (1 - Q((ys + 1) / s) / g) - E * (1 - Q((ys - 1) / s))
            return np.where(t < 1 - E * g, v, 0.0)

    def dens(y):
        return np.exp(-0.5 * ((np.abs(y) + 1) / s) ** 2) / (s * math.sqrt(2 * math.pi)) / g

    return g, dens, lf, sl


def bmg_pieces(gamma, s, eps, kind):
    """BlanketMixedGaussian(gamma, s), one dimension, R_BG = N(0, s^2): l(y) = c0 + sum c_a e^{(2ay - a^2)/2s^2};
    SL in closed form (l monotone in y)."""
    E, w = math.exp(eps), math.exp(-1 / (2 * s * s))
    if kind == "x_bot":
        c0, terms = gamma - E, [(1 - gamma, 1)]
    elif kind == "bot_x":
        c0, terms = 1 - E * gamma, [(-E * (1 - gamma), 1)]
    else:
        c0, terms = gamma * (1 - E), [(1 - gamma, 1), (-E * (1 - gamma), -1)]

    def lf(y):
        return c0 + sum(c * np.exp((2 * a * y - a * a) / (2 * s * s)) for c, a in terms)

    def sl(t):
        if kind == "x_bot":
            ys = s * s * np.log(np.maximum(t - c0, 1e-300) / (terms[0][0] * w))
            return np.where(t <= c0, c0 - t + terms[0][0], (c0 - t) * Q(ys / s) + terms[0][0] * Q((ys - 1) / s))
        if kind == "bot_x":
            ys = s * s * np.log(np.maximum(c0 - t, 1e-300) / (-terms[0][0] * w))
            return np.where(t >= c0, 0.0, (c0 - t) * Q(-ys / s) + terms[0][0] * Q((1 - ys) / s))
        A, B = terms[0][0] * w, -terms[1][0] * w
        d = t - c0
        ys = s * s * np.log((d + np.sqrt(d * d + 4 * A * B)) / (2 * A))
        return (c0 - t) * Q(ys / s) + sum(c * Q((ys - a) / s) for c, a in terms)

    def dens(y):
        return np.exp(-0.5 * (y / s) ** 2) / (s * math.sqrt(2 * math.pi))

    return gamma, dens, lf, sl


def nodes(s, width=0.25, span=14.0, k=16):
    """Gauss-Legendre nodes on panels of width ``width`` s over [-span s, span s] (0 is a panel edge)."""
    x, w = np.polynomial.legendre.leggauss(k)
    edges = np.arange(-span, span + 1e-9, width) * s
    a, b = edges[:-1, None], edges[1:, None]
    return ((a + b) / 2 + (b - a) / 2 * x).ravel(), ((b - a) / 2 * w).ravel()


def dup_kind(pieces, s, n, width=0.25):
    """D_up = E[(L_1 + ... + L_M)_+] / (n gamma), M ~ Bin(n, gamma), at n = 2 or 3 for one order of the pair:
    E[(L1 + L2)_+] = E[SL(-l(Y1))], and the 2-D product rule for three users."""
    g, dens, lf, sl = pieces
    y, w = nodes(s, width)
    wd, ly = w * dens(y), lf(y)
    e1 = float(sl(np.array(0.0)))
    e2 = float(np.sum(wd * sl(-ly)))
    if n == 2:
        return (1 - g) * e1 + g / 2 * e2
    e3 = float(np.sum(wd[:, None] * wd[None, :] * sl(-ly[:, None] - ly[None, :])))
    return (3 * g * (1 - g) ** 2 * e1 + 3 * g * g * (1 - g) * e2 + g**3 * e3) / (3 * g)
