"""Exploration: upper-first vs bracket on the heavy round at many eps (fresh accountants)."""
import time, numpy as np, sys
from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant
g, s, n = 0.04089409561900239, 0.5960134902126553, 10**5
eps = np.round(np.concatenate([[0.0, 1e-9, 0.1, 0.25], np.linspace(0.4, 0.8, 17), [1.0, 1.5, 2.5, 4.0, 6.0, 8.0]]), 6)
t = time.time()
a = ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n)
b = ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n)
for e in eps:
    lo, up = a.get_delta_bounds(e)
    lo1, up1 = b.get_delta_bounds(e, lower=False)
    ra = a.report(e).terms; rb = b._report(e, b.rel_tol, None, True).terms
    print(f"{e:.6g} lo={lo:.6e} up={up:.6e} up1={up1:.6e} lo1={lo1:.3g} rel={(up1-up)/up:.3e} gap={(up-lo)/lo if lo>0 else np.inf:.3e} "
          f"bodyA={ra.get('body_upper')} bodyB={rb.get('body_upper')} blo={ra.get('body_lower')}", flush=True)
print("time", time.time() - t)
