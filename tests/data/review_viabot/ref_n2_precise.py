"""Independent reference (numpy only): the n = 2 replace-one divergence of ref_n2.py for huge sigma0, in the
standardised variable u = y / s (shift a = 1 / s) with the cancellation P - e^eps Q written through expm1:
P - e^eps Q = phi(u1) phi(u2) / 2 [c(u1) g(u2) + g(u1) c(u2)] e^{-a^2/2},
c(u) = -e^{a u} expm1(eps - 2 a u), g(u) = e^{x2 a u - x2^2 a^2 / 2} (user 1: +1 vs -1, user 2 at x2)."""
import math

import numpy as np


def hs2_precise(s, x2, eps_list, h=0.01, L=11.0):
    a = 1.0 / s
    u = np.arange(-L, L + h / 2, h)
    w = np.full(u.size, h)
    w[0] = w[-1] = h / 2
    ph = np.exp(-0.5 * u * u) / math.sqrt(2 * math.pi) * w
    g = np.exp(x2 * a * u - 0.5 * (x2 * a) ** 2)
    out = []
    for e in eps_list:
        c = -np.exp(a * u) * np.expm1(e - 2 * a * u)
        tot = 0.0
        for i0 in range(0, u.size, 512):
            sl = slice(i0, i0 + 512)
            M = c[sl, None] * g[None, :] + g[sl, None] * c[None, :]
            tot += np.sum(np.maximum(M, 0.0) * ph[sl, None] * ph[None, :])
        out.append(0.5 * math.exp(-0.5 * a * a) * tot)
    return np.array(out)
