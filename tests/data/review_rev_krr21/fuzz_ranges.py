"""Exploration (not a reference; run by hand, results in the review report): random ranges of random
populations (n 4001-3e5, eps0 0.01-4, eps 0-0.6 eps0, targets None/1e-3/1e-6/1e-9, xtol 1e-3/1e-5, ranges
touching 0 or N included), OneClass.bracket(..., mix) against float64 scipy class values (>= 1e-12) at
j1, j2, the middle and two random classes. Run at the review: 3 seeds x 150-200 s, 58 411 class checks,
largest class / upper 0.99999997 (ranges of 2 classes, where Proposition 2 is tight), none above.
Usage: python fuzz_ranges.py SEED SECONDS
"""

import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import sharpdp.shuffle.exact_krr.branch_bound as bb  # noqa: E402
from test_review_rev_krr21 import _delta_f64  # noqa: E402

rng = random.Random(int(sys.argv[1]))
t0, cnt, worst, wc, bad = time.time(), 0, 0.0, None, []
while time.time() - t0 < float(sys.argv[2]):
    n = int(math.exp(rng.uniform(math.log(4001), math.log(3e5))))
    e0 = math.exp(rng.uniform(math.log(0.01), math.log(4)))
    one = bb.OneClass(e0)
    one.xtol = rng.choice([1e-3, 1e-5])
    N = n - 1
    for _ in range(4):
        eps = e0 * rng.choice([0.0, 0.01, 0.1, 0.3, 0.6])
        mix = int(math.exp(rng.uniform(0, math.log(N))))
        j1 = rng.choice([0, N - mix, rng.randint(0, N - mix)])
        target = rng.choice([None, 1e-6, 1e-3, 1e-9])
        up = one.bracket(eps, n, j1, target, mix=mix)[1]
        for j in {j1, j1 + mix, j1 + mix // 2, rng.randint(j1, j1 + mix), rng.randint(j1, j1 + mix)}:
            d = _delta_f64(n, e0, j, eps)
            if d < 1e-12:
                continue
            cnt += 1
            if d / up > worst:
                worst, wc = d / up, (n, e0, eps, j1, mix, j, target)
            if d > up * (1 + 1e-10):
                bad.append((n, e0, eps, j1, mix, j, d, up, target))
print("checked", cnt, "worst class/up", worst, wc, "bad", bad[:5])
