"""Shuffle-model private mean on Dask vs the single-process path, on synthetic Parquet.

Run the comparison (the table in bench/README.md):

    python bench/bench_distributed.py --rows 1e8 --single-rows 2e7   # ~0.55 GB of Parquet under $TMPDIR

It writes ``--rows`` synthetic rows (4 numeric columns, sharpdp.distributed.generate) as
Parquet files of 1e6 rows (in a temporary directory, deleted afterwards), calibrates one
blanket-mixed Gaussian at that n (not timed), then

- single process: reads the first ``--single-rows`` rows' Parquet files into memory
  (pandas/pyarrow), clips and scales, randomizes with the C++ sampler on 1 thread, and sums
  exactly (a child process, so its peak RSS is its own); ``--single-rows`` defaults to
  ``--rows`` (the estimates of both engines are then checked to be bit-identical) and should be
  the largest size that fits in memory (about 180 bytes per row);
- Dask: ``private_mean`` on a LocalCluster of ``--workers`` single-threaded worker processes
  (two passes over the files: row counts, then randomization and exact sums);

and prints rows/s end to end (wall time, and per CPU second of all the processes involved), the
peak RSS of the single process and of each Dask worker, and the randomizer's throughput per
core inside the Dask tasks against the C++ sampler alone on one thread over an in-memory array
of the same shape (by wall time and by the CPU time of the sampling thread: with ``threads=1``
the C++ sampler runs on the calling thread, so its thread CPU time does not depend on how many
other jobs share the cores). The machine's 1-minute load average is sampled every 2 s during
each phase (min/mean/max in the output): on a shared machine the wall times mean little
without it.

``python -m pytest bench/bench_distributed.py --benchmark-only`` runs a small pytest-benchmark
version (1e6 rows, in-process cluster).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

COLUMNS = ["dep_delay", "arr_delay", "air_time", "distance"]
BOUNDS = np.array([[-120.0, 1440.0], [-120.0, 1440.0], [0.0, 720.0], [0.0, 5000.0]])
EPS, DELTA = 0.01, 1e-6

_SINGLE = r"""
import glob, json, resource, sys, time
import numpy as np, pandas as pd
from sharpdp.apps.datasets import UnitBallScaling
from sharpdp.shuffle import BlanketMixedGaussian
path, gamma, sigma0, nfiles = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
cols = ["dep_delay", "arr_delay", "air_time", "distance"]
bounds = np.array([[-120.0, 1440.0], [-120.0, 1440.0], [0.0, 720.0], [0.0, 5000.0]])
t0 = time.perf_counter()
frame = pd.concat([pd.read_parquet(f, columns=cols) for f in sorted(glob.glob(path + "/*.parquet"))[:nfiles]],
                  ignore_index=True)
x = frame.to_numpy(dtype=np.float64)
del frame
x = x[np.all(np.isfinite(x), axis=1)]
z, _ = UnitBallScaling(bounds).to_unit_ball(x)
del x
bmg = BlanketMixedGaussian(gamma, sigma0, 4)
bmg.sample(z[:1000], rng=1, threads=1)  # warm-up (first call loads the core module)
t1, c1 = time.perf_counter(), time.thread_time()
y = bmg.sample(z, rng=1, threads=1)
t2, c2 = time.perf_counter(), time.thread_time()
est = bmg.estimate(y)
t3 = time.perf_counter()
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"n": len(z), "seconds": t3 - t0, "sample_seconds": t2 - t1, "sample_cpu_seconds": c2 - c1,
                  "estimate": est.tolist(), "cpu_seconds": ru.ru_utime + ru.ru_stime,
                  "peak_rss_mb": ru.ru_maxrss / 1024}))
