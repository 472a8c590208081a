"""Which far-tail runs one ``get_delta_bounds`` of GaussianRandomizer(0.5, 1) makes (zero-out, rel_tol 1e-2; the
cells of docs/accountant_tail.md §58.5): each ``certify_bigjump`` run with its factor on the caps' step (§48.2, §50,
§54), its CPU seconds, and kept or missed (by how much), the estimates of §54.4's first factor (normal against
one-jump), and the call's CPU seconds and bracket; ``--factor F`` forces §54.4's factor on CAP_COARSE (F = 0.25: the
caps' step at once, no coarser run). One process per cell::

    python bench/bench_far40b_runs.py
    python bench/bench_far40b_runs.py --factor 2 --cells 3
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

CELLS = ((10**8, 1e-3), (10**8, 0.01), (10**8, 0.1), (10**8, 0.5), (10**9, 0.1))


def one(n: int, eps: float, factor: float | None) -> None:
    """The runs of one call, printed on one line."""
    from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
    from sharpdp.shuffle.accountant import far_tail, far_tail_keep
    from sharpdp.shuffle.accountant.far_tail_grid import normal_value

    orig, first, runs, est = far_tail.certify_bigjump, far_tail_keep.far_factor, [], []

    def run(law, gamma, n, rel_tol, workers, **kw):
        t = time.process_time()
        try:
            r = orig(law, gamma, n, rel_tol, workers, **kw)
        except Exception as exc:
            miss = float(exc.args[0]) if exc.args else float("nan")
            runs.append(f"{kw.get('coarse', 1.0):g}x miss {miss:.3g} {time.process_time() - t:.3f}s")
            raise
        runs.append(f"{kw.get('coarse', 1.0):g}x kept {time.process_time() - t:.3f}s")
        return r

    def factor_of(law, gamma, n):
        jump = float(law.stop_loss([max(-(n - 1) * gamma * law.mean(), 0.0)])[0][0])
        est.append(f"normal {normal_value(law, gamma, n):.3g} one-jump {jump:.3g}")
        return first(law, gamma, n) if factor is None else factor

    far_tail.certify_bigjump, far_tail.far_factor = run, factor_of
    acc = ShuffleAccountant(GaussianRandomizer(0.5, 1), n)
    t = time.process_time()
    lo, up = acc.get_delta_bounds(eps)
    print(f"n = {n:.0e}, eps = {eps:g}: {time.process_time() - t:.3f} s, ({lo:.6g}, {up:.6g}); {'; '.join(est)}; "
          f"runs: {', '.join(runs)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--factor", type=float, default=None)
    ap.add_argument("--cells", default=",".join(str(i) for i in range(len(CELLS))))
    ap.add_argument("--one", nargs=2, type=float, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        one(int(a.one[0]), a.one[1], a.factor)
        return
    for i in (int(c) for c in a.cells.split(",")):
        n, eps = CELLS[i]
        extra = [] if a.factor is None else ["--factor", str(a.factor)]
        subprocess.run([sys.executable, __file__, "--one", str(n), str(eps), *extra], check=True)


if __name__ == "__main__":
    main()
