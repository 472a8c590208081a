"""Family e's cells (replace-one through bot, GaussianRandomizer) with session 49's rep49 switches off and on
(docs/accountant.md §9.26): per cell, in a fork after the imports, the zero-out call's CPU s, the replace call's CPU s,
its engine legs and its bracket (float.hex).

    python bench/bench_rep49_cells.py --set REP49_LOOSE_B=True --json OUT.jsonl [--cells 1:1e3:8,2:1e5:0.1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_regimes import EPS_FULL, NS_VIA_BOT, VIA_BOT_SIGMAS  # noqa: E402

from sharpdp.shuffle import ShuffleAccountant  # noqa: E402
from sharpdp.shuffle.accountant import limits  # noqa: E402
from sharpdp.shuffle.randomizers import GaussianRandomizer  # noqa: E402


def one(s0: float, n: int, eps: float) -> dict:
    """The cell's zero-out and replace calls, each on a fresh accountant (CPU s), the replace call's engine legs."""
    z = ShuffleAccountant(GaussianRandomizer(s0, 1), n)
    t = time.process_time()
    z.get_delta_bounds(eps)
    tz = time.process_time() - t
    acc = ShuffleAccountant(GaussianRandomizer(s0, 1), n, adjacency="replace")
    legs = [0]
    bottom = acc._bottom.bottom
    rep = bottom._report

    def counted(*a, **k):
        legs[0] += 1
        return rep(*a, **k)

    bottom._report = counted
    t = time.process_time()
    lo, up = acc.get_delta_bounds(eps)
    tr = time.process_time() - t
    return dict(s0=s0, n=n, eps=eps, zero_out=tz, replace=tr, legs=legs[0], lower=float(lo).hex(), upper=float(up).hex())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", action="append", default=[], help="NAME=VALUE of a limits switch (repeatable)")
    ap.add_argument("--json", required=True, help="write one JSON line per cell here")
    ap.add_argument("--cells", default="", help="s0:n:eps,... (default: the 96 cells of family e)")
    a = ap.parse_args()
    for kv in a.set:
        k, v = kv.split("=")
        if not hasattr(limits, k):
            raise ValueError(f"--set: no switch {k!r} in limits")
        setattr(limits, k, eval(v))  # noqa: S307 (a benchmark's own command line)
    cells = [tuple(float(x) for x in c.split(":")) for c in a.cells.split(",")] if a.cells else \
        [(s, n, e) for s in VIA_BOT_SIGMAS for n in NS_VIA_BOT for e in EPS_FULL]
    with open(a.json, "w") as out:
        for s0, n, eps in cells:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                os.write(w, json.dumps(one(s0, int(n), eps)).encode())
                os._exit(0)
            os.close(w)
            with os.fdopen(r) as fh:
                line = fh.read()
            os.waitpid(pid, 0)
            out.write(line + "\n")
            out.flush()
            print(line, flush=True)


if __name__ == "__main__":
    main()
