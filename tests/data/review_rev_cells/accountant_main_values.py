"""The accountant's brackets for a few BMG / GaussianRandomizer configurations (review rev-cells).

Run with main's build (the numpy cells) to make accountant_main_values.json:
    /work/venv/main/bin/python tests/data/review_rev_cells/accountant_main_values.py OUT.json
(row: kind, gamma or sigma0, sigma0, n, epsilon, lower, upper, seconds)."""

import json
import sys
import time

import sharpdp.shuffle as sh

CFGS = [("bmg", 0.95, 4.6, 1000, 1.0), ("bmg", 0.5, 1.0, 100, 0.5), ("bmg", 0.9, 0.3, 50, 2.0),
        ("bmg", 0.99, 10.0, 10**5, 0.2), ("bmg_rep", 0.9, 1.0, 100, 1.0), ("gauss", 0.5, None, 100, 1.0),
        ("gauss", 1.0, None, 1000, 0.5), ("gauss", 0.2, None, 10, 3.0), ("bmg", 0.5, 0.05, 3, 1.0)]


def main(path):
    out = []
    for kind, p1, p2, n, eps in CFGS:
        t = time.time()
        if kind == "bmg":
            acc = sh.ShuffleAccountant(sh.BlanketMixedGaussian(p1, p2, 1), n)
        elif kind == "bmg_rep":
            acc = sh.ShuffleAccountant(sh.BlanketMixedGaussian(p1, p2, 1), n, adjacency="replace")
        else:
            acc = sh.ShuffleAccountant(sh.GaussianRandomizer(p1, 1), n)
        lo, up = acc.get_delta_bounds(eps)
        out.append([kind, p1, p2, n, eps, float(lo), float(up), time.time() - t])
        print(out[-1], flush=True)
    with open(path, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main(sys.argv[1])
