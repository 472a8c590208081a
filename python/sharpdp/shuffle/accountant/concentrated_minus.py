"""The closed form's upper value below the mean by chords over several pieces and the numerical mgf of -V
(docs/accountant_tail.md §43.1): a sharper replacement of the term kap/6 E[|Z'|^3; Z' < 0] of §20 (b) (§40.2's
(kap - kap_-)_+/6 E[|Z'|^3; Z' < 0] + kap/6 E[|Z'|^3; Z' < -W]), Z' = X_m - mh.

Beyond S = -mh the convex log p lies below its chords over [S + W_{j-1}, S + W_j] (lower slopes k_1 >= k_2 >= ...,
rate 0 beyond the last piece), so for z = -y < 0 the remainder R(mh + z) is at most
P0 [psi_{k_1}(z) + sum_j (k_j - k_{j+1}) (y - W_j)_+^3 / 6], and psi_{k_1}(z) <= psi_kap(z) + (kap - k_1)_+ y^3/6;
the means E[(Y - W)_+^3], Y = -Z', by (3 / (e t))^3 e^{-t W} E e^{t Y} with E e^{t Y} from the smaller of Bennett's
moment bound and the numerical mgf of -V (an upper Riemann sum over :func:`.mgf.v_cells`).
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.accountant.mgf import dn, h_exp, log_convex_from, mgf_h_ups, up
from sharpdp.shuffle.laws import Law

# §43.1: the pieces' ends W_j below the mean (in sd of X_m, the block's largest); rate 0 beyond the last
PIECE_SDS = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
PIECE_BLOCKS = 64  # §43.1: blocks of consecutive m sharing the chords (each at its block's least favourable end)
PIECE_T = (0.85, 1.0, 1.2)  # §43.1: the rates t tried, multiples of the normal optimum (W + sqrt(W^2 + 12 Q)) / (2 Q)
MINUS_CELLS = 4096  # §43.1: cells of the numerical mgf of -V


def piece_rates(law: Law, T0: float, mh, Q):
    """(k, W) with k of shape (J, size) and W of shape (J, size): for each block of consecutive m (PIECE_BLOCKS), the
    pieces' ends W_j = PIECE_SDS[j] times the block's largest sd (rounded up) and lower values k_j of the chord slopes
    of log p over [S_b + W_{j-1}, S_b + W_j] (W_0 = 0, S_b the block's largest -mh; the chord slope of the convex
    log p is non-decreasing in both ends, so these are lower values for every member), made non-increasing in j
    (a smaller lower value stays one); all 0 where log p is not known convex beyond T0 (docs/accountant_tail.md
    §43.1). The slopes as :func:`.mgf.chord_rate_lo` (the same operations, over arrays)."""
    s, sd = -np.asarray(mh, float), np.sqrt(Q)
    J = len(PIECE_SDS)
    k, W = np.zeros((J, s.size)), np.zeros((J, s.size))
    if not (s.size and log_convex_from(law, T0)):
        return k, W
    blks = np.array_split(np.arange(s.size), min(PIECE_BLOCKS, s.size))
    s_b = np.array([float(np.max(s[b])) for b in blks])
    sd_b = np.array([float(np.max(sd[b])) for b in blks])
    w = up(np.array(PIECE_SDS)[:, None] * sd_b[None, :] * (1 + 4 * U))  # (J, blocks)
    ends = up(s_b[None, :] + w)
    starts = np.vstack([s_b[None, :], ends[:-1]])
    p1 = law.density_lo(starts.ravel()).reshape(starts.shape)
    p2 = law.density_up(ends.ravel()).reshape(ends.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        l1, l2 = np.log(p1), np.log(p2)
        num = (l1 - l2) - 8 * U * (np.abs(l1) + np.abs(l2)) - 1e-300
        kk = num / ((ends - starts) * (1 + 4 * U)) * (1 - 4 * U)
    ok = (ends > starts) & (p1 > 0) & np.isfinite(p2) & (p2 > 0) & np.isfinite(kk) & (kk > 0)
    kk = np.minimum.accumulate(np.where(ok, kk, 0.0), axis=0)  # (non-increasing in j)
    for i, b in enumerate(blks):
        k[:, b], W[:, b] = kk[:, i:i + 1], w[:, i:i + 1]
    return k, W


def minus_mgf_up(law: Law, T0: float, ts, m, d_mu, Q, b_minus: float, mu_lo: float):
    """Upper values of E e^{t Y}, Y = mh - X_m (rows: the rates ``ts`` > 0, columns: m): the smaller of Bennett's
    moment bound e^{t d_mu} exp(Q h(t b_-) / b_-^2) (terms E V - V <= b_-, variances summing to at most Q) and
    e^{t d_mu} (1 + H_-(t))^m, H_-(t) >= E h(-t (V - mu_lo)) an upper Riemann sum (E e^{-t (V - mu_lo)} =
    1 - t (E V - mu_lo) + E h(-t (V - mu_lo)) <= 1 + H_-(t), E V >= mu_lo), d_mu >= mh - m mu_lo
    (docs/accountant_tail.md §43.1); inf where not finite."""
    ts = np.asarray(ts, float)
    hm = mgf_h_ups(law, T0, -ts, mu_lo, MINUS_CELLS)  # >= E h(-t (V - mu_lo)) (h convex: max at an end)
    out = np.full((ts.size, np.size(m)), np.inf)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for i, (t, h) in enumerate(zip(ts, hm)):
            ben = up(Q * up(h_exp(np.array([t * b_minus]))[0] * (1 + 1e-11)) / (b_minus * b_minus * (1 - 4 * U)))
            lg = ben
            if math.isfinite(h) and h >= 0:  # (log1p within 4 ulp, assumed as §22 (b))
                lg = np.minimum(lg, up(m * math.log1p(h) * (1 + 4 * U)))
            lg = up(lg + up(t * d_mu))
            out[i] = np.where(lg <= 700.0, np.exp(np.minimum(lg, 700.0)) * (1 + 1e-12), np.inf)
    return out


def cube_tail_up(law: Law, T0: float, W, m, d_mu, Q, b_minus: float, mu_lo: float):
    """Upper values of E[(Y - W)_+^3], Y = mh - X_m, elementwise (W >= 0 one row per piece, columns m): the smallest
    over t of (3 / (e t))^3 e^{-t W} E e^{t Y} ((y - W)_+^3 <= (3 / (e t))^3 e^{t (y - W)}: the largest value of
    x^3 e^{-t x} over x > 0; E e^{t Y} by :func:`minus_mgf_up`), t = c (W + sqrt(W^2 + 12 Q)) / (2 Q) at the median
    Q and the row's median W, c in PIECE_T (docs/accountant_tail.md §43.1); inf where not available."""
    W = np.atleast_2d(W)
    qm = float(np.median(Q))
    best = np.full(W.shape, np.inf)
    for r in range(W.shape[0]):
        wm = float(np.median(W[r]))
        t0 = (wm + math.sqrt(wm * wm + 12.0 * qm)) / (2.0 * qm)
        ts = [c * t0 for c in PIECE_T]
        mg = minus_mgf_up(law, T0, ts, m, d_mu, Q, b_minus, mu_lo)
        with np.errstate(over="ignore", invalid="ignore"):
            for t, e in zip(ts, mg):
                c3 = up((3.0 / (math.e * t)) ** 3 * (1 + 8 * U))
                val = up(c3 * np.exp(-dn(t * W[r])) * (1 + 1e-12) * e)
                best[r] = np.where(np.isfinite(val), np.minimum(best[r], val), best[r])
    return best


