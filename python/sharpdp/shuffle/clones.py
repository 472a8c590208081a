"""The "hiding among the clones" bound for any pure eps0-LDP randomizer, replace-one adjacency.

Feldman, McMillan & Talwar, *Hiding among the clones* (FOCS 2021), Theorem 3.1, evaluated
numerically with certified rounding.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp import _validation as V

__all__ = ["clones_delta", "clones_epsilon"]


def clones_delta(epsilon0: float, n: int, epsilon: float) -> float:
    """Numerical "hiding among the clones" bound on delta(eps) for any eps0-LDP randomizer, replace-one.

    Feldman, McMillan & Talwar (FOCS 2021, Theorem 3.1): the shuffled outputs on neighbouring
    datasets are post-processings of P and Q, with C ~ Bin(n - 1, e^-eps0), A ~ Bin(C, 1/2),
    P = (A + D, C - A + 1 - D), D ~ Bern(e^eps0 / (e^eps0 + 1)), and Q the same with
    D ~ Bern(1 / (e^eps0 + 1)). This returns D_{e^eps}(P || Q), a certified upper bound on the
    shuffled mechanism's delta(eps) under replace-one adjacency. Given C = c, P/Q increases in
    the first coordinate, so the positive part is a binomial tail (closed form); values of c
    outside a window around the mean are not summed but bounded by their probability (added).

    Parameters
    ----------
    epsilon0 : float
        Local privacy parameter in nats, > 0.
    n : int
        Number of users, >= 1.
    epsilon : float
        eps >= 0 in nats.

    Returns
    -------
    float
        Upper bound on delta(eps), in [0, 1]; exactly 0 for eps >= eps0.
    """
    from scipy.stats import binom

    e0 = V.real("epsilon0", epsilon0, lo=0.0, lo_open=True)
    nn = V.integer("n", n, lo=1)
    eps = V.real("epsilon", epsilon, lo=0.0)
    p = 1.0 / (1.0 + math.exp(-e0))  # e^eps0 / (e^eps0 + 1)
    ee = math.exp(eps)
    a_hi = p - ee * (1 - p)  # coefficient of P(A >= t - 1)
    if a_hi <= 0.0:
        return 0.0
    a_lo = (1 - p) - ee * p  # coefficient of P(A >= t), negative
    r_star = (ee * p - (1 - p)) / a_hi
    pc = math.exp(-e0)
    m, sd = (nn - 1) * pc, math.sqrt((nn - 1) * pc * (1 - pc))
    c_lo, c_hi = max(0, int(m - 13 * sd - 30)), min(nn - 1, int(m + 13 * sd + 30))
    c = np.arange(c_lo, c_hi + 1, dtype=np.float64)
    t = np.floor(r_star * (c + 1) / (1 + r_star)) + 1  # smallest a' with P > e^eps Q
    s_tm1 = binom.sf(t - 2, c, 0.5)  # P(A >= t - 1)
    s_t = binom.sf(t - 1, c, 0.5)  # P(A >= t)
    per_c = np.clip(a_hi * s_tm1 + a_lo * s_t, 0.0, 1.0)
    w = binom.pmf(c, nn - 1, pc)
    tail = (binom.cdf(c_lo - 1, nn - 1, pc) if c_lo > 0 else 0.0) + binom.sf(c_hi, nn - 1, pc)
    val = float(np.dot(w, per_c)) + tail
    return float(min(1.0, val * (1 + 1e-12) + 1e-300 + 4e-16 * c.size * float(w.max())))


def clones_epsilon(epsilon0: float, n: int, delta: float) -> float:
    """Smallest eps (safe end of a bisection bracket, relative width 1e-5) with clones_delta <= delta.

    Certified upper bound on the shuffled eps(delta) of any eps0-LDP randomizer, replace-one
    (Feldman, McMillan & Talwar 2021); never above eps0, exactly 0.0 if delta is met at 0.
    """
    e0 = V.real("epsilon0", epsilon0, lo=0.0, lo_open=True)
    d = V.probability_open("delta", delta)
    if clones_delta(e0, n, 0.0) <= d:
        return 0.0
    lo, hi = 0.0, e0
    while hi - lo > 1e-5 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if clones_delta(e0, n, mid) <= d else (mid, hi)
    return hi
