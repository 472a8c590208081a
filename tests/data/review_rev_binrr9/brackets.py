import sys
import time
import itertools
sys.path.insert(0, '/work/wt/rev-binrr9/tests/data/review_rev_binrr9')
from krr_exact import krr_laws, law_value
from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant.plain import certify_law
from sharpdp.shuffle.laws import laws_for
import numpy as np
bad = 0
worst = []
for k, adj, e0, n, rt in itertools.product((2,3,10), ("replace","zero_out"), (0.5, 1.0, 4.0), (256, 300, 1000, 10000), (1e-1, 1e-2, 1e-3)):
    if k == 10 and adj == "replace" and n > 1000:
        continue
    rr = RandomizedResponse(k, e0)
    # x at which the divergence is ~1e-6 (from the accountant: only a probe point)
    x = float(ShuffleAccountant(rr, n, adjacency=adj).get_epsilon(1e-6, xtol=1e-2))
    for xx in (0.5*x, x):
        g, mine = krr_laws(k, e0, xx, adj)
        lib = laws_for(rr, xx, adj)
        for (gl, law), (v, p) in zip(lib, mine):
            assert abs(float(gl) - g) < 1e-12
            ref = law_value(g, v, p, n)
            if ref < 1e-300:
                continue
            t = time.process_time()
            r = certify_law(law, float(gl), n, rt, 1)
            t = time.process_time() - t
            ok = r.lower <= ref <= r.upper
            w = (r.upper - r.lower) / r.lower if r.lower > 0 else np.inf
            if not ok or w > rt:
                bad += 1
                print("BAD" if not ok else "WIDE", k, adj, e0, n, rt, xx, ref, r.lower, r.upper, w, flush=True)
            worst.append((min(ref - r.lower, r.upper - ref) / ref, k, adj, e0, n, rt, xx))
worst.sort()
print("closest margins", worst[:5])
print("bad", bad)
