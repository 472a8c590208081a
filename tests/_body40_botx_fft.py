"""body40's independent lower reference of the Gaussian randomizer's bot-vs-x law's D_up (zero-out) at moderate n, for
tests/test_body40_top_clamp.py (not collected by pytest): no law object, lattice or certified FFT of the accountant.

The law (tests/_far38_botx_reference.py): L = 1 - e^eps g on y <= 0 (an atom of mass 1/2 at the top) and
L = 1 - e^eps g e^{2y/s^2} for y > 0, y of density phi_s(y + 1) / g, g = 2 Phibar(1/s); so for t below the top,
P(L > t) = 1/2 + (Phi((r + 1)/s) - Phi(1/s)) / g with r = (s^2/2) log((1 - t)/(e^eps g)), and
E[L; L > t] = tau(t) + t P(L > t) from the closed-form tau of tests/_far38_botx_reference.py.

Method: tests/_rev29_fft_reference.d_up_fft (numpy's FFT) on L's cell masses from -B_ref up (the mass below -B_ref
dropped). Each user is then a sub-probability law, and the n-th power of 1 - gamma + gamma phi computes
E[S_+ ; no active user below -B_ref] <= E[S_+]: a lower reference up to the cell split's spread (which raises it, about
n gamma h^2 / 4 times the sum's density at 0: the estimates at h and 2h and their h^2 extrapolation show it) and the
circular window's wrap (the window spans far below the sum's relevant values)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from _far38_botx_reference import tau
from _rev29_fft_reference import d_up_fft


class BotX:
    """The bot-vs-x law's ``tail(t)`` = (P(L > t), E[L; L > t]) elementwise (sigma0 = s, privacy parameter eps)."""

    def __init__(self, s: float, eps: float):
        self.s, self.eps = float(s), float(eps)
        self.g = 2.0 * float(special.ndtr(-1.0 / s))
        self.top = 1.0 - math.exp(eps) * self.g

    def tail(self, t):
        t = np.asarray(t, float)
        s, g = self.s, self.g
        below = t < self.top
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.where(below, 0.5 * s * s * np.log((1.0 - t) / (math.exp(self.eps) * g)), 0.0)
        p = np.where(below, 0.5 + (special.ndtr((r + 1) / s) - special.ndtr(1 / s)) / g, 0.0)
        e = np.array([tau(float(x), s, self.eps) for x in t.ravel()]).reshape(t.shape) + t * p
        return p, np.where(below, e, 0.0)


def d_up_lower(s: float, eps: float, n: int, gamma: float, h: float, b_ref: float, lo: float, N: int):
    """(estimate at h, at 2h, their h^2 extrapolation) of the lower reference E[S_+ ; no active user below -b_ref] /
    (n gamma); ``lo`` the circular window's lowest value, N its nodes at h (N h + lo above the sum's top)."""
    a, b = d_up_fft(BotX(s, eps), -b_ref, gamma, n, h, lo, N)
    return a, b, a - (b - a) / 3.0
