"""Review rev-krr8: float64 references for the sharp accountant at n = 4001..9000 (the branch and bound on the krr7
kernel, §4.11-4.12): delta(eps) = max over every class j of sum_c (a U_j(c - 1) - b U_j(c))_+ (§3; Proposition 1 is
the only part of the theory used, and it is checked by brute force at n <= 60 in exact_small_n.json), U_j the
convolution of scipy's Bin(j, p) and Bin(n - 1 - j, q) pmfs on windows of 14 sd + 30 (mass left out < 1e-40),
np.convolve (direct sums of positive terms: relative error ~1e-13 per value). And eps*(delta) by bisection on it
(to 1e-11 relative; eps_lo has delta > target, eps_hi <= target by at least the float noise, checked 1e-9
relative apart). Run from the repository root: python tests/data/review_krr8/make_mid_n.py"""

from __future__ import annotations

import json
import sys

import numpy as np
from scipy import stats


def classes(e0, n):
    p = 1.0 / (1.0 + np.exp(-e0))
    q = 1.0 / (1.0 + np.exp(e0))
    N = n - 1
    out = []
    for j in range(N + 1):
        def win(m, pr):
            sd = np.sqrt(m * pr * (1 - pr)) + 1
            lo, hi = max(0, int(m * pr - 14 * sd - 30)), min(m, int(m * pr + 14 * sd + 30) + 1)
            k = np.arange(lo, hi + 1)
            return lo, stats.binom.pmf(k, m, pr)
        la, A = win(j, p)
        lb, B = win(N - j, q)
        out.append(np.convolve(A, B))
    width = max(u.size for u in out) + 1
    mat = np.zeros((len(out), width + 1))  # row j: U_j (its offset does not matter), zeros after
    for j, u in enumerate(out):
        mat[j, 1:u.size + 1] = u
    return p, q, mat


def delta(p, q, mat, eps):
    a = -p * np.expm1(eps - np.log(p / q))
    b = q * np.expm1(eps + np.log(p / q))
    t = a * mat[:, :-1] - b * mat[:, 1:]  # a U(c - 1) - b U(c), U(-1) = 0 in column 0
    return float(np.max(np.sum(np.maximum(t, 0.0), axis=1)))


def main():
    out = {"delta": [], "eps_star": []}
    for e0 in (0.3, 1.0, 3.0):
        for n in (4001, 6000, 9000):
            p, q, cls = classes(e0, n)
            eps = [f * e0 for f in (0.0, 0.05, 0.2, 0.4, 0.6, 0.8)]
            ds = [delta(p, q, cls, x) for x in eps]
            out["delta"].append({"e0": e0, "n": n, "eps": eps, "delta": ds})
            for d in (1e-3, 1e-6, 1e-10):
                if delta(p, q, cls, 0.0) <= d:
                    out["eps_star"].append({"e0": e0, "n": n, "delta": d, "eps_lo": 0.0, "eps_hi": 0.0})
                    continue
                lo, hi = 0.0, e0
                while hi - lo > 1e-11 * hi:
                    mid = 0.5 * (lo + hi)
                    lo, hi = (lo, mid) if delta(p, q, cls, mid) <= d else (mid, hi)
                out["eps_star"].append({"e0": e0, "n": n, "delta": d, "eps_lo": lo, "eps_hi": hi})
            print(e0, n, ds, file=sys.stderr, flush=True)
    with open("tests/data/review_krr8/mid_n.json", "w") as f:
        json.dump(out, f, indent=0)


if __name__ == "__main__":
    main()
