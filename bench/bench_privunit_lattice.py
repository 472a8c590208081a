"""LatticePrivUnit (exact integer-lattice release): compiled sampler, pure-Python reference, float PrivUnit.

Run (CPU time, best of 3 fresh processes per case, messages per CPU second, one thread):
    python bench/bench_privunit_lattice.py
or through pytest-benchmark:
    python -m pytest bench/bench_privunit_lattice.py --benchmark-only --benchmark-group-by=group

The lattice sampler costs about expected_proposals x dim exact discrete-Gaussian draws per message
(Canonne, Kamath and Steinke, Algorithm 3). ``LatticePrivUnit.sample`` runs them in the C++ core on
fixed-width exact integers and converts the integers to Python ints; the reference is the same algorithm
on Python integers (same messages, bit for bit; docs/sampling.md §10.6); the float sampler
(``PrivUnit.sample``, not a release) is numpy + C++.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from sharpdp.shuffle import LatticePrivUnit, PrivUnit
from sharpdp.shuffle.randomizers._lattice_reference import ExactCone, reference_message
from sharpdp.shuffle.randomizers.privunit_lattice import LATTICE_STREAM

#: (dim, theta, messages timed by the compiled lattice sampler, by the Python reference); p = 0.7 throughout
CASES = [(3, 0.2, 200_000, 2000), (16, 0.2, 30_000, 300), (100, 0.2, 1000, 10), (100, 0.05, 10_000, 40)]
P = 0.7
FLOAT_N = 100_000
KINDS = ("lattice", "reference", "float")


def _inputs(d: int, n: int) -> np.ndarray:
    x = np.random.default_rng(0).normal(size=(n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _reference_sample(r: LatticePrivUnit, x: np.ndarray, key: bytes) -> list[list[int]]:
    return [reference_message(key, LATTICE_STREAM + i, ExactCone(row, r.theta), r.p, 1 << r.scale_bits, r.dim)
            for i, row in enumerate(x)]


def _one(kind: str, d: int, theta: float, n: int) -> float:
    """Messages per CPU second of one call (this process)."""
    import time

    x = _inputs(d, n)
    if kind == "float":
        f = PrivUnit(P, theta, d)
        t0 = time.process_time()
        f.sample(x, rng=1, threads=1)
    else:
        r = LatticePrivUnit(P, theta, d)
        t0 = time.process_time()
        if kind == "lattice":
            r.sample(x, rng=1, threads=1)
        else:
            _reference_sample(r, x, bytes(32))
    return n / (time.process_time() - t0)


@pytest.mark.parametrize("d,theta,n,n_ref", CASES)
def test_lattice(benchmark, d, theta, n, n_ref):
    r, x = LatticePrivUnit(P, theta, d), _inputs(d, max(1, n // 10))
    benchmark.group = f"privunit d={d} theta={theta}"
    benchmark.pedantic(r.sample, args=(x,), kwargs=dict(rng=1, threads=1), rounds=3, iterations=1)


@pytest.mark.parametrize("d,theta,n,n_ref", CASES)
def test_reference(benchmark, d, theta, n, n_ref):
    r, x = LatticePrivUnit(P, theta, d), _inputs(d, max(1, n_ref // 10))
    benchmark.group = f"privunit d={d} theta={theta}"
    benchmark.pedantic(_reference_sample, args=(r, x, bytes(32)), rounds=3, iterations=1)


@pytest.mark.parametrize("d,theta,n,n_ref", CASES)
def test_float(benchmark, d, theta, n, n_ref):
    r, x = PrivUnit(P, theta, d), _inputs(d, FLOAT_N)
    benchmark.group = f"privunit d={d} theta={theta}"
    benchmark.pedantic(r.sample, args=(x,), kwargs=dict(rng=1, threads=1), rounds=3, iterations=1)


def main() -> None:
    for d, theta, n, n_ref in CASES:
        out = {}
        for kind, m in zip(KINDS, (n, n_ref, FLOAT_N)):
            runs = []
            for _ in range(3):
                code = (f"import sys; sys.path.insert(0, {str(__file__.rsplit('/', 1)[0])!r}); "
                        f"import bench_privunit_lattice as B; print(B._one({kind!r}, {d}, {theta}, {m}))")
                runs.append(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                                 check=True).stdout))
            out[kind] = max(runs)
        r = LatticePrivUnit(P, theta, d)
        print(json.dumps(dict(dim=d, theta=theta, expected_proposals=round(r.expected_proposals, 2),
                              sampler_tv=r.sampler_tv, lattice_msgs_per_cpu_s=round(out["lattice"]),
                              reference_msgs_per_cpu_s=round(out["reference"], 1),
                              float_msgs_per_cpu_s=round(out["float"]),
                              lattice_over_reference=round(out["lattice"] / out["reference"]),
                              float_over_lattice=round(out["float"] / out["lattice"], 1))), flush=True)


if __name__ == "__main__":
    main()
