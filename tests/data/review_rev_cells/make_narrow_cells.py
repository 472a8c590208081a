"""Make narrow_cells.json for tests/test_review_rev_cells.py::test_narrow_cells_with_a_huge_coefficient_and_an_underflowing_exponential:
`python tests/data/review_rev_cells/make_narrow_cells.py` (~2 s of CPU).

Per case (kind, v0): the kernel's V-edges of the four cells (only to say where the exact values were taken; the
test uses the store only when the kernel's edges are these) and the exact (mass, hat weight) of each cell from
``exact_cells`` of the test module (mpmath at 110 + log10(1e300) digits, closed forms in ncdf), 70 digits stored.
"""

from __future__ import annotations

import math
import pathlib
import sys

import mpmath as mp

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _store import write_store  # noqa: E402  (puts tests/ on sys.path)

from test_review_rev_cells import exact_cells, kernel_cells, narrow_case  # noqa: E402


def main() -> None:
    out: dict = {"source": "tests/data/review_rev_cells/make_narrow_cells.py", "cases": {}}
    for kind in ("one+", "one-", "two"):
        for v0 in (1.0, 1.5, 2.0):
            a, b, bm, r, x0, h = narrow_case(kind, v0)
            v = kernel_cells(a, b, r, bm, x0=x0, h=h, K=4)[4]
            cells = exact_cells(a, b, r, bm, -math.inf, 1.0, x0, h, 4, v)
            out["cases"][f"{kind} {v0!r}"] = {"v": [float(e).hex() for e in v],
                                              "cells": [[mp.nstr(me, 70), mp.nstr(we, 70)] for me, we in cells]}
            print(kind, v0, flush=True)
    write_store(HERE / "narrow_cells.json", out)


if __name__ == "__main__":
    main()
