"""Sweep (review rev-krr6, not run by pytest): get_epsilon on fresh accountants against fresh all-class
tables (the numpy path, an independent evaluation of every class), n = 65 .. 4000, and
get_delta(get_epsilon(d)) <= d on fresh accountants at n up to 1e6. Prints every violation.
`python tests/data/review_rev_krr6/sweep_get_epsilon.py`"""

from __future__ import annotations

import itertools
import time

import numpy as np

from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse

t0 = time.time()
bad, cells, loose = [], 0, 0
worst_gap = 0.0
for n, e0 in itertools.product((65, 128, 333, 1000, 2048, 3999), (0.05, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0)):
    tab = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    for d, xtol in itertools.product((1e-2, 1e-4, 1e-6, 1e-9, 1e-15, 1e-24), (1e-3, 1e-2)):
        acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
        er = acc.get_epsilon(d, xtol=xtol)
        cells += 1
        if not acc.get_delta(er) <= d:
            bad.append(("self", n, e0, d, xtol, er))
        lo_a, up_a = tab.get_delta_bounds(np.array([er / (1 + xtol) * (1 - 1e-12), er]))
        if not up_a[1] <= d:
            bad.append(("tables-upper", n, e0, d, xtol, er, up_a[1]))
        if er > 0 and not lo_a[0] > d:
            loose += 1
            bad.append(("looser-than-xtol", n, e0, d, xtol, er, lo_a[0]))
print("tables cells", cells, "violations", bad, "time", time.time() - t0, flush=True)
bad2 = []
for n, e0, d in itertools.product((5000, 20_001, 100_000, 1_000_000), (0.1, 1.0, 4.0), (1e-3, 1e-6, 1e-12, 1e-24)):
    er = ExactShuffleAccountant(RandomizedResponse(2, e0), n).get_epsilon(d)
    fresh = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    lo, up = fresh.get_delta_bounds(er)
    # a fresh branch and bound brackets delta(er) within rel_tol: its lower value must be <= d
    if not lo <= d:
        bad2.append((n, e0, d, er, lo, up))
print("large cells violations", bad2, "time", time.time() - t0)
