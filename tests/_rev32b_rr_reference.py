"""A lower reference for the k-fold composition of shuffled binary randomized response, replace-one (review rev32b;
not collected by pytest). Derived from the mechanism alone, not from sharpdp: the shuffled output of binary RR is the
count C of reported ones; for neighbouring datasets differing in user 1 (x1 = 1 vs 0) whose other n - 1 users hold j
ones, C = Y + U_j with Y ~ Bern(p) vs Bern(q) (p = e^eps0 / (1 + e^eps0), q = 1 - p), U_j = Bin(j, p) + Bin(n - 1 - j,
q). For any fixed class j the k-fold composition of that pair (P_j, Q_j) is one instance of the composed mechanism,
so its hockey-stick divergence E_P[(1 - e^{eps - S})_+] (S the sum of k i.i.d. privacy losses log P_j / Q_j under P_j)
is a LOWER value of the composed mechanism's delta(eps). Computed with every loss rounded DOWN to the grid h Z (the
weight (1 - e^{eps - s})_+ is non-decreasing in s, so rounding down can only lower it), the k-fold law by FFT
convolution (negative round-off clipped; its absolute error ~1e-16 of the largest mass, far below the values compared).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import signal, stats


def class_pair(n: int, eps0: float, j: int) -> tuple[np.ndarray, np.ndarray]:
    """(P_j, Q_j): the laws of the count C for x1 = 1 and x1 = 0, the other n - 1 users holding j ones."""
    p = math.exp(eps0) / (1.0 + math.exp(eps0))
    q = 1.0 - p
    u = np.convolve(stats.binom.pmf(np.arange(j + 1), j, p), stats.binom.pmf(np.arange(n - j), n - 1 - j, q))
    P, Q = np.zeros(n + 1), np.zeros(n + 1)
    P[1:] += p * u
    P[:-1] += q * u
    Q[1:] += q * u
    Q[:-1] += p * u
    return P, Q


def composed_lower(n: int, eps0: float, j: int, k: int, eps: list[float], h: float = 5e-5) -> list[float]:
    """Lower values of the k-fold composed delta(eps) of the class-j pair (losses rounded down to h Z)."""
    P, Q = class_pair(n, eps0, j)
    m = (P > 0) & (Q > 0)
    idx = np.floor((np.log(P[m]) - np.log(Q[m])) / h).astype(np.int64)
    lo = int(idx.min())
    pm = np.zeros(int(idx.max()) - lo + 1)
    np.add.at(pm, idx - lo, P[m])
    res, base, kk, off, boff = np.array([1.0]), pm, k, 0, lo
    while kk:
        if kk & 1:
            res, off = np.clip(signal.fftconvolve(res, base), 0.0, None), off + boff
        kk >>= 1
        if kk:
            base, boff = np.clip(signal.fftconvolve(base, base), 0.0, None), 2 * boff
    s = (np.arange(res.size) + off) * h
    out = []
    for e in eps:
        w = -np.expm1(e - s)
        sel = w > 0
        out.append(float(np.sum(res[sel] * w[sel])))
    return out
