"""The cells of session 36's jump36 brief (docs/accountant_tail.md §49.4): CPU time of one ``get_delta_bounds``
(zero-out, rel_tol 1e-2) per cell, each call in a forked process after the imports (``time.process_time``), best of
``--repeat``; run it with main's and a branch's interpreter alternately and compare::

    /work/venv/main/bin/python bench/bench_jump36_cells.py --repeat 2
    python bench/bench_jump36_cells.py --repeat 2 "G.5 1e6 .1" "G.5 1e2 8"
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import time

CELLS = {
    "G.5 1e6 .001": ("g", 0.5, 10**6, 0.001), "G.5 1e6 .01": ("g", 0.5, 10**6, 0.01),
    "G.5 1e6 .1": ("g", 0.5, 10**6, 0.1), "G.5 1e6 .5": ("g", 0.5, 10**6, 0.5),
    "G.5 1e6 1": ("g", 0.5, 10**6, 1.0), "G.5 1e6 2": ("g", 0.5, 10**6, 2.0),
    "G.5 1e2 8": ("g", 0.5, 100, 8.0),
    "BMG 1e2 8": ("b", (0.051057210686144563, 0.5666966712607993), 100, 8.0),  # (calibrate_bmg(100, 8, 1e-6, 1))
    "BMG 1e6 .01": ("b", (0.19778329379426743, 0.8334637951759056), 10**6, 0.01),  # (calibrate_bmg(1e6, 0.01, ...))
    "G1 1e6 .01": ("g", 1.0, 10**6, 0.01), "G2 1e6 .001": ("g", 2.0, 10**6, 0.001),
    "G2 1e6 .003052": ("g", 2.0, 10**6, 0.003052),
}


def _imports() -> None:
    """The accountant's lazily imported modules, once in the parent (not charged to any call)."""
    import sharpdp.shuffle  # noqa: F401

    for pkg in ("accountant", "laws", "calibration"):
        mod = importlib.import_module(f"sharpdp.shuffle.{pkg}")
        for info in pkgutil.iter_modules(mod.__path__):
            importlib.import_module(f"{mod.__name__}.{info.name}")


def _call(key: str) -> tuple[float, float, float]:
    from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant

    kind, p, n, eps = CELLS[key]
    r = GaussianRandomizer(p, 1) if kind == "g" else BlanketMixedGaussian(p[0], p[1], 1)
    t0 = time.process_time()
    lo, up = ShuffleAccountant(r, n, "zero_out").get_delta_bounds(eps)
    return time.process_time() - t0, float(lo), float(up)


def _forked(key: str) -> tuple[float, float, float]:
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        os.write(wfd, json.dumps(_call(key)).encode())
        os._exit(0)
    os.close(wfd)
    data = b""
    while chunk := os.read(rfd, 65536):
        data += chunk
    os.waitpid(pid, 0)
    os.close(rfd)
    t, lo, up = json.loads(data)
    return t, lo, up


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cells", nargs="*", help="cell names (default: all)")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    _imports()
    for key in args.cells or list(CELLS):
        runs = [_forked(key) for _ in range(args.repeat)]
        t, lo, up = min(runs)
        gap = (up - lo) / lo if lo > 0 else float("inf")
        print(f"{key:16s} {t * 1e3:7.1f} ms  lo={lo!r} up={up!r} gap={gap:.4g}", flush=True)


if __name__ == "__main__":
    main()
