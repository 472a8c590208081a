"""Cells of docs/accountant_tail.md §61 (session 42, kink42): where one ``get_delta_bounds`` (zero-out, rel_tol 1e-2)
of the body-dominated far-tail cells at n >= 1e8 spends its CPU time, pass by pass, and how far each body pass's hat
value lies above the round's best body upper value (a lower bound on the hat's excess at that step) against the
body's share 0.3 rel_tol (Body_lo + J_lo) (docs/accountant_tail.md §6, §8)::

    python bench/bench_kink42.py                 # the five cells, one forked process each
    python bench/bench_kink42.py --cells 2,4     # indices into CELLS
    python bench/bench_kink42.py --set BODY44_JUMP_SPECTRAL=True   # switches set first (limits.<NAME>)
    python bench/bench_kink42.py --set BODY45_KEPT_HEAP=False      # session 45: the kernel's share without §68.2's rule
    python bench/bench_kink42.py --set BODY46_PRUNED_FORWARD=True  # session 46: the spectrum without the forward FFT (§70.3)
    python bench/bench_kink42.py --set DFT47_TAYLOR_PRUNED=True    # session 47: its frequencies by Lemma 72.1 (§72.3)

Cells 5-6 (session 44, docs/accountant_tail.md §66): get_epsilon(1e-6) of GaussianRandomizer(1) and (2) at n = 1e8
(the answers off the grid, about 0.0019 and 2.2e-4).

Only timing wrappers around ``far_tail.lattice_pass`` and ``far_tail.jump_term`` (the installed code's floats).
"""

from __future__ import annotations

import argparse
import ast
import os
import resource
import sys
import time

CELLS = (("bmg", (0.171, 0.781), 10**8, 1e-3), ("bmg", (0.0389, 0.529), 10**8, 1e-2),
         ("bmg", (0.0786, 0.597), 10**9, 1e-3), ("gauss", 1.0, 10**8, 1e-3), ("gauss", 1.0, 10**9, 1e-3))


def run(cell) -> None:
    """One call of ``cell`` with its body passes and jump terms timed (printed one line each)."""
    from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
    from sharpdp.shuffle.accountant import far_tail

    rows: list[str] = []
    passes: list[tuple[float, float, float]] = []  # (h, hat value, lower value) of the body passes with a lower law
    jumps: list[float] = []

    def timed(name):
        f = getattr(far_tail, name)

        def g(*a, **k):
            t = time.process_time()
            r = f(*a, **k)
            dt = time.process_time() - t
            if name == "jump_term":
                jumps.append(r.lo)
                rows.append(f"  jump term  N={r.N:8d}  {dt:.3f} s  [{r.lo:.6e}, {r.up:.6e}]")
            elif hasattr(r, "grid"):
                lo = r.lower if r.lower is not None else float("nan")
                rows.append(f"  body pass  h={r.grid.h:.5g}  N={r.grid.N:8d}  {dt:.3f} s  law {id(a[0]) % 997:3d}  "
                            f"hat {r.main:.6e}  lower {lo:.6e}")
                passes.append((r.grid.h, r.main, lo))
            else:
                rows.append(f"  body pass  refused (size caps) at h={a[3]:.5g}")
            return r
        setattr(far_tail, name, g)

    timed("lattice_pass")
    timed("jump_term")
    kind, p, n, eps = cell
    rz = GaussianRandomizer(p, 1) if kind.startswith("gauss") else BlanketMixedGaussian(p[0], p[1], 1)
    acc = ShuffleAccountant(rz, n, "zero_out")
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.process_time()
    if kind == "gauss-eps":  # (eps is the delta of get_epsilon here)
        e = acc.get_epsilon(eps)
        dt = time.process_time() - t0
        print(f"{kind} {p} n={n:.0e} delta={eps:g}: {dt:.3f} s  eps {e!r}")
        print("\n".join(rows))
        return
    lo, up = acc.get_delta_bounds(eps)
    dt = time.process_time() - t0
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(f"{kind} {p} n={n:.0e} eps={eps:g}: {dt:.3f} s  [{lo!r}, {up!r}]  (system {ru.ru_stime - ru0.ru_stime:.3f} s, "
          f"{ru.ru_minflt - ru0.ru_minflt} minor page faults; docs/accountant_tail.md §68.1)")
    print("\n".join(rows))
    body = [x for x in passes if x[2] > 0]
    if body:
        best_up, best_lo = min(x[1] for x in body), max(x[2] for x in body)
        share = 0.3 * 1e-2 * (best_lo + max(jumps, default=0.0))
        for h, hat, _ in body:
            if hat == float("inf"):
                continue  # (a lower-only pass, §57)
            print(f"  h={h:.5g}: hat - best upper >= {(hat - best_up) / best_up:.3%} of the body; share "
                  f"{share / best_up:.3%}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", default="0,1,2,3,4", help="indices into CELLS")
    ap.add_argument("--set", default="", help="NAME=VALUE,... switches of limits set before the cells run")
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_regimes import _import_engine

    _import_engine()
    from sharpdp.shuffle.accountant import limits

    for item in filter(None, a.set.split(",")):
        name, value = item.split("=")
        setattr(limits, name, ast.literal_eval(value))  # (True, False, numbers)
    for i in a.cells.split(","):
        pid = os.fork()
        if pid == 0:
            try:
                run(CELLS[int(i)])
            finally:
                os._exit(0)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
