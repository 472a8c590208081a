"""CPU of one get_delta_bounds in a fresh process (after a warm-up zero-out call at another eps): with the short-cuts
of docs/accountant.md §9.3-§9.4 (new) or the plain split search (old).
usage: time_fresh.py new|old sigma0 n eps"""
import sys
import time

from _old import accountant

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

which, s, n, eps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
ShuffleAccountant(GaussianRandomizer(s, 1), n).get_delta_bounds(eps * 1.37 + 0.3)  # warm-up (jit, imports)
acc = accountant(s, n, which == "old")
t = time.process_time()
lo, up = acc.get_delta_bounds(eps)
print(which, s, n, eps, float(lo), float(up), round(time.process_time() - t, 3), flush=True)
