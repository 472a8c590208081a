"""Session 35, ct35: the closed form's later stages against the FFT treatment at small n (docs/accountant_tail.md §47).

Usage: python bench/bench_ct35_cheap_fft.py [leg|replace|zero] [off]  (CPU s by time.process_time, fresh process each)."""
import sys
import time

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.randomizers import GaussianRandomizer

what = sys.argv[1] if len(sys.argv) > 1 else "leg"
if len(sys.argv) > 2 and sys.argv[2] == "off":
    limits.CLOSED_CHEAP_FFT = False
elif len(sys.argv) > 2 and sys.argv[2] == "all":
    limits.CLOSED_CHEAP_N = 10**12
if what == "leg":
    a = ShuffleAccountant(GaussianRandomizer(2.0, 1), 1000, adjacency="replace")
    t = time.process_time()
    r = a._bottom.leg(0, 0.8, 0.1)
    print("leg", time.process_time() - t, r)
else:
    s, n, eps = float(sys.argv[3]), int(float(sys.argv[4])), float(sys.argv[5])
    adj = "replace" if what == "replace" else "zero_out"
    a = ShuffleAccountant(GaussianRandomizer(s, 1), n, adjacency=adj)
    t = time.process_time()
    lo, up = a.get_delta_bounds(eps)
    print(what, s, n, eps, round(time.process_time() - t, 4), repr(lo), repr(up))
