"""Sweep binary RR get_epsilon over extreme (eps0, n, delta, adjacency) and record answers plus a fresh
accountant's get_delta(answer). Usage: python sweep.py OUT.json [old]  ("old": run the tree at
PYTHONPATH, e.g. main at 2bba757 with the same _core, bypassing the editable install)."""
import json
import sys
import time

if len(sys.argv) > 2 and sys.argv[2] == "old":
    sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower() and "skbc" not in repr(f).lower()]

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant  # noqa: E402

rows = []
for adj in ("replace", "zero_out"):
    for e0 in (1e-3, 0.1, 1.0, 4.0, 20.0):
        for n in (1, 2, 3, 10, 100, 1000, 10**7):
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
