"""Shuffle-model private mean over a partitioned table (Dask).

Driver: read the schema, count the complete rows per partition (pass 1, on the workers),
calibrate the blanket-mixed Gaussian randomizer at the table's n and certify delta with the
shuffle accountant (once), then randomize every partition on the workers (pass 2) with random
streams keyed by the global row position, and combine the workers' exact partial sums.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from sharpdp.distributed._engine import check_numeric, engine_for, non_numeric_error, open_table


@dataclass
class MeanResult:
    """A shuffle-model private mean and the figures that describe it.

    The same fields whichever engine computed it; ``engine``, ``partitions`` and ``workers``
    say where. Units: means, bounds and ``expected_rmse_original_units`` in the data's units;
    ``*_scaled`` and ``expected_rmse_per_coordinate`` in unit-ball coordinates; epsilon and
    delta as in (epsilon [nats], delta)-DP.

    Attributes
    ----------
    private_mean : numpy.ndarray of float64, shape (d,)
        The released estimate of the mean of the clipped data (original units).
    private_mean_scaled : numpy.ndarray of float64, shape (d,)
        The same in unit-ball coordinates: the randomizer's unbiased estimate.
    true_mean, true_mean_clipped : numpy.ndarray of float64, shape (d,)
        Mean of the complete rows, before and after clipping (NOT private: for evaluation; left out
        of the repr, like ``true_mean_clipped_scaled`` and ``messages``).
    true_mean_clipped_scaled : numpy.ndarray of float64, shape (d,)
        The clipped mean in unit-ball coordinates (NOT private), the estimate's target.
    n, d : int
        Complete rows used, columns.
    columns : list of str
    bounds : numpy.ndarray of float64, shape (d, 2)
    bounds_public : bool
        False when the bounds were taken from the data (then not covered by the guarantee).
    rows_dropped_missing, values_clipped : int
        Rows dropped for a missing value in any chosen column; values clipped to the bounds, all columns.
    values_clipped_per_column : numpy.ndarray of int64, shape (d,)
        Values clipped to the bounds, per column (NOT private, like ``values_clipped``).
    rounds : int
        Releases of this mean the calibration covers (K-round composition, ``rounds=`` of :func:`private_mean`).
    composed_certifications : int
        K > 1: candidates of the K-round calibration, each certified by one K-round composition; else 0.
    randomizer : sharpdp.shuffle.BlanketMixedGaussian
        The calibrated randomizer.
    epsilon, delta_target, delta_certified : float
        Target epsilon (nats), target delta and the accountant's certified delta <= target.
    delta_bounds : tuple of float
        (lower, upper) bracket of the shuffled protocol's delta at epsilon (under the call's adjacency).
    engine : str
    partitions : int
    workers : int or None
        Workers of the Dask cluster (None: Dask's local threaded scheduler).
    messages : numpy.ndarray of float64, shape (n, d), or None
        The messages in global row order (not shuffled), only with ``keep_messages=True``.
        Not covered by the shuffled guarantee (they are linked to rows).
    sample_seconds : float
        Wall time spent in the randomizer, summed over the tasks (seconds of one thread each).
    sample_cpu_seconds : float
        CPU time of the task threads in the randomizer, summed over the tasks (seconds). With
        ``threads=1`` the sampler runs on the task's thread, so this is its whole CPU time (on a
        loaded machine the figure that does not depend on the load); with ``threads > 1`` the
        sampler's other threads are not counted.
    warnings : list of str
    accountant_evaluations : int
        Accountant evaluations (``get_delta_bounds`` calls) behind ``delta_bounds``: the calibration's
        (``calibrate_bmg_report``), or 1 for a given ``randomizer``.
    """

    private_mean: np.ndarray
    private_mean_scaled: np.ndarray
    # Not private (evaluation only): kept out of the repr, so that printing or logging a result
    # does not put them next to the release.
    true_mean: np.ndarray = field(repr=False)
    true_mean_clipped: np.ndarray = field(repr=False)
    true_mean_clipped_scaled: np.ndarray = field(repr=False)
    n: int
    d: int
    columns: list
    bounds: np.ndarray
    bounds_public: bool
    rows_dropped_missing: int
    values_clipped: int
    randomizer: Any
    epsilon: float
    delta_target: float
    delta_certified: float
    delta_bounds: tuple
    engine: str
    partitions: int
    workers: int | None
    source: str = ""
    messages: np.ndarray | None = field(default=None, repr=False)
    warnings: list = field(default_factory=list)
    sample_seconds: float = 0.0
    sample_cpu_seconds: float = 0.0
    accountant_evaluations: int = 0
    values_clipped_per_column: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    rounds: int = 1
    composed_certifications: int = 0

    @property
    def expected_rmse_per_coordinate(self) -> float:
        """sqrt(release_mse_single / (n d)): the estimator's worst-case RMSE per coordinate on the grid
        release (unit-ball units; docs/sampling.md §7)."""
        return math.sqrt(self.randomizer.release_mse_single / (self.n * self.d))


def _complete(part, ncols: int) -> tuple[np.ndarray, int]:
    """Rows of a pandas partition as float64 (m, d) with the rows holding a NaN dropped (an inf is refused)."""
    from sharpdp.apps.datasets import check_no_infinite
    values = np.ascontiguousarray(part.to_numpy(dtype=np.float64, na_value=np.nan)).reshape(-1, ncols)
    check_no_infinite(values, [str(c) for c in part.columns])
    keep = np.all(np.isfinite(values), axis=1)
    if keep.all():
        return values, 0
    return np.ascontiguousarray(values[keep]), int((~keep).sum())


def _count_task(part, ncols: int, want_range: bool) -> dict:
    """Pass 1 on a worker: complete rows, dropped rows, exact column sums, and min/max if asked."""
    from sharpdp._kernels.exact_sum import exact_column_sums

    values, dropped = _complete(part, ncols)
    out = {"rows": values.shape[0], "dropped": dropped, "sum": exact_column_sums(values)}
    if want_range and values.shape[0]:
        out["lo"], out["hi"] = values.min(axis=0), values.max(axis=0)
    return out


def _randomize_task(part, ncols: int, scaling, randomizer, rng_state, offset: int, total: int,
                    threads: int, keep: bool) -> dict:
    """Pass 2 on a worker: clip and scale, randomize rows [offset, offset + m), exact partial sums."""
    from sharpdp._kernels.exact_sum import exact_column_sums

    values, _ = _complete(part, ncols)
    if values.shape[0] == 0:
        return {"sum_y": [0] * ncols, "sum_z": [0] * ncols, "sum_c": [0] * ncols, "clipped": np.zeros(ncols, np.int64),
                "messages": None,
                "sample_seconds": 0.0, "sample_cpu_seconds": 0.0}
    z, clipped = scaling.to_unit_ball(values, per_column=True)
    # a private copy of the driver's generator: every partition derives the same 64-bit seed
    start, cpu = time.perf_counter(), time.thread_time()
    messages = randomizer.sample(z, rng=copy.deepcopy(rng_state), threads=threads, row_offset=offset,
                                 total_rows=total)
    seconds, cpu_seconds = time.perf_counter() - start, time.thread_time() - cpu
    # the clipped rows' sums in original units (a diagnostic): equal to pass 1's when nothing is clipped
    sum_c = exact_column_sums(np.clip(values, scaling.bounds[:, 0], scaling.bounds[:, 1]))
    return {"sum_y": exact_column_sums(messages), "sum_z": exact_column_sums(z), "sum_c": sum_c, "clipped": clipped,
            "messages": messages if keep else None, "sample_seconds": seconds, "sample_cpu_seconds": cpu_seconds}


def private_mean(data, columns: Sequence[str], bounds, epsilon: float, delta: float, *, rng=None,
                 randomizer=None, client=None, threads: int = 1, keep_messages: bool = False,
                 progress: bool = False, rounds: int = 1, adjacency: str = "zero_out") -> MeanResult:
    """Shuffle-model private mean of numeric columns of a partitioned table, on Dask.

    Same pipeline and randomness as ``sharpdp mean`` on one machine: each complete row is
    clipped to the public ``bounds`` and mapped into the unit L2 ball, a blanket-mixed
    Gaussian randomizer is calibrated so that the shuffled protocol is certified
    (epsilon, delta)-DP at the table's n (``adjacency``, zero-out by default; *Shuffling-aware optimization
    for private vector mean estimation*, Algorithm "Blanket-Mixed Gaussian Mechanism"), every
    row is randomized, and the mean is estimated by the unbiased linear estimator
    ``sum(Y) / (n (1 - gamma) c)`` (ibid., eq. (gaussian-blanket-unbiased-estimator); c = the
    randomizer's ``grid_scale``, 1 for dim 1, docs/sampling.md §4).

    Calibration and accounting run once, on the driver; reading, randomization and the sums
    run on the workers, one partition at a time (memory per task ~ a few copies of one
    partition). The random stream of a row is keyed by its global position (the order of the
    partitions, then of the rows), so for a given ``rng`` the messages are bit-identical to
    those of ``BlanketMixedGaussian.sample`` on the whole table, whatever the partitioning,
    the number of workers and the scheduling order. Partial sums are exact (integers in units
    of 2**-1074), so the estimate is the correctly rounded mean of the messages divided by
    ``estimate_scale`` = (1 - gamma) c: bit-identical across partitionings and to ``BlanketMixedGaussian.estimate``.
    The estimate is a symmetric function of the messages, so it is the analyzer's output on
    the shuffled messages; no physical shuffle is needed.

    Parameters
    ----------
    data : dask.dataframe.DataFrame or str or os.PathLike
        The table, or a Parquet file/directory or a CSV file/glob.
    columns : sequence of str
        d >= 1 numeric columns. Rows with a missing or non-finite value in any of them are
        dropped (and counted).
    bounds : array_like of float, shape (d, 2), or None
        Public clipping bounds ``(lo, hi)`` per column. ``None`` takes each column's min/max
        from the data (an extra pass): NOT covered by the privacy guarantee (a warning is
        added to the result).
    epsilon : float
        Target epsilon > 0 (nats).
    delta : float
        Target delta in (0, 1).
    rng : numpy.random.Generator, int, SeedSequence or None
        Source of the randomizer's seed, as for ``BlanketMixedGaussian.sample`` (a Generator
        is advanced by that one draw).
    randomizer : sharpdp.shuffle.BlanketMixedGaussian, optional
        A randomizer calibrated beforehand (e.g. by ``calibrate_bmg`` at this n) to use instead
        of calibrating; it is still certified by the accountant at the table's n, and refused
        (ValueError) if its delta at ``epsilon`` exceeds ``delta`` or its dim is not d.
    client : distributed.Client or None
        Cluster to run on (default: the active default Client, else Dask's threads).
    threads : int, default 1
        Sampler threads per task (parallelism comes from Dask's workers).
    keep_messages : bool, default False
        Also gather the messages (n, d) on the driver in row order: for tests and small data.
    progress : bool, default False
        Show a progress bar per pass (stderr; partitions done out of all).
    rounds : int, default 1
        K >= 1 releases of this mean on the same data: the randomizer is calibrated so that K rounds compose to
        (epsilon, delta) (``calibrate_bmg_report(..., rounds=K)``, docs/composition.md §4.1); ``delta_bounds``
        is then the K-round composed bracket. Not with a given ``randomizer``.
    adjacency : {"zero_out", "replace"}, default "zero_out"
        The neighbouring relation the guarantee is for (docs/embedding.md §1): zero-out (one row replaced by the
        null record) or replace-one (one row changed into any other row).

    Returns
    -------
    MeanResult

    Raises
    ------
    ValueError
        Bad path, absent or non-numeric column, no complete row, bad bounds, epsilon or delta;
        a calibration that cannot be certified; a worker that died or a lost cluster (the job
        is aborted, nothing partial is returned).
    TypeError
        If ``data`` is neither a Dask DataFrame nor a path.
    """
    from sharpdp import _validation as V
    from sharpdp._kernels.exact_sum import mean_from_exact_sums
    from sharpdp._rng import as_generator
    from sharpdp.apps.datasets import UnitBallScaling
    from sharpdp.shuffle import BlanketMixedGaussian, calibrate_bmg_report
    from sharpdp.shuffle.accountant import ShuffleAccountant

    import dask

    epsilon = V.real("epsilon", epsilon, lo=0.0, lo_open=True)
    delta = V.probability_open("delta", delta)
    threads = V.integer("threads", threads, lo=1)
    rounds = V.integer("rounds", rounds, lo=1)
    from sharpdp.shuffle.adjacency import check_adjacency

    adjacency = check_adjacency(adjacency)
    if rounds > 1:
        if randomizer is not None:
            raise ValueError("rounds: a given randomizer is certified for one round only; pass rounds=1 or no "
                             "randomizer")
        from sharpdp.shuffle.calibration.rounds import check_rounds_range

        check_rounds_range(epsilon, rounds)
    columns = [str(c) for c in columns] if not isinstance(columns, str) else [columns]
    if not columns:
        raise ValueError("columns: no column selected")
    if len(set(columns)) != len(columns):
        raise ValueError(f"columns: duplicated column in {columns}")
    d = len(columns)
    if bounds is not None:
        from sharpdp.apps.datasets import check_bounds

        bounds = check_bounds(bounds, d)
    gen = as_generator(rng)
    frame, source = open_table(data, columns)
    check_numeric(frame, columns, source)
    engine = engine_for(client)
    parts = frame.to_delayed()
    nparts = len(parts)

    try:
        first = engine.compute([dask.delayed(_count_task)(p, d, bounds is None) for p in parts],
                               "data (pass 1: count rows)", progress)
    except ValueError as exc:
        raise non_numeric_error(exc, columns, source, data) from None
    sizes = [r["rows"] for r in first]
    n = int(sum(sizes))
    dropped = int(sum(r["dropped"] for r in first))
    if n == 0:
        raise ValueError(f"data: no complete rows in {source} for columns {', '.join(columns)}")
    warnings: list[str] = []
    if bounds is None:
        from sharpdp.apps.datasets import data_bounds, data_bounds_warning

        lo = np.min([r["lo"] for r in first if "lo" in r], axis=0)
        hi = np.max([r["hi"] for r in first if "hi" in r], axis=0)
        bounds = data_bounds(np.stack([lo, hi]))
        warnings.append(data_bounds_warning())
    scaling = UnitBallScaling(bounds)
    sum_raw = [sum(r["sum"][j] for r in first) for j in range(d)]

    if randomizer is None:
        # the calibration's certified bracket is the release's (the local CLI reports the same one)
        cal = calibrate_bmg_report(n, epsilon, delta, d, rounds=rounds, progress=progress, adjacency=adjacency)
        bmg, evaluations, composed = cal.randomizer, cal.evaluations, cal.composed_certifications
        delta_lo, delta_cert = (float(v) for v in cal.delta_bounds)
    elif not isinstance(randomizer, BlanketMixedGaussian) or randomizer.dim != d:
        raise ValueError(f"randomizer must be a BlanketMixedGaussian of dim {d}, got {randomizer!r}")
    else:
        bmg, evaluations, composed = randomizer, 1, 0
        delta_lo, delta_cert = (float(v) for v in ShuffleAccountant(bmg, n, adjacency).get_delta_bounds(epsilon))
    if not delta_cert <= delta:  # the calibration verified this already; a given randomizer may fail
        raise ValueError(f"randomizer: certified delta {delta_cert:.6g} at epsilon = {epsilon:g} and n = {n} "
                         f"exceeds the target {delta:g}")

    snapshot = copy.deepcopy(gen)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
    tasks = [dask.delayed(_randomize_task)(p, d, scaling, bmg, snapshot, off, n, threads, keep_messages)
             for p, off, m in zip(parts, offsets, sizes)]
    second = engine.compute(tasks, "data (pass 2: randomize)", progress)
    from sharpdp._rng import core_key

    core_key(gen)  # advance the caller's generator by the draw the sampler made
    sum_y = [sum(r["sum_y"][j] for r in second) for j in range(d)]
    sum_z = [sum(r["sum_z"][j] for r in second) for j in range(d)]
    sum_c = [sum(r["sum_c"][j] for r in second) for j in range(d)]
    est_z = mean_from_exact_sums(sum_y, n) / bmg.estimate_scale
    true_z = mean_from_exact_sums(sum_z, n)
    messages = None
    if keep_messages:
        messages = np.concatenate([r["messages"] for r in second if r["messages"] is not None])
    return MeanResult(
        private_mean=scaling.to_original(est_z), private_mean_scaled=est_z,
        true_mean=mean_from_exact_sums(sum_raw, n), true_mean_clipped=mean_from_exact_sums(sum_c, n),
        true_mean_clipped_scaled=true_z,
        n=n, d=d, columns=columns, bounds=scaling.bounds, bounds_public=not warnings,
        rows_dropped_missing=dropped, values_clipped=int(sum(int(r["clipped"].sum()) for r in second)),
        values_clipped_per_column=np.sum([r["clipped"] for r in second], axis=0).astype(np.int64),
        rounds=rounds, composed_certifications=composed,
        randomizer=bmg, epsilon=epsilon, delta_target=delta, delta_certified=delta_cert,
        delta_bounds=(delta_lo, delta_cert), engine=engine.name, partitions=nparts,
        workers=engine.workers, source=source, messages=messages, warnings=warnings,
        sample_seconds=float(sum(r["sample_seconds"] for r in second)),
        sample_cpu_seconds=float(sum(r["sample_cpu_seconds"] for r in second)),
        accountant_evaluations=evaluations)
