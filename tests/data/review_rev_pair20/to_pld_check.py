"""to_pld of the heavy round (pair sampled upper first) against fresh brackets (get_delta, lower=True) on an even
grid where delta >= 1e-12: ratio PLD delta / get_delta (documented: >= 1 and within about 1 %, docs/composition.md
§5.1). Exploration run for the review (too slow for the test file: ~15 s of pair build)."""
import time

import numpy as np

from sharpdp.interop.dp_accounting import to_pld
from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches

G, S, N = 0.04089409561900239, 0.5960134902126553, 10**5
clear_caches()
t = time.time()
pld = to_pld(ShuffleAccountant(BlanketMixedGaussian(G, S, 1), N))
print("build", time.time() - t, flush=True)
clear_caches()
eps = np.round(np.linspace(0.0, 4.0, 81), 6)
_, up = ShuffleAccountant(BlanketMixedGaussian(G, S, 1), N).get_delta_bounds(eps)
d = np.array([pld.get_delta_for_epsilon(float(e)) for e in eps])
m = up >= 1e-12
r = d[m] / up[m]
print("ratio min", r.min(), "at", eps[m][r.argmin()], "max", r.max(), "at", eps[m][r.argmax()], "n", m.sum())
