"""Review rev-krr8: targets at the edges of get_epsilon's search, shuffled binary RR, replace-one, n = 64, 65, 66
(the switch from the tables to the branch and bound is at n > N_EPSILON_TABLES = 64): delta = delta(0) (1 + 1e-9)
(the answer must be 0), delta(0) (1 - 1e-6) (eps* tiny), and delta(0) / 2; eps* certified in mpmath as in
make_eps_star.py. Run from the repository root: python tests/data/review_krr8/make_edge_targets.py"""

from __future__ import annotations

import json
import sys

import mpmath as mp

sys.path.insert(0, "tests/data/review_krr8")
from make_eps_star import d_mp, d_np, pairs_mp, pairs_np  # noqa: E402

mp.mp.dps = 40


def main():
    out = []
    for e0 in (0.2, 1.0, 5.0):
        for n in (64, 65, 66):
            fp, mpp = pairs_np(e0, n, "replace"), pairs_mp(e0, n, "replace")
            d0 = d_mp(mpp, 0)
            for d in (float(d0 * (1 + mp.mpf(1e-9))), float(d0 * (1 - mp.mpf(1e-6))), float(d0 / 2)):
                if d_mp(mpp, 0) <= d:
                    out.append({"e0": e0, "n": n, "delta": d, "eps_lo": 0.0, "eps_hi": 0.0})
                    continue
                lo, hi = 0.0, e0
                while hi - lo > 1e-13 * hi:
                    mid = (lo + hi) / 2
                    lo, hi = (lo, mid) if d_np(fp, mid) <= d else (mid, hi)
                for w in (1e-9, 1e-7, 1e-5, 1e-3):
                    a, b = lo * (1 - w), hi * (1 + w)
                    if d_mp(mpp, a) > d >= d_mp(mpp, b):
                        break
                else:
                    raise RuntimeError((e0, n, d))
                out.append({"e0": e0, "n": n, "delta": d, "eps_lo": a, "eps_hi": b})
                print(e0, n, d, a, b, file=sys.stderr, flush=True)
    with open("tests/data/review_krr8/edge_targets.json", "w") as f:
        json.dump(out, f, indent=0)


if __name__ == "__main__":
    main()
