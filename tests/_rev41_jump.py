"""rev41 (not collected by pytest): a one-jump reference of D_up = E[S_+] / (n g) for GaussianRandomizer(s)'s x-vs-bot
law (zero-out, tests/_review28_ak_reference.GaussXBot), S = B_1 L_1 + ... + B_n L_n, B_i ~ Bern(g), without the
circular window's fold of the full sum (tests/_rev29_fft_reference.py's d_up_fft counts sums above its window's top as
negative values: biased high at n = 1e9).

Users with B_i = 1 and L_i > T are jumps (probability q = g P(L > T) each); J their number. The body S' (users
conditioned on no jump) is the thinned sum of n - 1 users of L | L <= T (tests/_rev39_jump_reference.body_pmf: long-double
FFT, the cell split keeping the mean; the truncated sum fits the window, checked by its edge masses). Then
  D_up = (1 - q)^(n-1) E[psi(L); L > T] + (n - 1) q (1 - q)^(n-2) (E[L; L > T] + P(L > T) E[S'] / 2)
         + (1 - q)^n E[S'_+] / (n g) + O((n q)^2 of the jump term),
psi(l) = E[(l + S')_+]. The J = 1 term is integrated exactly against the discrete body law from L's closed-form tail:
E[psi(L); L > T] = sum_j p_j (E[L; L > t_j] + x_j P(L > t_j)), t_j = max(T, -x_j) (no quadrature); the J = 2 term to first
order (E[(L_1 + L_2 + S')_+] = 2 E[L | L > T] + E[S'] unless S' < -2T). Neglected: J >= 3 (relative (n q)^2 / 6), the
body's thinning g for g (1 - P(L > T)) / (1 - q) and n - 1 users for n (each ~ n q / (n g) relative). The grid: the
split is a mean-preserving spread of each user (biased high); for sigma0 = 0.5 the law's mass near -1 lies in one cell
and the error is first order in h: :func:`extrapolate` gives 2 v(h) - v(2h) and |v(h) - v(2h)|."""

from __future__ import annotations

import numpy as np

from _rev39_jump_reference import Trunc, body_pmf
from _review28_ak_reference import GaussXBot


def gauss_jump(s: float, eps: float, n: int, T: float, h: float, lo: float, N: int) -> tuple[float, dict]:
    """(D_up estimate at step h on the window [lo, lo + N h), its parts and the window's edge masses)."""
    G = GaussXBot(s, eps)
    tr = Trunc(G, T)
    xs, p = body_pmf(tr, G.g - G.E, G.g, n - 1, h, lo, N)
    pT, ET = tr.PT, tr.ET
    q = G.g * pT
    ES = float(np.sum(xs * p))
    t = np.maximum(T, -xs.astype(float))
    P, E = G.tail(t)
    j1 = float(np.sum(p * (E + xs * P)))
    jump1 = (1 - q) ** (n - 1) * j1
    jump2 = (n - 1) * q * (1 - q) ** (n - 2) * (ET + pT * ES / 2)
    pos = xs > 0
    body = (1 - q) ** n * float(np.sum(xs[pos] * p[pos])) / (n * G.g)
    k = max(N // 100, 1)
    info = {"jump1": jump1, "jump2": jump2, "body": body, "nq": n * q, "ES": ES,
            "edge_lo": float(np.sum(np.abs(p[:k]))), "edge_hi": float(np.sum(np.abs(p[-k:])))}
    return jump1 + jump2 + body, info


def extrapolate(v_h: float, v_2h: float) -> tuple[float, float]:
    """(first-order extrapolation 2 v(h) - v(2h), indicator |v(h) - v(2h)|)."""
    return 2 * v_h - v_2h, abs(v_h - v_2h)


if __name__ == "__main__":
    import sys
    import time
    s, eps, n, T, lo, lg = (float(sys.argv[1]), float(sys.argv[2]), int(float(sys.argv[3])), float(sys.argv[4]),
                            float(sys.argv[5]), int(sys.argv[6]))
    for h in map(float, sys.argv[7:]):
        t0 = time.process_time()
        v, info = gauss_jump(s, eps, n, T, h, lo, 2 ** lg)
        print(s, eps, n, T, lo, lg, h, repr(v), info, round(time.process_time() - t0, 1), flush=True)
        lg -= 1
