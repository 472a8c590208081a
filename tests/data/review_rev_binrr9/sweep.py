"""Sweep: get_epsilon answers of a fresh accountant vs a fresh get_delta and the independent exact
blanket divergence (krr_exact.py). Usage: python sweep.py SEED COUNT > out.jsonl"""
from __future__ import annotations

import json
import random
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from krr_exact import exact  # noqa: E402

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant  # noqa: E402

seed, count = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
cells = [(k, a, e0, n, d) for k in (2, 3, 10) for a in ("replace", "zero_out") for e0 in (0.1, 0.5, 1, 2, 4, 8)
         for n in (256, 300, 1000, 10_000, 100_000, 1_000_000) for d in (1e-3, 1e-6, 1e-10, 1e-15)]
rng.shuffle(cells)
for k, adj, e0, n, d in cells[:count]:
    rr = RandomizedResponse(k, float(e0))
    t = time.process_time()
    e = float(ShuffleAccountant(rr, n, adjacency=adj).get_epsilon(d))
    t = time.process_time() - t
    fresh = float(ShuffleAccountant(rr, n, adjacency=adj).get_delta(e))
    cheap = (k == 2 or adj == "zero_out" or n <= 10_000)
    ex = exact(k, float(e0), e, n, adj) if cheap and e < e0 else None
    ex_below = exact(k, float(e0), e * (1 - 2e-3), n, adj) if cheap and 0 < e < e0 else None
    print(json.dumps(dict(k=k, adj=adj, eps0=e0, n=n, delta=d, eps=e, fresh=fresh, exact=ex, exact_below=ex_below,
                          ok=bool(fresh <= d and (ex is None or ex <= d)), cpu=t)), flush=True)
