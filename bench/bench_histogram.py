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


SHIFTS = (1.0, 1e6, 1e9, 1e12)


def _load_build(so_path: str):
    """A build of ``_core`` loaded from its .so alone (sharpdp not imported)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_bench_core._core", so_path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _shift_setup(r: float, size: int, c: float) -> tuple[np.ndarray, bytes, float, int]:
    """(counts uniform on 0..9999, key, sigma, grid exponent) as ``ShiftedLogGaussian(r, c=c)``."""
    from math import ceil, log2, sqrt

    from scipy.special import erfinv

    counts_ = np.random.default_rng(0).integers(0, 10_000, size).astype(np.float64)
    key = np.random.default_rng(1).integers(0, 2**63, 4, dtype=np.int64).astype("<u8").tobytes()
    r0 = r / 2.0
    bits = max(10, ceil(log2(8.0 / (r - r0))))
    return counts_, key, float(sqrt(2.0) * erfinv(r0 / (1.0 + c))), bits


def _instr_worker(so_path: str, r: float, size: int) -> None:
    """Under callgrind: one region per (kernel, c) of the build ``so_path``, ``size`` counts."""
    import _instr  # bench/ helper (this file's directory is on sys.path when run as a script)

    mod = _load_build(so_path)
    region = _instr.Region()
    for c in SHIFTS:
        counts_, key, sigma, bits = _shift_setup(r, size, c)
        region.start()
        mod.histogram.release(counts_, c, sigma, bits, key, False, 1)
        region.dump(f"exact c={c:g}")
        region.start()
        mod.histogram.release_float(counts_, c, sigma, key, False, 1)
        region.dump(f"porous c={c:g}")


def instr_by_shift(builds: dict[str, str], r: float = 0.2, size: int = 200_000) -> dict[str, dict[str, float]]:
    """Instructions per count (callgrind, load-proof) by shift c of several builds of ``_core``."""
    import sys

    import _instr

    out = {}
    for name, path in builds.items():
        got, _ = _instr.count([sys.executable, __file__, "--instr-worker", path, str(r), str(size)])
        out[name] = {k: v / size for k, v in got.items()}
    return out


def _shift_worker(so_path: str, r: float, reps: int, size: int) -> dict[str, float]:
    """CPU ns/count of one build of ``_core`` (``so_path``), loaded alone in this process.

    For each shift c in ``SHIFTS``: the exact grid release kernel (deferred draws not resolved)
    and the porous float release, 1 thread, ``size`` counts uniform on 0..9999, best of ``reps``.
    sharpdp is not imported (a second pybind11 build of the same types cannot load beside it):
    sigma and the grid exponent come from the same formulas as ``ShiftedLogGaussian(r)``.
    """
    import resource

    mod = _load_build(so_path)

    def cpu():
        u = resource.getrusage(resource.RUSAGE_SELF)
        return u.ru_utime + u.ru_stime

    out: dict[str, float] = {}
    for c in SHIFTS:
        counts_, key, sigma, bits = _shift_setup(r, size, c)
        for name, fn in (("exact", lambda: mod.histogram.release(counts_, c, sigma, bits, key, False, 1)),
                         ("porous", lambda: mod.histogram.release_float(counts_, c, sigma, key, False, 1))):
            best = math.inf
            for _ in range(reps):
                c0 = cpu()
                res = fn()
                best = min(best, cpu() - c0)
            out[f"{name} c={c:g}"] = best * 1e9 / size
            if name == "exact":
                out[f"deferred c={c:g}"] = float(res[1].size)
    return out


def cpu_by_shift(builds: dict[str, str], r: float = 0.2, rounds: int = 3, reps: int = 2,
                 size: int = 2_000_000) -> dict[str, dict[str, float]]:
    """CPU ns/count by shift c of several builds of ``_core`` (name -> .so path), same run.

    Each round runs every build in a fresh process (interleaved, so the load of a shared machine
    hits them alike); the result keeps each figure's minimum over rounds.
    """
    import json
    import subprocess
    import sys

    best: dict[str, dict[str, float]] = {name: {} for name in builds}
    for _ in range(rounds):
        for name, path in builds.items():
            cmd = [sys.executable, __file__, "--shift-worker", path, str(r), str(reps), str(size)]
            got = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            for k, v in got.items():
                best[name][k] = min(best[name].get(k, math.inf), v)
    return best


def print_by_shift(builds: dict[str, str], instr: bool = False) -> None:
    """Print ``cpu_by_shift``: exact and porous CPU ns/count and their ratio per c and build
    (with ``instr``: also callgrind instructions per count, ``instr_by_shift``)."""
    res = cpu_by_shift(builds)
    ins = instr_by_shift(builds) if instr else {}
    for name, fig in res.items():
        for c in SHIFTS:
            ex, po = fig[f"exact c={c:g}"], fig[f"porous c={c:g}"]
            line = (f"{name:10s} c = {c:7.0e}: exact {ex:6.2f} ns/count, porous {po:6.2f} ns/count, "
                    f"ratio {ex / po:4.2f}x, deferred {int(fig[f'deferred c={c:g}'])} per {2_000_000:.0e}")
            if name in ins:
                ie, ip = ins[name][f"exact c={c:g}"], ins[name][f"porous c={c:g}"]
                line += f"; instructions/count {ie:5.0f} vs {ip:5.0f} ({ie / ip:4.2f}x)"
            print(line)


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 1 and sys.argv[1] == "--shift-worker":
        import json

        print(json.dumps(_shift_worker(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))))
        sys.exit(0)
    if len(sys.argv) > 1 and sys.argv[1] == "--instr-worker":
        _instr_worker(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))
        sys.exit(0)
    if len(sys.argv) > 1 and sys.argv[1] in ("--by-shift", "--by-shift-instr"):
        # python bench/bench_histogram.py --by-shift[-instr] [name=path.so ...]: this build and
        # others (e.g. a copy of a former build's _core*.so) in the same run
        from sharpdp._core_loader import core

        builds = {"this": str(core.__file__)}
        builds.update(dict(a.split("=", 1) for a in sys.argv[2:]))
        print_by_shift(builds, instr=sys.argv[1] == "--by-shift-instr")
        sys.exit(0)
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
