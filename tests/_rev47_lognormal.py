"""rev47 (not collected by pytest): E[(L - t)_+; v_lo < V < v_hi] x w for the kernel's lognormal law with BOTH
coefficients allowed non-zero, L(V) = a + G e^{rV - r^2/2} - S e^{-rV - r^2/2}, V ~ N(0, 1) (increasing in V), in
mpmath: the root v* of L = t in closed form (x = e^{r v*} solves G' x^2 - (t - a) x - S' = 0, G' = G e^{-r^2/2},
S' = S e^{-r^2/2}), then the three-term form of tests/_rev46_lognormal_ref.py (whose ``_P`` it reuses) on
(max(v*, v_lo), v_hi). Precision ``dps`` digits (the sum cancels where the value is far below its terms)."""

from __future__ import annotations

import mpmath as mp

from _rev46_lognormal_ref import _P


def exact(a, G, S, r, v_lo, v_hi, w, t, dps: int = 120):
    with mp.workdps(dps):
        a, G, S, r, t, w = (mp.mpf(x) for x in (a, G, S, r, t, w))
        vl = mp.mpf(v_lo) if v_lo != float("-inf") else -mp.inf
        vh = mp.mpf(v_hi) if v_hi != float("inf") else mp.inf
        c = mp.exp(-r * r / 2)
        Gp, Sp, d = G * c, S * c, t - a
        if Gp > 0:
            x = (d + mp.sqrt(d * d + 4 * Gp * Sp)) / (2 * Gp) if d >= 0 else 2 * Sp / (-d + mp.sqrt(d * d + 4 * Gp * Sp))
            vs = -mp.inf if x == 0 else mp.log(x) / r
        else:  # L = a - S' e^{-rV} > t  <=>  e^{-rV} < (a - t)/S'
            if d >= 0:
                return mp.mpf(0)
            vs = -mp.log(-d / Sp) / r
        lo = max(vs, vl)
        if not vh > lo:
            return mp.mpf(0)
        return w * ((a - t) * _P(lo, vh) + G * _P(lo - r, vh - r) - S * _P(lo + r, vh + r))
