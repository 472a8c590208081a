"""The cells of session 39's hat39 brief and of docs/accountant_tail.md §55.4: CPU time of one ``get_delta_bounds``
(zero-out, rel_tol 1e-2) per cell, each call in a forked process after the imports (``time.process_time``), best of
``--repeat``; run it with main's and a branch's interpreter alternately and compare::

    /work/venv/main/bin/python bench/bench_hat39_cells.py --repeat 1
    python bench/bench_hat39_cells.py --repeat 1 "G1 1e8 0.01"
"""

from __future__ import annotations

import os
import sys

CELLS = {
    **{f"G1 1e8 {e:g}": ("g", 1.0, 10**8, e) for e in (0.001, 0.01, 0.1, 1.0, 2.0, 4.0)},
    **{f"G1 1e9 {e:g}": ("g", 1.0, 10**9, e) for e in (0.001, 0.01, 0.1)},
    **{f"G1 1e6 {e:g}": ("g", 1.0, 10**6, e) for e in (0.01, 1.0)},
    **{f"G.5 1e8 {e:g}": ("g", 0.5, 10**8, e) for e in (0.01, 0.5, 1.0)},
    **{f"G.5 1e9 {e:g}": ("g", 0.5, 10**9, e) for e in (0.001, 0.1, 0.5)},
    **{f"G2 {n:g} 0.001": ("g", 2.0, n, 0.001) for n in (10**6, 10**8)},
    "BMG 1e8 0.001": ("b", (0.1707551179945801, 0.780507915323597), 10**8, 0.001),  # (calibrate_bmg's picks)
    "BMG 1e8 0.01": ("b", (0.03889474223781417, 0.5292277660847615), 10**8, 0.01),
    "BMG 1e8 0.1": ("b", (0.020184369008040444, 0.4564324504091077), 10**8, 0.1),
    "BMG 1e9 0.001": ("b", (0.07862640627440082, 0.5974937200438466), 10**9, 0.001),
    "BMG 1e9 0.01": ("b", (0.020407558963614108, 0.46071612619332475), 10**9, 0.01),
    "BMG 1e6 0.01": ("b", (0.19778329379426743, 0.8334637951759056), 10**6, 0.01),
}


def main() -> None:
    """bench_hat38_cells.py's runner on these cells."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_hat38_cells as hat38

    hat38.CELLS = CELLS  # (its main hands its CELLS to bench_hat37_cells's runner)
    hat38.main()


if __name__ == "__main__":
    main()
