"""Sweep binary RR get_epsilon over extreme (eps0, n, delta, adjacency) and record answers plus a fresh
accountant's get_delta(answer). Usage: python sweep.py OUT.json [old]  ("old": run the tree at
PYTHONPATH, e.g. main at 2bba757 with the same _core, bypassing the editable install)."""
import json
import sys
import time

from common import GRID  # (first: the "old" mode acts before sharpdp is imported)

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant

rows = []
for adj, e0, n in GRID:
    for d in (0.5, 0.1, 1e-6, 1e-12, 1e-20):
        t = time.process_time()
        rr = RandomizedResponse(2, e0)
        try:
            e = ShuffleAccountant(rr, n, adjacency=adj).get_epsilon(d)
            gd = float(ShuffleAccountant(rr, n, adjacency=adj).get_delta(e))
            d0 = float(ShuffleAccountant(rr, n, adjacency=adj).get_delta(0.0))
            err = None
        except Exception as ex:  # noqa: BLE001
            e = gd = d0 = None
            err = repr(ex)
        rows.append(dict(adj=adj, e0=e0, n=n, d=d, e=e, gd=gd, d0=d0, err=err, t=time.process_time() - t))
        print(rows[-1], flush=True)
json.dump(rows, open(sys.argv[1], "w"), indent=0)
