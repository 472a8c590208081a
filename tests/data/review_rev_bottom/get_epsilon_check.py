"""get_epsilon(delta) on the branch and on main (fresh accountants), and a fresh accountant's certified
get_delta at each answer (branch and main code): <= delta is the promise. JSON lines."""
import json
import sys
import time

from _old import accountant as acc


for c in sys.argv[1:]:
    s, n, delta = float(c.split(",")[0]), int(c.split(",")[1]), float(c.split(",")[2])
    out = dict(s=s, n=n, delta=delta)
    for old in (False, True):
        t = time.process_time()
        e = acc(s, n, old).get_epsilon(delta)
        out["old" if old else "new"] = e
        out["t_old" if old else "t_new"] = time.process_time() - t
    for old in (False, True):
        out["delta_at_new_" + ("main" if old else "branch")] = float(acc(s, n, old).get_delta(out["new"]))
    print(json.dumps(out), flush=True)
