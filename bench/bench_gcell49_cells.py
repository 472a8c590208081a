"""The regime map's slow get_delta_bounds cells with the jump term's window sums, stop-loss grid and TV maxima in the
core (docs/accountant_tail.md §80) on and off (off: numpy's arrays, the same floats).

    python bench/bench_gcell49_cells.py            # CPU seconds, fresh process per call, on / off alternated
    python bench/bench_gcell49_cells.py --instr    # callgrind instruction counts of the call (load-proof)
    python bench/bench_gcell49_cells.py --reps 5 --cells 0,3

Each line: the cell, the mode, the bracket in float.hex (equal on and off) and the CPU seconds or 1e9 instructions.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# (kind, sigma0 or gamma, n, eps, BMG sigma0): the regime map's cells over their limit (bench/README.md)
CELLS = [
    ("g", 1.0, 10**9, 0.001, None),
    ("g", 1.0, 10**8, 0.001, None),
    ("g", 0.5, 10**8, 0.001, None),
    ("g", 0.5, 10**8, 0.01, None),
    ("g", 0.5, 10**8, 0.1, None),
    ("g", 0.5, 10**8, 0.5, None),
    ("b", 0.05172706216084602, 100, 8.0, 0.5654166131186402),
    ("b", 0.1707551179945801, 10**8, 0.001, 0.7805079022481808),
]

CHILD = r"""
import sys, time
sys.path.insert(0, {here!r})
from sharpdp.shuffle import ShuffleAccountant, GaussianRandomizer, BlanketMixedGaussian
from sharpdp.shuffle.accountant import jump, tv_weight
from sharpdp.shuffle.accountant.fft import kernels
if {off!r}:
    k = kernels()
    class _NoKernel:
        def __getattr__(self, name):
            if name in ("weighted_sums", "stop_loss_fill", "window_maxima"):
                raise AttributeError(name)
            return getattr(k, name)
    nk = _NoKernel()
    jump.kernels = tv_weight.kernels = lambda: nk
kind, a, n, eps, s0 = {cell!r}
rnd = GaussianRandomizer(a, 1) if kind == "g" else BlanketMixedGaussian(a, s0, 1)
acc = ShuffleAccountant(rnd, n)
import _instr
reg = _instr.Region()
reg.start()
t = time.process_time()
b = acc.get_delta_bounds(eps)
t = time.process_time() - t
reg.dump("call")
print(" ".join(x.hex() for x in b), t)
"""


def run(cell, off: bool, instr: bool) -> tuple[str, float]:
    code = CHILD.format(here=HERE, off=off, cell=cell)
    if instr:
        sys.path.insert(0, HERE)
        import _instr

        counts, out = _instr.count([sys.executable, "-c", code])
        return out.split()[0] + " " + out.split()[1], counts["call"] / 1e9
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return out[0] + " " + out[1], float(out[2])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instr", action="store_true", help="callgrind instruction counts instead of CPU seconds")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cells", default="", help="comma-separated indices into CELLS (default all)")
    args = ap.parse_args()
    idx = [int(i) for i in args.cells.split(",")] if args.cells else range(len(CELLS))
    for i in idx:
        cell = CELLS[i]
        res: dict[str, list[float]] = {"on": [], "off": []}
        brackets = set()
        for _ in range(1 if args.instr else args.reps):
            for mode in ("on", "off"):
                b, v = run(cell, mode == "off", args.instr)
                brackets.add(b)
                res[mode].append(v)
        unit = "G instr" if args.instr else "s CPU"
        print(f"{cell[:4]}: on {min(res['on']):.3f}-{max(res['on']):.3f} / off {min(res['off']):.3f}-"
              f"{max(res['off']):.3f} {unit}; brackets equal: {len(brackets) == 1} ({sorted(brackets)[0]})", flush=True)


if __name__ == "__main__":
    main()
