"""Lower values from the hat lattice law alone: the rounding's second-order cost (docs/accountant_tail.md §45).

The hat law of docs/accountant.md §3.2 rounds each active user's clamped value G'_i to one of its two neighbouring
lattice nodes, with E[G^_i | G'_i] = G'_i: the (n - 1)-fold hat sum is A^ = A' + Y with E[Y | G'] = 0 and, given the
number N of active users, Y sub-Gaussian with variance proxy v = N h^2 / 4 (Hoeffding's lemma: each Y_i lies in an
interval of length h). For a convex w with w' from 0 to w'(+inf) = |mu| (mu = w'' as a measure),

    w(a + y) - w(a) - w'_+(a) y = int [(a + y - z)_+ - (a - z)_+ - 1{z <= a} y] dmu(z) = int (s y - |a - z|)_+ dmu(z),

s = -1 for z <= a, +1 beyond, so E w(A^) - E w(A') <= int E[(s Y - |A' - z|)_+] dmu(z) (§45.1), which :func:`coupling_cost` bounds from the hat
sum's own computed pmf (its concentration near the support of mu) and the sub-Gaussian stop-loss of Y (§45.2).
E w(A^) itself is bracketed by the FFT window of :mod:`.jump` as every other sum there; the computed hat pmf is that
of a law psi* stochastically above the true hat law by at most :func:`rounding_shift` per user (§45.3).
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle.accountant.limits import J_LO, U
from sharpdp.shuffle.laws import Law


def rounding_shift(law: Law, gamma: float, h: float, kT: int, kB: int) -> float:
    """An upper bound on the mass one user's computed hat law moves up by one node against the true hat law (the
    moment errors of docs/accountant.md §3.2 turned into a shift), per user of the mixture (times ``gamma``):
    sum_j delta_j <= 2 sum_j ew_j (1 + 4u) + 4u sum_j m_j, ew_j <= sum_l (EM_i + EW_i) + 3 (J + 4) u m_j, with a
    margin (docs/accountant_tail.md §45.3). The per-user mean moves by at most h times it, the n - 1 users' sum's
    law by at most n - 1 times it in total variation."""
    K = kT + kB
    m, _, em, ew = law.cells(-kB * h, h / J_LO, K * J_LO)  # (the lattice's own fine cells: kept by the law)
    tot = float(np.sum(em)) + float(np.sum(ew))
    mass = float(np.sum(m))
    return gamma * (2.1 * tot * (1 + 1e-6) + 100.0 * U * max(mass, 1.0)) * (1 + 1e-9)


def _stop_loss_subgauss(t: np.ndarray, v: float) -> np.ndarray:
    """Upper bound on E(s Y - t)_+ (t >= 0, s = +1 or -1) for Y of mean 0 with E e^{lam Y} <= e^{lam^2 v / 2}: the
    smaller of E(s Y)_+ = E|Y| / 2 <= sqrt(v) / 2 and min_lam e^{lam^2 v / 2 - lam t - 1} / lam (x_+ <= e^{lam x - 1} /
    lam), at the minimiser lam = (t + sqrt(t^2 + 4v)) / (2v); non-increasing in t (docs/accountant_tail.md §45.2)."""
    sv = math.sqrt(v)
    lam = (t + np.sqrt(t * t + 4.0 * v)) / (2.0 * v)
    val = np.exp(np.minimum(0.5 * lam * lam * v - lam * t - 1.0, 700.0)) / lam
    return np.minimum(val, 0.5 * sv) * (1 + 1e-12)


def _binom_tail(nn: int, gamma: float, N_star: float) -> float:
    """Upper bound on P(N > N_star), N ~ Bin(nn, gamma) (Bernstein: variance <= nn gamma, increments <= 1)."""
    if N_star >= nn:
        return 0.0
    m = nn * gamma
    d = N_star - m
    if d <= 0:
        return 1.0
    return min(math.exp(-d * d / (2.0 * (m + d / 3.0))) * (1 + 1e-9), 1.0)


def subgauss_proxy(nn: int, gamma: float, h: float) -> tuple[float, float]:
    """(p_N, v*): p_N >= P(N > N*) for the number N ~ Bin(nn, gamma) of active users, N* = min(nn, ceil(m + 12 sqrt(m)
    + 12)), m = nn gamma, and v* = N* h^2 / 4, the sub-Gaussian variance proxy of the hat rounding's sum Y given G' on
    N <= N* (docs/accountant_tail.md §45.2)."""
    m = nn * gamma
    N_star = min(float(nn), math.ceil(m + 12.0 * math.sqrt(m) + 12.0))
    return _binom_tail(nn, gamma, N_star), N_star * h * h / 4.0


def coupling_cost(x: np.ndarray, q: np.ndarray, err_q: float, miss: float, h: float, nn: int, gamma: float,
                  parts: list[tuple[float, float, float]], pre: dict | None = None, sums: bool = False) -> float:
    """Upper bound on int E[(s Y - |A' - z|)_+] dmu(z) (Lemma 45.1's, s = -1 for z <= A', +1 beyond) for mu = the
    sum of ``parts`` (mass, z_lo, z_hi): mass on
    [z_lo, z_hi] (a point where z_lo == z_hi), from the hat sum's computed pmf ``q`` on the window nodes ``x`` (step
    h), its l2 error bound ``err_q`` and ``miss`` >= the total-variation distance of the computed circular pmf from
    the law of A^ (the pmf errors' TV, the mass outside the window and the shift of :func:`rounding_shift`; §45.2).

    For each part: E[(s Y - |A' - z|)_+] <= E psi(|A' - z|) + (h/4) sqrt(nn) P(N > N*), psi the
    one-sided sub-Gaussian stop-loss at v* = N* h^2 / 4, and E psi(|X|) <= sum_k (psi(t_k) - psi(t_{k+1})) P(|X| < t_{k+1}) + psi(t_K)
    (psi non-increasing), with P(|A' - z| < t) <= P(|A^ - z| <= t + u) + P(|Y| >= u) for every u > 0. ``pre``: a dict
    kept by the caller between calls on one window (its running sums, computed once). ``sums``: a range's window
    sums also bounded by :func:`_range_sums` (docs/accountant_tail.md §53.1)."""
    if nn <= 0 or not parts:
        return 0.0
    pN, v = subgauss_proxy(nn, gamma, h)
    sv = math.sqrt(v)
    tail_N = 0.25 * h * math.sqrt(nn) * pN  # (E[(s Y)_+ | G'] <= sqrt(v(N)) / 2 <= (h / 4) sqrt(nn))
    t = np.arange(0, 49, dtype=float) * (0.25 * sv)  # t_0 = 0 .. t_K = 12 sd
    psi = np.maximum.accumulate(_stop_loss_subgauss(t, v)[::-1])[::-1]  # (non-increasing in floats too)
    us = np.array([1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0]) * sv
    pY = np.minimum(2.0 * np.exp(-us * us / (2.0 * v)) * (1 + 1e-9) + pN, 1.0)
    R = t[1:, None] + us[None, :]  # radii of the window sums: (t_{k+1}, u)
    cnt = np.floor(2.0 * R / h) + 3.0  # nodes of step h within a radius R of a point, and one more each side
    if pre is None:
        pre = {}
    if "C" not in pre:  # (the window's running sums, once per window)
        pre["C"] = np.concatenate(([0.0], np.cumsum(q)))
        # the running sums' rounding (sequential: <= N u sum|q| each)
        pre["err"] = 2.0 * q.size * U * float(np.sum(np.abs(q)))
    C, csum_err = pre["C"], pre["err"]
    x0 = float(x[0])
    total = 0.0
    for mass, zlo, zhi in parts:
        if not mass > 0.0:
            continue
        if zlo == zhi:  # a point: the window sums around it
            # (one node more each side than |x - z| <= R asks: the index arithmetic's rounding)
            i1 = np.clip(np.floor((zlo + R - x0) / h) + 2, 0, q.size).astype(np.int64)
            i0 = np.clip(np.ceil((zlo - R - x0) / h) - 1, 0, q.size).astype(np.int64)
            M = np.maximum(C[i1] - C[np.minimum(i0, i1)], 0.0) + csum_err + np.sqrt(cnt) * err_q
        else:  # a range: the largest node value near it times the count
            Rmax = float(R.max())
            i0, i1 = int(np.searchsorted(x, zlo - Rmax, side="left")), int(np.searchsorted(x, zhi + Rmax, side="right"))
            qmax = float(np.max(q[i0:i1])) if i1 > i0 else 0.0
            M = cnt * max(qmax, 0.0) * (1 + 1e-12) + np.sqrt(cnt) * err_q
            if sums:  # ... or the window sum over every node within R of the range (§53.1)
                M = np.minimum(M, _range_sums(x, C, csum_err, err_q, h, zlo, zhi, R))
        Q = np.min(np.minimum(M + miss + pY[None, :], 1.0), axis=1)  # P(|A' - z| < t_{k+1}) <= Q_k
        Q = np.maximum.accumulate(Q)  # (a non-decreasing upper bound: each entry stays >= its probability)
        # sum_k (psi_k - psi_{k+1}) Q_k + psi_K = psi_0 Q_0 + sum_{k>=1} psi_k (Q_k - Q_{k-1}) + psi_K (1 - Q_last)
        e = psi[0] * Q[0] + float(np.sum(psi[1:-1] * np.diff(Q))) + psi[-1] * (1.0 - Q[-1])
        total += mass * (e * (1 + 1e-9) + tail_N)
    return total * (1 + 1e-9)


def _range_sums(x: np.ndarray, C: np.ndarray, csum_err: float, err_q: float, h: float, zlo: float, zhi: float,
                R: np.ndarray) -> np.ndarray:
    """Upper bounds, for each radius in ``R``, of sup over z in [zlo, zhi] of the true window sum P(|A^* - z| <= R):
    the computed pmf summed over the nodes in [zlo - R, zhi + R] and one more each side (a superset of every z's nodes;
    the true pmf is non-negative), its running sums' rounding and the l2 error bound over that many nodes
    (Cauchy-Schwarz; docs/accountant_tail.md §53.1)."""
    x0 = float(x[0])
    n = C.size - 1
    lo = np.maximum(zlo - R, x0 - 2.0 * h)  # (zlo may be -inf: every node below)
    i1 = np.clip(np.floor((zhi + R - x0) / h) + 2, 0, n).astype(np.int64)
    i0 = np.clip(np.ceil((lo - x0) / h) - 1, 0, n).astype(np.int64)
    i0 = np.minimum(i0, i1)
    cnt = (i1 - i0).astype(float) + 2.0
    return np.maximum(C[i1] - C[i0], 0.0) + csum_err + np.sqrt(cnt) * err_q


def reflected_pieces(law: Law, mass: float, s0: float, s_end: float, z_lo: float, z_hi: float, scale: float = 1.0,
                     per_octave: int = 4) -> list[tuple[float, float, float]]:
    """Parts (mass, z_lo, z_hi) for :func:`coupling_cost` covering a measure mu on [z_lo, z_hi] of total mass at most
    ``mass`` with mu((-inf, -s]) = ``scale`` P(L >= s) at every s_j = s0 2^(j / per_octave) < s_end and at s_end
    (0 < s0 < s_end): the pieces (-s_1, z_hi] (mass ``mass`` - scale P(L >= s_1)), (-s_(j+1), -s_j] (mass
    scale (P(L >= s_j) - P(L >= s_(j+1)))) and [z_lo, -s_J] (mass scale P(L >= s_J)), s_J = s_end, each mass from
    ``law.prob_above``'s bracket rounded up (docs/accountant_tail.md §53.1)."""
    J = max(int(math.ceil(per_octave * math.log2(s_end / s0))), 1)
    s = np.unique(np.minimum(s0 * 2.0 ** (np.arange(1, J + 1) / per_octave), s_end))
    lo, up = np.empty(s.size), np.empty(s.size)
    for j, sj in enumerate(s.tolist()):
        p, e = law.prob_above(sj)  # (P(L >= s_j), its error bound)
        lo[j] = max((p - e) * (1 - 1e-12), 0.0) * scale * (1 - 1e-12)
        up[j] = (p + e) * (1 + 1e-12) * scale * (1 + 1e-12)
    m = np.minimum(np.concatenate(([mass - lo[0]], up[:-1] - lo[1:], up[-1:])), mass)  # (rounded up below)
    m = np.maximum(m + 4.0 * U * (mass + np.concatenate(([0.0], up))), 0.0) * (1 + 1e-12)
    edges = np.concatenate(([z_hi], -s, [z_lo]))
    return [(float(m[j]), max(float(edges[j + 1]), z_lo), float(edges[j])) for j in range(m.size)]


def spread_cost(x: np.ndarray, q: np.ndarray, err_q: float, miss: float, h: float, nn: int, gamma: float, law: Law,
                mass: float, s0: float, s_end: float, z_lo: float, z_hi: float, scale: float = 1.0,
                pre: dict | None = None, pieces: bool = False) -> float:
    """:func:`coupling_cost` of a measure mu on [z_lo, z_hi] as :func:`reflected_pieces` describes it: with
    ``pieces`` the smaller of its cost on those pieces and its cost as one part (mass, z_lo, z_hi), both with the range
    sums; without, the latter alone as before (main's bound; docs/accountant_tail.md §53.1)."""
    one = coupling_cost(x, q, err_q, miss, h, nn, gamma, [(mass, z_lo, z_hi)], pre, sums=pieces)
    if not pieces or not (0.0 < s0 < s_end) or not mass > 0.0:
        return one
    return min(one, coupling_cost(x, q, err_q, miss, h, nn, gamma,
                                  reflected_pieces(law, mass, s0, s_end, z_lo, z_hi, scale), pre, sums=True))


def _tau_nodes(law: Law, t0: float, h: float, k: int, stop_loss_grid) -> tuple[np.ndarray, np.ndarray]:
    """(lo, up) of tau(t0 + j h), j < k, by ``stop_loss_grid`` on pieces: below 2048 h one piece (the closed forms at
    every node there), then one piece per octave [2^i h, 2^(i+1) h) (its interpolation step grows with t0; the same
    bounds, fewer closed forms)."""
    los, ups = [], []
    j = 0
    while j < k:
        t = t0 + j * h
        end = 2048.0 * h if t < 2048.0 * h else 2.0 * t
        jn = k if end >= t0 + k * h else min(max(int(math.ceil((end - t0) / h)), j + 1), k)
        lo, up = stop_loss_grid(law, t, h, jn - j)
        los.append(lo)
        ups.append(up)
        j = jn
    return np.concatenate(los), np.concatenate(ups)


def body_weights(law: Law, gamma: float, x: np.ndarray, T0: float, B: float, h: float, stop_loss_grid
                 ) -> tuple[np.ndarray, np.ndarray, float]:
    """Lower and upper values on the nodes ``x`` (step h; -B and T0 nodes) of f(x) = E(x + G'_1)_+, G'_1 one
    user's clamped term (f = (1 - gamma) x_+ + gamma tau_c(-x), tau_c(t) = E(clamp(L, -B, T0) - t)_+: 0 for t >= T0,
    tau(t) - tau(T0) on [-B, T0), E clamp(L) - t below -B), and an upper value of f(0) (docs/accountant_tail.md
    §45.4). E(A)_+ = E f(A') for the n-fold clamped sum A and the other n - 1 users' A'."""
    tT = law.stop_loss([T0])
    tB = law.stop_loss([-B])
    tT_lo, tT_up = float(tT[0][0]), float(tT[1][0])
    tB_lo, tB_up = float(tB[0][0]), float(tB[1][0])
    mcl_lo = -B + tB_lo - tT_up - 4 * U * (B + tB_lo + tT_up)  # E clamp(L) = -B + tau(-B) - tau(T0)
    mcl_up = -B + tB_up - tT_lo + 4 * U * (B + tB_up + tT_lo)
    f_lo = np.zeros(x.size)
    f_up = np.zeros(x.size)
    # nodes in (-T0, B]: t = -x in [-B, T0), f = (1 - gamma) x_+ + gamma (tau(t) - tau(T0))
    i0 = int(np.searchsorted(x, -T0, side="right"))
    i1 = int(np.searchsorted(x, B, side="right"))
    if i1 > i0:
        xs = x[i0:i1]
        pos = np.maximum(xs, 0.0) * (1.0 - gamma)
        tl, tu = _tau_nodes(law, -float(x[i1 - 1]), h, i1 - i0, stop_loss_grid)  # t_j = -x[i1 - 1] + j h
        f_lo[i0:i1] = np.maximum((pos + gamma * np.maximum(tl[::-1] - tT_up, 0.0)) * (1 - 1e-12), 0.0)
        f_up[i0:i1] = (pos + gamma * np.maximum(tu[::-1] - tT_lo, 0.0)) * (1 + 1e-12)
    if i1 < x.size:  # x > B: f(x) = x + gamma E clamp(L)
        xs = x[i1:]
        f_lo[i1:] = np.maximum((xs + gamma * mcl_lo - 4 * U * (xs + abs(gamma * mcl_lo))) * (1 - 1e-12), 0.0)
        f_up[i1:] = (xs + gamma * mcl_up + 4 * U * (xs + abs(gamma * mcl_up))) * (1 + 1e-12)
    f0_up = gamma * max(float(law.stop_loss([0.0])[1][0]) - tT_lo, 0.0) * (1 + 1e-12)
    return f_lo, f_up, f0_up


__all__ = ["body_weights", "coupling_cost", "reflected_pieces", "rounding_shift", "spread_cost"]
