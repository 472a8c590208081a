"""CPU time of Lemma 72.1's DFT by blocks (``_core.accountant.dft_low``) on the folded pmfs that the regime map's
body-dominated cells hand to it (docs/accountant_tail.md §75.3).

Usage: ``python bench/bench_dft48_dft_low.py [--core PATH] [--cells 2,3,4,5] [--repeats 5]``. ``--core`` loads another
build of ``sharpdp._core`` (for instance main's) before sharpdp is imported, so two builds can be compared on the same
inputs in fresh processes. Prints, per captured call, N, K, the non-zero nodes, the fastest and the median CPU time of
``repeats`` calls (``time.process_time``: all threads) and the returned bound and z~_K as float.hex (the same bits
expected from every build). ``--dump DIR`` also writes the inputs for the C++ harness
bench/dft48_dft_low_harness.cpp, whose instruction counts (callgrind) are the repeatable figures of §75.3."""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--core", default=None, help="path of a _core extension to use instead of the installed one")
    ap.add_argument("--cells", default="2,3,4,5")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dump", default=None, help="directory: write each captured call as y_CELL_I.bin (int64 N, K, "
                    "then N doubles) for bench/dft48_dft_low_harness.cpp")
    a = ap.parse_args()
    if a.core:
        spec = importlib.util.spec_from_file_location("sharpdp._core", a.core)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules["sharpdp._core"] = mod
        spec.loader.exec_module(mod)
    import numpy as np

    from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
    from sharpdp.shuffle.accountant import fft

    cells = {"2": (lambda: BlanketMixedGaussian(0.0786, 0.597, 1), 10**9, 0.001),
             "3": (lambda: GaussianRandomizer(1.0, 1), 10**8, 0.001),
             "4": (lambda: GaussianRandomizer(1.0, 1), 10**9, 0.001),
             "5": (lambda: BlanketMixedGaussian(0.0204, 0.461, 1), 10**9, 0.01)}
    core = fft.kernels()
    for c in a.cells.split(","):
        calls: list = []

        class Spy:
            def __getattr__(self, name):
                f = getattr(core, name)
                if name != "dft_low":
                    return f
                return lambda y, K: (calls.append((np.array(y), K)), f(y, K))[1]

        spy = Spy()
        orig = fft.kernels
        fft.kernels = lambda: spy
        try:
            mk, n, eps = cells[c]
            ShuffleAccountant(mk(), n, "zero_out").get_delta_bounds(eps)
        finally:
            fft.kernels = orig
        for i, (y, K) in enumerate(calls):
            if a.dump:
                with open(f"{a.dump}/y_{c}_{i}.bin", "wb") as fh:
                    np.array([y.size, K], dtype=np.int64).tofile(fh)
                    np.ascontiguousarray(y, dtype=np.float64).tofile(fh)
            ts = []
            for _ in range(a.repeats):
                t0 = time.process_time()
                z, e = core.dft_low(y, K)
                ts.append(time.process_time() - t0)
            ts.sort()
            print(f"cell {c}: N {y.size} K {K} nnz {np.count_nonzero(y)}: {ts[0]:.4f} s (median {ts[len(ts) // 2]:.4f})"
                  f" e {float(e).hex()} z_K {complex(z[K]).real.hex()} {complex(z[K]).imag.hex()}")


if __name__ == "__main__":
    main()
