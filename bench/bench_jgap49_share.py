"""far_tail's jump-term share (docs/accountant_tail.md §81) off and on at the regime map's far-tail cells: CPU seconds
of ``get_delta_bounds`` in a fresh process per call, the bracket in float.hex and its relative width.

    python bench/bench_jgap49_share.py                     # every cell, shares 0 (off), 0.5, 0.2, 3 repeats
    python bench/bench_jgap49_share.py --cells 1 --reps 5 --shares 0,0.5
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

# (kind, sigma0 or gamma, n, eps, BMG sigma0)
CELLS = [
    ("g", 1.0, 10**9, 0.001, None),
    ("g", 1.0, 10**8, 0.001, None),
    ("g", 0.5, 10**8, 0.001, None),
    ("g", 0.5, 10**8, 0.01, None),
    ("g", 0.5, 10**8, 0.5, None),
    ("b", 0.1707551179945801, 10**8, 0.001, 0.7805079022481808),
    ("b", 0.05172706216084602, 100, 8.0, 0.5654166131186402),
]

CHILD = r"""
import json, time
from sharpdp.shuffle import ShuffleAccountant, GaussianRandomizer, BlanketMixedGaussian
from sharpdp.shuffle.accountant import limits
kind, a, n, eps, s0 = {cell!r}
limits.JGAP49 = {share!r} > 0
if {share!r} > 0:
    limits.JGAP49_SHARE = {share!r}
rnd = GaussianRandomizer(a, 1) if kind == "g" else BlanketMixedGaussian(a, s0, 1)
acc = ShuffleAccountant(rnd, n)
t = time.process_time()
lo, up = acc.get_delta_bounds(eps)
t = time.process_time() - t
print(json.dumps([lo.hex(), up.hex(), (up - lo) / lo if lo > 0 else None, t]))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cells", default="", help="comma-separated indices into CELLS (default all)")
    ap.add_argument("--shares", default="0,0.5,0.2", help="JGAP49_SHARE values (0: the switch off)")
    args = ap.parse_args()
    idx = [int(i) for i in args.cells.split(",")] if args.cells else range(len(CELLS))
    shares = [float(s) for s in args.shares.split(",")]
    for i in idx:
        for _ in range(args.reps):
            for share in shares:
                out = subprocess.run([sys.executable, "-c", CHILD.format(cell=CELLS[i], share=share)],
                                     capture_output=True, text=True, check=True).stdout
                lo, up, rel, t = json.loads(out.splitlines()[-1])
                print(f"{CELLS[i][:4]} share {share}: {lo} {up} rel {rel:.4g} CPU {t:.3f} s", flush=True)


if __name__ == "__main__":
    main()
