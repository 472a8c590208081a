"""Sampler throughput: the release BMG sampler (grid, exact; docs/sampling.md §2) side by side
with the former floating-point sampler (kept private, tests and benchmarks only), a plain numpy
implementation of the float mechanism, and OpenDP's samplers as a peer.

Run: python -m pytest bench/bench_samplers.py --benchmark-only --benchmark-group-by=group
     python bench/bench_samplers.py        # a short table of messages/s (CPU time, one thread)

Groups (same inputs, same run):
- "BMG d=1 n=1e6": grid (release) vs float reference, gamma in {0.95, 0}, sigma0 = 4.6, one thread;
  the goal (>= 10 M messages/s per core, within 3x of the float sampler).
- "BMG d=10 n=1e5": grid vs float reference vs numpy.
- "peer d=1 n=2e4": OpenDP 0.16 make_gaussian (float, exact: Canonne-Kamath-Steinke on a grid)
  and its discrete Gaussian on the integers, if ``import opendp`` works.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from sharpdp.shuffle import BlanketMixedGaussian

N1, N10, D, SIGMA0 = 1_000_000, 100_000, 10, 4.6
N_PEER = 20_000


def _x(n, d, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, d))
    return v / np.linalg.norm(v, axis=1, keepdims=True) * rng.uniform(0, 1, (n, 1))


@pytest.fixture(scope="module")
def x1():
    return _x(N1, 1)


@pytest.fixture(scope="module")
def x10():
    return _x(N10, D)


def numpy_bmg(x, gamma, rng):
    """The float mechanism in plain numpy (numpy's ziggurat normals): not a release sampler."""
    n, d = x.shape
    keep = rng.random(n) >= gamma
    return rng.standard_normal((n, d)) * SIGMA0 + keep[:, None] * x


@pytest.mark.parametrize("gamma", [0.95, 0.0])
@pytest.mark.parametrize("impl", ["grid (release)", "float reference"])
def test_bmg_d1(benchmark, x1, gamma, impl):
    benchmark.group = "BMG d=1 n=1e6"
    benchmark.extra_info.update(impl=impl, gamma=gamma, sigma0=SIGMA0, n=N1, threads=1)
    bmg = BlanketMixedGaussian(gamma, SIGMA0, 1)
    bmg.sample(x1[:10], rng=1)  # build the noise table outside the timing
    fn = bmg.sample if impl.startswith("grid") else bmg._sample_float_reference
    y = benchmark(fn, x1, rng=1, threads=1)
    assert y.shape == (N1, 1)


@pytest.mark.parametrize("impl", ["grid (release)", "float reference", "numpy"])
def test_bmg_d10(benchmark, x10, impl):
    benchmark.group = "BMG d=10 n=1e5"
    benchmark.extra_info.update(impl=impl, gamma=0.95, n=N10, d=D, threads=1)
    bmg = BlanketMixedGaussian(0.95, SIGMA0, D)
    bmg.sample(x10[:10], rng=1)
    if impl == "numpy":
        y = benchmark(numpy_bmg, x10, 0.95, np.random.default_rng(1))
    else:
        fn = bmg.sample if impl.startswith("grid") else bmg._sample_float_reference
        y = benchmark(fn, x10, rng=1, threads=1)
    assert y.shape == (N10, D)


def _opendp_measurements():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    cont = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float),
                              scale=SIGMA0)
    disc = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int), scale=294.4)
    return {"opendp gaussian (float)": (cont, [0.0] * N_PEER), "opendp gaussian (int, scale 294.4)": (disc, [0] * N_PEER)}


@pytest.mark.parametrize("impl", ["opendp gaussian (float)", "opendp gaussian (int, scale 294.4)"])
def test_peer_opendp(benchmark, impl):
    benchmark.group = "peer d=1 n=2e4"
    pytest.importorskip("opendp.prelude")
    m, x = _opendp_measurements()[impl]
    benchmark.extra_info.update(impl=impl, n=N_PEER)
    y = benchmark.pedantic(m, args=(x,), rounds=3, iterations=1)
    assert len(y) == N_PEER


def _rate(fn, n, repeats=7):
    best = float("inf")
    for _ in range(repeats):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return n / best


def main():  # pragma: no cover - manual run
    x = _x(N1, 1)
    print("messages/s per core (CPU time, best of 7), d = 1, sigma0 = 4.6")
    for gamma in (0.95, 0.0):
        bmg = BlanketMixedGaussian(gamma, SIGMA0, 1)
        bmg.sample(x[:10], rng=1)
        grid = _rate(lambda b=bmg: b.sample(x, rng=1, threads=1), N1)
        flt = _rate(lambda b=bmg: b._sample_float_reference(x, rng=1, threads=1), N1)
        print(f"  gamma={gamma}: grid (release) {grid / 1e6:6.1f} M/s   float reference {flt / 1e6:6.1f} M/s   "
              f"ratio {flt / grid:.2f}")
    try:
        import opendp.prelude  # noqa: F401
    except ImportError:
        return
    for name, (m, xs) in _opendp_measurements().items():
        print(f"  {name}: {_rate(lambda m=m, xs=xs: m(xs), N_PEER, 2) / 1e3:.1f} k/s")


if __name__ == "__main__":  # pragma: no cover
    main()
