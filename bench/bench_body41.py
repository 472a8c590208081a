"""Cells of docs/accountant_tail.md §59 (session 41, body41): CPU seconds and brackets of one ``get_delta_bounds``
(zero-out, rel_tol 1e-2) per forked process after the imports, with the session-41 switches of §59 at their
session-41 values (``--rule on``) or at their session-40 values (``--rule off``: main's floats); the call itself is
``bench_far40_floor.one`` (its rule "main": the installed code as it is)::

    python bench/bench_body41.py --reps 2                 # the six cells, on and off alternated
    python bench/bench_body41.py --instr --cells 0        # instructions (1e9) under callgrind, on and off
"""

from __future__ import annotations

import argparse
import os
import sys

CELLS = (("bmg", (0.171, 0.781), 10**8, 1e-3), ("bmg", (0.0389, 0.529), 10**8, 1e-2),
         ("bmg", (0.0786, 0.597), 10**9, 1e-3), ("bmg", (0.0204, 0.461), 10**9, 1e-2),
         ("gauss", 1.0, 10**8, 1e-3), ("gauss", 1.0, 10**9, 1e-3))
SWITCHES = {"BODY_LEAP_EIGHT": (False, True)}  # name: (session-40 value, session-41 value)


def run(index: int, rule: str, region=None) -> None:
    """One call of CELLS[index] with the switches at ``rule``'s values (in this process)."""
    from bench_far40_floor import one
    from sharpdp.shuffle.accountant import limits

    for name, (old, new) in SWITCHES.items():
        setattr(limits, name, old if rule == "off" else new)
    print(f"rule {rule}:", end=" ")
    one(CELLS[index], "main", region)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--cells", default=",".join(str(i) for i in range(len(CELLS))), help="indices into CELLS")
    ap.add_argument("--instr", action="store_true", help="count instructions under callgrind")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)  # "index,rule": the callgrind child
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _instr

    if a.child:
        i, rule = a.child.split(",")
        run(int(i), rule, _instr.Region())
        return
    todo = [(int(i), rule) for i in a.cells.split(",") for _ in range(a.reps) for rule in ("on", "off")]
    if a.instr:
        for i, rule in todo:
            counts, out = _instr.count([sys.executable, os.path.abspath(__file__), "--child", f"{i},{rule}"])
            print(f"{counts.get('call', 0) / 1e9:.3f}e9 instructions  {out.strip()}", flush=True)
        return
    from bench_regimes import _import_engine

    _import_engine()
    for i, rule in todo:
        pid = os.fork()
        if pid == 0:
            try:
                run(i, rule)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
