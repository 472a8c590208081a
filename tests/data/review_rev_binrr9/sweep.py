"""Sweep: get_epsilon answers of a fresh accountant vs a fresh get_delta and the independent exact
blanket divergence (krr_exact.py). Usage: python sweep.py SEED COUNT [--xtol] > out.jsonl
(--xtol: a random xtol in {1e-6, 1e-4, 1e-2, 1e-1} per cell, the exact value only where n <= 1000 for k-RR
replace with k > 2; the record sweep_xtol_seed3_binrr9.jsonl)."""
from __future__ import annotations

import json
import random
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from krr_exact import exact  # noqa: E402

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant  # noqa: E402

seed, count = int(sys.argv[1]), int(sys.argv[2])
with_xtol = "--xtol" in sys.argv[3:]
rng = random.Random(seed)
cells = [(k, a, e0, n, d) for k in (2, 3, 10) for a in ("replace", "zero_out") for e0 in (0.1, 0.5, 1, 2, 4, 8)
         for n in (256, 300, 1000, 10_000, 100_000, 1_000_000) for d in (1e-3, 1e-6, 1e-10, 1e-15)]
rng.shuffle(cells)
for k, adj, e0, n, d in cells[:count]:
    rr = RandomizedResponse(k, float(e0))
    t = time.process_time()
    xt = rng.choice([1e-6, 1e-4, 1e-2, 1e-1]) if with_xtol else None
    acc = ShuffleAccountant(rr, n, adjacency=adj)
    e = float(acc.get_epsilon(d, xtol=xt) if xt is not None else acc.get_epsilon(d))
    t = time.process_time() - t
    fresh = float(ShuffleAccountant(rr, n, adjacency=adj).get_delta(e))
    cheap = (k == 2 or adj == "zero_out" or n <= (1000 if with_xtol else 10_000))
    ex = exact(k, float(e0), e, n, adj) if cheap and e < e0 else None
    below = e / (1 + xt) * (1 - 2e-3) if xt is not None else e * (1 - 2e-3)
    ex_below = exact(k, float(e0), below, n, adj) if cheap and 0 < e < e0 else None
    rec = dict(k=k, adj=adj, eps0=e0, n=n, delta=d, **({"xtol": xt} if xt is not None else {}), eps=e, fresh=fresh,
               exact=ex, exact_below=ex_below, ok=bool(fresh <= d and (ex is None or ex <= d)), cpu=t)
    print(json.dumps(rec), flush=True)
