"""D_up of the BlanketMixedGaussian's x-vs-bot law at n = 2 and 3 by quadrature (review rev32b; not collected by pytest),
from the mechanism alone: L = gamma - e^eps + (1 - gamma) e^{rZ - r^2/2}, r = 1/sigma0 (tests/_rev29_bmg_reference.py),
S = B_1 L_1 + ... + B_n L_n, B_i ~ Bern(gamma), D_up = E[S_+] / (n gamma) (docs/accountant.md Theorem 1.3), expanded
over the number of active users; the innermost expectation in closed form (the lognormal stop-loss), the outer ones by
adaptive quadrature over [-12, 12] (relative accuracy ~1e-9; measured within the accountant's rel_tol 1e-3 brackets)."""

from __future__ import annotations

import math
from scipy import integrate, special

def _sl(a, b, r, t):
    """E[(a + b e^{rZ - r^2/2} - t)_+] (Black-Scholes)."""
    k = t - a
    if k <= 0.0:
        return a + b - t
    d2 = (math.log(b / k) - 0.5 * r * r) / r
    return b * special.ndtr(d2 + r) - k * special.ndtr(d2)

def dup_bmg(gamma, sigma0, eps, n):
    a, b, r = gamma - math.exp(eps), 1.0 - gamma, 1.0 / sigma0
    pdf = lambda z: math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    L = lambda z: a + b * math.exp(r * z - 0.5 * r * r)
    e1 = _sl(a, b, r, 0.0)
    e2 = integrate.quad(lambda z: _sl(a, b, r, -L(z)) * pdf(z), -12, 12, epsabs=0, epsrel=1e-11, limit=400)[0]
    if n == 2:
        s = 2 * gamma * (1 - gamma) * e1 + gamma ** 2 * e2
    else:
        e3 = integrate.dblquad(lambda y, z: _sl(a, b, r, -L(z) - L(y)) * pdf(z) * pdf(y), -12, 12, -12, 12,
                               epsabs=0, epsrel=1e-9)[0]
        s = 3 * gamma * (1 - gamma) ** 2 * e1 + 3 * gamma ** 2 * (1 - gamma) * e2 + gamma ** 3 * e3
    return s / (n * gamma)
