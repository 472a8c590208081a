"""Targets around delta(0) (get_delta(0) of a fresh accountant) and call-order dependence.
Usage: python sweep_d0.py OUT.json [old]"""
import json
import sys

from common import GRID  # (first: the "old" mode acts before sharpdp is imported)

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant

rows = []
for adj, e0, n in GRID:
    rr = RandomizedResponse(2, e0)
    d0 = float(ShuffleAccountant(rr, n, adjacency=adj).get_delta(0.0))
    lo0 = float(ShuffleAccountant(rr, n, adjacency=adj).get_delta_bounds(0.0)[0])
    for f in (1 - 1e-3, 1 - 1e-9, 1.0, 1 + 1e-9, 1 + 1e-3, 1.5):
        d = d0 * f
        if not 0 < d < 1:
            continue
        e = ShuffleAccountant(rr, n, adjacency=adj).get_epsilon(d)
        gd = float(ShuffleAccountant(rr, n, adjacency=adj).get_delta(e))
        # call order: a used accountant (get_delta at a few points, another search first)
        acc = ShuffleAccountant(rr, n, adjacency=adj)
        for x in (0.0, e * 0.5, e, e * 2, e0):
            acc.get_delta(x)
        acc.get_epsilon(d * 0.3)
        e2 = acc.get_epsilon(d)
        rows.append(dict(adj=adj, e0=e0, n=n, f=f, d=d, d0=d0, lo0=lo0, e=e, gd=gd, e_used=e2))
        flag = "VIOL" if gd > d else ("ORDER" if e2 != e else "")
        print(rows[-1], flag, flush=True)
json.dump(rows, open(sys.argv[1], "w"), indent=0)
