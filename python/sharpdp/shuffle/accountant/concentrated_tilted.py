"""The closed form's tilted values given the number of active users: the upper value of the second-order
remainder with a tilted density bound and the numerical mgf of V (docs/accountant_tail.md §20, §22 (a)), the lower
value with the tangent of log p and the moments of V (§21), and with ``local`` their session-32 refinements (§40):
the rate below the mean from the chord of log p beyond it (§40.2) and the lower value's tail deduction by the
numerical mgf with moments on finer cells (§40.1). Split out of :mod:`.concentrated`, which imports them under
their former private names.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.accountant.concentrated_minus import pieces_parts, pieces_up
from sharpdp.shuffle.accountant.mgf import (chord_rate_lo, chord_rate_up, dn as _dn, h_exp, log_convex_from, mgf_h_los,
                                             mgf_h_ups, rate_up, tilt_rates, up as _up, v_moments)
from sharpdp.shuffle.laws import Law

LOCAL_SDS = 5.0  # §40.2: the width below the mean (in sd of X_m) where the rate is the chord's beyond -mh
LOCAL_BLOCKS = 64  # §40.2: blocks of consecutive m sharing one chord (each at its block's least favourable end)
DED_RATES = (3.0, 4.0, 6.0, 8.0, 11.0, 15.0, 20.0)  # §40.1: the rates t T0 tried in the tail deduction
FINE_MOM_CELLS = 65536  # §40.1: cells of the moments of V with ``local``
EXP_BLOCKS = 4  # §41.1: blocks of consecutive m sharing one rate (each at its block's least favourable ends)
EXP_DED_RATES = (4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 12.0)  # §41.1: the rates t T0 tried in the deduction beyond -T0
SPLIT_SDS = (3.0, 4.5, 6.0)  # §41.4: the splits W tried (in sd of X_m, the block's largest; the smallest value kept)
PIECES_SPLIT_SDS = (2.0, 2.5, 3.0, 4.5, 6.0)  # §43.2: the splits W tried with §43.1's part below the mean
SPLIT_BLOCKS = 1  # §41.4: blocks of consecutive m sharing the two chords (each at its block's least favourable end)
SPLIT_RATES = (4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 12.0, 14.0)  # §41.4: the rates t T0 tried beyond W


def tilted_lo(law: Law, T0: float, m, nu, mh, mu_lo: float, mu_hi: float, local: bool = False):
    """Lower values of E R_nu(X_m), the remainder of phi_c's first-order expansion around nu <= E X_m (elementwise
    over m): the tangent of the convex log p(-y) at nu bounds the density from below, R_nu(x) >= p(-nu) g(x - nu),
    g(z) = z^2/2 + kap z^3/6, up to -T0, and the means by the moments of V (docs/accountant_tail.md §21); 0 where
    not available."""
    out = np.zeros(m.shape)
    a = law.heavy_form().a  # (the density on s >= T0 is the lognormal part's: §23)
    ok = (nu < -T0) & (mh < -T0)
    if not (T0 > a and np.any(ok)):
        return out
    if not log_convex_from(law, T0):  # log p(-y) convex in y on -y >= T0 (its slope rho(s) decreases in s there)
        return out
    m, nu, mh = m[ok], nu[ok], mh[ok]
    s = -nu
    rho, k_lo, k_hi = tangent_rates(law, s)
    p_lo = law.density_lo(s)
    s2_lo, s2_up, s3_lo, s4_up = v_moments(law, T0, mu_lo, FINE_MOM_CELLS if local else 0)
    dmax = float(_up(mu_hi - mu_lo))  # >= E V - mu_lo >= 0
    var_lo = float(_dn(s2_lo - dmax * dmax * (1 + 4 * U)))  # Var V = E (V - mu_lo)^2 - (E V - mu_lo)^2
    mu3_lo = float(_dn(s3_lo - 3.0 * dmax * s2_up * (1 + 4 * U)))  # E (V - E V)^3 >= S3 - 3 d S2
    d = _up(mh - nu)  # >= E X_m - nu >= 0
    ez4 = fourth_up(m, d, s2_up, s4_up, dmax)  # E (X_m - nu)^4
    w = _dn(-T0 - nu)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        tail = _up(ez4 * (0.5 / (w * w) + k_hi / (6.0 * w)) * (1 + 8 * U))  # E[g(Z''); Z'' > w]
        if local:  # (the smaller with the numerical mgf's, §40.1)
            tail = np.minimum(tail, tail_ded_up(law, T0, m, w, d, mu_hi, np.maximum(k_hi, k_lo)))
        skew = _up((k_hi - k_lo) / 6.0 * ez4 ** 0.75 * (1 + 8 * U))  # the tangent's rounding below nu
        third = k_lo * m * mu3_lo / 6.0
        third = np.where(third >= 0, third * (1 - 8 * U), third * (1 + 8 * U))
        core = _dn(_dn(_dn(m * var_lo * 0.5 * (1 - 4 * U)) + third) - tail - skew)
        val = _dn(p_lo * np.maximum(core, 0.0) * (1 - 1e-10))
    good = np.isfinite(val) & (val > 0) & np.isfinite(rho) & (w > 0)
    out[ok] = np.where(good, val, 0.0)
    return out


def tangent_rates(law: Law, s):
    """(rho, kap_lo, kap_hi) elementwise over s > a: rho(s) = (v(s)/r + 1)/(s - a) = -d log p/ds as computed, and a
    lower and an upper value of it (v lowered/raised by 1e-9 of its terms' magnitudes, the quotient by 1e-9 and 4 ulp;
    kap_lo at least 0): the slope of the tangent of the convex y -> log p(-y) at y = -s (docs/accountant_tail.md
    §21 (a))."""
    f = law.heavy_form()
    a, G, r = f.a, f.G, f.r
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        v = (np.log((s - a) / G) + 0.5 * r * r) / r
        dv = 1e-9 * (np.abs(v) + r * r + 1.0)
        rho = (v / r + 1.0) / (s - a)
        k_lo = np.maximum(((v - dv) / r + 1.0) / ((s - a) * (1 + 4 * U)) * (1 - 1e-9), 0.0)
        k_hi = ((v + dv) / r + 1.0) / ((s - a) * (1 - 4 * U)) * (1 + 1e-9)
    return rho, k_lo, k_hi


def fourth_up(m, d, s2_up: float, s4_up: float, dmax: float):
    """Upper values of E (X_m - nu)^4 (elementwise over m; d >= E X_m - nu >= 0, S2_up >= Var V, S4_up >=
    E (V - mu_lo)^4, dmax >= E V - mu_lo >= 0): E Z^4 = m E Y^4 + 3 m (m - 1) (Var V)^2 with Minkowski's inequality
    for E Y^4 and for the shift d (docs/accountant_tail.md §21 (c))."""
    mu4_up = float(_up((s4_up ** 0.25 * (1 + 4 * U) + dmax) ** 4 * (1 + 8 * U)))  # Minkowski
    ez4 = _up(m * mu4_up + 3.0 * m * m * s2_up * s2_up * (1 + 8 * U))  # E Z^4 (Var V <= S2_up)
    return _up((ez4 ** 0.25 * (1 + 4 * U) + d) ** 4 * (1 + 8 * U))


def exp_lo(law: Law, T0: float, m, nu, mh, mu_lo: float, mu_hi: float):
    """Lower values of E R_nu(X_m) (elementwise over m, nu <= E X_m rounded down, mh >= E X_m) with the whole
    exponential of the tangent of log p at nu: R_nu(nu + z) >= p(-nu) psi_kap(min(z, w)), w = -T0 - nu, and
    E psi_kap(Z'') >= expm1(m log E e^{kap (V - E V)}) / kap^2 from a lower Riemann sum of the mgf of V, less the
    part beyond w by the numerical mgf's tail bound (docs/accountant_tail.md §41.1); 0 where not available."""
    out = np.zeros(np.shape(m))
    a = law.heavy_form().a
    ok = (nu < -T0) & (mh < -T0)
    if not (T0 > a and np.any(ok)) or not log_convex_from(law, T0):
        return out
    m, nu, mh = m[ok], nu[ok], mh[ok]
    _, k_lo, k_hi = tangent_rates(law, -nu)
    p_lo = law.density_lo(-nu)
    d = _up(mh - nu)  # >= E X_m - nu >= 0
    w = _dn(-T0 - nu)
    dmax = float(_up(mu_hi - mu_lo))  # >= E V - mu_lo >= 0
    # one rate per block of consecutive m: kb <= every member's tangent slope, kB >= it
    blk = np.array_split(np.arange(m.size), min(EXP_BLOCKS, m.size))
    kb = np.concatenate([np.full(b.size, np.min(k_lo[b])) for b in blk])
    kB = np.concatenate([np.full(b.size, np.max(k_hi[b])) for b in blk])
    ks, inv = np.unique(kb, return_inverse=True)
    h_lo = mgf_h_los(law, T0, ks, mu_lo, FINE_MOM_CELLS)[inv]  # <= E h(kb (V - mu_lo))
    s2_lo, s2_up, s3_lo, s4_up = v_moments(law, T0, mu_lo, FINE_MOM_CELLS)
    ez4 = fourth_up(m, d, s2_up, s4_up, dmax)  # >= E (X_m - nu)^4
    ded = exp_ded_up(law, T0, m, w, d, kb, mu_hi)  # >= E[psi_kb(Z'') - psi_kb(w); Z'' > w]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # log E e^{kb (V - E V)} >= log1p(H_lo) - kb (mu_hi - mu_lo) (log1p within 4 ulp, assumed)
        ell = _dn(_dn(np.log1p(h_lo)) - _up(kb * dmax))
        k2 = _up(kb * kb)
        core = _dn(np.expm1(_dn(m * ell)) * np.where(ell >= 0, 1 - 64 * U, 1 + 64 * U) / k2)  # E psi_kb(Z'')
        skew = _up(_up(kB - kb) / 6.0 * ez4 ** 0.75 * (1 + 8 * U))  # the rate's spread for Z'' < 0
        val = _dn(p_lo * np.maximum(_dn(_dn(core - ded) - skew), 0.0) * (1 - 1e-10))
    good = np.isfinite(val) & (val > 0) & (w > 0) & (kb > 0)
    out[ok] = np.where(good, val, 0.0)
    return out


