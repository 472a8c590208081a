"""CPU of one get_delta_bounds in a fresh process (after a warm-up zero-out call at another eps): branch or main.
usage: time_fresh.py new|old sigma0 n eps"""
import importlib.util
import pathlib
import sys
import time
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

which, s, n, eps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
ShuffleAccountant(GaussianRandomizer(s, 1), n).get_delta_bounds(eps * 1.37 + 0.3)  # warm-up (jit, imports)
acc = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace")
if which == "old":
    spec = importlib.util.spec_from_file_location("via_bottom_main", pathlib.Path(__file__).with_name("via_bottom_main.py"))
    vbm = importlib.util.module_from_spec(spec)
    sys.modules["via_bottom_main"] = vbm
    spec.loader.exec_module(vbm)
    acc._bottom = vbm.ViaBottom(acc._bottom.bottom, acc._bottom.legs)
t = time.process_time()
lo, up = acc.get_delta_bounds(eps)
print(which, s, n, eps, float(lo), float(up), round(time.process_time() - t, 3), flush=True)
