"""Which cells the new short-cuts (docs/accountant.md §9.3) fire on, and their closed-form leg lower values
against an independent zero-out accountant's engine legs (upper values at rel_tol 0.1): a closed lower value
above an engine upper value would break Lemma 9.3's premise. Writes JSON lines to stdout."""
import json
import math
import sys
import time
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.randomizers import BlanketMixedGaussian

cells = []
for s in (0.3, 0.46, 1.0, 3.0):
    for n in (2, 3, 10, 50, 500, 10000):
        for eps in (0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0):
            cells.append(("gauss", s, n, eps))
for (g, s) in ((0.1, 0.5), (0.3, 1.0)):
    for n in (2, 10, 50):
        for eps in (0.1, 1.0, 4.0):
            cells.append(("bmg", (g, s), n, eps))
which = sys.argv[1] if len(sys.argv) > 1 else "all"
for kind, s, n, eps in cells:
    rnd = GaussianRandomizer(s, 1) if kind == "gauss" else BlanketMixedGaussian(s[0], s[1], 1)
    try:
        acc = ShuffleAccountant(rnd, n, "replace")
    except Exception as exc:
        print(json.dumps(dict(kind=kind, s=s, n=n, eps=eps, err=str(exc))), flush=True)
        continue
    vb = acc._bottom
    if vb is None:
        print(json.dumps(dict(kind=kind, s=s, n=n, eps=eps, via=False)), flush=True)
        continue
    t = time.process_time()
    proved = vb._cap_closed(eps, vb.bottom.rel_tol)
    t1 = time.process_time() - t
    chains = []
    for f in vb.SPLITS:
        e1 = f * eps
        e2 = vb._second(eps, e1)
        chains.append(vb._closed_leg(0, e1, 0.01)[0] + math.exp(e1) * vb._closed_leg(1, e2, 0.01)[0])
    print(json.dumps(dict(kind=kind, s=s, n=n, eps=eps, proved=proved is not None, t_cover=t1,
                          min_closed_chain=min(chains), engine_legs=len(vb._leg_cache))), flush=True)