def exp_ded_up(law: Law, T0: float, m, w, d, kb, mu_hi: float):
    """Upper values of E[psi_kb(Z'') - psi_kb(w); Z'' > w] (elementwise over m; Z'' = X_m - nu, w = -T0 - nu > 0
    rounded down, d >= E X_m - nu, kb > 0), psi_k(z) = (e^{kz} - 1 - kz)/k^2: the integral of psi' (<= e^{kb u}/kb)
    against P(Z'' > u) <= e^{-t u} e^{t d} (1 + H(t))^m, i.e. e^{t d - (t - kb) w} (1 + H(t))^m / (kb (t - kb)), the
    smallest over the rates t = c / T0 of ``EXP_DED_RATES`` with t > kb (docs/accountant_tail.md §41.1); inf where
    not available."""
    best = np.full(np.shape(m), np.inf)
    ts = [c / T0 for c in EXP_DED_RATES]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for t, h in zip(ts, mgf_h_ups(law, T0, ts, mu_hi)):  # (H(t) >= E h(t (V - mu_hi)))
            if not (math.isfinite(h) and h >= 0):
                continue
            lg = _up(_up(_up(m * math.log1p(h) * (1 + 4 * U)) + _up(t * d)) - _dn(_dn(t - kb) * w))
            val = np.where(lg <= 700.0, np.exp(np.minimum(lg, 700.0)) * (1 + 1e-12), np.inf) / _dn(kb * _dn(t - kb))
            best = np.where((t > kb * (1 + 4 * U)) & np.isfinite(val), np.minimum(best, _up(val)), best)
    return best


