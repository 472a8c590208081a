"""Shifted-log Gaussian release ("Better Privacy Guarantees for Larger Groups", eq. (4)) of 1e7 counts:
the exact grid release of sharpdp (C++, docs/histogram_release.md) vs the former floating-point
release (``_core.histogram.release_float``, porous: NOT private as released) vs plain numpy.

Run: ``python -m pytest bench/bench_histogram.py --benchmark-only``. Each group holds the
sharpdp releases and the numpy implementation of the same mechanism, so the ratios are read
off one table; ``extra_info`` records counts per second. ``python bench/bench_histogram.py``
prints CPU time per count (the figure a loaded machine does not inflate much), also at
several counts n (the exact sampler's work depends a little on n).
"""

import math

import numpy as np
import pytest
from sharpdp.histogram import ShiftedLogGaussian

N = 10_000_000
MECH = ShiftedLogGaussian(0.2)  # r0 = 0.1, c = 1


@pytest.fixture(scope="module")
def counts():
    return np.random.default_rng(0).integers(0, 10_000, N).astype(np.float64)


def numpy_release(counts, rng, integer):
    """Eq. (4) with clipping (and stochastic rounding) in vectorised numpy."""
    s, c = MECH.sigma, MECH.c
    y = (counts + c) * np.exp(s * rng.standard_normal(counts.size) - s * s) - c
    np.maximum(y, 0.0, out=y)
    if integer:
        fl = np.floor(y)
        y = fl + (rng.random(counts.size) < y - fl)
    return y


def _record(benchmark):
    benchmark.extra_info["counts"] = N
    benchmark.extra_info["Mcounts_per_s"] = N / benchmark.stats.stats.min / 1e6


@pytest.mark.parametrize("integer", [False, True], ids=["float", "integer"])
@pytest.mark.parametrize("threads", [1, 2])
def test_sharpdp_release(benchmark, counts, integer, threads):
    benchmark.group = f"histogram release 1e7 ({'integer' if integer else 'float'})"
    out = benchmark.pedantic(MECH.release, args=(counts,), kwargs={"rng": 1, "integer": integer, "threads": threads},
                             rounds=5, iterations=1, warmup_rounds=1)
    assert out.shape == counts.shape and np.all(out >= 0)
    _record(benchmark)


@pytest.mark.parametrize("integer", [False, True], ids=["float", "integer"])
def test_float_reference_release(benchmark, counts, integer):
    from sharpdp._core_loader import core
    from sharpdp._rng import core_key

    benchmark.group = f"histogram release 1e7 ({'integer' if integer else 'float'})"
    out = benchmark.pedantic(core.histogram.release_float, args=(counts, MECH.c, MECH.sigma, core_key(1), integer, 1),
                             rounds=5, iterations=1, warmup_rounds=1)
    assert out.shape == counts.shape
    _record(benchmark)


@pytest.mark.parametrize("integer", [False, True], ids=["float", "integer"])
def test_numpy_release(benchmark, counts, integer):
    benchmark.group = f"histogram release 1e7 ({'integer' if integer else 'float'})"
    rng = np.random.default_rng(1)
    out = benchmark.pedantic(numpy_release, args=(counts, rng, integer), rounds=3, iterations=1, warmup_rounds=1)
    assert out.shape == counts.shape
    _record(benchmark)


def cpu_table(reps: int = 7) -> list[tuple[str, float, float]]:
    """(name, CPU ns per count, wall ms) of each release, best of ``reps`` interleaved rounds.

    CPU time (all threads of the process) is what a loaded machine does not inflate much;
    wall time moves with the load. Run ``python bench/bench_histogram.py``.
    """
    import resource
    import time

    from sharpdp._core_loader import core
    from sharpdp._rng import core_key

    counts_ = np.random.default_rng(0).integers(0, 10_000, N).astype(np.float64)
    rng = np.random.default_rng(1)

    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    key = core_key(1)
    fns = {
        "grid (exact), 1 thread": lambda: MECH.release(counts_, rng=1, threads=1),
        "grid (exact), 2 threads": lambda: MECH.release(counts_, rng=1, threads=2),
        "former float (porous), 1 thread": lambda: core.histogram.release_float(counts_, MECH.c, MECH.sigma, key, False, 1),
        "numpy float": lambda: numpy_release(counts_, rng, False),
        "grid integer, 1 thread": lambda: MECH.release(counts_, rng=1, integer=True, threads=1),
        "former float integer, 1 thread": lambda: core.histogram.release_float(counts_, MECH.c, MECH.sigma, key, True,
                                                                                1),
        "numpy integer": lambda: numpy_release(counts_, rng, True),
        "ziggurat normals only, 1 thread": lambda: core.samplers.standard_normals(N, key, 1),
    }
    best = {k: (math.inf, math.inf) for k in fns}
    for _ in range(reps):
        for k, f in fns.items():
            c0, w0 = cpu(), time.perf_counter()
            f()
            c1, w1 = cpu(), time.perf_counter()
            best[k] = (min(best[k][0], c1 - c0), min(best[k][1], w1 - w0))
    return [(k, c * 1e9 / N, w * 1e3) for k, (c, w) in best.items()]


def cpu_by_count(reps: int = 3, size: int = 2_000_000) -> list[tuple[str, float, int]]:
    """(count n, CPU ns per count, deferred draws) of the exact grid release, 1 thread, counts all equal to n."""
    import resource

    from sharpdp._core_loader import core
    from sharpdp._rng import core_key

    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    rows = []
    for n in (0, 1, 100, 12_345, 10**6, 10**9, 10**12):
        counts_ = np.full(size, float(n))
        best, deferred = math.inf, 0
        for _ in range(reps):
            c0 = cpu()
            res = core.histogram.release(counts_, MECH.c, MECH.sigma, MECH.grid_bits, core_key(2), False, 1)
            best = min(best, cpu() - c0)
            deferred = res[1].size
        rows.append((f"n = {n:.0e}" if n >= 1000 else f"n = {n}", best * 1e9 / size, deferred))
    return rows


if __name__ == "__main__":
    table = cpu_table()
    for name, ns, ms in table:
        print(f"{name:34s} CPU {ns:6.2f} ns/count   wall {ms:7.1f} ms ({N / ms / 1e3:6.1f} M counts/s)")
    cpu_ns = {name: ns for name, ns, _ in table}
    for mode, exact, porous in (("float", "grid (exact), 1 thread", "former float (porous), 1 thread"),
                                ("integer", "grid integer, 1 thread", "former float integer, 1 thread")):
        print(f"{mode:7s} output: exact {1e3 / cpu_ns[exact]:5.1f} M counts/s per core of CPU time, "
              f"{cpu_ns[exact] / cpu_ns[porous]:4.2f}x the CPU time of the porous float release")
    for name, ns, deferred in cpu_by_count():
        print(f"grid release {name:12s} CPU {ns:6.2f} ns/count   deferred to mpmath: {deferred} per 2e6")
