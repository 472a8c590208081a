"""CPU seconds of the accountant's compiled kernels on the calls of one map cell (docs/accountant_tail.md §60).

``--capture CELL`` runs bench_mid41_cells.py's cell CELL once and pickles the arguments of every call of the kernels
named in KERNELS; then ``--time`` replays them in a fresh interpreter (``--core``: another build of sharpdp._core, e.g.
main's, loaded in its place) and prints each kernel's total CPU milliseconds: old vs new builds side by side on the same
inputs, without the rest of the call.

    python bench/bench_mid41_kernels.py --capture 9 --file calls.pkl
    python bench/bench_mid41_kernels.py --time --file calls.pkl [--core old/_core.so]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pickle
import sys
import time

KERNELS = ("lognormal_cells", "power", "chernoff_edge", "tilt", "log_mgf")


def capture(cell: int, path: str) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    from bench_mid41_cells import CELLS
    from bench_regimes import _import_engine

    _import_engine()
    from sharpdp import _core
    from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant

    calls: list = []
    for name in KERNELS:
        orig = getattr(_core.accountant, name)

        def wrap(*a, _o=orig, _n=name):
            calls.append((_n, [x.copy() if hasattr(x, "copy") else x for x in a]))
            return _o(*a)

        setattr(_core.accountant, name, wrap)
    kind, s0, g, n, eps = CELLS[cell]
    r = GaussianRandomizer(s0, 1) if kind == "gauss" else BlanketMixedGaussian(g, s0, 1)
    ShuffleAccountant(r, n, "zero_out").get_delta_bounds(eps)
    with open(path, "wb") as fh:
        pickle.dump(calls, fh)
    return len(calls)


def replay(path: str, core: str) -> dict[str, float]:
    if core:
        spec = importlib.util.spec_from_file_location("sharpdp._core", core)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules["sharpdp._core"] = mod
    from sharpdp import _core

    with open(path, "rb") as fh:
        calls = pickle.load(fh)
    tot: dict[str, float] = {}
    for name, a in calls:
        f = getattr(_core.accountant, name)
        t = time.process_time()
        f(*a)
        tot[name] = tot.get(name, 0.0) + time.process_time() - t
    return tot


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--capture", type=int, default=None)
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--file", default="mid41_calls.pkl")
    ap.add_argument("--core", default="")
    a = ap.parse_args()
    if a.capture is not None:
        print(capture(a.capture, a.file), "calls captured")
    if a.time:
        print(" ".join(f"{k}={v * 1e3:.1f}ms" for k, v in sorted(replay(a.file, a.core).items())))


if __name__ == "__main__":
    main()
