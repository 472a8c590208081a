"""The cells of session 37's hat37 brief (docs/accountant_tail.md §51.3): CPU time of one ``get_delta_bounds``
(zero-out, rel_tol 1e-2) per cell, each call in a forked process after the imports (``time.process_time``), best of
``--repeat``; run it with main's and a branch's interpreter alternately and compare::

    /work/venv/main/bin/python bench/bench_hat37_cells.py --repeat 1
    python bench/bench_hat37_cells.py --repeat 1 "G1 1e9 .001"
"""

from __future__ import annotations

import os
import sys

CELLS = {  # (the BMGs: calibrate_bmg(n, eps, 1e-6, 1)'s picks)
    "BMG 1e8 .001": ("b", (0.1707551179945801, 0.780507915323597), 10**8, 0.001),
    "BMG 1e8 .01": ("b", (0.03889474223781417, 0.5292277660847615), 10**8, 0.01),
    "BMG 1e8 .1": ("b", (0.020184369008040444, 0.4564324504091077), 10**8, 0.1),
    "BMG 1e9 .001": ("b", (0.07862640627440082, 0.5974937200438466), 10**9, 0.001),
    "BMG 1e9 .01": ("b", (0.020407558963614108, 0.46071612619332475), 10**9, 0.01),
    "G1 1e8 .001": ("g", 1.0, 10**8, 0.001), "G1 1e8 .01": ("g", 1.0, 10**8, 0.01), "G1 1e8 1": ("g", 1.0, 10**8, 1.0),
    "G1 1e9 .001": ("g", 1.0, 10**9, 0.001), "G1 1e9 .01": ("g", 1.0, 10**9, 0.01),
    "G2 1e8 .001": ("g", 2.0, 10**8, 0.001), "G2 1e6 .001": ("g", 2.0, 10**6, 0.001),
    "G.5 1e9 .001": ("g", 0.5, 10**9, 0.001), "G.5 1e9 .1": ("g", 0.5, 10**9, 0.1),
    "G.5 1e8 .1": ("g", 0.5, 10**8, 0.1), "G.5 1e6 .1": ("g", 0.5, 10**6, 0.1),
    "BMG 1e6 .01": ("b", (0.19778329379426743, 0.8334637951759056), 10**6, 0.01),
}


def main() -> None:
    """bench_jump36_cells.py's runner (forked calls, best of --repeat) on these cells."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_jump36_cells as runner

    runner.CELLS = CELLS
    runner.main()


if __name__ == "__main__":
    main()
