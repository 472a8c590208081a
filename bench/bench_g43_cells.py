"""Session 43 (g43): the lognormal cells' fewer-node rules (docs/accountant_tail.md §64) on the cells of
bench/README.md's "Cells that miss the goals, by cause" items 2-3.

Each cell runs in a fresh interpreter (imports excluded, as in bench_regimes.py) with the rule bits given by
``--rule`` (0: main's 8-point rule; 1: CELLS_TWO_NODE; 2: CELLS_FEW_NODES; 3: both); prints per cell the CPU seconds
of ``get_delta_bounds(eps)`` (median of ``--reps``) and the bracket's ``float.hex``, or with ``--instr`` the callgrind
instruction count (bench/_instr.py, 1e9 instructions).

    python bench/bench_g43_cells.py [--reps 3] [--instr] [--only 0,3] [--rule 0,3]

Session 44 (g44, docs/accountant_tail.md §67): ``--on A,B`` sets those switches of ``limits`` True in every child
(e.g. the lead's session-44 switch-on: CHERNOFF_LOG_STEP,CELLS_FEW_NODES,BODY43_SPECTRAL_SUM,PAIR43_SETTLED_COVER, or
``--on lead44`` for those four); ``--simd 0,1`` runs each configuration with the power step's accurate DFT on the plain
path (0) or in AVX2 lanes where the CPU has them (1), alternately; ``--core PATH`` loads another build of
sharpdp._core (e.g. main's) in the child instead of this one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CELLS = (
    ("gauss", 0.5, None, 10**8, 0.001),
    ("gauss", 0.5, None, 10**8, 0.01),
    ("gauss", 0.5, None, 10**8, 0.1),
    ("gauss", 0.5, None, 10**8, 0.5),
    ("bmg", 0.833, 0.198, 10**6, 0.01),
    ("gauss", 1.0, None, 10**6, 0.01),
    ("gauss", 1.0, None, 10**8, 0.5),
    ("gauss", 1.0, None, 10**8, 1.0),
    ("bmg", 0.565, 0.0517, 100, 8.0),
)

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {here!r})
if {core!r}:
    import importlib.util
    spec = importlib.util.spec_from_file_location("sharpdp._core", {core!r})
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules["sharpdp._core"] = mod
from bench_regimes import _import_engine
_import_engine()
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
kind, s0, g, n, eps = json.loads(sys.argv[1])
rule = int(sys.argv[3])
limits.CELLS_TWO_NODE = bool(rule & 1)
limits.CELLS_FEW_NODES = bool(rule & 2)
for name in json.loads(sys.argv[4]):
    setattr(limits, name, True)
from sharpdp import _core
if hasattr(_core.accountant, "set_dft_simd"):  # (main's build has no AVX2 path)
    _core.accountant.set_dft_simd(bool(int(sys.argv[5])))
r = GaussianRandomizer(s0, 1) if kind == "gauss" else BlanketMixedGaussian(g, s0, 1)
acc = ShuffleAccountant(r, n, "zero_out")
reg = None
if sys.argv[2] == "1":
    import _instr
    reg = _instr.Region()
t0 = time.process_time()  # (with --instr the CPU time includes the region's start and dump: not reported then)
if reg is not None:
    reg.start()
lo, up = acc.get_delta_bounds(eps)
if reg is not None:
    reg.dump("call")
t = time.process_time() - t0
print(json.dumps([t, float(lo).hex(), float(up).hex()]))
"""


LEAD44 = ["CHERNOFF_LOG_STEP", "CELLS_FEW_NODES", "BODY43_SPECTRAL_SUM", "PAIR43_SETTLED_COVER"]


def run(cell, instr: bool, rule: int, on: list[str] | None = None, simd: int = 1,
        core: str = "") -> tuple[float, str, str, float | None]:
    here = os.path.dirname(os.path.abspath(__file__))
    argv = [sys.executable, "-c", _CHILD.format(here=here, core=core), json.dumps(cell), "1" if instr else "0",
            str(rule), json.dumps(on or []), str(simd)]
    if not instr:
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        return (*json.loads(out.strip().splitlines()[-1]), None)
    sys.path.insert(0, here)
    import _instr

    counts, out = _instr.count(argv)
    return (*json.loads(out.strip().splitlines()[-1]), counts.get("call", 0) / 1e9)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--instr", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated cell indices")
    ap.add_argument("--rule", default="0,3", help="comma-separated rule bits, run alternately per repetition")
    ap.add_argument("--on", default="", help="comma-separated switches set True (lead44: the session-44 switch-on)")
    ap.add_argument("--simd", default="1", help="comma-separated: 0 plain DFT, 1 AVX2 lanes where available")
    ap.add_argument("--core", default="", help="another build of sharpdp._core to load (e.g. main's)")
    a = ap.parse_args()
    idx = [int(i) for i in a.only.split(",")] if a.only else range(len(CELLS))
    on = [x for x in a.on.split(",") if x]
    on = [y for x in on for y in (LEAD44 if x == "lead44" else [x])]
    confs = [(int(r), int(v)) for r in a.rule.split(",") for v in a.simd.split(",")]
    for i in idx:
        times: dict[tuple[int, int], list[float]] = {k: [] for k in confs}
        last: dict[tuple[int, int], tuple] = {}
        for _ in range(1 if a.instr else a.reps):
            for k in confs:
                t, lo, up, gi = run(CELLS[i], a.instr, k[0], on, k[1], a.core)
                times[k].append(gi if a.instr else t)
                last[k] = (lo, up)
        for k in confs:
            print(i, CELLS[i], "rule", k[0], "simd", k[1], "%s %.4f" % ("G" if a.instr else "s",
                  statistics.median(times[k])), last[k][0], last[k][1], flush=True)


if __name__ == "__main__":
    main()
