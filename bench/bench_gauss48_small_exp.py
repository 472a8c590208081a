"""Session 48 (gauss48): ``limits.GAUSS48_SMALL_EXP`` (the lognormal cells' small-argument exp / expm1 by
polynomials, docs/accountant_tail.md §76) off and on, on the regime map's cause-2 cells and the n = 1e6 cells.

Each run is a fresh interpreter (bench_g43_cells.run: imports excluded, as in bench_regimes.py): one
``get_delta_bounds(eps)``, zero-out, the session's other switches at their defaults; prints per cell and setting the
CPU seconds (``time.process_time``, median of ``--reps``, off and on alternating) and the bracket's ``float.hex``, or
with ``--instr`` the callgrind instruction count of the call (bench/_instr.py, 1e9 instructions).

    python bench/bench_gauss48_small_exp.py [--reps 5] [--instr] [--only 0,1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_g43_cells  # noqa: E402

CELLS = (
    (0.5, 10**8, 0.001),
    (0.5, 10**8, 0.01),
    (0.5, 10**8, 0.1),
    (0.5, 10**8, 0.5),
    (0.5, 10**9, 0.01),
    (1.0, 10**6, 0.01),
    (2.0, 10**6, 0.01),
)


def run(cell, instr: bool, on: bool) -> tuple[float, str, str, float | None]:
    """One fresh process by bench_g43_cells's child (the session's cells rule, CELLS_FEW_NODES = rule 2, and the
    switch set True where ``on``)."""
    s0, n, eps = cell
    return bench_g43_cells.run(("gauss", s0, None, n, eps), instr, 2, ["GAUSS48_SMALL_EXP"] if on else [])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--instr", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated cell indices")
    args = ap.parse_args()
    picks = [int(i) for i in args.only.split(",")] if args.only else range(len(CELLS))
    for i in picks:
        cell = CELLS[i]
        res: dict[bool, list] = {False: [], True: []}
        for _ in range(1 if args.instr else args.reps):
            for on in (False, True):
                res[on].append(run(cell, args.instr, on))
        line = [f"s0={cell[0]} n={cell[1]:.0e} eps={cell[2]}"]
        for on in (False, True):
            rs = res[on]
            hexes = {(r[1], r[2]) for r in rs}
            fig = f"{rs[0][3]:.4f} G" if args.instr else f"{statistics.median(r[0] for r in rs):.4f} s"
            line.append(f"{'on ' if on else 'off'} {fig} {sorted(hexes)}")
        print(" | ".join(line), flush=True)


if __name__ == "__main__":
    main()
