"""Proposition 4 (docs/sharp_krr.md §2.4) before any rounding: 40-digit mpmath sums over every class of
small populations, for every representative a, reach r' and dropped count k (a + k <= N, 0 <= k <= r'),
and every class j of the coverage [a + k - r', a + r'] (clipped to 0..N). Writes, per (n, eps0, eps),
the smallest relative margin (bound - delta_j) / bound over all (a, r', k, j), and the (a, r', k, j)
where it occurs, to prop4_margins.json (read by tests/test_review_rev_krr21.py, which recomputes a few
cells independently). Usage: python prop4_sweep.py [--quick]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mpmath as mp

mp.mp.dps = 40


def pop_deltas(e0, eps, nmax):
    """delta of the pair (x1 = 1 vs 0) whose other users are `ones` with input 1 and `zeros` with input 0,
    every ones + zeros <= nmax - 1, by the full sum of docs/sharp_krr.md §3 (no threshold form)."""
    E = mp.mpf(e0)
    p, q = 1 / (1 + mp.e ** (-E)), 1 / (1 + mp.e**E)
    t = mp.e ** mp.mpf(eps)
    a, b = p - t * q, t * p - q
    M = nmax - 1
    binp = [[mp.binomial(m, i) * p**i * q ** (m - i) for i in range(m + 1)] for m in range(M + 1)]
    binq = [[mp.binomial(m, i) * q**i * p ** (m - i) for i in range(m + 1)] for m in range(M + 1)]
    out = {}
    for ones in range(M + 1):
        for zeros in range(M + 1 - ones):
            A, B = binp[ones], binq[zeros]
            U = [mp.mpf(0)] * (ones + zeros + 1)
            for i, x in enumerate(A):
                for k, y in enumerate(B):
                    U[i + k] += x * y
            L = ones + zeros
            out[(ones, zeros)] = mp.fsum(max(a * (U[c - 1] if c >= 1 else 0) - b * (U[c] if c <= L else 0), 0)
                                         for c in range(L + 2))
    return out, p, q


def sweep(n, e0, eps):
    N = n - 1
    d, p, q = pop_deltas(e0, eps, n)
    pi = 1 - q / p
    cls = [d[(j, N - j)] for j in range(n)]
    worst = (mp.inf, None)
    worst_tail = (mp.inf, None)  # k < r' (the tail term present)
    worst_down = (mp.inf, None)  # classes j < a only (the input-0 side, step (ii) of the proof)
    no_tail_fail = 0
    stretched_fail = 0  # the coverage stretched by one class at either end exceeds the bound somewhere
    for r in range(1, N + 1):  # r' = 0: coverage {a}, bound g = delta_a (equality, nothing to test)
        tails = [mp.fsum(mp.binomial(r, i) * pi**i * (1 - pi) ** (r - i) for i in range(k + 1, r + 1))
                 for k in range(r + 1)]
        for k in range(r + 1):
            for a in range(0, N - k + 1):
                g = d[(a, N - k - a)]
                bound = g + (p - q) * tails[k]
                js = range(max(0, a + k - r), min(N, a + r) + 1)
                jm = max(js, key=lambda j: cls[j])
                if bound > 0:
                    m = (bound - cls[jm]) / bound
                else:
                    m = mp.mpf(0) if cls[jm] == 0 else -mp.inf
                if m < worst[0]:
                    worst = (m, (a, r, k, jm))
                no_tail_fail += cls[jm] > g * (1 + mp.mpf(10) ** -30)
                if k < r and m < worst_tail[0]:
                    worst_tail = (m, (a, r, k, jm))
                down = [j for j in js if j < a]
                if down and bound > 0:
                    jd = max(down, key=lambda j: cls[j])
                    md = (bound - cls[jd]) / bound
                    if md < worst_down[0]:
                        worst_down = (md, (a, r, k, jd))
                for j in (a + k - r - 1, a + r + 1):
                    if 0 <= j <= N:
                        stretched_fail += cls[j] > bound * (1 + mp.mpf(10) ** -30)
    return worst, worst_tail, worst_down, no_tail_fail, stretched_fail


def main():
    quick = "--quick" in sys.argv
    ns = (2, 3, 5, 8, 13) if quick else (2, 3, 4, 5, 8, 13, 20, 30)
    e0s = (0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0)
    rows = []
    for n in ns:
        for e0 in e0s:
            for eps in sorted({0.0, 1e-9, 1e-3 * e0, 0.1 * e0, 0.3 * e0, 0.5 * e0, 0.9 * e0, e0 * (1 - 1e-6)}):
                worst, wt, wd, ntf, sf = sweep(n, e0, eps)
                rows.append({"n": n, "e0": e0, "eps": eps, "min_rel_margin": mp.nstr(worst[0], 6),
                             "where_a_r_k_j": worst[1],
                             "min_rel_margin_k_below_r": mp.nstr(wt[0], 6), "where_k_below_r": wt[1],
                             "min_rel_margin_j_below_a": mp.nstr(wd[0], 6), "where_j_below_a": wd[1],
                             "classes_above_g_without_tail": ntf, "stretched_coverage_failures": sf})
                print(rows[-1], flush=True)
                assert min(worst[0], wt[0], wd[0]) >= -mp.mpf(10) ** -28, rows[-1]
    if not quick:
        Path(__file__).with_name("prop4_margins.json").write_text("[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n")


if __name__ == "__main__":
    main()
