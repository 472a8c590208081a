"""LatticePrivUnit (exact integer-lattice release, pure Python) against PrivUnit.sample (float, not safe).

Run (CPU time, best of 3 fresh processes per case, messages per CPU second):
    python bench/bench_privunit_lattice.py
or through pytest-benchmark:
    python -m pytest bench/bench_privunit_lattice.py --benchmark-only --benchmark-group-by=group

The lattice sampler costs about expected_proposals x dim exact discrete-Gaussian draws per message
(Canonne, Kamath and Steinke, Algorithm 3, on Python integers); the float sampler is numpy + C++.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from sharpdp.shuffle import LatticePrivUnit, PrivUnit

#: (dim, theta, messages timed by the lattice sampler); p = 0.7 throughout
CASES = [(3, 0.2, 3000), (16, 0.2, 400), (100, 0.2, 20), (100, 0.05, 60)]
P = 0.7
FLOAT_N = 100_000


def _inputs(d: int, n: int) -> np.ndarray:
    x = np.random.default_rng(0).normal(size=(n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _one(kind: str, d: int, theta: float, n: int) -> float:
    """Messages per CPU second of one call (this process)."""
    import time

    x = _inputs(d, n)
    if kind == "lattice":
        r = LatticePrivUnit(P, theta, d)
        t0 = time.process_time()
        r.sample(x, rng=1, threads=1)
    else:
        r = PrivUnit(P, theta, d)
        t0 = time.process_time()
        r.sample(x, rng=1, threads=1)
    return n / (time.process_time() - t0)


@pytest.mark.parametrize("d,theta,n", CASES)
def test_lattice(benchmark, d, theta, n):
    r, x = LatticePrivUnit(P, theta, d), _inputs(d, max(1, n // 10))
    benchmark.group = f"privunit d={d} theta={theta}"
    benchmark.pedantic(r.sample, args=(x,), kwargs=dict(rng=1, threads=1), rounds=3, iterations=1)


@pytest.mark.parametrize("d,theta,n", CASES)
def test_float(benchmark, d, theta, n):
    r, x = PrivUnit(P, theta, d), _inputs(d, FLOAT_N)
    benchmark.group = f"privunit d={d} theta={theta}"
    benchmark.pedantic(r.sample, args=(x,), kwargs=dict(rng=1, threads=1), rounds=3, iterations=1)


def main() -> None:
    rows = []
    for d, theta, n in CASES:
        out = {}
        for kind, m in (("lattice", n), ("float", FLOAT_N)):
            runs = []
            for _ in range(3):
                code = (f"import sys; sys.path.insert(0, {str(__file__.rsplit('/', 1)[0])!r}); "
                        f"import bench_privunit_lattice as B; print(B._one({kind!r}, {d}, {theta}, {m}))")
                runs.append(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                                 check=True).stdout))
            out[kind] = max(runs)
        r = LatticePrivUnit(P, theta, d)
        rows.append(dict(dim=d, theta=theta, expected_proposals=round(r.expected_proposals, 2),
                         sampler_tv=r.sampler_tv, lattice_msgs_per_cpu_s=round(out["lattice"], 1),
                         float_msgs_per_cpu_s=round(out["float"]), ratio=round(out["float"] / out["lattice"])))
        print(json.dumps(rows[-1]), flush=True)


if __name__ == "__main__":
    main()
