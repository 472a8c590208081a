"""The engine's constant factors (docs/accountant_tail.md §60): the cells just over the time goal.

Each cell runs in a fresh interpreter (imports excluded, as in bench_regimes.py); prints per cell the
CPU seconds of ``get_delta_bounds(eps)`` (best of ``--reps``) and the bracket's ``float.hex``, or with
``--instr`` the callgrind instruction count (bench/_instr.py, 1e9 instructions).

    python bench/bench_mid41_cells.py [--reps 3] [--instr] [--only 0,3] [--core path/to/old/_core.so]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CELLS = (
    ("gauss", 1.0, None, 10**8, 0.1),
    ("gauss", 1.0, None, 10**8, 2.0),
    ("gauss", 1.0, None, 10**8, 4.0),
    ("gauss", 2.0, None, 10**6, 0.001),
    ("bmg", 1.15, 0.394, 10**5, 0.01),
    ("bmg", 0.833, 0.198, 10**6, 0.01),
    ("gauss", 1.0, None, 10**6, 0.01),
    ("gauss", 0.5, None, 10**8, 0.001),
    ("gauss", 0.5, None, 10**8, 0.01),
    ("gauss", 0.5, None, 10**8, 0.1),
    ("gauss", 0.5, None, 10**8, 0.5),
    ("gauss", 0.5, None, 10**9, 0.1),
)

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {here!r})
if sys.argv[3]:  # another build of the compiled core (e.g. main's), loaded in place of the installed one
    import importlib.util
    spec = importlib.util.spec_from_file_location("sharpdp._core", sys.argv[3])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules["sharpdp._core"] = mod
from bench_regimes import _import_engine
_import_engine()
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
kind, s0, g, n, eps = json.loads(sys.argv[1])
r = GaussianRandomizer(s0, 1) if kind == "gauss" else BlanketMixedGaussian(g, s0, 1)
acc = ShuffleAccountant(r, n, "zero_out")
instr = sys.argv[2] == "1"
if instr:
    import _instr
    reg = _instr.Region(); reg.start()
t0 = time.process_time()
lo, up = acc.get_delta_bounds(eps)
t = time.process_time() - t0
if instr:
    reg.dump("call")
print(json.dumps([t, float(lo).hex(), float(up).hex()]))
"""


def run(cell, instr: bool, core: str = "") -> tuple[float, str, str, float | None]:
    here = os.path.dirname(os.path.abspath(__file__))
    code = _CHILD.format(here=here)
    argv = [sys.executable, "-c", code, json.dumps(cell), "1" if instr else "0", core]
    if instr:
        sys.path.insert(0, here)
        import _instr

        counts, out = _instr.count(argv)
        t, lo, up = json.loads(out.strip().splitlines()[-1])
        return t, lo, up, counts.get("call", 0) / 1e9
    p = subprocess.run(argv, capture_output=True, text=True, check=True)
    t, lo, up = json.loads(p.stdout.strip().splitlines()[-1])
    return t, lo, up, None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--instr", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--core", default="", help="path of another build of sharpdp._core (side by side: old vs new)")
    a = ap.parse_args()
    idx = [int(i) for i in a.only.split(",")] if a.only else range(len(CELLS))
    for i in idx:
        cell = CELLS[i]
        if a.instr:
            t, lo, up, gi = run(cell, True, a.core)
            print(f"{i} {cell} {gi:.3f} G  {lo} {up}", flush=True)
            continue
        ts = []
        for _ in range(a.reps):
            t, lo, up, _g = run(cell, False, a.core)
            ts.append(t)
        print(f"{i} {cell} {min(ts):.3f} s (of {', '.join(f'{x:.3f}' for x in ts)})  {lo} {up}", flush=True)


if __name__ == "__main__":
    main()
