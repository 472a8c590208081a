"""Adds to reference.json the full-accuracy composition of each case (review rev-rounds): the default
adaptive dominating pair (ComposedAccountant at its defaults), the figure docs/composition.md §4.2 compares
the search pair with ("at most ~1.5 % lower").  Run after make_reference.py (~1 min)."""
import json
import pathlib

from sharpdp.shuffle import ComposedAccountant, ShuffleAccountant
from sharpdp.shuffle.randomizers import BlanketMixedGaussian

p = pathlib.Path(__file__).parent / "reference.json"
cases = json.loads(p.read_text())
for c in cases:
    acc = ShuffleAccountant(BlanketMixedGaussian(c["gamma"], c["sigma0"], c["dim"]), c["n"], adjacency=c["adjacency"])
    lo, up = ComposedAccountant([(acc, c["k"])], progress=False).get_delta_bounds(c["eps"][0])
    c["full_composition"] = [float(lo), float(up)]
    print(c["n"], c["adjacency"], c["k"], c["full_composition"], flush=True)
p.write_text(json.dumps(cases, indent=1))
