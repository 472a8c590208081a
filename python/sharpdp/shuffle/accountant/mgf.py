"""The numerical moment generating function and moments of V = min(L, T0) for the closed form's tilted values, and a
bound on the density's log-derivative (docs/accountant_tail.md §20 (a), (c), §21 (c)).

For the laws of :func:`.concentrated.eligible` (L = a + G e^{r N - r^2/2}, or an atom plus that law on N > z_lo with a
weight: docs/accountant_tail.md §22): upper and lower Riemann sums over cells of L's normal variable N (and the atom's
own cell), each cell's V-interval widened by the roundings and its probability bracketed by ``interval_prob`` and its
error bound. Every grid is valid (a choice of tightness only).
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.laws import Law
from sharpdp.shuffle.laws.lognormal import interval_prob

MGF_CELLS = 4096  # cells of L's normal variable in the numerical mgf of V (§20)
MGF_Z0 = -9.0  # the first cell's upper end in L's normal variable (every choice is valid)
MOM_CELLS = 4096  # cells of the moments of V in the tilted lower value (§21)
RATE_GRID = 64  # points of the geometric grid bounding the density's log-derivative (§20)


def _dn(x):
    return x - 4 * U * np.abs(x) - 1e-300


def _up(x):
    return x + 4 * U * np.abs(x) + 1e-300


def h_exp(u):
    """e^u - 1 - u >= 0 (elementwise): a series where |u| <= 0.1, else expm1(u) - u (docs/accountant_tail.md §20
    (c): within 1e-11 relative; callers apply that factor)."""
    u = np.asarray(u, float)
    out = np.empty(u.shape)
    small = np.abs(u) <= 0.1
    us = u[small]
    term, acc = 0.5 * us * us, np.zeros(us.shape)
    for k in range(3, 13):  # (terms u^2/2 ... u^11/11!: the rest is below 1e-16 of u^2/2 for |u| <= 0.1)
        acc += term
        term = term * us / k
    out[small] = acc
    ub = u[~small]
    with np.errstate(over="ignore", invalid="ignore"):
        out[~small] = np.expm1(ub) - ub
    return out


def v_cells(law: Law, T0: float, cells: int = 0):
    """Cells of L's normal variable N: (-inf, z_0], [z_i, z_{i+1}] (uniform up to the computed v(T0)), [z_K, inf);
    (lo, hi, p_lo, p_up): V = min(L, T0) lies in [lo, hi] on each cell (L(z) = a + G e^{r z - r^2/2} widened by
    (72 + 4 (|r z| + r^2/2)) ulp of G e^{...} plus 4 ulp of |a|: exp assumed within 64 ulp, its argument's and the
    sum's roundings), and P(N in cell) in [p_lo, p_up] (``interval_prob`` and its error bound; docs/accountant_tail.md
    §20 (c))."""
    f = law.heavy_form()
    a, G, r = f.a, f.G, f.r
    z_lo = f.cont._vlo  # (-inf for the one-term law; the truncation of docs/accountant_tail.md §22 otherwise)
    z0 = max(MGF_Z0, z_lo)
    vT = (math.log((T0 - a) / G) + 0.5 * r * r) / r if T0 > a else z0  # (any grid end is valid)
    z = np.linspace(z0, max(vT, z0 + 1.0), (cells or MGF_CELLS) + 1)
    e = G * np.exp(r * z - 0.5 * r * r)
    # exp within 64 ulp (assumed), its argument's rounding 2 ulp of |r z| + r^2/2 (relative in e), the sum 2 ulp
    err = U * ((72.0 + 4.0 * (np.abs(r * z) + 0.5 * r * r)) * e + 4.0 * abs(a)) + 1e-300
    lo = np.clip(np.concatenate([[a], a + e - err]), a, T0)
    hi = np.clip(np.concatenate([a + e + err, [T0]]), a, T0)
    zz = np.concatenate([[z_lo], z, [np.inf]])
    p, pe = interval_prob(zz[:-1], zz[1:])
    p_lo, p_up = np.maximum(p - pe, 0.0), p + pe
    if f.atom_p > 0.0:  # the weighted part's cells and the atom's own cell (§22)
        w = f.cont.weight
        p_lo, p_up = w * p_lo * (1 - 4 * U), w * p_up * (1 + 4 * U)
        xa = min(f.atom, T0)
        lo, hi = np.concatenate([lo, [xa]]), np.concatenate([hi, [xa]])
        p_lo, p_up = np.concatenate([p_lo, [f.atom_p]]), np.concatenate([p_up, [f.atom_p]])
    return lo, hi, p_lo, p_up


def mgf_h_up(law: Law, T0: float, kap: float, c: float, cells: int = 0) -> float:
    """Upper value of E h(kap (V - c)), h(u) = e^u - 1 - u, V = min(L, T0), by an upper Riemann sum over cells of
    L's normal variable (h is convex: its max over a cell is at an end; docs/accountant_tail.md §20 (c))."""
    lo, hi, _, p_up = v_cells(law, T0, cells)
    hm = np.maximum(h_exp(kap * (lo - c)), h_exp(kap * (hi - c))) * (1 + 1e-11) + 1e-300
    return float(np.sum(hm * p_up)) * (1 + 1e-10) + 1e-300


