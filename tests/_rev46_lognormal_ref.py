"""rev46 (not collected by pytest): E[(L - t)_+; v_lo < V < v_hi] x weight for a lognormal law with ONE of its two
coefficients zero, L = a + G e^{rV - r^2/2} (S = 0) or L = a - S e^{-rV - r^2/2} (G = 0), V ~ N(0, 1), in mpmath
(50 digits) from the three-term closed form with every term computed: on the event {V > v*} (L > t there, v* where
L = t, L increasing in V), E[(L - t); v* < V < v_hi] = (a - t) P0 + G P+ - S P-, P0 = P(l < V < h),
P+ = P(l - r < V < h - r), P- = P(l + r < V < h + r), l = max(v*, v_lo), h = v_hi (cpp/kernels/lognormal_cells.hpp's
definitions; independent of its code: no allowances, no skipped term)."""

from __future__ import annotations

import mpmath as mp


def _P(lo, hi):
    if not hi > lo:
        return mp.mpf(0)
    return mp.ncdf(hi) - mp.ncdf(lo) if lo < 0 else mp.ncdf(-lo) - mp.ncdf(-hi)


def exact(a, G, S, r, v_lo, v_hi, w, t):
    with mp.workdps(50):
        a, G, S, r, t, w = (mp.mpf(x) for x in (a, G, S, r, t, w))
        vl = mp.mpf(v_lo) if v_lo != float("-inf") else -mp.inf
        vh = mp.mpf(v_hi) if v_hi != float("inf") else mp.inf
        if t == mp.inf:
            return mp.mpf(0)
        if t == -mp.inf:
            return mp.inf
        if S == 0:  # L = a + G e^{rV - r^2/2} > t  <=>  V > v*
            vs = -mp.inf if t <= a else (mp.log((t - a) / G) + r * r / 2) / r
        else:  # L = a - S e^{-rV - r^2/2} > t  <=>  e^{-rV - r^2/2} < (a - t)/S
            if a <= t:
                return mp.mpf(0)
            vs = -(mp.log((a - t) / S) + r * r / 2) / r
        lo = max(vs, vl)
        hi = vh
        if not hi > lo:
            return mp.mpf(0)
        val = (a - t) * _P(lo, hi) + G * _P(lo - r, hi - r) - S * _P(lo + r, hi + r)
        return w * val