def tilted_curv(law: Law, T0: float, m, mh, Q, mu_lo: float, mu_hi: float, chords: bool = False,
                local: bool = False, split: bool = False, pieces: bool = False):
    """Upper values of E[R(X_m); X_m <= -T0], R the remainder of the first-order expansion of f around mh >= E X_m
    (elementwise over m, all with mh < -T0): p(-y) <= p(-mh) e^{kap (y - mh)} on [mh, -T0] bounds R by
    p(-mh) psi_kap(X - mh), psi_kap(z) = (e^{kap z} - 1 - kap z)/kap^2, plus kap |z|^3/6 below mh, whose means
    come from the numerical mgf of V (docs/accountant_tail.md §20); ``split`` (with ``local``): also §41.4's split
    rate; inf where not available."""
    out = np.full(m.shape, np.inf)
    a = law.heavy_form().a
    if not (math.isfinite(float(law.density_up([T0])[0])) and T0 > a and m.size):  # (v(T0) >= -r)
        return out
    kap0 = rate_up(law, T0, float(np.max(-mh)) * (1 + 1e-12))
    if not math.isfinite(kap0):
        return out
    # per m: kap0, or with ``chords`` the chord slope of log p where smaller (§22 (a))
    kap = tilt_rates(law, T0, mh, kap0) if chords else np.full(mh.shape, kap0)
    p0 = law.density_up(-mh)  # >= the sup of p on [-mh, inf)
    if chords:
        ks, inv = np.unique(kap, return_inverse=True)
        # log1p(h1), h1 >= E h(kap (V - mu_hi)): numpy's log1p once per distinct rate, then spread (each element the
        # same double as numpy's log1p over the spread array; docs/accountant_tail.md §73.2)
        with np.errstate(divide="ignore", invalid="ignore"):
            l1 = np.log1p(np.asarray(mgf_h_ups(law, T0, ks, mu_hi), dtype=float))[inv]
    else:  # (one rate: the same floats without the sort)
        with np.errstate(divide="ignore", invalid="ignore"):
            l1 = np.full(kap.shape, np.log1p(np.full(1, mgf_h_ups(law, T0, [kap0], mu_hi)[0], dtype=float))[0])
    d_mu = _up(mh - _dn(m * mu_lo))  # >= mh - E X_m
    t = math.sqrt(3.0 / float(np.median(Q)))
    b_minus = float(_up(mu_hi - a))  # E V - V <= E V - a: Bennett's mgf bound for -Z (§20 (c))
    tb = t * b_minus
    with np.errstate(over="ignore", invalid="ignore"):
        k2 = kap * kap * (1 - 4 * U)
        A = _up((_up(np.expm1(_up(m * l1 * (1 + 4 * U)))) + kap * d_mu) / k2)  # E psi_kap(X - mh)
        ben = _up(Q * _up(h_exp(np.array([tb]))[0] * (1 + 1e-11)) / (b_minus * b_minus * (1 - 4 * U)))
        mgf_minus = np.exp(_up(t * d_mu + ben))  # E e^{-t Z'} <= e^{t (mh - E X)} E e^{-t Z}
        B = _up(kap / 6.0 * (3.0 / (math.e * t)) ** 3 * mgf_minus * (1 + 1e-12))  # kap/6 E[|X - mh|^3; X < mh]
        if local:  # (the rate below mh from the chord beyond -mh, §40.2)
            kap_m, wid = minus_rates(law, T0, mh, Q)
            B = np.minimum(B, neg_side_up(mh, Q, kap, t, mgf_minus, d_mu, b_minus, kap_m, wid))
        parts = pieces_parts(law, T0, m, mh, Q, d_mu, b_minus, mu_lo) if local and pieces else None
        if parts is not None:  # (§43.1: the chords over several pieces below the mean, the numerical mgf of -V)
            B = np.minimum(B, pieces_up(parts, kap))
        AB = _up(A + B)
        if local and split:  # (§41.4: the local chord up to W, the window's beyond it)
            AB = np.minimum(AB, split_up(law, T0, m, mh, Q, mu_hi, t, mgf_minus, d_mu, b_minus, kap_m, wid, parts))
        val = _up(p0 * AB * (1 + 1e-10))
    return np.where(np.isfinite(val) & (val >= 0), val, np.inf)