def v_moments(law: Law, T0: float, c: float):
    """(S2_lo, S2_up, S3_lo, S4_up): bounds on E (V - c)^k, V = min(L, T0), by lower and upper Riemann sums over
    :func:`v_cells` ((V - c)^2 and ^4 are convex in V, ^3 increasing; docs/accountant_tail.md §21 (c))."""
    lo, hi, p_lo, p_up = v_cells(law, T0, MOM_CELLS)
    dl, dh = _dn(lo - c), _up(hi - c)
    sq_min = np.where((dl <= 0) & (dh >= 0), 0.0, np.minimum(dl * dl, dh * dh)) * (1 - 4 * U)
    sq_max = np.maximum(dl * dl, dh * dh) * (1 + 4 * U)
    cube_lo = dl * dl * dl
    cube_lo = np.where(cube_lo >= 0, cube_lo * (1 - 8 * U) * p_lo, cube_lo * (1 + 8 * U) * p_up)
    s2_lo = float(np.sum(sq_min * p_lo)) * (1 - 1e-10)
    s2_up = float(np.sum(sq_max * p_up)) * (1 + 1e-10) + 1e-300
    pos, neg = float(np.sum(np.maximum(cube_lo, 0.0))), float(np.sum(np.minimum(cube_lo, 0.0)))
    s3_lo = pos * (1 - 1e-10) + neg * (1 + 1e-10) - 1e-300
    s4_up = float(np.sum(sq_max * sq_max * (1 + 4 * U) * p_up)) * (1 + 1e-10) + 1e-300
    return s2_lo, s2_up, s3_lo, s4_up


def rate_up(law: Law, s1: float, s2: float) -> float:
    """Upper value of sup over s in [s1, s2] (T0 <= s1 < s2, v(s1) >= -r) of -d log p / ds = (v(s)/r + 1)/(s - a),
    p the density of L: on a geometric grid, v at each cell's upper end over s - a at its lower end (v increases
    in s); the margins cover the roundings of log and the quotients (§20 (a))."""
    f = law.heavy_form()  # (on s >= T0 > 0 the density is the lognormal part's, docs/accountant_tail.md §22)
    a, G, r = f.a, f.G, f.r
    s = s1 * np.exp(np.linspace(0.0, math.log(s2 / s1), RATE_GRID))
    s[0], s[-1] = s1, s2
    with np.errstate(divide="ignore", invalid="ignore"):
        v = (np.log((s[1:] - a) * (1 + 4 * U) / G) + 0.5 * r * r) / r
        v = v + 1e-9 * (np.abs(v) + r * r + 1.0)
        rate = (v / r + 1.0) / ((s[:-1] - a) * (1 - 4 * U)) * (1 + 1e-9)
    out = float(np.max(rate))
    return out if math.isfinite(out) and out > 0 else math.inf


__all__ = ["MGF_CELLS", "MGF_Z0", "MOM_CELLS", "RATE_GRID", "h_exp", "mgf_h_up", "rate_up", "v_cells", "v_moments"]
