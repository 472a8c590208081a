"""Review rev-krr8: the exact eps*(delta) = min{eps >= 0: delta(eps) <= delta} of shuffled binary RR at n = 60..130
(brute force over the others' count j, both orders, both inputs of the differing user). Located by bisection in
float64 (numpy), then certified in 40-digit mpmath: the stored pair (eps_lo, eps_hi) has
delta(eps_lo) > delta >= delta(eps_hi) in mpmath, eps_hi / eps_lo - 1 <= 2e-9 (or eps_lo = eps_hi = 0 where
delta(0) <= delta). Run from the repository root: python tests/data/review_krr8/make_eps_star.py"""

from __future__ import annotations

import json
import sys

import mpmath as mp
import numpy as np
from scipy import stats

sys.path.insert(0, "tests/data/review_krr8")
from make_refs import binom_pmf, conv, rr_probs  # noqa: E402

mp.mp.dps = 40


def pairs_mp(e0, n, adjacency):
    p, q = rr_probs(2, e0)
    N = n - 1
    Bp = [binom_pmf(j, p) for j in range(N + 1)]
    Bq = [binom_pmf(j, q) for j in range(N + 1)]
    out = []
    one, zero, half = [q, p], [p, q], [mp.mpf(1) / 2] * 2
    prs = [(one, zero)] if adjacency == "replace" else [(one, half), (zero, half)]
    for j in range(N + 1):
        U = conv(Bp[j], Bq[N - j])
        for X, Z in prs:
            P, Q = conv(U, X), conv(U, Z)
            out += [(P, Q), (Q, P)]
    return out


def pairs_np(e0, n, adjacency):
    p = 1 / (1 + np.exp(-e0))
    q = 1 - p
    N = n - 1
    out = []
    prs = [([q, p], [p, q])] if adjacency == "replace" else [([q, p], [.5, .5]), ([p, q], [.5, .5])]
    for j in range(N + 1):
        U = np.convolve(stats.binom.pmf(np.arange(j + 1), j, p), stats.binom.pmf(np.arange(N - j + 1), N - j, q))
        for X, Z in prs:
            P, Q = np.convolve(U, X), np.convolve(U, Z)
            out += [(P, Q), (Q, P)]
    return out


def d_np(prs, eps):
    t = np.exp(eps)
    return max(float(np.sum(np.maximum(P - t * Q, 0))) for P, Q in prs)


def d_mp(prs, eps):
    t = mp.e ** mp.mpf(eps)
    return max(mp.fsum(max(a - t * b, 0) for a, b in zip(P, Q)) for P, Q in prs)


def eps_star(e0, n, adjacency, ds):
    fp, mpp = pairs_np(e0, n, adjacency), pairs_mp(e0, n, adjacency)
    out = []
    for d in ds:
        if d_mp(mpp, 0) <= d:
            out.append((0.0, 0.0))
            continue
        lo, hi = 0.0, e0
        while hi - lo > 1e-12 * hi:
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if d_np(fp, mid) <= d else (mid, hi)
        for w in (1e-9, 1e-7, 1e-5):
            a, b = lo * (1 - w), hi * (1 + w)
            if d_mp(mpp, a) > d >= d_mp(mpp, b):
                out.append((a, b))
                break
        else:
            raise RuntimeError((e0, n, adjacency, d))
    return out


def main():
    out = []
    ds = (1e-2, 1e-4, 1e-6, 1e-9)
    for adjacency in ("replace", "zero_out"):
        for e0 in (0.5, 2.0, 6.0):
            for n in (60, 100, 130):
                for d, (lo, hi) in zip(ds, eps_star(e0, n, adjacency, ds)):
                    out.append({"adjacency": adjacency, "e0": e0, "n": n, "delta": d, "eps_lo": lo, "eps_hi": hi})
                    print(adjacency, e0, n, d, lo, hi, file=sys.stderr)
    with open("tests/data/review_krr8/eps_star.json", "w") as f:
        json.dump(out, f, indent=0)


if __name__ == "__main__":
    main()