def split_up(law: Law, T0: float, m, mh, Q, mu_hi: float, t: float, mgf_minus, d_mu, b_minus: float, kap_m, wid,
             parts: tuple | None = None):
    """Upper values of E[R(X_m); X_m <= -T0] / p(-mh) (elementwise over m, mh < -T0) with the density's bound split
    at W above the mean: the convex log p lies below its chords over [S - W, S] (slope k1) and [T0, S - W] (k12),
    S = -mh, so R(mh + z) <= p(-mh) [psi_k1(z) + e^{k1 W} (psi_k12 - psi_k1)(z - W) 1{z > W}] on [0, -T0 - mh]; the
    first term's mean and the part below the mean as :func:`tilted_curv` with the rate k1 (§20 (c), §40.2), the
    second by (psi_k12 - psi_k1)(y) <= (k12 - k1) y^3 e^{k12 y} / 6 <= (k12 - k1)/6 (3 / (e (u - k12)))^3 e^{u y} and
    E e^{u Z'} <= (1 + H(u))^m (docs/accountant_tail.md §41.4); inf where not available. ``t``, ``mgf_minus``,
    ``d_mu``, ``b_minus``, ``kap_m``, ``wid``: :func:`tilted_curv`'s terms for the part below the mean; ``parts``
    (:func:`.concentrated_minus.pieces_parts`'s, where given): that part also by §43.1's chords over several pieces."""
    out = np.full(np.shape(m), np.inf)
    if not (np.size(m) and log_convex_from(law, T0)):
        return out
    for sds in (SPLIT_SDS if parts is None else PIECES_SPLIT_SDS):
        out = np.minimum(out, _split_at(law, T0, m, mh, Q, mu_hi, t, mgf_minus, d_mu, b_minus, kap_m, wid, sds,
                                        parts))
    return out


