"""Review rev-krr8: the exact eps*(delta) = min{eps >= 0: delta(eps) <= delta} of shuffled binary RR at n = 60..130
(brute force over the others' count j, both orders, both inputs of the differing user; mpmath, 30 digits;
bisection to a relative 1e-10 on eps, the returned pair (eps_lo, eps_hi) has delta(eps_lo) > delta >= delta(eps_hi)).
Run from the repository root: python tests/data/review_krr8/make_eps_star.py"""

from __future__ import annotations

import json
import sys

import mpmath as mp

sys.path.insert(0, "tests/data/review_krr8")
from make_refs import binom_pmf, conv, rr_probs  # noqa: E402

mp.mp.dps = 30


def laws(e0, n, adjacency):
    p, q = rr_probs(2, e0)
    N = n - 1
    Bp = [binom_pmf(j, p) for j in range(N + 1)]
    Bq = [binom_pmf(j, q) for j in range(N + 1)]
    out = []
    one, zero, half = [q, p], [p, q], [mp.mpf(1) / 2] * 2
    pairs = [(one, zero)] if adjacency == "replace" else [(one, half), (zero, half)]
    for j in range(N + 1):
        U = conv(Bp[j], Bq[N - j])
        for X, Z in pairs:
            P, Q = conv(U, X), conv(U, Z)
            out.append((P, Q))
            out.append((Q, P))
    return out


def delta(pairs, eps):
    t = mp.e ** mp.mpf(eps)
    return max(mp.fsum(max(a - t * b, 0) for a, b in zip(P, Q)) for P, Q in pairs)


def eps_star(pairs, d, e0):
    if delta(pairs, 0) <= d:
        return 0.0, 0.0
    lo, hi = mp.mpf(0), mp.mpf(e0)
    while hi - lo > 1e-10 * hi:
        mid = (lo + hi) / 2
        if delta(pairs, mid) <= d:
            hi = mid
        else:
            lo = mid
    return float(lo), float(hi)


def main():
    out = []
    for adjacency in ("replace", "zero_out"):
        for e0 in (0.5, 2.0, 6.0):
            for n in (60, 100, 130):
                pairs = laws(e0, n, adjacency)
                for d in (1e-2, 1e-4, 1e-6, 1e-9):
                    lo, hi = eps_star(pairs, d, e0)
                    out.append({"adjacency": adjacency, "e0": e0, "n": n, "delta": d, "eps_lo": lo, "eps_hi": hi})
                    print(adjacency, e0, n, d, lo, hi, file=sys.stderr)
    with open("tests/data/review_krr8/eps_star.json", "w") as f:
        json.dump(out, f, indent=0)


if __name__ == "__main__":
    main()
