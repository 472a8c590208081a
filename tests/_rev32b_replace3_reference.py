"""Brute-force replace-one delta of the shuffled GaussianRandomizer(s, 1) at n = 3 (review rev32b; not collected by
pytest), the n = 3 analogue of tests/_rev30b_replace_reference.py, from the mechanism's definition alone: user i
releases y_i = x_i + N(0, s^2); the shuffler releases the multiset {y_1, y_2, y_3}, whose law on ordered triples is the
symmetrised product (1/6) sum over permutations of p_{s(1)}(y1) p_{s(2)}(y2) p_{s(3)}(y3). For the neighbouring datasets
(1, x2, x3) and (-1, x2, x3) the hockey-stick divergence int (P - e^eps P')_+ (any sign of eps) is computed on a tensor
Gauss-Legendre grid (panels of width s / 2, 6 nodes each, over [-1 - 9 s, 1 + 9 s]; measured against panels of width
s / 4: within 2e-4 relative at s = 1, eps in [-3, 3]). Any fixed x2, x3 gives a lower value of the round's true replace
delta: every certified upper value must lie above it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def _grid(s: float, width: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(k)
    lo, hi = -1.0 - 9.0 * s, 1.0 + 9.0 * s
    m = int(math.ceil((hi - lo) / (width * s)))
    edges = np.linspace(lo, hi, m + 1)
    a, b = edges[:-1, None], edges[1:, None]
    return ((a + b) / 2 + (b - a) / 2 * x).ravel(), ((b - a) / 2 * w).ravel()


def replace_delta_n3(s: float, eps, x2: float = 0.0, x3: float = 0.0, width: float = 0.5, k: int = 6) -> np.ndarray:
    """delta(eps) between the shuffled outputs of (1, x2, x3) and (-1, x2, x3), GaussianRandomizer(s, 1), n = 3."""
    y, w = _grid(s, width, k)
    phi = lambda mu: np.exp(-0.5 * ((y - mu) / s) ** 2) / (s * math.sqrt(2 * math.pi))  # noqa: E731
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    out = np.zeros(eps.size)
    fa = [phi(1.0), phi(x2), phi(x3)]
    fb = [phi(-1.0), phi(x2), phi(x3)]
    ww = np.multiply.outer(w, w)
    for i in range(y.size):  # slices in y1: the (y2, y3) plane at once
        P = np.zeros((y.size, y.size))
        Q = np.zeros((y.size, y.size))
        for perm in itertools.permutations(range(3)):
            P += fa[perm[0]][i] * np.multiply.outer(fa[perm[1]], fa[perm[2]])
            Q += fb[perm[0]][i] * np.multiply.outer(fb[perm[1]], fb[perm[2]])
        P /= 6.0
        Q /= 6.0
        W = w[i] * ww
        for j, e in enumerate(eps):
            out[j] += float(np.sum(W * np.maximum(P - math.exp(e) * Q, 0.0)))
    return out