def _split_at(law: Law, T0: float, m, mh, Q, mu_hi: float, t: float, mgf_minus, d_mu, b_minus: float, kap_m, wid,
              sds: float, parts: tuple | None = None):
    """:func:`split_up` with W = ``sds`` times the block's largest sd of X_m."""
    out = np.full(np.shape(m), np.inf)
    s = -np.asarray(mh, float)
    sd = np.sqrt(Q)
    k1, k12, W = np.full(s.shape, np.inf), np.full(s.shape, np.inf), np.zeros(s.shape)
    for blk in np.array_split(np.arange(s.size), min(SPLIT_BLOCKS, s.size)):
        s_b, w_b = float(np.min(s[blk])), float(_up(sds * np.max(sd[blk])))
        lo_end = float(_dn(s_b - w_b))  # (the chords' common end, rounded down: the rates stay upper values)
        if not lo_end > T0:
            continue
        k1[blk], k12[blk], W[blk] = chord_rate_up(law, lo_end, s_b), chord_rate_up(law, T0, lo_end), w_b
    ok = np.isfinite(k1) & np.isfinite(k12) & (k1 > 0) & (k12 >= k1)
    if not np.any(ok):
        return out
    ks, inv = np.unique(k1[ok], return_inverse=True)
    # log1p(h1), h1 >= E h(k1 (V - mu_hi)) (on the finer cells): once per distinct rate (the same doubles, §73.2)
    with np.errstate(divide="ignore", invalid="ignore"):
        l1 = np.log1p(np.asarray(mgf_h_ups(law, T0, ks, mu_hi, FINE_MOM_CELLS), dtype=float))[inv]
    us = [c / T0 for c in SPLIT_RATES]
    hu = mgf_h_ups(law, T0, us, mu_hi)  # >= E h(u (V - mu_hi))
    mo, kk, kb, wo = m[ok], k1[ok], k12[ok], W[ok]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        A = _up((_up(np.expm1(_up(mo * l1 * (1 + 4 * U)))) + kk * d_mu[ok]) / (kk * kk * (1 - 4 * U)))
        B = _up(kk / 6.0 * (3.0 / (math.e * t)) ** 3 * mgf_minus[ok] * (1 + 1e-12))
        B = np.minimum(B, neg_side_up(mh[ok], Q[ok], kk, t, mgf_minus[ok], d_mu[ok], b_minus, kap_m[ok], wid[ok]))
        if parts is not None:  # (§43.1 with the rate k1)
            B = np.minimum(B, pieces_up(tuple(x[ok] for x in parts), kk))
        X = np.full(mo.shape, np.inf)
        for u, h in zip(us, hu):
            if not (math.isfinite(h) and h >= 0):
                continue
            lg = _up(_up(_up(mo * math.log1p(h) * (1 + 4 * U)) + _up(kk * wo)) - _dn(u * wo))  # (log1p: 4 ulp)
            c3 = _up(_up(kb - kk) / 6.0 * (3.0 / (math.e * _dn(u - kb))) ** 3 * (1 + 8 * U))
            val = _up(c3 * np.where(lg <= 700.0, np.exp(np.minimum(lg, 700.0)) * (1 + 1e-12), np.inf))
            X = np.where((u > kb * (1 + 4 * U)) & np.isfinite(val), np.minimum(X, val), X)
        tot = _up(_up(A + B) + X)
    out[ok] = np.where(np.isfinite(tot) & (tot >= 0), tot, np.inf)
    return out


def _blocks(size: int):
    """LOCAL_BLOCKS blocks of consecutive indices (the numbers m in increasing order)."""
    return np.array_split(np.arange(size), min(LOCAL_BLOCKS, size))


def minus_rates(law: Law, T0: float, mh, Q):
    """(kap_-, W) elementwise over m (mh < -T0): W = LOCAL_SDS times the block's largest sd (rounded up), kap_- a lower
    value of the chord slope of log p over [-mh, -mh + W] (:func:`chord_rate_lo` over [S_b, S_b + W], S_b the
    block's largest -mh: the chord slope of the convex log p is non-decreasing in both ends; docs/accountant_tail.md
    §40.2); kap_- = 0 where log p is not known convex beyond T0 (the rate 0 is valid)."""
    s, sd = -np.asarray(mh, float), np.sqrt(Q)
    kap_m, wid = np.zeros(s.shape), np.zeros(s.shape)
    convex = bool(s.size) and log_convex_from(law, T0)
    for blk in _blocks(s.size):
        s_b, w_b = float(np.max(s[blk])), float(_up(LOCAL_SDS * np.max(sd[blk])))
        kap_m[blk] = chord_rate_lo(law, s_b, float(_up(s_b + w_b))) if convex else 0.0
        wid[blk] = w_b
    return kap_m, wid


