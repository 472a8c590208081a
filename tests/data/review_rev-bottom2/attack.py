"""Attack on docs/accountant.md §9.4 (rev-bottom2): call orders that fill ViaBottom's leg cache with legs at
the absolute target first, then brackets / get_epsilon; every reported upper value is compared with a
certified lower value of min over splits of the chain A(e1) + e^{e1} B(e2), from an independent zero-out
accountant's legs on a grid e1_k: on [e1_k, e1_{k+1}], chain >= A_lo(e1_{k+1}) + e^{e1_k} B_lo(eps - e1_k)."""
import json
import math
import sys
import time

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant


def chain_floor(sigma0, n, eps, legs, K=24):
    ref = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "zero_out")
    g = [eps * k / K for k in range(K + 1)]
    a = [ref._report(x, 1e-2, only=legs[0]).lower for x in g]
    b = [ref._report(max(eps - x, 0.0), 1e-2, only=legs[1]).lower for x in g]
    return min(a[k + 1] + math.exp(g[k]) * b[k] for k in range(K)) * (1 - 1e-12)


def run(sigma0, n, delta=1e-6):
    out = {}
    t = time.time()
    acc = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "replace", rel_tol=1e-2)
    e = acc.get_epsilon(delta)
    pts = [e, e * 0.98, e * 1.02, e * 0.5, e * 1.5]
    b1 = [acc.get_delta_bounds(x) for x in pts]
    acc2 = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "replace", rel_tol=1e-2)
    b2 = [acc2.get_delta_bounds(x) for x in pts]
    e2 = acc2.get_epsilon(delta)
    old = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "replace", rel_tol=1e-2)
    old._bottom.ABS_SHARE = 0.0
    b3 = [old.get_delta_bounds(x) for x in pts]
    legs = acc._bottom.legs
    fl = [chain_floor(sigma0, n, x, legs) for x in pts]
    out = dict(sigma0=sigma0, n=n, delta=delta, eps_first=e, eps_after=e2, pts=pts, eps_first_bounds=b1,
               bounds_first=b2, old=b3, floor=fl, secs=time.time() - t)
    for (l1, u1), (l2, u2), (l3, u3), f in zip(b1, b2, b3, fl):
        ok = min(u1, u2) >= f and max(l1, l2) <= max(u1, u2, u3)
        print(sigma0, n, f"{u1:.6e} {u2:.6e} old {l3:.6e},{u3:.6e} floor {f:.6e}", "OK" if ok else "VIOLATION",
              flush=True)
    print("eps", e, e2, "secs", out["secs"], flush=True)
    return out


if __name__ == "__main__":
    res = [run(float(s), int(m)) for s, m in (a.split(",") for a in sys.argv[1:])]
    with open(__file__.replace("attack.py", f"ref_{'_'.join(a.replace(',', 'n') for a in sys.argv[1:])}.json"), "w") as fh:
        json.dump(res, fh, indent=1)
