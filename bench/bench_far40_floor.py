"""Cells of docs/accountant_tail.md §58 (the far-tail treatment's accuracy floor): CPU seconds and brackets of one
``get_delta_bounds`` (zero-out, rel_tol 1e-2) per forked process after the imports, with the rule (``--rule on``: the
hook of §58 in ``far_tail.try_certify``, installed here by wrapping it where the installed code lacks it) or without it
(``--rule off``: ``FLOOR_TARGET = 0``, main's floats). Run it with main's venv too (``--rule main``: no §58 module)::

    python bench/bench_far40_floor.py --rule on
    python bench/bench_far40_floor.py --rule off
    python bench/bench_far40_floor.py --instr --cells 0,6   # instructions (1e9) under callgrind, on and off
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import time

CELLS = (("gauss", 2.0, 10**8, 1e-3), ("gauss", 2.0, 10**9, 1e-3), ("gauss", 2.0, 10**7, 1e-3),
         ("gauss", 1.0, 10**8, 2.0), ("gauss", 1.0, 10**8, 4.0), ("gauss", 2.0, 10**8, 0.01),
         ("bmg", (0.394, 1.15), 10**8, 1e-3))


def install_hook(put=setattr) -> None:
    """Wrap ``far_tail.try_certify`` with §58's two lines where the installed code lacks them (``put``: how the
    attribute is set, e.g. a pytest ``monkeypatch.setattr``)."""
    from sharpdp.shuffle.accountant import far_tail
    from sharpdp.shuffle.accountant.far_tail_floor import floor_bracket

    if "floor_bracket" in inspect.getsource(far_tail.try_certify):
        return
    orig = far_tail.try_certify

    def try_certify(law, gamma, n, rel_tol, workers, negligible=0.0, lower=True, upper_first=False):
        if far_tail.applicable(law, n, rel_tol, gamma) and (fl := floor_bracket(law, gamma, n)) is not None:
            return fl
        return orig(law, gamma, n, rel_tol, workers, negligible, lower, upper_first)

    put(far_tail, "try_certify", try_certify)


def one(cell, rule: str, region=None) -> None:
    from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant

    if rule == "on":
        install_hook()
    elif rule == "off":
        from sharpdp.shuffle.accountant import limits
        limits.FLOOR_TARGET = 0.0
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
    print(f"{kind} {p} n={n:.0e} eps={eps:g}: {dt:.3f} s  [{lo:.6g}, {up:.6g}]", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rule", choices=("on", "off", "main"), default="on")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--cells", default="", help="indices into CELLS, comma-separated (default: all)")
    ap.add_argument("--instr", action="store_true", help="count instructions under callgrind, rule on and off")
    ap.add_argument("--one", type=int, default=-1, help=argparse.SUPPRESS)  # (the child of --instr)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    cells = [CELLS[int(i)] for i in a.cells.split(",")] if a.cells else list(CELLS)
    if a.one >= 0:
        import _instr

        one(CELLS[a.one], a.rule, _instr.Region())
        return
    if a.instr:
        import _instr

        for cell in cells:
            for rule in ("on", "off"):
                counts, out = _instr.count([sys.executable, os.path.abspath(__file__), "--rule", rule, "--one",
                                            str(CELLS.index(cell))])
                print(f"rule {rule}: {counts.get('call', 0) / 1e9:.3f}e9 instructions  {out.strip()}", flush=True)
        return
    from bench_regimes import _import_engine

    _import_engine()
    for cell in cells:
        for _ in range(a.reps):
            pid = os.fork()
            if pid == 0:
                try:
                    one(cell, a.rule)
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
