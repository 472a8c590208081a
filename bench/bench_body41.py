"""Cells of docs/accountant_tail.md §59 (session 41, body41): CPU seconds and brackets of one ``get_delta_bounds``
(zero-out, rel_tol 1e-2) per forked process after the imports, with the session-41 switches of §59 at their
session-41 values (``--rule on``) or at their session-40 values (``--rule off``: main's floats)::

    python bench/bench_body41.py --rule on --cells 0,1
    python bench/bench_body41.py --instr --cells 0        # instructions (1e9) under callgrind, on and off
"""

from __future__ import annotations

import argparse
import os
import sys
import time

CELLS = (("bmg", (0.171, 0.781), 10**8, 1e-3), ("bmg", (0.0389, 0.529), 10**8, 1e-2),
         ("bmg", (0.0786, 0.597), 10**9, 1e-3), ("bmg", (0.0204, 0.461), 10**9, 1e-2),
         ("gauss", 1.0, 10**8, 1e-3), ("gauss", 1.0, 10**9, 1e-3))
SWITCHES = {"BODY_LEAP_EIGHT": (False, True)}  # name: (session-40 value, session-41 value), set by set_rule


def set_rule(rule: str) -> None:
    from sharpdp.shuffle.accountant import limits

    for name, (old, new) in SWITCHES.items():
        setattr(limits, name, old if rule == "off" else new)


def one(cell, rule: str, region=None) -> None:
    from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant

    set_rule(rule)
    kind, p, n, eps = cell
    rz = GaussianRandomizer(p, 1) if kind == "gauss" else BlanketMixedGaussian(p[0], p[1], 1)
    acc = ShuffleAccountant(rz, n, "zero_out")
    if region is not None:
        region.start()
    t0 = time.process_time()
    lo, up = acc.get_delta_bounds(eps)
    dt = time.process_time() - t0
    if region is not None:
        region.dump("call")
    print(f"{rule} {kind} {p} n={n:.0e} eps={eps:g}: {dt:.3f} s  [{lo!r}, {up!r}]", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rule", choices=("on", "off", "both"), default="both")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--cells", default="", help="indices into CELLS, comma-separated (default: all)")
    ap.add_argument("--instr", action="store_true", help="count instructions under callgrind")
    ap.add_argument("--one", type=int, default=-1, help=argparse.SUPPRESS)  # (the child of --instr)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    cells = [CELLS[int(i)] for i in a.cells.split(",")] if a.cells else list(CELLS)
    rules = ("on", "off") if a.rule == "both" else (a.rule,)
    if a.one >= 0:
        import _instr

        one(CELLS[a.one], a.rule, _instr.Region())
        return
    if a.instr:
        import _instr

        for cell in cells:
            for rule in rules:
                counts, out = _instr.count([sys.executable, os.path.abspath(__file__), "--rule", rule, "--one",
                                            str(CELLS.index(cell))])
                print(f"{counts.get('call', 0) / 1e9:.3f}e9 instructions  {out.strip()}", flush=True)
        return
    from bench_regimes import _import_engine

    _import_engine()
    for cell in cells:
        for _ in range(a.reps):
            for rule in rules:
                pid = os.fork()
                if pid == 0:
                    try:
                        one(cell, rule)
                    finally:
                        os._exit(0)
                os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
