import sys, time, json
import sharpdp.shuffle as sh
cfgs = [("bmg", 0.95, 4.6, 1000, 1.0), ("bmg", 0.5, 1.0, 100, 0.5), ("bmg", 0.9, 0.3, 50, 2.0),
        ("bmg", 0.99, 10.0, 10**5, 0.2), ("bmg_rep", 0.9, 1.0, 100, 1.0), ("gauss", 0.5, None, 100, 1.0),
        ("gauss", 1.0, None, 1000, 0.5), ("gauss", 0.2, None, 10, 3.0), ("bmg", 0.5, 0.05, 3, 1.0)]
out = []
for kind, p1, p2, n, eps in cfgs:
    t = time.time()
    try:
        if kind == "bmg":
            acc = sh.ShuffleAccountant(sh.BlanketMixedGaussian(p1, p2, 1), n)
        elif kind == "bmg_rep":
            acc = sh.ShuffleAccountant(sh.BlanketMixedGaussian(p1, p2, 1), n, adjacency="replace")
        else:
            acc = sh.ShuffleAccountant(sh.GaussianRandomizer(p1, 1), n)
        lo, up = acc.get_delta_bounds(eps)
        out.append([kind, p1, p2, n, eps, float(lo), float(up), time.time() - t])
    except Exception as e:
        out.append([kind, p1, p2, n, eps, repr(e)[:100], None, time.time() - t])
    print(out[-1], flush=True)
json.dump(out, open(sys.argv[1], "w"))