"""


def _peak_rss_mb(dask_worker=None) -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_seconds(dask_worker=None) -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


class LoadAverage:
    """Samples the 1-minute load average (/proc/loadavg) every ``period`` s in a thread."""

    def __init__(self, period: float = 2.0):
        self.period, self.samples = period, []

    def _read(self) -> None:
        try:
            with open("/proc/loadavg") as f:
                self.samples.append(float(f.read().split()[0]))
        except OSError:  # not Linux: no figure
            pass

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            self._read()

    def __enter__(self):
        import threading

        self._stop = threading.Event()
        self._read()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._read()

    def summary(self) -> dict:
        s = self.samples
        return {"min": min(s), "mean": round(sum(s) / len(s), 2), "max": max(s)} if s else {}


def run(rows: int, workers: int, data: str | None, single_rows: int | None = None) -> dict:
    from sharpdp.distributed import cluster, generate, private_mean
    from sharpdp.shuffle import BlanketMixedGaussian, calibrate_bmg

    with tempfile.TemporaryDirectory(prefix="sharpdp-bench-") as tmp:
        path = data or os.path.join(tmp, "data")
        if data is None:
            t = time.perf_counter()
            generate.write(path, rows, seed=0)
            print(f"generated {rows:.3g} rows in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        t = time.perf_counter()
        bmg = calibrate_bmg(rows, EPS, DELTA, 4)
        calib = time.perf_counter() - t
        single_rows = rows if single_rows is None else min(single_rows, rows)
        nfiles = -(-single_rows // 10**6)  # the files hold 1e6 rows each
        print(f"single process on {single_rows:.3g} rows ...", file=sys.stderr)
        with LoadAverage() as load_single:
            single = json.loads(subprocess.run(
                [sys.executable, "-c", _SINGLE, path, repr(bmg.gamma), repr(bmg.sigma0), str(nfiles)],
                check=True, capture_output=True, text=True).stdout)
        print(f"dask, {workers} workers, on {rows:.3g} rows ...", file=sys.stderr)
        with cluster(workers=workers) as eng, LoadAverage() as load_dask:
            cpu0 = sum(eng.client.run(_cpu_seconds).values())
            t, driver = time.perf_counter(), time.process_time()
            res = private_mean(path, COLUMNS, BOUNDS, EPS, DELTA, rng=1, randomizer=bmg, client=eng.client)
            seconds, driver = time.perf_counter() - t, time.process_time() - driver
            worker_cpu = sum(eng.client.run(_cpu_seconds).values()) - cpu0
            rss = sorted(eng.client.run(_peak_rss_mb).values())
        x = np.random.default_rng(0).uniform(-0.4, 0.4, size=(min(rows, 10**7), 4))
        BlanketMixedGaussian(bmg.gamma, bmg.sigma0, 4).sample(x[:1000], rng=1, threads=1)  # warm-up
        with LoadAverage() as load_alone:
            t, c = time.perf_counter(), time.thread_time()
            BlanketMixedGaussian(bmg.gamma, bmg.sigma0, 4).sample(x, rng=1, threads=1)
            alone, alone_cpu = x.shape[0] / (time.perf_counter() - t), x.shape[0] / (time.thread_time() - c)
    same_rows = single["n"] == res.n
    if same_rows:
        assert np.array_equal(res.private_mean_scaled, np.array(single["estimate"])), "engines disagree"
    return {
        "rows": res.n, "single_rows": single["n"], "partitions": res.partitions, "workers": res.workers,
        "calibration_seconds": calib,
        "single_seconds": single["seconds"], "single_rows_per_s": single["n"] / single["seconds"],
        "single_peak_rss_mb": single["peak_rss_mb"],
        "single_cpu_seconds": single["cpu_seconds"], "single_rows_per_cpu_s": single["n"] / single["cpu_seconds"],
        "dask_seconds": seconds, "dask_rows_per_s": res.n / seconds, "dask_worker_peak_rss_mb": rss,
        "dask_cpu_seconds_workers": worker_cpu, "dask_cpu_seconds_driver": driver,
        "dask_rows_per_cpu_s": res.n / (worker_cpu + driver),
        # the randomizer: wall time (load-dependent) and CPU time of its thread (load-independent)
        "sampler_rows_per_s_per_core_in_dask": res.n / res.sample_seconds,
        "sampler_rows_per_s_single_process": single["n"] / single["sample_seconds"],
        "sampler_rows_per_s_alone_1_thread": alone,
        "sampler_rows_per_cpu_s_in_dask": res.n / res.sample_cpu_seconds,
        "sampler_rows_per_cpu_s_single_process": single["n"] / single["sample_cpu_seconds"],
        "sampler_rows_per_cpu_s_alone_1_thread": alone_cpu,
        "estimates_bit_identical": True if same_rows else "not compared (different sizes)",
        "load_average_1min": {"single": load_single.summary(), "dask": load_dask.summary(),
                              "sampler_alone": load_alone.summary()},
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=float, default=1e7, help="rows to generate (default 1e7; the documented large size: 1e8)")
    p.add_argument("--workers", type=int, default=2, help="Dask workers (default 2)")
    p.add_argument("--single-rows", type=float, default=None,
                   help="rows for the single-process path (default: --rows; it holds ~180 bytes per row in memory)")
    p.add_argument("--data", default=None, help="use this Parquet directory (of --rows rows in files of 1e6 rows) "
                   "instead of generating one")
    a = p.parse_args(argv)
    r = run(int(a.rows), a.workers, a.data, None if a.single_rows is None else int(a.single_rows))
    print(json.dumps(r, indent=2))
    wall = r["sampler_rows_per_s_alone_1_thread"] / r["sampler_rows_per_s_per_core_in_dask"]
    print(f"randomizer in Dask vs the C++ sampler alone, by wall time (load-dependent): {wall:.2f}x slower",
          file=sys.stderr)
    ratio = r["sampler_rows_per_cpu_s_alone_1_thread"] / r["sampler_rows_per_cpu_s_in_dask"]
    print(f"randomizer per core (CPU time) in Dask vs the C++ sampler alone: {ratio:.2f}x slower "
          f"({'within' if ratio <= 2 else 'NOT within'} 2x)", file=sys.stderr)
    return 0


# ---------------------------------------------------------------- pytest-benchmark (small)
try:
    import pytest

    # Dask's Parquet reader calls a pandas-3.1-deprecated API (warnings are errors under pytest here)
    pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.reset_index is deprecated")
except ImportError:  # pragma: no cover - the script runs without pytest
    pass


def test_dask_private_mean_1e6(benchmark, tmp_path):
    from sharpdp.distributed import cluster, generate, private_mean
    from sharpdp.shuffle import calibrate_bmg

    generate.write(str(tmp_path / "d"), 10**6, rows_per_file=250_000, progress=False)
    bmg = calibrate_bmg(10**6, EPS, DELTA, 4)
    benchmark.group = "private mean, 1e6 rows x 4 columns, Parquet"
    with cluster(workers=2, processes=False) as eng:
        res = benchmark(private_mean, str(tmp_path / "d"), COLUMNS, BOUNDS, EPS, DELTA, rng=1, randomizer=bmg,
                        client=eng.client)
    assert res.n == 10**6


if __name__ == "__main__":
    sys.exit(main())
