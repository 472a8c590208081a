"""Exact roots of the k-RR blanket divergence for tests/test_review_rev_decide6.py: for each case
(k, eps0, n, adjacency, delta) a bracket x_lo < r* <= x_hi (x_hi / x_lo - 1 <= 2e-7) with
exact D_up(x_hi) <= delta < exact D_up(x_lo), by secant/bisection on log D_up against eps
(exact_dup.py: independent closed-form atoms, direct sums). Run: python make_reference.py"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exact_dup import dup_krr_any  # noqa: E402

CASES = [
    (2, 0.5, 100, "replace", 1e-6), (2, 1.0, 10_000, "replace", 1e-10), (2, 4.0, 10_000, "zero_out", 1e-6),
    (2, 1.0, 1_000_000, "zero_out", 1e-8), (2, 8.0, 100_000, "replace", 1e-6), (2, 0.1, 1000, "zero_out", 1e-12),
    (3, 2.0, 300, "replace", 1e-6), (10, 4.0, 150, "replace", 1e-8), (3, 1.0, 100_000, "zero_out", 1e-10),
    (10, 8.0, 10_000, "zero_out", 1e-6), (10, 1.0, 1000, "zero_out", 1e-3),
    # prime n: no blocks, the plain lattice path decides (docs/accountant_atoms.md §8)
    (3, 4.0, 1009, "replace", 1e-7), (2, 1.0, 1009, "zero_out", 1e-7),
]


def root(k, eps0, n, adj, d, x0):
    def f(x):
        v = dup_krr_any(k, eps0, x, n, adj)
        return math.log(v) - math.log(d) if v > 0 else -1e3  # (D_up = 0 once every atom is <= 0)
    lo, hi = x0 * 0.9, x0 * 1.1
    flo, fhi = f(lo), f(hi)
    while flo <= 0:
        hi, fhi, lo = lo, flo, lo * 0.7
        flo = f(lo)
    while fhi > 0:
        lo, flo, hi = hi, fhi, hi * 1.3
        fhi = f(hi)
    for _ in range(60):
        if hi / lo - 1 <= 2e-7:
            break
        x = hi - fhi * (hi - lo) / (fhi - flo) if fhi > -1e3 else 0.5 * (lo + hi)
        x = min(max(x, lo + 0.05 * (hi - lo)), hi - 0.05 * (hi - lo))
        fx = f(x)
        if fx > 0:
            lo, flo = x, fx
        else:
            hi, fhi = x, fx
    return lo, hi


if __name__ == "__main__":
    from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant
    only = sys.argv[1:] and int(sys.argv[1])  # (append CASES[only:] to the stored file)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "krr_roots.json")
    out = json.load(open(path))[:only] if only else []
    for k, eps0, n, adj, d in CASES[len(out):]:
        e = ShuffleAccountant(RandomizedResponse(k, eps0), n, adj).get_epsilon(d)  # (a starting point only)
        lo, hi = root(k, eps0, n, adj, d, e)
        out.append(dict(k=k, eps0=eps0, n=n, adjacency=adj, delta=d, x_lo=lo, x_hi=hi,
                        exact_at_hi=dup_krr_any(k, eps0, hi, n, adj)))
        print(out[-1], "answer", e, flush=True)
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
