"""The numpy implementation of LognormalLaw.cells (as it stood before the compiled kernel
cpp/kernels/lognormal_cells.hpp), kept only as an independent test reference: scipy's ndtr and numpy's own
exp/log (not glibc's), the same bounds (docs/accountant.md §2.3), vectorised over the whole grid.

cells_reference(law, x0, h, K) -> (m, w, em, ew), weighted, from the law's public parameters alone."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

_EPS = float(np.finfo(float).eps)
_U = _EPS / 2.0
_RHO = 64.0 * _EPS
_SQRT2PI = math.sqrt(2.0 * math.pi)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)
_GL_X = (_GL_X + 1.0) / 2.0
_GL_W = _GL_W / 2.0
_NARROW = 0.25
_GL_REL = 1e-14 + 64.0 * _EPS


def _ndtr_flush(z):
    z = np.asarray(z, float)
    far = (z < -37.5) & np.isfinite(z)
    with np.errstate(under="ignore", over="ignore", invalid="ignore", divide="ignore"):
        m = 1.01 * np.exp(-0.5 * z * z) / (np.abs(z) * _SQRT2PI) + 1e-323
    return np.where(far, m, 0.0)


def _ndtr_rel(z):
    z = np.asarray(z, float)
    with np.errstate(invalid="ignore", over="ignore"):
        z2 = np.minimum(z * z, 1e4)
        return np.where(np.isfinite(z) & (z < 0), (64.0 + 2.0 * z2) * _EPS, _RHO)


def _interval_prob(z1, z2):
    z1 = np.asarray(z1, float)
    z2 = np.asarray(z2, float)
    upper = z1 > 0
    zA, zB = np.where(upper, -z1, z2), np.where(upper, -z2, z1)
    A, B = ndtr(zA), ndtr(zB)
    p = np.maximum(A - B, 0.0)
    return p, _ndtr_rel(zA) * A + _ndtr_rel(zB) * B + _U * p + _ndtr_flush(zA) + _ndtr_flush(zB)


def oriented(law):
    """(G, S, v_lo, v_hi) of the law in the oriented variable V (L increasing in V)."""
    if law.b > 0 or law.b_minus < 0:
        return law.b, -law.b_minus, law.z_lo, math.inf
    return law.b_minus, -law.b, -math.inf, -law.z_lo


def v_reference(law, x):
    """V where L = x (numpy, vectorised; the cancellation-free root of docs/accountant.md §2.3)."""
    G, S, _, _ = oriented(law)
    r = law.r
    lk = 0.5 * (math.log(G) + math.log(S)) - 0.5 * r * r if G > 0 and S > 0 else -math.inf
    q = np.asarray(x, float) - law.a
    pos = q >= 0
    aq = np.abs(q)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        la = np.log(aq)
        d = lk - la
        xs = np.exp(np.minimum(d, 0.0))
        lb_q = la + np.log1p(2.0 * xs * xs / (1.0 + np.sqrt(1.0 + 4.0 * xs * xs)))
        onq = (d <= 0) & (aq > 0)
        tk = np.where(aq == 0, 0.0, np.arcsinh(0.5 * np.exp(-np.maximum(d, 0.0))))
        lGS = 0.5 * (math.log(S) - math.log(G)) if G > 0 and S > 0 else 0.0
        vP = np.where(onq, (lb_q - math.log(G)) / r + 0.5 * r, (lGS + tk) / r) if G > 0 else np.full(q.shape, np.inf)
        vM = (np.where(onq, -(lb_q - math.log(S)) / r - 0.5 * r, (lGS - tk) / r) if S > 0
              else np.full(q.shape, -np.inf))
        v = np.where(pos, vP, vM)
    if G == 0:
        v = np.where(pos, math.inf, v)
    if S == 0:
        v = np.where(q <= 0, -math.inf, v)
    return v


def _gl_sum(f):
    s = f[0] * _GL_W[0]
    for g in range(1, _GL_X.size):
        s += f[g] * _GL_W[g]
    return s


def cells_reference(law, x0, h, K, v_all=None):
    """(m, w, em, ew) of the cells k = 0..K-1 of the grid x0 + h k (numpy reference). v_all: the V-edges at the
    K + 1 grid points to use instead of v_reference's (to compare the cells on the same edges)."""
    G, S, vlo, vhi = oriented(law)
    r, a = law.r, law.a
    x = x0 + h * np.arange(0, K + 1, dtype=float)
    v_all = v_reference(law, x) if v_all is None else np.asarray(v_all, float)
    lo = np.clip(v_all[:-1], vlo, vhi)
    hi = np.clip(v_all[1:], lo, vhi)
    vs = v_all[:-1]
    with np.errstate(invalid="ignore", over="ignore"):
        u0, u1 = lo - vs, hi - vs
        nar = np.isfinite(vs) & (hi > lo) & (u1 * (np.abs(vs) + r + 1.0) <= _NARROW) & (u0 >= 0)
    m, em, wh, ew, flo = (np.zeros(lo.size) for _ in range(5))
    wide = ~nar
    with np.errstate(under="ignore", over="ignore", invalid="ignore", divide="ignore"):
        if np.any(wide):
            lw, hw, c = lo[wide], hi[wide], x[:-1][wide]
            p, ep = _interval_prob(lw, hw)
            qp, eqp = _interval_prob(lw - r, hw - r)
            qm, eqm = _interval_prob(lw + r, hw + r)
            A, Bp, Bm = (a - c) * p, G * qp, S * qm
            err = np.abs(a - c) * ep + G * eqp + S * eqm + 4 * _U * (np.abs(A) + Bp + Bm)
            m[wide], em[wide], wh[wide], ew[wide] = p, ep, np.maximum(A + Bp - Bm, 0.0), err
        if np.any(nar):
            v_, a0, span, xj = vs[nar], u0[nar], u1[nar] - u0[nar], x[:-1][nar]
            U = a0[None, :] + span[None, :] * _GL_X[:, None]
            base = np.exp(-v_[None, :] * U - 0.5 * U * U)
            phi = np.exp(-0.5 * v_ * v_) / _SQRT2PI
            mm = phi * span * _gl_sum(base)
            P = G * np.exp(r * v_ - 0.5 * r * r)
            M = S * np.exp(-r * v_ - 0.5 * r * r)
            ru = r * U
            if G > 0 and S > 0:
                grow = P[None, :] * np.expm1(ru) - M[None, :] * np.expm1(-ru)
            elif S > 0:
                grow = -(M[None, :] * np.expm1(-ru))
            else:
                grow = P[None, :] * np.expm1(ru)
            w0 = phi * span * _gl_sum(grow * base)
            d = (a - xj) + (P - M)
            rel_pm = 4 * _U * (np.abs(r * v_) + r * r) + _RHO
            e_d = rel_pm * (P + M) + 3 * _U * (np.abs(a - xj) + P + M + np.abs(d))
            ww = w0 + d * mm
            phi_rel = (0.5 * v_ * v_ + 4.0) * 2.0 * _U
            m[nar] = mm
            em[nar] = (_GL_REL + phi_rel) * mm
            wh[nar] = np.maximum(ww, 0.0)
            ew[nar] = ((_GL_REL + rel_pm + phi_rel) * w0 + e_d * mm + np.abs(d) * (_GL_REL + phi_rel) * mm
                       + 4 * _U * np.abs(ww))
            under = phi < 1e-290
            if np.any(under):
                sp = span[under]
                lf = math.log(law.weight) + np.log(sp) + _NARROW - 0.5 * v_[under] ** 2 - math.log(_SQRT2PI)
                flo[np.flatnonzero(nar)[under]] = 1.01 * np.exp(lf) + law.weight * sp * math.exp(_NARROW) * 1e-323
        wt = law.weight
        w = np.minimum(wh / h, m)
        return (wt * m, wt * w, wt * em * (1 + 4 * _U) + 4 * _U * wt * m + flo,
                wt * (ew / h + 4 * _U * w) * (1 + 4 * _U) + 4 * _U * wt * w + flo)


