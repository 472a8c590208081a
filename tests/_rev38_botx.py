"""rev38's own y-space reference of the Gaussian randomizer's bot-vs-x law at n = 2 (zero-out; not collected by pytest),
written apart from tests/_far38_botx_reference.py (checked against it to 6e-15 relative at sigma0 0.5, 1, 2 and eps
0.001, 0.1, 1): L = 1 - e^eps g (y <= 0, an atom of mass 1/2 at the top) or 1 - e^eps g e^{2y/s^2} (y > 0, density
phi_s(y + 1) / g), g = 2 Phibar(1/s). tau(t) = E[(L - t)_+] by composite Gauss-Legendre over y in [0, y*(t)] (the root of
L = t; no closed form), E[(L_1 + L_2)_+] = E[tau(-L_1)] by composite Gauss-Legendre over y_1 split at the kink where
-L_1 crosses the top; D_up(n = 2) = (1 - g) E[L_+] + g/2 E[(L_1 + L_2)_+] (Theorem 1.3 of docs/accountant.md)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special


def _gl(a: float, b: float, pieces: int, k: int = 48) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(k)
    e = np.linspace(a, b, pieces + 1)
    lo, hi = e[:-1, None], e[1:, None]
    return ((lo + hi) / 2 + (hi - lo) / 2 * x).ravel(), ((hi - lo) / 2 * w).ravel()


def botx_dup_n2(s: float, eps: float) -> tuple[float, float]:
    """(D_up, g) of the bot-vs-x law of GaussianRandomizer(s, 1) at n = 2."""
    E = math.exp(eps)
    g = 2.0 * float(special.ndtr(-1.0 / s))
    top = 1.0 - E * g

    def dens(y):
        return np.exp(-0.5 * ((y + 1) / s) ** 2) / (s * math.sqrt(2 * math.pi)) / g

    def ell(y):
        return 1.0 - E * g * np.exp(2 * y / s ** 2)

    xg, wg = np.polynomial.legendre.leggauss(48)

    def tau(t):
        t = np.atleast_1d(np.asarray(t, float))
        out = 0.5 * np.maximum(top - t, 0.0)
        ok = t < top
        ys = 0.5 * s * s * np.log((1 - t[ok]) / (E * g))
        e = np.linspace(0.0, 1.0, 9)
        lo, hi = e[:-1, None] * ys[:, None, None], e[1:, None] * ys[:, None, None]
        y = (lo + hi) / 2 + (hi - lo) / 2 * xg
        out[ok] += np.sum((hi - lo) / 2 * wg * dens(y) * (ell(y) - t[ok][:, None, None]), axis=(1, 2))
        return out

    if top <= 0.0:
        return 0.0, g
    e1 = float(tau(0.0)[0])
    yk = 0.5 * s * s * math.log((2 - E * g) / (E * g))  # (-L_1 = top there: tau's atom term has its kink)
    e2 = 0.5 * float(tau(-top)[0])
    for a, b in ((0.0, yk), (yk, 1 + 40 * s)):
        if b > a:
            y, w = _gl(a, b, 32)
            e2 += float(np.sum(w * dens(y) * tau(-ell(y))))
    return (1 - g) * e1 + g / 2 * e2, g


def xbot_dup_n2(s: float, eps: float) -> tuple[float, float]:
    """(D_up, g) of the x-vs-bot law L = r - e^eps (r = g at the atom y <= 0, g e^{2y/s^2} for y > 0) at n = 2, for any
    real eps (docs/accountant.md §9.15 uses eps = -e2 < 0), by the same composite Gauss-Legendre in y."""
    E = math.exp(eps)
    g = 2.0 * float(special.ndtr(-1.0 / s))
    atom = g - E
    y_end = 1.0 + 40.0 * s

    def dens(y):
        return np.exp(-0.5 * ((y + 1) / s) ** 2) / (s * math.sqrt(2 * math.pi)) / g

    def ell(y):
        return g * np.exp(2 * y / s ** 2) - E

    xg, wg = np.polynomial.legendre.leggauss(48)

    def tau(t):
        t = np.atleast_1d(np.asarray(t, float))
        out = 0.5 * np.maximum(atom - t, 0.0)
        ys = np.maximum(0.5 * s * s * np.log(np.maximum((t + E) / g, 1e-300)), 0.0)  # L > t for y > ys
        e = np.linspace(0.0, 1.0, 17)
        lo = ys[:, None, None] + e[:-1, None] * (y_end - ys[:, None, None])
        hi = ys[:, None, None] + e[1:, None] * (y_end - ys[:, None, None])
        y = (lo + hi) / 2 + (hi - lo) / 2 * xg
        out += np.sum((hi - lo) / 2 * wg * dens(y) * np.maximum(ell(y) - t[:, None, None], 0.0), axis=(1, 2))
        return out

    e1 = float(tau(0.0)[0])
    e2 = 0.5 * float(tau(-atom)[0])
    knots = [0.0, y_end]
    if -atom + E > g:  # -L_1 = the atom where L_1 = -atom: tau's atom term has its kink there
        knots.insert(1, 0.5 * s * s * math.log((E - atom) / g))
    for a, b in zip(knots[:-1], knots[1:]):
        if b > a:
            y, w = _gl(a, b, 32)
            e2 += float(np.sum(w * dens(y) * tau(-ell(y))))
    return (1 - g) * e1 + g / 2 * e2, g
