"""Session 48 (mgf48, docs/accountant_tail.md §78): the log-mgf kernel calls of one accountant call, counted and timed
(CPU), and the tilted pmf of its Chernoff edges written to ``pmfs.bin`` for ``bench/mgf48_log_mgf_harness.cpp``.

Usage: ``python bench/bench_mgf48_log_mgf.py N EPS [OUT.bin]``, e.g. ``1e8 0.01``.
"""

from __future__ import annotations

import struct
import sys
import time
from typing import Any

import numpy as np

import sharpdp.shuffle.accountant.fft as fft
from sharpdp.shuffle.accountant import ShuffleAccountant
from sharpdp.shuffle.randomizers.gaussian import GaussianRandomizer

TRACED = ("chernoff_edge_bound", "log_mgf", "solve_theta", "tilt")


class Traced:
    """The accountant's kernels with the calls in ``TRACED`` counted and timed."""

    def __init__(self, core: Any) -> None:
        self.core = core
        self.counts: dict[str, list[float]] = {}
        self.edges: list[tuple[np.ndarray, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        f = getattr(self.core, name)
        if name not in TRACED:
            return f

        def g(*a: Any) -> Any:
            t = time.process_time()
            r = f(*a)
            c = self.counts.setdefault(name, [0, 0.0])
            c[0] += 1
            c[1] += time.process_time() - t
            if name == "chernoff_edge_bound":
                self.edges.append((np.array(a[0], dtype=np.float64), a[1:]))
            return r

        return g


def main() -> None:
    n, eps = int(float(sys.argv[1])), float(sys.argv[2])
    out = sys.argv[3] if len(sys.argv) > 3 else "pmfs.bin"
    w = Traced(fft.kernels())
    for m in list(sys.modules.values()):
        if getattr(m, "__name__", "").startswith("sharpdp") and "kernels" in getattr(m, "__dict__", {}):
            m.kernels = lambda: w  # type: ignore[attr-defined]
    t = time.process_time()
    print(ShuffleAccountant(GaussianRandomizer(0.5, 1), n).get_delta_bounds(eps))
    print("call CPU s", time.process_time() - t)
    print({k: (int(c), round(s, 4)) for k, (c, s) in w.counts.items()})
    with open(out, "wb") as f:
        for g, (k0, h, *_) in w.edges[:1]:
            f.write(struct.pack("<qqd", len(g), k0, h))
            f.write(g.tobytes())


if __name__ == "__main__":
    main()
