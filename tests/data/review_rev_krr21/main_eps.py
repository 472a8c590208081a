"""get_epsilon(1e-6) of ExactShuffleAccountant(RandomizedResponse(2, eps0), n) on main before the krr21
branch (258362a), run in a venv built from a worktree at that commit:
    python main_eps.py 1e-3 > a.json; python main_eps.py 1e-5 > b.json
(xtol 1e-5 only up to n = 1e7); merged into main_eps.json ({"n,eps0": eps}).
"""

import json
import sys
import time

from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse

xtol = float(sys.argv[1])
out = {}
for n in (1000, 4001, 10**4, 10**5, 10**6, 10**7, 10**8, 10**9):
    for e0 in (0.5, 1.0, 2.0, 4.0, 8.0):
        if xtol < 1e-3 and n > 10**7:
            continue
        t = time.process_time()
        e = ExactShuffleAccountant(RandomizedResponse(2, e0), n).get_epsilon(1e-6, xtol=xtol)
        out[f"{n},{e0}"] = (e, time.process_time() - t)
        print(n, e0, e, out[f"{n},{e0}"][1], file=sys.stderr, flush=True)
print(json.dumps(out))
