"""Sampler throughput: C++ blanket-mixed Gaussian sampler vs a plain numpy implementation.

Run: python -m pytest bench/bench_samplers.py --benchmark-only --benchmark-group-by=group
Both draw n = 1e6 messages in d = 10 (the same mechanism: sigma0 * N(0, I) plus the input
with probability 1 - gamma), in the same run, on the same inputs.
"""

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian

N, D, GAMMA, SIGMA0 = 1_000_000, 10, 0.95, 4.6


@pytest.fixture(scope="module")
def x():
    rng = np.random.default_rng(0)
    v = rng.standard_normal((N, D))
    return v / np.linalg.norm(v, axis=1, keepdims=True) * rng.uniform(0, 1, (N, 1))


def numpy_bmg(x, rng):
    """The same mechanism in plain numpy (ziggurat normals from numpy's Generator)."""
    n, d = x.shape
    keep = rng.random(n) >= GAMMA  # informative messages
    return rng.standard_normal((n, d)) * SIGMA0 + keep[:, None] * x


def test_numpy_baseline(benchmark, x):
    benchmark.group = "BMG sampler n=1e6 d=10"
    benchmark.extra_info.update(impl="numpy", n=N, d=D)
    rng = np.random.default_rng(1)
    y = benchmark(numpy_bmg, x, rng)
    assert y.shape == (N, D)


@pytest.mark.parametrize("threads", [1, 2])
def test_cpp_sampler(benchmark, x, threads):
    benchmark.group = "BMG sampler n=1e6 d=10"
    benchmark.extra_info.update(impl="sharpdp C++", threads=threads, n=N, d=D)
    bmg = BlanketMixedGaussian(GAMMA, SIGMA0, D)
    y = benchmark(bmg.sample, x, rng=1, threads=threads)
    assert y.shape == (N, D)
