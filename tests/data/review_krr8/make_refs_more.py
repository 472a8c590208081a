"""Review rev-krr8: more brute-force references (the functions of make_refs.py, 30 digits): binary RR at
n = 100, 200 and k-RR with k = 3 at n = 10..16, k = 10 at n = 4, 5, both adjacencies, on a grid of 12 eps in
[0, eps0). Output exact_more.json. Run from the repository root: python tests/data/review_krr8/make_refs_more.py"""

from __future__ import annotations

import json
import sys

import mpmath as mp

sys.path.insert(0, "tests/data/review_krr8")
import make_refs as R  # noqa: E402


def main():
    mp.mp.dps = 30
    out = {"binary": [], "k": []}
    grid = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.9, 0.97, 0.995)
    for adjacency in ("replace", "zero_out"):
        for e0 in (0.25, 1.5, 4.0):
            for n in (100, 200):
                eps = [f * e0 for f in grid]
                d = R.exact_delta_binary(e0, n, eps, adjacency)
                out["binary"].append({"adjacency": adjacency, "e0": e0, "n": n, "eps": eps,
                                      "delta": [mp.nstr(x, 28) for x in d]})
                print("binary", adjacency, e0, n, file=sys.stderr, flush=True)
        for k, e0, ns in ((3, 0.7, (10, 16)), (3, 2.5, (12,)), (10, 1.0, (4, 5)), (10, 3.0, (5,))):
            for n in ns:
                eps = [f * e0 for f in grid]
                d = R.exact_delta_k(k, e0, n, eps, adjacency)
                out["k"].append({"adjacency": adjacency, "k": k, "e0": e0, "n": n, "eps": eps,
                                 "delta": [mp.nstr(x, 28) for x in d]})
                print("k", k, adjacency, e0, n, file=sys.stderr, flush=True)
    with open("tests/data/review_krr8/exact_more.json", "w") as f:
        json.dump(out, f, indent=0)


if __name__ == "__main__":
    main()
