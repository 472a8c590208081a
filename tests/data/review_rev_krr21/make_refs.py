"""Exact references of tests/test_review_rev_krr21.py at small n (docs/sharp_krr.md §2.4, §4.16):

- ``classes``: delta_j(eps) of every class j at n = 40 and 61 (40-digit mpmath enumeration,
  tests/_krr_reference.py ``class_deltas_mp``), stored as strings;
- ``roots``: at n = 97, the eps where max_j delta_j(eps) crosses the target (bisection on float64 scipy
  class values, then the two ends verified at 40 digits: max delta at ``lo`` > target >= max delta at ``hi``,
  hi / lo - 1 <= 1e-9).

Usage: python make_refs.py  (a few minutes)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mpmath as mp

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from _krr_reference import class_delta_scipy, class_deltas_mp  # noqa: E402

mp.mp.dps = 40
CLASSES = [(n, e0, f) for n in (40, 61) for e0 in (0.01, 0.5, 1.0, 2.0, 4.0, 8.0)
           for f in (0.0, 0.001, 0.1, 0.4, 0.8, 0.999)]
ROOTS = [(97, e0, t) for e0 in (0.5, 1.0, 2.0, 4.0) for t in (1e-3, 1e-6)]


def max_mp(e0: float, eps: float, n: int) -> mp.mpf:
    return max(class_deltas_mp(e0, eps, n))


def main() -> None:
    out: dict = {"classes": {}, "roots": {}}
    for n, e0, f in CLASSES:
        eps = f * e0
        out["classes"][f"{n},{e0},{eps!r}"] = [mp.nstr(x, 30) for x in class_deltas_mp(e0, eps, n)]
        print(n, e0, eps, flush=True)
    for n, e0, t in ROOTS:
        def fmax(eps: float) -> float:
            return max(class_delta_scipy(n, e0, j, eps) for j in range(n))
        lo, hi = 0.0, e0
        if fmax(0.0) <= t:
            out["roots"][f"{n},{e0},{t!r}"] = [0.0, 0.0]
            continue
        while hi - lo > 1e-10 * hi:
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if fmax(mid) > t else (lo, mid)
        lo, hi = lo * (1 - 1e-9), hi * (1 + 1e-9)  # float reference error margin, then checked at 40 digits
        assert max_mp(e0, lo, n) > t >= max_mp(e0, hi, n), (n, e0, t)
        out["roots"][f"{n},{e0},{t!r}"] = [lo, hi]
        print(n, e0, t, lo, hi, flush=True)
    Path(__file__).with_name("refs_small_n.json").write_text(json.dumps(out, indent=0))


if __name__ == "__main__":
    main()
