"""n = 2 references (tests/_bmg_reference.py: output densities in mpmath, 60 digits; no sharpdp code) for the
heavy BMG of bench/bench_composition.py. Writes quad_reference.json next to this file."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
from _bmg_reference import reference  # noqa: E402

G, S = 0.04089409561900239, 0.5960134902126553
out = [dict(gamma=G, sigma0=S, n=2, eps=e, adjacency=adj, value=float(reference(G, S, e, adj, 2)))
       for adj in ("zero_out", "replace") for e in (0.0, 1.0, 3.0)]
with open(os.path.join(HERE, "quad_reference.json"), "w") as f:
    json.dump(out, f, indent=1)
