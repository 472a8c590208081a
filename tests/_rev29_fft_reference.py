"""A plain (uncertified) FFT estimate of the BMG's blanket divergence D_up^{x vs bot}(eps), zero-out, for the review
tests rev29 (not collected by pytest), written with numpy from the mechanism's laws in tests/_review28_ak_reference.py
(``OneTerm``: the BMG's L = gamma - e^eps + (1 - gamma) e^{rZ - r^2/2}, r = 1/sigma0, tests/_rev29_bmg_reference.py;
``GaussXBot``: the Gaussian randomizer's, from its densities), independent of the accountant's lattice engine:
S = B_1 L_1 + ... + B_n L_n, B_i ~ Bern(gamma), D_up = E[S_+] / (n gamma) (docs/accountant.md Theorem 1.3).

Method: L's law on the grid h Z, each cell's mass split between its two end nodes so that the mean is kept (the
cell's mass and first moment from the law's closed-form tail: P(L > t), E[L; L > t]); the thinned law's characteristic function 1 - gamma + gamma phi_L by one real FFT, its n-th power as
exp(n log1p(gamma (phi_L - 1))), back by the inverse FFT; E[S_+] = sum over the nodes x > 0 of x p(x). Errors (none
bounded): the split's extra variance n gamma h^2 / 4 (relative to the body's variance: the estimate's error is of that
order times z^2), the mass of L beyond the window (dropped) and of S beyond it (aliased), float round-off of the
power (about n gamma 1e-16 relative), and the transform's round-off at the far nodes (~1e-15 each: weighted by
the node's value x it moves E[S_+] / (n gamma) by ~1e-4 relative for values ~1e-6 at n gamma ~ 4e6; the window's
choice shows it). ``d_up_fft`` returns the estimates at h and at 2h; :func:`richardson` their h^2
extrapolation and its indicator (measured: the error falls by 4 per halving).
"""

from __future__ import annotations

import math

import numpy as np


def _law_on_grid(law, lo: float, h: float, N: int) -> np.ndarray:
    """L's law (``law.tail(t)`` = (P(L > t), E[L; L > t]) elementwise, tests/_review28_ak_reference.py) on the nodes
    lo + j h, j < N, each cell's mass split between its end nodes keeping its mean (mass above the window dropped)."""
    x = lo + h * np.arange(N + 1)  # cell edges
    P, E = law.tail(x)
    p = -np.diff(P)  # P(L in (x_j, x_j+1])
    m = -np.diff(E)  # E[L; L in (x_j, x_j+1]]
    w_hi = np.clip((m - p * x[:-1]) / h, 0.0, p)  # mass moved to the cell's upper node (keeps the cell's mean)
    q = p - w_hi
    q[1:] += w_hi[:-1]
    return q


def d_up_fft(law, low: float, gamma: float, n: int, h: float, lo: float, N: int,
             neg: bool = False) -> tuple[float, float]:
    """(estimate at step h, estimate at step 2h) of D_up = E[S_+] / (n gamma), S = sum of n terms B_i L_i, on a
    circular grid of N nodes (N / 2 at 2h): node i is the value i h for i < N + lo / h, else (i - N) h; ``lo`` < 0
    must lie below the sum's relevant low values and (N h + lo) above its relevant top. ``law``: as for
    :func:`_law_on_grid`; ``low``: L's smallest value. ``neg``: E[S_+] as E[S] + E[S_-], E[S] = n gamma E[L] in
    closed form and E[S_-] from the grid's values below 0 (for heavy right tails: the mass beyond the window, which
    wraps around, then only has to miss [lo, 0])."""
    out = []
    for step, size in ((h, N), (2 * h, N // 2)):
        k1 = math.floor(low / step) - 1  # (< 0: L's smallest value above k1 step)
        q = _law_on_grid(law, k1 * step, step, size + k1)  # node j at (k1 + j) step
        c = np.zeros(size)
        c[:size + k1] = q
        c = np.roll(c, k1)  # circular: node i at i step (negative values at the end)
        f = np.fft.rfft(c)
        pk = np.fft.irfft(np.exp(n * np.log1p(gamma * (f - 1.0))), size)
        i = np.arange(size)
        xs = np.where(i < size + lo / step, i, i - size) * step
        if neg:
            mean = float(law.tail(np.array([-1e300]))[1][0])  # E[L] (the tail's closed form at -inf)
            out.append(mean + float(np.sum(-xs[xs < 0] * pk[xs < 0])) / (n * gamma))
        else:
            out.append(float(np.sum(xs[xs > 0] * pk[xs > 0])) / (n * gamma))
    return out[0], out[1]


def richardson(est: tuple[float, float]) -> tuple[float, float]:
    """(the h^2 extrapolation of (value at h, value at 2h), its indicator |value at h - value at 2h|)."""
    a, b = est
    return a - (b - a) / 3.0, abs(b - a)
