"""get_epsilon(delta) on the branch and on main (fresh accountants), and a fresh accountant's certified
get_delta at each answer (branch and main code): <= delta is the promise. JSON lines."""
import importlib.util
import json
import pathlib
import sys
import time
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

spec = importlib.util.spec_from_file_location("via_bottom_main", pathlib.Path(__file__).with_name("via_bottom_main.py"))
vbm = importlib.util.module_from_spec(spec)
sys.modules["via_bottom_main"] = vbm
spec.loader.exec_module(vbm)


def acc(s, n, old):
    a = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace")
    if old:
        a._bottom = vbm.ViaBottom(a._bottom.bottom, a._bottom.legs)
    return a


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
