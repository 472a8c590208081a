"""Offline: decided bins next to exact boundaries (mpmath 200 bits) for 120 values of b in
[-6.2, 6.2] per setting and count, words at 0..16, +-2^e, +-3*2^e units of 2^-64 from the boundary.
Writes dense_boundaries.json (words, decided, wrong). Run from the repository root:
    python tests/data/review_rev_phi/dense_boundaries.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mpmath
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from sharpdp._core_loader import core  # noqa: E402
from sharpdp.histogram import ShiftedLogGaussian  # noqa: E402

from tests.test_histogram_grid_release import ref_bin, ref_cdf  # noqa: E402

SETTINGS = [
    (0.2, None, 1.0, 10),
    (0.2, None, 1e12, 10),
    (0.2, None, 1.0, 40),
    (0.2, None, 1e9, 7),
    (0.9, 0.8, 1e6, 10),
    (0.5, None, 3.0, 34),
]
COUNTS = [0.0, 1.0, 1e6, 2.0**52 + 1, 2.0**53 - 1]
ZS = np.linspace(-6.2, 6.2, 120)
D = sorted(
    {
        sg * d
        for d in list(range(17)) + [2**e for e in range(5, 57)] + [3 * 2**e for e in range(5, 55)]
        for sg in (-1, 1)
    }
)


def main() -> dict:
    words = decided_n = 0
    wrong = []
    with mpmath.workprec(200):
        for r, r0, c, k in SETTINGS:
            m = ShiftedLogGaussian(r, r0, c)
            for n in COUNTS:
                ns, ws = [], []
                for z in ZS:
                    j = max(1, ref_bin(mpmath.ncdf(mpmath.mpf(float(z))), n, m.c, m.sigma, k))
                    w = int(mpmath.floor(mpmath.ldexp(ref_cdf(j, n, m.c, m.sigma, k), 64)))
                    ws += [w + d for d in D if 0 <= w + d < 2**64]
                ns = [n] * len(ws)
                bins, dec = core.histogram.invert(np.array(ns), np.array(ws, dtype=np.uint64), m.c, m.sigma, k)
                cache: dict[int, mpmath.mpf] = {}
                for w, b, dd in zip(ws, bins.tolist(), dec.tolist()):
                    words += 1
                    if not dd:
                        continue
                    decided_n += 1
                    for bb in (b, b + 1):
                        if bb not in cache:
                            cache[bb] = ref_cdf(bb, n, m.c, m.sigma, k)
                    if not (cache[b] <= mpmath.ldexp(w, -64) and cache[b + 1] >= mpmath.ldexp(w + 1, -64)):
                        wrong.append([r, c, k, n, w, b])
    return {"words": words, "decided": decided_n, "wrong": wrong}


if __name__ == "__main__":
    out = main()
    (Path(__file__).resolve().parent / "dense_boundaries.json").write_text(json.dumps(out, indent=1) + "\n")
    print(out["words"], out["decided"], len(out["wrong"]))
