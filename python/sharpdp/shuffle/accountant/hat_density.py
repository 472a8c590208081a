"""The jump term's rounding cost from the density of L's tail (docs/accountant_tail.md §55).

§45.1's second-order cost of the hat rounding, int E[(s Y - |A' - z|)_+] dmu(z), for the jump term's phi_c, whose mu is
the law of -L on {L > T0} (a density p(-z) on z < -T0) plus an atom at -T0 of mass c - P(L > T0). For the density part,
given the clamped terms G', the integrand integrates in z to at most (Y^2 / 2) times the largest density within |Y|:

    int (s Y - |a - z|)_+ p(-z) dz <= (Y^2 / 2) P(a + |Y|),   P(t) = sup of p over [max(-t, T0), inf),

with no window probability of A' and no blur: E[Y^2 | G'] <= v* carries the rounding's size, P(A') the place. Where p is
convex and non-increasing on [T0, inf) (a lognormal tail beyond its inflection, checked from the law's
:class:`~sharpdp.shuffle.laws.lognormal.HeavyForm`), P(t + r) has a convex majorant G_r (P itself below -T0 - r, its
tangent beyond), so E P(A' + r) <= E G_r(A') <= E G_r(A_hat) (the hat sum is above A' in the convex order) and the
window bounds E G_r(A_hat) (G_r non-decreasing: the computed law's stochastic shift of §45.3 only raises it). The
size |Y| inside P is graded by the tail moments of Y given G' (:func:`_tail_second`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from sharpdp.shuffle.accountant.hat_lower import coupling_cost, subgauss_proxy
from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.laws import Law

#: nodes per block of the window whose G_r values are bounded by the block's top node's (docs/accountant_tail.md §55.2)
BLOCK = 16
#: the grading radii of |Y| in units of sqrt(v*) (docs/accountant_tail.md §55.2; any increasing positive list is valid)
RADII = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0)


def convex_tail(law: Law, T0: float) -> tuple[float, float] | None:
    """(p_max, sigma) where L's density p is certified convex and non-increasing on [T0, inf): p_max >= p(T0) = the
    sup of p there, sigma >= |p'(T0)| (the largest slope of p there); None otherwise (docs/accountant_tail.md §55.1).

    On s above its atoms a law with a heavy form has the density p(s) = w phi(v) / (r q), q = s - a,
    v = (ln(q / G) + r^2 / 2) / r, so (ln p)' = -y / q and p'' / p = (y^2 + y - 1 / r^2) / q^2 with y = 1 + v / r,
    increasing in s: p is non-increasing and convex on [T0, inf) where y(T0) >= y* = (sqrt(1 + 4 / r^2) - 1) / 2."""
    hf = law.heavy_form()
    if hf is None or not (T0 > hf.atom and T0 > hf.a and T0 > 0.0):
        return None
    r, G = hf.r, hf.G
    q_lo, q_hi = (T0 - hf.a) * (1 - 4 * U), (T0 - hf.a) * (1 + 4 * U)
    if not (q_lo > 0.0 and G > 0.0 and r > 0.0):
        return None
    # v at q's bounds, with a margin far above the rounding of its four operations (1e-10 of the terms' magnitudes)
    dv = 1e-10 * (2.0 + abs(math.log(q_hi)) + abs(math.log(G)) + r * r) / r
    v_lo = (math.log(q_lo / G) + 0.5 * r * r) / r - dv
    v_hi = (math.log(q_hi / G) + 0.5 * r * r) / r + dv
    y_star = (math.sqrt(1.0 + 4.0 / (r * r)) - 1.0) / 2.0
    if not (v_lo > hf.cont.z_lo and 1.0 + v_lo / r >= y_star * (1 + 1e-9) + 1e-12):
        return None
    p_max = float(law.density_up([T0])[0])
    if not (math.isfinite(p_max) and p_max >= 0.0):
        return None
    sigma = p_max * (1.0 + v_hi / r) / q_lo * (1 + 1e-9)
    return p_max, sigma


def _tail_second(r: np.ndarray, v: float, h: float) -> np.ndarray:
    """Upper bounds on E[Y^2 1{|Y| > r} | G'] for Y a sum of independent mean-0 terms, each in an interval of length
    h, with variance proxy v >= the sum of their variances (N <= N*): the least of v, E Y^4 / r^2 <= (3 v^2 + v h^2)
    / r^2 (E Y_j^4 <= h^2 E Y_j^2) and the sub-Gaussian tail's r^2 P(|Y| > r) + int_r^inf 2t P(|Y| > t) dt with
    P(|Y| > t) <= min(1, 2 e^{-t^2 / (2v)}); non-increasing in r (a running minimum)."""
    rs2 = 2.0 * v * math.log(2.0)  # (2 e^{-t^2/(2v)} = 1 at t^2 = rs2)
    r2 = r * r
    sub = r2 * np.minimum(1.0, 2.0 * np.exp(-r2 / (2.0 * v))) + np.maximum(rs2 - r2, 0.0) \
        + 4.0 * v * np.exp(-np.maximum(r2, rs2) / (2.0 * v))
    g = np.minimum(np.minimum(sub, (3.0 * v * v + v * h * h) / r2), v) * (1 + 1e-9)
    return np.minimum.accumulate(g)


def density_estimate(x: np.ndarray, q: np.ndarray, tv: float, h: float, nn: int, gamma: float, law: Law,
                     T0: float, block: int = 64) -> float:
    """An ESTIMATE (not a bound) of :func:`density_cost`'s density part: (v* / 2) times the sum over blocks of
    ``block`` nodes of their computed mass times P at the block's top node plus 2 sqrt(v*), plus the pmf errors' term
    tv times G at the window's top (inf where :func:`convex_tail` refuses). It only chooses whether
    :func:`density_cost` runs (docs/accountant_tail.md §55.3)."""
    ct = convex_tail(law, T0)
    if ct is None or nn <= 0:
        return math.inf
    _, v = subgauss_proxy(nn, gamma, h)
    idx = np.arange(0, x.size, block)
    mass = np.add.reduceat(q, idx)
    top = x[np.minimum(idx + block - 1, x.size - 1)] + 2.0 * math.sqrt(v)
    g_top = ct[0] + ct[1] * max(float(top[-1]) + T0, 0.0)
    return 0.5 * v * (float(np.sum(np.maximum(mass, 0.0) * law.density_up(np.maximum(-top, T0)))) + g_top * tv)


def density_cost(x: np.ndarray, q: np.ndarray, err_q: float, tv: float, miss: float, h: float, nn: int,
                 gamma: float, law: Law, c: float, T0: float, pa: float, pb: float, excess_b: float, b: float,
                 wsum: Callable[[np.ndarray], tuple[float, float]], pre: dict | None = None) -> float:
    """Upper bound on Lemma 45.1's int E[(s Y - |A' - z|)_+] dmu(z) for the jump term's phi_c (mu: the law of -L on
    {L > T0} and the atom c - P(L > T0) at -T0) from the hat window (nodes ``x``, step h, computed pmf ``q``, its l2
    error ``err_q``, the pmf errors' TV ``tv``, §45.2's ``miss`` for the atom's part), P(S >= b) <= ``pa``,
    P(S <= x_0) <= ``pb``, E(S - b)_+ <= ``excess_b``; ``wsum(w)`` = (sum_W w q, its round-off bound). inf where L's
    density is not certified convex on [T0, inf) (docs/accountant_tail.md §55)."""
    ct = convex_tail(law, T0)
    if ct is None or nn <= 0:
        return math.inf
    p_max, sig = ct
    pN, v = subgauss_proxy(nn, gamma, h)
    sv = math.sqrt(v)
    r = np.array(sorted({max(math.ceil(k * sv / h), 1) * h for k in RADII}))
    g = _tail_second(r, v, h)
    beta = np.concatenate(([v - g[0]], g[:-1] - g[1:]))
    beta = np.maximum(beta, 0.0) * (1 + 1e-12) + 4.0 * U * v  # (>= the exact differences of the floats g)
    # every radius a whole number m of steps: G_r's node values from one evaluation on the nodes x_0 + j h, j < N + m_max
    # (node i's at j = i + m, with a slack for the rounding of x_i + m h against x_0 + j h); P(x + r) = p(-x - r) below
    # -T0 - r (density_up at a smaller s: the sup over [s, inf)), its tangent p(T0) + sigma (x + r + T0) above
    # (G_r is non-decreasing: a node's value is bounded by its block's top node's, BLOCK nodes a block)
    ms = np.round(r / h).astype(np.int64)
    ne = x.size + int(ms[-1]) + 1
    xt = float(x[0]) + np.minimum(np.arange(BLOCK - 1, ne + BLOCK - 1, BLOCK), ne - 1).astype(float) * h
    slack = 8.0 * U * (np.abs(xt) + abs(float(x[0])) + ne * h + T0)
    wt = law.density_up(np.maximum(-xt - slack, T0)) + sig * np.maximum(xt + T0 + slack, 0.0)
    we = np.repeat(wt, BLOCK)[:ne]
    if not np.all(np.isfinite(we)):
        return math.inf
    total = 0.0
    for m, bk in zip(ms.tolist(), beta.tolist()):
        w = we[m:m + x.size]
        s_w, fp = wsum(w)
        rk = m * h
        sl = 8.0 * U * (abs(b) + rk + T0)
        wb = float(law.density_up([max(-b - rk - sl, T0)])[0]) + sig * max(b + rk + T0 + sl, 0.0)
        # E G_r(A_hat*) <= the window's sum + max_W G_r tv + G_r(x_0) P(S <= x_0) + G_r(b) P(S >= b) + sigma E(S - b)_+
        # (G_r non-decreasing: its largest node value the last node's)
        ub = s_w + fp + float(w[-1]) * tv + float(w[0]) * pb + wb * pa + sig * excess_b
        total += bk * ub * (1 + 1e-9)
    total += (g[-1] + nn * h * h / 4.0 * pN * 2.0) * p_max  # (|Y| beyond the last radius; N > N*)
    dens = 0.5 * total * (1 + 1e-9)
    # the atom at -T0: c - P(L > T0) (no atom of L at T0: its density is finite there), §45.2's point bound
    p, e = law.prob_above(T0)
    m_at = max(c - max(p - e, 0.0) * (1 - 1e-12), 0.0) * (1 + 1e-12) + 4.0 * U * c
    atom = coupling_cost(x, q, err_q, miss, h, nn, gamma, [(m_at, -T0, -T0)], pre)
    return (dens + atom) * (1 + 1e-9)


__all__ = ["BLOCK", "RADII", "convex_tail", "density_cost", "density_estimate"]
