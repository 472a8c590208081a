"""Session 48 (blk48, docs/composition.md §2.32): one privacy profile or pair of a light round in this fresh
process, its CPU time (``time.process_time``) and, with ``--kernels``, the block law's kernels' totals; ``--hex``
writes the floats (float.hex: the profile, or the pair's step, sample eps and deltas) for a comparison between two
venvs (e.g. main's and a branch's: ``cmp`` of the two files).

    python bench/bench_blk48_block_law.py krr profile --n 1e6 --top 0.0611 --kernels
    python bench/bench_blk48_block_law.py privunit pair --n 1e6 --hex /tmp/pair.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROUNDS = {"krr": ({"kind": "krr", "k": 10, "eps0": 4.0}, 0.0611),
          "privunit": ({"kind": "privunit", "params": [0.75, 0.2, 10]}, 0.0186),
          "krr3": ({"kind": "krr", "k": 3, "eps0": 2.0}, 0.3),
          "privunit5": ({"kind": "privunit", "params": [0.5, 0.1, 5]}, 0.3)}


def _timed(totals: dict, label: str, f):
    def g(*a, **k):
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            s = totals.setdefault(label, [0.0, 0])
            s[0] += time.process_time() - t
            s[1] += 1
    return g


def _instrument(totals: dict) -> None:
    """Wrap the block law's construction, its methods and the native kernels it calls (inclusive CPU totals)."""
    import sharpdp.shuffle.accountant.blocks as B

    core = B._kernels()

    class Kernels:
        def __getattr__(self, name):
            return _timed(totals, "core." + name, getattr(core, name))

    kernels = Kernels()
    B._kernels = lambda: kernels
    B._block_law = _timed(totals, "blocks._block_law", B._block_law)
    for name in ("__init__", "cells", "tail_upper", "tail_lower", "prob_below", "prob_above"):
        setattr(B._BlockLaw, name, _timed(totals, "_BlockLaw." + name, getattr(B._BlockLaw, name)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("round", choices=sorted(ROUNDS))
    ap.add_argument("call", choices=("profile", "pair"))
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--top", type=float, default=None, help="the profile's last eps (default: the round's)")
    ap.add_argument("--kernels", action="store_true")
    ap.add_argument("--hex", default=None, help="write the floats here (JSON list of float.hex)")
    a = ap.parse_args(argv)
    import bench_regimes as R
    from sharpdp.interop.dp_accounting import export_interval
    from sharpdp.shuffle import ShuffleAccountant, clear_caches, dominating_pair

    spec, top = ROUNDS[a.round]
    totals: dict = {}
    if a.kernels:
        _instrument(totals)
    acc = ShuffleAccountant(R._randomizer(spec), int(a.n), "replace")
    clear_caches()
    t = time.process_time()
    if a.call == "profile":
        out = [float(x).hex() for x in np.asarray(acc.privacy_profile(np.linspace(0.0, a.top or top, 300)), float)]
    else:
        dx = export_interval(acc)
        pair = dominating_pair(acc, dx, progress=False)
        out = [float(dx).hex()] + [float(x).hex() for x in (*pair.sample_epsilons, *pair.sample_deltas)]
    cpu = time.process_time() - t
    print(f"{a.round} n={a.n:.0e} {a.call}: {cpu:.3f} s CPU ({len(out)} floats)")
    for k, (s, c) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
        print(f"  {k:28s} {s:.3f} s  {c} calls")
    if a.hex:
        Path(a.hex).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
