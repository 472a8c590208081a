"""GeneralRandomizer (Numba) sampler and certified construction, with baselines in the same run.

Run: python -m pytest bench/bench_general.py --benchmark-only --benchmark-group-by=group
The mechanism is the 1-D blanket-mixed Gaussian (gamma = 0.9, sigma0 = 1) given as densities
truncated to [-8, 8] and renormalised; n = 1e6 inputs on a 21-point grid of [-1, 1].
Baselines: plain numpy and the C++ BlanketMixedGaussian sampler of the same mechanism.
"""

import pathlib
import sys

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GeneralRandomizer

# the truncated BMG densities of the test suite (one definition for tests and bench)
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from test_shuffle_randomizers_general import GAM, SIG, TR, tbmg, tphi  # noqa: E402

N = 1_000_000


def build():
    return GeneralRandomizer(tbmg, [-1.0, 1.0], (-TR, TR), blanket=tphi, gamma=GAM, cells=512, log_curvature=1.0)


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(0).choice(np.linspace(-1, 1, 21), N)


@pytest.fixture(scope="module")
def gen():
    g = build()
    g.sample(np.zeros(4), rng=0)  # JIT compile outside the timing
    return g


def test_numpy_baseline(benchmark, x):
    benchmark.group = "1-D BMG sampler n=1e6"
    benchmark.extra_info.update(impl="numpy")
    rng = np.random.default_rng(1)
    y = benchmark(lambda: SIG * rng.standard_normal(N) + (rng.random(N) >= GAM) * x)
    assert y.shape == (N,)


def test_cpp_bmg(benchmark, x):
    benchmark.group = "1-D BMG sampler n=1e6"
    benchmark.extra_info.update(impl="sharpdp C++ BlanketMixedGaussian")
    y = benchmark(BlanketMixedGaussian(GAM, SIG, 1).sample, x[:, None], rng=1, threads=1)
    assert y.shape == (N, 1)


def test_general_sampler(benchmark, x, gen):
    benchmark.group = "1-D BMG sampler n=1e6"
    benchmark.extra_info.update(impl="GeneralRandomizer (Numba inverse CDF)")
    y = benchmark(gen.sample, x, rng=1)
    assert y.shape == (N,)


def test_general_certified_construction(benchmark, gen):
    benchmark.group = "GeneralRandomizer construction (log_curvature)"
    benchmark.extra_info.update(intervals=gen.error_bounds["intervals"])
    g = benchmark.pedantic(build, rounds=3, iterations=1)
    assert g.certified
