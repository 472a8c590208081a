"""The family-e map of docs/accountant.md §9.21 (session 43, rep43): instructions (callgrind, load-proof) and brackets of
one ``get_delta_bounds(eps)`` per cell of ``ShuffleAccountant(GaussianRandomizer(σ0, 1), n, "replace")`` (the 96 cells of
``bench_regimes.py --full --families e``), all cells in one process with the caches cleared per cell, the switch
``limits.VIA_BOTTOM_LEG_SERVE`` off (main's floats) or on::

    python bench/bench_rep43_serve.py --rule off --json off.json     # one callgrind run (~50x slower than native)
    python bench/bench_rep43_serve.py --rule on --json on.json
    python bench/bench_rep43_serve.py --compare off.json on.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

CELLS = [(s, n, e) for s in (0.46, 1.0, 2.0, 4.6) for n in (10, 1000, 100000)
         for e in (0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0)]


def child(rule: str, sel: list[int]) -> None:
    import _instr

    from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
    from sharpdp.shuffle.accountant import limits

    limits.VIA_BOTTOM_LEG_SERVE = rule == "on"
    reg = _instr.Region()
    for i in sel:
        s, n, e = CELLS[i]
        clear_caches()
        acc = ShuffleAccountant(GaussianRandomizer(s, 1), n, adjacency="replace")
        reg.start()
        r = acc.get_delta_bounds(e)
        reg.dump(f"c{i}")
        print(json.dumps({"i": i, "lower": float(r[0]).hex(), "upper": float(r[1]).hex()}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rule", default="on")
    ap.add_argument("--cells", default="", help="indices into CELLS (default all)")
    ap.add_argument("--json", default="")
    ap.add_argument("--compare", nargs=2, default=None)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sel = [int(x) for x in a.cells.split(",")] if a.cells else list(range(len(CELLS)))
    if a.child:
        child(a.rule, sel)
        return
    if a.compare:
        off, on = (json.load(open(p)) for p in a.compare)
        tot = [0, 0]
        for k in sorted(off, key=int):
            if k not in on:
                continue
            x, y = off[k], on[k]
            tot[0] += x["ir"]
            tot[1] += y["ir"]
            moved = (x["lower"], x["upper"]) != (y["lower"], y["upper"])
            print(f"{CELLS[int(k)]}: {x['ir'] / 1e9:.3f} -> {y['ir'] / 1e9:.3f} G" + ("  moved: upper "
                  f"{float.fromhex(y['upper']) / float.fromhex(x['upper']) - 1:+.2e}" if moved else ""))
        print(f"total {tot[0] / 1e9:.2f} -> {tot[1] / 1e9:.2f} G")
        return
    import _instr

    counts, out = _instr.count([sys.executable, os.path.abspath(__file__), "--child", "--rule", a.rule,
                                "--cells", ",".join(map(str, sel))], timeout=7200.0)
    res = {}
    for line in out.splitlines():
        d = json.loads(line)
        res[str(d["i"])] = dict(d, ir=counts.get(f"c{d['i']}", 0))
    if a.json:
        json.dump(res, open(a.json, "w"), indent=0)
    print(f"rule {a.rule}: {sum(v['ir'] for v in res.values()) / 1e9:.2f} G over {len(res)} cells")


if __name__ == "__main__":
    main()