def neg_side_up(mh, Q, kap, t: float, mgf_minus, d_mu, b_minus: float, kap_m, wid):
    """Upper values of the replacement of kap/6 E[|Z'|^3; Z' < 0] in :func:`tilted_curv` (elementwise over m,
    Z' = X_m - mh): (kap - kap_-)_+/6 E[|Z'|^3; Z' < 0] + kap/6 E[|Z'|^3; Z' < -W] (``kap_m``, ``wid``: kap_- and W of
    :func:`minus_rates`), the first mean by the bound of §20 (c) (``t``, ``mgf_minus``), the second by
    |z|^3 1{-z > W} <= W^3 e^{t4 (-z - W)} (t4 >= 3 / W) and Bennett's moment bound for -Z (docs/accountant_tail.md
    §40.2); inf where not available."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        first = _up(np.maximum(_up(kap - kap_m), 0.0) / 6.0 * (3.0 / (math.e * t)) ** 3 * mgf_minus * (1 + 1e-12))
        t4 = np.maximum(3.0 / _dn(wid), wid / Q) * (1 + 4 * U)  # (>= 3 / W)
        ben4 = _up(Q * _up(h_exp(t4 * b_minus) * (1 + 1e-11)) / (b_minus * b_minus * (1 - 4 * U)))
        far = _up(kap / 6.0 * _up(wid ** 3 * (1 + 4 * U)) * np.exp(_up(t4 * d_mu + ben4 - _dn(t4 * wid)))
                  * (1 + 1e-12))
        val = _up(first + far)
    return np.where(np.isfinite(val) & (val >= 0), val, np.inf)


def tail_ded_up(law: Law, T0: float, m, w, d, mu_hi: float, k_hi):
    """Upper values of E[g(Z''); Z'' > w] (elementwise over m; Z'' = X_m - nu, w = -T0 - nu > 0 rounded down,
    g(z) = z^2/2 + k_hi z^3/6, k_hi >= 0) by z^k 1{z > w} <= w^k e^{t (z - w)} (k <= 3 <= t w) and E e^{t Z''} <=
    e^{t (mh - nu)} (1 + H(t))^m (d >= mh - nu): g(w) e^{t (d - w)} (1 + H(t))^m, the smallest over the rates
    t = c / T0 of ``DED_RATES`` with t >= 3 / w (docs/accountant_tail.md §40.1); inf where not available."""
    best = np.full(np.shape(m), np.inf)
    if not (T0 > law.heavy_form().a and np.size(m)):
        return best
    ts = [c / T0 for c in DED_RATES]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        g = _up(_up(0.5 * _up(w * w)) + _up(k_hi * _up(_up(w * w) * w) / 6.0))
        for t, h in zip(ts, mgf_h_ups(law, T0, ts, mu_hi)):
            if not (math.isfinite(h) and h >= 0):
                continue
            lg = _up(_up(_up(m * math.log1p(h) * (1 + 4 * U)) + _up(t * d)) - _dn(t * w))  # log1p: 4 ulp (assumed)
            # (beyond e^700 the deduction exceeds 1e296 and the lower value is 0: inf, not used; §41.2)
            val = _up(g * np.where(lg <= 700.0, np.exp(np.minimum(lg, 700.0)), np.inf) * (1 + 1e-12))
            best = np.where((t * w >= 3.0 * (1 + 4 * U)) & np.isfinite(val), np.minimum(best, val), best)
    return best


__all__ = ["DED_RATES", "EXP_BLOCKS", "EXP_DED_RATES", "FINE_MOM_CELLS", "LOCAL_BLOCKS", "LOCAL_SDS", "PIECES_SPLIT_SDS", "SPLIT_BLOCKS",
           "SPLIT_RATES", "SPLIT_SDS", "chord_rate_lo", "exp_ded_up", "exp_lo", "fourth_up", "minus_rates",
           "neg_side_up", "split_up", "tail_ded_up", "tangent_rates", "tilted_curv", "tilted_lo"]
