"""The few-user cells of docs/accountant.md §8.17 (session 39, eps39): CPU time (``time.process_time``, caches cleared
before each call) and bracket of ``get_delta_bounds`` and ``get_epsilon(1e-6)`` for blanket-mixed Gaussians at small n
under replace-one (laws unbounded on both sides), and review rev38's case at five rel_tol; run it with main's and a
branch's interpreter alternately and compare::

    /work/venv/main/bin/python bench/bench_eps39_few.py
    python bench/bench_eps39_few.py
"""

from __future__ import annotations

import time

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches

#: (gamma, sigma0, n, eps): review rev38's case, then the regime-map-like BMGs at n = 3, 5, 10
CELLS = [(0.0222, 0.582, 5, 15.11), (0.2, 0.8, 3, 8.0), (0.0511, 0.567, 3, 4.0), (0.0511, 0.567, 10, 8.0)]


def main() -> None:
    """Print one line per call: cell, rel_tol, CPU s, bracket and its relative width; then get_epsilon(1e-6)."""
    for g, s0, n, eps in CELLS:
        for rel_tol in ((3e-2, 1e-2, 5e-3, 3e-3, 1e-3) if n == 5 else (1e-2,)):
            clear_caches()
            acc = ShuffleAccountant(BlanketMixedGaussian(g, s0, 1), n, "replace", rel_tol=rel_tol)
            t = time.process_time()
            lo, up = acc.get_delta_bounds(eps)
            dt = time.process_time() - t
            print(f"BMG({g}, {s0}) n={n} eps={eps} rel_tol={rel_tol:g}: {dt:.4f} s [{lo:.6e}, {up:.6e}] "
                  f"{100 * (up - lo) / lo:.3f} %")
        clear_caches()
        acc = ShuffleAccountant(BlanketMixedGaussian(g, s0, 1), n, "replace")
        t = time.process_time()
        e = acc.get_epsilon(1e-6)
        print(f"BMG({g}, {s0}) n={n} get_epsilon(1e-6) = {e:.8g}: {time.process_time() - t:.4f} s")


if __name__ == "__main__":
    main()
