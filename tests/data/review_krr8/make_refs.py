"""Review rev-krr8: exact delta(eps) of shuffled k-RR by brute force (mpmath, 50 digits), the references of
tests/test_review_krr8.py. Run from the repository root: python tests/data/review_krr8/make_refs.py

delta(eps) = max over neighbouring pairs (both orders) of sum_y (P(y) - e^eps Q(y))_+, y the histogram of the
shuffled reports (a sufficient statistic: docs/sharp_krr.md §2 (i)).
replace: user 1 holds x vs x' (x != x'), the other n - 1 users any inputs (every composition of n - 1 into k
counts is enumerated; by symmetry of k-RR, x = 0 and x' = 1 cover every pair of distinct inputs).
zero_out: user 1 holds x vs bot, whose report is uniform over the k categories (R_BG, the blanket of k-RR);
both orders; x = 0 covers every x by symmetry.
Binary RR: the histogram is the count of ones; the others' data is the number j of ones among them
(Proposition 1's classes, here with no use of the proposition: both orders and both inputs of user 1 are
enumerated separately)."""

from __future__ import annotations

import itertools
import json
import sys

import mpmath as mp

mp.mp.dps = 50


def rr_probs(k, e0):
    ez = mp.e ** mp.mpf(e0)
    z = ez + k - 1
    return ez / z, 1 / z


def hist_law(k, e0, inputs):
    """law of the histogram of the reports of users with the given inputs (a tuple of category counts)."""
    keep, other = rr_probs(k, e0)
    law = {tuple([0] * k): mp.mpf(1)}
    for cat, cnt in enumerate(inputs):
        for _ in range(cnt):
            new = {}
            for h, pr in law.items():
                for o in range(k):
                    w = keep if o == cat else other
                    hh = list(h)
                    hh[o] += 1
                    hh = tuple(hh)
                    new[hh] = new.get(hh, 0) + pr * w
            law = new
    return law


def add_one(k, law, probs):
    out = {}
    for h, pr in law.items():
        for o in range(k):
            hh = list(h)
            hh[o] += 1
            hh = tuple(hh)
            out[hh] = out.get(hh, 0) + pr * probs[o]
    return out


def hockey(P, Q, t):
    keys = set(P) | set(Q)
    return mp.fsum(max(P.get(y, 0) - t * Q.get(y, 0), 0) for y in keys)


def exact_delta_k(k, e0, n, eps_list, adjacency):
    """max over every neighbouring pair: one value per eps."""
    keep, other = rr_probs(k, e0)
    row = lambda x: [keep if o == x else other for o in range(k)]
    uni = [mp.mpf(1) / k] * k
    best = [mp.mpf(0)] * len(eps_list)
    ts = [mp.e ** mp.mpf(e) for e in eps_list]
    seen = set()
    for comp in itertools.product(range(n), repeat=k):
        if sum(comp) != n - 1:
            continue
        # symmetry: categories 2..k-1 are exchangeable for (x, x') = (0, 1); (and 1..k-1 for zero-out x = 0)
        key = (comp[0], comp[1], tuple(sorted(comp[2:]))) if adjacency == "replace" else (comp[0], tuple(sorted(comp[1:])))
        if key in seen:
            continue
        seen.add(key)
        base = hist_law(k, e0, comp)
        if adjacency == "replace":
            P, Q = add_one(k, base, row(0)), add_one(k, base, row(1))
        else:
            P, Q = add_one(k, base, row(0)), add_one(k, base, uni)
        for i, t in enumerate(ts):
            best[i] = max(best[i], hockey(P, Q, t), hockey(Q, P, t))
    return best


def binom_pmf(m, pr):
    return [mp.binomial(m, i) * pr**i * (1 - pr) ** (m - i) for i in range(m + 1)]


def conv(A, B):
    out = [mp.mpf(0)] * (len(A) + len(B) - 1)
    for i, x in enumerate(A):
        if x == 0:
            continue
        for j, y in enumerate(B):
            out[i + j] += x * y
    return out


def exact_delta_binary(e0, n, eps_list, adjacency):
    """binary RR: every class j (ones among the other n - 1), user 1 with x in {0, 1} vs x' (or bot), both orders."""
    p, q = rr_probs(2, e0)
    N = n - 1
    ts = [mp.e ** mp.mpf(e) for e in eps_list]
    best = [mp.mpf(0)] * len(eps_list)
    for j in range(N + 1):
        U = conv(binom_pmf(j, p), binom_pmf(N - j, q))  # count of ones among the others
        one = [q, p]  # user 1 with input 1: report 1 w.p. p
        zero = [p, q]
        half = [mp.mpf(1) / 2, mp.mpf(1) / 2]
        pairs = [(one, zero)] if adjacency == "replace" else [(one, half), (zero, half)]
        for X, Z in pairs:
            P = {c: v for c, v in enumerate(conv(U, X))}
            Q = {c: v for c, v in enumerate(conv(U, Z))}
            for i, t in enumerate(ts):
                best[i] = max(best[i], hockey(P, Q, t), hockey(Q, P, t))
    return best


def main():
    out = {"binary": [], "k": []}
    for adjacency in ("replace", "zero_out"):
        for e0 in (0.1, 1.0, 3.0):
            for n in (1, 2, 3, 5, 8, 13, 21, 34, 60):
                eps = [0.0, 1e-9, 0.02 * e0, 0.3 * e0, 0.7 * e0, 0.99 * e0, e0 * (1 - 1e-12)]
                d = exact_delta_binary(e0, n, eps, adjacency)
                out["binary"].append({"adjacency": adjacency, "e0": e0, "n": n, "eps": eps,
                                      "delta": [mp.nstr(x, 40) for x in d]})
                print("binary", adjacency, e0, n, mp.nstr(d[0], 8), file=sys.stderr)
        for k, e0, ns in ((3, 1.0, (2, 3, 5, 7)), (3, 3.0, (2, 4, 6)), (10, 2.0, (2, 3)), (10, 0.5, (2, 3))):
            for n in ns:
                eps = [0.0, 0.3 * e0, 0.8 * e0]
                d = exact_delta_k(k, e0, n, eps, adjacency)
                out["k"].append({"adjacency": adjacency, "k": k, "e0": e0, "n": n, "eps": eps,
                                 "delta": [mp.nstr(x, 40) for x in d]})
                print("k", k, adjacency, e0, n, mp.nstr(d[0], 8), file=sys.stderr)
    with open("tests/data/review_krr8/exact_small_n.json", "w") as f:
        json.dump(out, f, indent=0)


if __name__ == "__main__":
    main()
