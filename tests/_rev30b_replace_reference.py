"""Brute-force replace-one delta of the shuffled GaussianRandomizer(s, 1) at n = 2 (review rev30b; not collected by
pytest). From the mechanism's definition alone (not from ``sharpdp.shuffle``): user i releases y_i = x_i + N(0, s^2),
x_i in [-1, 1]; the shuffler releases the multiset {y_1, y_2}, whose law on ordered pairs is the symmetrised product
P(y1, y2) = (p_1(y1) p_2(y2) + p_2(y1) p_1(y2)) / 2. For the neighbouring datasets (1, x2) and (-1, x2) the hockey-stick
divergence delta(eps) = int (P - e^eps P')_+ is computed on a tensor Gauss-Legendre grid (panels of width s / 8 over
[-1 - 12 s, 1 + 12 s]; relative error up to 5e-4 at s in {0.5, 1, 2, 4.6} and eps in [0, 4] (the kink of (.)_+), measured by halving the
panels). The worst case over x2 is at least the value at any x2, so each value is a lower value of the true replace
delta of the round: every certified upper value must lie above it.
"""

from __future__ import annotations

import math

import numpy as np


def _grid(s: float, width: float = 0.125, k: int = 8) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(k)
    lo, hi = -1.0 - 12.0 * s, 1.0 + 12.0 * s
    m = int(math.ceil((hi - lo) / (width * s)))
    edges = np.linspace(lo, hi, m + 1)
    a, b = edges[:-1, None], edges[1:, None]
    return ((a + b) / 2 + (b - a) / 2 * x).ravel(), ((b - a) / 2 * w).ravel()


def _phi(y: np.ndarray, mu: float, s: float) -> np.ndarray:
    return np.exp(-0.5 * ((y - mu) / s) ** 2) / (s * math.sqrt(2 * math.pi))


def replace_delta_n2(s: float, eps: float | np.ndarray, x2: float = 0.0, width: float = 0.125) -> np.ndarray:
    """delta(eps) between the shuffled outputs of (1, x2) and (-1, x2), GaussianRandomizer(s, 1), n = 2."""
    y, w = _grid(s, width)
    a1, a2, b1 = _phi(y, 1.0, s), _phi(y, x2, s), _phi(y, -1.0, s)
    P = 0.5 * (np.outer(a1, a2) + np.outer(a2, a1))
    Q = 0.5 * (np.outer(b1, a2) + np.outer(a2, b1))
    W = np.outer(w, w)
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    return np.array([float(np.sum(W * np.maximum(P - math.exp(e) * Q, 0.0))) for e in eps])