def pieces_parts(law: Law, T0: float, m, mh, Q, d_mu, b_minus: float, mu_lo: float):
    """(k_1, C_0, rest), elementwise over m (mh < -T0): the first piece's rate k_1, an upper value C_0 of E[Y_+^3] and
    rest >= sum_j (k_j - k_{j+1})/6 E[(Y - W_j)_+^3] (the pieces of :func:`piece_rates`, k_{J+1} = 0; the means of
    :func:`cube_tail_up`), Y = mh - X_m; :func:`pieces_up` adds the first piece's term for a rate kap
    (docs/accountant_tail.md §43.1). C_0, rest inf where not available."""
    m = np.asarray(m, float)
    k, W = piece_rates(law, T0, mh, Q)
    c3 = cube_tail_up(law, T0, np.vstack([np.zeros((1, m.size)), W]), m, d_mu, Q, b_minus, mu_lo)
    with np.errstate(over="ignore", invalid="ignore"):
        coef = np.maximum(up(k - np.vstack([k[1:], np.zeros((1, m.size))])), 0.0)
        terms = np.where(coef > 0, up(coef / 6.0 * (1 + 4 * U) * c3[1:]), 0.0)  # (a zero coefficient: no term)
        rest = up(np.sum(terms, axis=0) * (1 + 1e-12))
    return k[0], c3[0], np.where(np.isfinite(rest) & (rest >= 0), rest, np.inf)


def pieces_up(parts, kap):
    """Upper values of the term that replaces kap/6 E[|Z'|^3; Z' < 0] in the upper value of E[R(X_m); X_m <= -T0] /
    p(-mh) (elementwise over m; ``kap`` the rate of the mean part E psi_kap(Z'), ``parts`` :func:`pieces_parts`'s):
    (kap - k_1)_+/6 E[Y_+^3] + sum_j (k_j - k_{j+1})/6 E[(Y - W_j)_+^3] (docs/accountant_tail.md §43.1); inf where not
    available."""
    k1, c0, rest = parts
    with np.errstate(over="ignore", invalid="ignore"):
        coef = np.maximum(up(kap - k1), 0.0)
        first = np.where(coef > 0, up(coef / 6.0 * (1 + 4 * U) * c0), 0.0)
        val = up(first + rest)
    return np.where(np.isfinite(val) & (val >= 0), val, np.inf)


__all__ = ["MINUS_CELLS", "PIECE_BLOCKS", "PIECE_SDS", "PIECE_T", "cube_tail_up", "minus_mgf_up", "piece_rates",
           "pieces_parts", "pieces_up"]
