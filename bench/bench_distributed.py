"""Shuffle-model private mean on Dask vs the single-process path, on synthetic Parquet.

Run the comparison (the table in bench/README.md):

    python bench/bench_distributed.py --rows 1e7            # 1e8: --rows 1e8 (needs ~4 GB disk)

It writes ``--rows`` synthetic rows (4 numeric columns, sharpdp.distributed.generate) as
Parquet files of 1e6 rows, calibrates one blanket-mixed Gaussian at that n (not timed), then

- single process: reads the Parquet files into memory (pandas/pyarrow), clips and scales,
  randomizes with the C++ sampler on 1 thread, and sums exactly (a child process, so its peak
  RSS is its own);
- Dask: ``private_mean`` on a LocalCluster of ``--workers`` single-threaded worker processes
  (two passes over the files: row counts, then randomization and exact sums);

and prints rows/s end to end, the peak RSS of the single process and of each Dask worker, and
the randomizer's throughput per core inside the Dask tasks against the C++ sampler alone on
one thread over an in-memory array of the same shape.

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
path, gamma, sigma0 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
cols = ["dep_delay", "arr_delay", "air_time", "distance"]
bounds = np.array([[-120.0, 1440.0], [-120.0, 1440.0], [0.0, 720.0], [0.0, 5000.0]])
t0 = time.perf_counter()
frame = pd.concat([pd.read_parquet(f, columns=cols) for f in sorted(glob.glob(path + "/*.parquet"))],
                  ignore_index=True)
x = frame.to_numpy(dtype=np.float64)
del frame
x = x[np.all(np.isfinite(x), axis=1)]
z, _ = UnitBallScaling(bounds).to_unit_ball(x)
del x
bmg = BlanketMixedGaussian(gamma, sigma0, 4)
t1 = time.perf_counter()
y = bmg.sample(z, rng=1, threads=1)
t2 = time.perf_counter()
est = bmg.estimate(y)
t3 = time.perf_counter()
print(json.dumps({"n": len(z), "seconds": t3 - t0, "sample_seconds": t2 - t1, "estimate": est.tolist(),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _peak_rss_mb(dask_worker=None) -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(rows: int, workers: int, data: str | None) -> dict:
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
        single = json.loads(subprocess.run([sys.executable, "-c", _SINGLE, path, repr(bmg.gamma), repr(bmg.sigma0)],
                                           check=True, capture_output=True, text=True).stdout)
        with cluster(workers=workers) as eng:
            t = time.perf_counter()
            res = private_mean(path, COLUMNS, BOUNDS, EPS, DELTA, rng=1, randomizer=bmg, client=eng.client)
            seconds = time.perf_counter() - t
            rss = sorted(eng.client.run(_peak_rss_mb).values())
        x = np.random.default_rng(0).uniform(-0.4, 0.4, size=(min(rows, 10**7), 4))
        t = time.perf_counter()
        BlanketMixedGaussian(bmg.gamma, bmg.sigma0, 4).sample(x, rng=1, threads=1)
        alone = x.shape[0] / (time.perf_counter() - t)
    assert np.array_equal(res.private_mean_scaled, np.array(single["estimate"])), "engines disagree"
    return {
        "rows": res.n, "partitions": res.partitions, "workers": res.workers, "calibration_seconds": calib,
        "single_seconds": single["seconds"], "single_rows_per_s": res.n / single["seconds"],
        "single_peak_rss_mb": single["peak_rss_mb"],
        "dask_seconds": seconds, "dask_rows_per_s": res.n / seconds, "dask_worker_peak_rss_mb": rss,
        "sampler_rows_per_s_per_core_in_dask": res.n / res.sample_seconds,
        "sampler_rows_per_s_single_process": res.n / single["sample_seconds"],
        "sampler_rows_per_s_alone_1_thread": alone,
        "estimates_bit_identical": True,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=float, default=1e7, help="rows to generate (default 1e7; the issue's size: 1e8)")
    p.add_argument("--workers", type=int, default=2, help="Dask workers (default 2)")
    p.add_argument("--data", default=None, help="use this Parquet directory instead of generating one")
    a = p.parse_args(argv)
    r = run(int(a.rows), a.workers, a.data)
    print(json.dumps(r, indent=2))
    ratio = r["sampler_rows_per_s_alone_1_thread"] / r["sampler_rows_per_s_per_core_in_dask"]
    print(f"randomizer per core in Dask vs the C++ sampler alone: {ratio:.2f}x slower "
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
