"""Exact blanket divergence of binary RR by trinomial sums in mpmath (60 digits), at the sweep's
answers (n <= 100), and the exact root eps* (bisection on the exact value). Writes exact.json.
Usage: python exact_ref.py NEW.json OLD.json OUT.json"""
import json
import sys

import mpmath as mp

from sharpdp.shuffle import RandomizedResponse
from sharpdp.shuffle.laws import laws_for

mp.mp.dps = 60


def law_value(gamma, values, probs, n):
    (a1, a2), (p1, p2) = [mp.mpf(float(v)) for v in values], [mp.mpf(float(p)) for p in probs]
    g = mp.mpf(float(gamma))
    q1, q2, q0 = g * p1, g * p2, 1 - g * p1 - g * p2
    tot = mp.mpf(0)
    for c1 in range(n + 1):
        for c2 in range(n - c1 + 1):
            s = c1 * a1 + c2 * a2
            if s > 0:
                tot += mp.factorial(n) / (mp.factorial(c1) * mp.factorial(c2) * mp.factorial(n - c1 - c2)) \
                    * q1**c1 * q2**c2 * q0**(n - c1 - c2) * s
    return tot / (n * g)


def exact(e0, x, n, adj):
    out = mp.mpf(0)
    for g, law in laws_for(RandomizedResponse(2, e0), x, adj):
        if law.values.size == 2 and law.values.max() > 0:
            out = max(out, law_value(g, law.values, law.probs, n))
        elif law.values.max() > 0:
            raise RuntimeError("not two atoms")
    return out


def root(e0, n, adj, d, hi):
    lo = 0.0
    if exact(e0, 0.0, n, adj) <= d:
        return 0.0
    while exact(e0, hi, n, adj) > d:
        hi *= 2
    for _ in range(45):
        mid = 0.5 * (lo + hi)
        if exact(e0, mid, n, adj) > d:
            lo = mid
        else:
            hi = mid
    return hi


if __name__ == "__main__":
    new, old = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
    rows = []
    for a, b in zip(new, old):
        if a["n"] > 100 or a["e"] is None:
            continue
        e0, n, adj, d = a["e0"], a["n"], a["adj"], a["d"]
        Dn, Do = exact(e0, a["e"], n, adj), exact(e0, b["e"], n, adj)
        es = root(e0, n, adj, d, max(a["e"], 1e-9))
        rows.append(dict(adj=adj, e0=e0, n=n, d=d, e_new=a["e"], e_old=b["e"], D_new=float(Dn), D_old=float(Do),
                         eps_star=es))
        print(rows[-1], "OK" if Dn <= d and Do <= d else "VIOLATION", flush=True)
    json.dump(rows, open(sys.argv[3], "w"), indent=0)
