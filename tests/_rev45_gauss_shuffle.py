"""rev45 (not collected by pytest): independent references for the replace-one divergence of the shuffled
one-dimensional Gaussian mechanism (each of n users reports x_i + sigma Z, |x_i| <= 1; the shuffler releases the
multiset), written from the mechanism alone (no sharpdp code).

For D = (1, x, ..., x), D' = (-1, x, ..., x) the multiset's densities' ratio is
p/r (y) = sum_j f_1(y_j) / f_x(y_j) / sum_j f_-1(y_j) / f_x(y_j) (the common factor prod_i f_x(y_i) cancels), so
H_eps(P || R) = E_P[(1 - e^{eps} r/p)_+]. Every such pair is a pair of neighbouring datasets: its H_eps is a LOWER value
of the mechanism's replace-one delta(eps) (the sup over pairs), so any certified upper value of delta must be above it.

``h_mc``: Monte Carlo under P (estimate and standard error); ``h_quad2``: n = 2 by scipy's 2-d quadrature (the ordered
pair's symmetrised densities).
"""

from __future__ import annotations

import math

import numpy as np


def _log_ratio(y: np.ndarray, x: float, s: float) -> np.ndarray:
    """log(p / r) at the rows of y (shape (m, n))."""
    l1 = ((y - x) ** 2 - (y - 1.0) ** 2) / (2 * s * s)
    l2 = ((y - x) ** 2 - (y + 1.0) ** 2) / (2 * s * s)
    m1, m2 = l1.max(axis=1, keepdims=True), l2.max(axis=1, keepdims=True)
    return (m1[:, 0] + np.log(np.exp(l1 - m1).sum(axis=1))) - (m2[:, 0] + np.log(np.exp(l2 - m2).sum(axis=1)))


def h_mc(s: float, n: int, x: float, eps: float, reps: int = 400_000, seed: int = 0) -> tuple[float, float]:
    """(estimate, standard error) of H_eps(P || R) for D = (1, x, ..., x), D' = (-1, x, ..., x)."""
    rng = np.random.default_rng(seed)
    out = np.empty(0)
    for _ in range(max(1, reps // 100_000)):
        m = min(reps, 100_000)
        y = rng.normal(0.0, s, size=(m, n))
        y[:, 0] += 1.0
        y[:, 1:] += x
        out = np.concatenate([out, np.maximum(0.0, -np.expm1(eps - _log_ratio(y, x, s)))])
    return float(out.mean()), float(out.std(ddof=1) / math.sqrt(out.size))


def h_quad2(s: float, x: float, eps: float) -> float:
    """H_eps(P || R) at n = 2 by 2-d quadrature (absolute error ~1e-10)."""
    from scipy import integrate

    def f(a, c):
        return math.exp(-(a - c) ** 2 / (2 * s * s)) / (s * math.sqrt(2 * math.pi))

    def g(b, a):
        p = 0.5 * (f(a, 1.0) * f(b, x) + f(b, 1.0) * f(a, x))
        r = 0.5 * (f(a, -1.0) * f(b, x) + f(b, -1.0) * f(a, x))
        return max(0.0, p - math.exp(eps) * r)

    import warnings

    L = 1.0 + 12.0 * s
    with warnings.catch_warnings():  # (quadpack's round-off notice at tiny values: the slack of the tests covers it)
        warnings.simplefilter("ignore")
        val, _ = integrate.dblquad(g, -L, L, -L, L, epsabs=1e-12, epsrel=1e-8)
    return float(val)