def interval_prob_reference(z1, z2):
    """P(z1 < Z < z2) with its error bound (scipy's ndtr; the numpy path the kernel replaced)."""
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        return _interval_prob(z1, z2)


def stop_loss_reference(law, t, v_t=None):
    """(lo, up) bracket of weight E[(L - t)_+] (numpy reference); v_t: the V-edges v(t) to use."""
    G, S, vlo, vhi = oriented(law)
    r, a = law.r, law.a
    t = np.atleast_1d(np.asarray(t, float))
    lo = np.clip(v_reference(law, t) if v_t is None else np.asarray(v_t, float), vlo, vhi)
    hi = np.clip(np.full(t.shape, math.inf), lo, vhi)
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        p, ep = _interval_prob(lo, hi)
        qp, eqp = _interval_prob(lo - r, hi - r)
        qm, eqm = _interval_prob(lo + r, hi + r)
        A, Bp, Bm = (a - t) * p, G * qp, S * qm
        err = np.abs(a - t) * ep + G * eqp + S * eqm + 4 * _U * (np.abs(A) + Bp + Bm)
        val = A + Bp - Bm
        empty = ~(hi > lo)
        up = np.where(empty, 0.0, law.weight * (np.maximum(val, 0.0) + err) * (1 + 1e-12))
        dn = np.where(empty, 0.0, law.weight * np.maximum(val - err, 0.0) * (1 - 1e-12))
    return dn, up
