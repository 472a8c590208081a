"""sharpdp.distributed on a Dask LocalCluster: reproducibility across partitionings and workers,
agreement with the single-machine path, and failure modes."""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import os

import numpy as np
import pytest

if any(importlib.util.find_spec(m) is None for m in ("dask", "distributed", "pandas")):
    pytest.skip("needs dask, distributed and pandas", allow_module_level=True)


class _Lazy:
    """A module imported at its first use: collecting this file does not import Dask and pandas (~1 s of CPU in
    every xdist worker, while one worker runs these tests)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(self._name), attr)


dd, pd = _Lazy("dask.dataframe"), _Lazy("pandas")

from sharpdp.cli import main  # noqa: E402
from sharpdp.apps.datasets import UnitBallScaling  # noqa: E402
from sharpdp.distributed import cluster, private_mean, release_histogram  # noqa: E402
from sharpdp.histogram import ShiftedLogGaussian  # noqa: E402

# Dask's Parquet reader still calls DataFrame.reset_index(inplace=True), deprecated by pandas 3.1:
# a third-party warning, not ours (warnings are errors in this suite).
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.reset_index is deprecated")

COLUMNS = ["a", "b", "c", "e"]
BOUNDS = np.array([[0.0, 20.0], [-5.0, 5.0], [0.0, 10.0], [-1.0, 1.0]])
EPS, DELTA, SEED = 0.05, 1e-5, 20260101
N_ROWS = 3000
KEYS = ["AA", "B6", "DL", "UA", "ZZ"]  # public domain; ZZ never occurs in the data


def _table(n=N_ROWS, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "a": rng.gamma(2.0, 4.0, n),  # some values above the bound 20: clipped
        "b": rng.normal(0.0, 2.0, n),
        "c": rng.integers(0, 12, n).astype(float),
        "e": rng.uniform(-1, 1, n),
        "carrier": rng.choice(["AA", "B6", "DL", "UA", "XX"], n, p=[0.4, 0.3, 0.2, 0.08, 0.02]),
    })
    df.loc[rng.choice(n, 25, replace=False), "b"] = np.nan  # missing values: rows dropped
    df.loc[rng.choice(n, 10, replace=False), "carrier"] = None  # missing keys: rows dropped
    return df


@pytest.fixture(scope="module")
def table():
    return _table()


@pytest.fixture(scope="module")
def complete(table):
    return table[COLUMNS].dropna().to_numpy(dtype=np.float64)


@pytest.fixture(scope="module")
def bmg(complete):
    from sharpdp.shuffle import calibrate_bmg

    return calibrate_bmg(complete.shape[0], EPS, DELTA, len(COLUMNS))


@pytest.fixture(scope="module")
def reference(complete, bmg):
    """The single-machine path on the complete rows in file order."""
    z, clipped = UnitBallScaling(BOUNDS).to_unit_ball(complete)
    messages = bmg.sample(z, rng=np.random.default_rng(SEED))
    return {"messages": messages, "estimate": bmg.estimate(messages), "z": z, "clipped": clipped}


@pytest.fixture(scope="module")
def clients():
    """Two in-process clusters (1 and 2 workers); tcp so the CLI can join with --scheduler."""
    out = {}
    with cluster(workers=1, processes=False) as one, cluster(workers=2, processes=False) as two:
        out[1], out[2] = one.client, two.client
        yield out


def _uneven(df: "pd.DataFrame", cuts: list[int]):
    """A Dask DataFrame whose partitions are the row ranges between ``cuts`` (empty ones allowed)."""
    edges = [0, *cuts, len(df)]
    pieces = [df.iloc[lo:hi].reset_index(drop=True) for lo, hi in zip(edges[:-1], edges[1:])]
    return dd.from_map(lambda i: pieces[i], range(len(pieces)), meta=df.iloc[:0])


# ---------------------------------------------------------------- mean: reproducibility
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("nparts", [1, 3, 8])
def test_mean_bit_identical_across_partitions_and_workers(table, bmg, reference, clients, nparts, workers):
    ddf = dd.from_pandas(table, npartitions=nparts, sort=False)
    res = private_mean(ddf, COLUMNS, BOUNDS, EPS, DELTA, rng=SEED, randomizer=bmg, client=clients[workers],
                       keep_messages=True)
    assert (res.partitions, res.workers, res.engine) == (ddf.npartitions, workers, "dask")
    assert np.array_equal(res.messages, reference["messages"])
    assert np.array_equal(res.private_mean_scaled, reference["estimate"])
    # the estimate against an independent exact-rational mean of the messages
    for j in range(len(COLUMNS)):
        exact = math.fsum(reference["messages"][:, j]) / reference["messages"].shape[0] / bmg.estimate_scale
        assert res.private_mean_scaled[j] == pytest.approx(exact, rel=1e-13, abs=1e-15)
    assert res.n == reference["z"].shape[0] and res.rows_dropped_missing == len(table) - res.n
    assert res.values_clipped == reference["clipped"]
    assert np.allclose(res.true_mean, table[COLUMNS].dropna().mean().to_numpy(), rtol=1e-13)


def test_mean_uneven_and_empty_partitions_threads_scheduler(table, bmg, reference):
    # no client: Dask's local threaded scheduler; one empty partition and one with a single row
    ddf = _uneven(table, [0, 1, 700, 700, 2999])
    res = private_mean(ddf, COLUMNS, BOUNDS, EPS, DELTA, rng=np.random.default_rng(SEED), randomizer=bmg,
                       keep_messages=True)
    assert res.workers is None and res.partitions == 6
    assert np.array_equal(res.messages, reference["messages"])
    assert np.array_equal(res.private_mean_scaled, reference["estimate"])


def test_mean_from_parquet_dir_and_csv_glob(tmp_path, table, bmg, reference, clients):
    pq_dir = tmp_path / "pq"
    pq_dir.mkdir()
    csv_dir = tmp_path / "csv"
    csv_dir.mkdir()
    for i, (lo, hi) in enumerate([(0, 1000), (1000, 1001), (1001, N_ROWS)]):
        table.iloc[lo:hi].to_parquet(pq_dir / f"part-{i}.parquet", index=False)
        table.iloc[lo:hi].to_csv(csv_dir / f"part-{i}.csv", index=False)
    for path in (str(pq_dir), str(csv_dir / "part-*.csv")):
        res = private_mean(path, COLUMNS, BOUNDS, EPS, DELTA, rng=SEED, randomizer=bmg, client=clients[2],
                           keep_messages=True)
        assert res.partitions >= 3 and res.source == path
        assert np.array_equal(res.messages, reference["messages"])
        assert np.array_equal(res.private_mean_scaled, reference["estimate"])


def test_mean_calibrates_and_certifies_on_the_driver(table, bmg, clients):
    from sharpdp.shuffle.accountant import ShuffleAccountant

    res = private_mean(dd.from_pandas(table, npartitions=2), COLUMNS, BOUNDS, EPS, DELTA, rng=1,
                       client=clients[2])
    assert (res.randomizer.gamma, res.randomizer.sigma0) == (bmg.gamma, bmg.sigma0)  # calibrated at this n
    assert res.delta_certified == ShuffleAccountant(bmg, res.n).get_delta(EPS) <= DELTA
    assert res.delta_bounds[0] <= res.delta_certified
    # an estimate of the clipped mean within 6 expected RMSEs
    err = np.abs(res.private_mean_scaled - res.true_mean_clipped_scaled)
    assert np.all(err < 6 * res.expected_rmse_per_coordinate)
    # a randomizer that is not private enough at this n is refused
    with pytest.raises(ValueError, match="randomizer: certified delta"):
        private_mean(dd.from_pandas(table, npartitions=2), COLUMNS, BOUNDS, EPS / 2, DELTA, rng=1,
                     randomizer=bmg, client=clients[2])


# ---------------------------------------------------------------- CLI against the single-machine path
def _cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _local_and_dask(capsys, clients, common, csv, local_extra, dask_extra):
    """The same CLI command on the single-machine path (--csv) and on the Dask engine: both JSON outputs."""
    code, out, err = _cli(capsys, *common, "--csv", str(csv), *local_extra)
    assert code == 0, err
    local = json.loads(out)
    code, out, err = _cli(capsys, *common, "--data", str(csv), "--engine", "dask", "--scheduler",
                          clients[2].scheduler.address, *dask_extra)
    assert code == 0, err
    remote = json.loads(out)
    assert (remote["engine"], remote["workers"], remote["partitions"]) == ("dask", 2, 1)
    return local, remote


def test_cli_mean_dask_matches_cli_mean_csv(tmp_path, table, clients, capsys):
    csv = tmp_path / "t.csv"
    table.to_csv(csv, index=False)
    common = ["mean", "--columns", ",".join(COLUMNS), "--bounds", "0:20,-5:5,0:10,-1:1",
              "--epsilon", str(EPS), "--delta", str(DELTA), "--seed", str(SEED), "--json"]
    local, remote = _local_and_dask(capsys, clients, common, csv, ["--diagnostics", str(tmp_path / "local.csv")],
                                    ["--diagnostics", str(tmp_path / "remote.csv")])
    assert "true_mean" not in remote and remote["diagnostics"]["csv"] == str(tmp_path / "remote.csv")
    assert remote["private_mean"] == local["private_mean"]
    for key in ("n", "d", "bmg", "delta_certified", "delta_bounds", "rounds", "accountant_evaluations",
                "reproducible_seeded_mode", "expected_rmse_per_coordinate", "central_gaussian"):
        assert remote[key] == local[key], key
    # the realised error (a diagnostic) is computed from exact sums on Dask, from numpy means locally
    analyst_local, analyst_remote = local["analyst_only_not_private"], remote["analyst_only_not_private"]
    assert analyst_remote.keys() == analyst_local.keys()
    for key, value in analyst_local.items():
        assert analyst_remote[key] == pytest.approx(value, rel=1e-12), key
    true_local, true_remote = (np.genfromtxt(tmp_path / f, delimiter=",", names=True, dtype=None, encoding="utf-8")
                               for f in ("local.csv", "remote.csv"))
    assert np.allclose(true_remote["true_mean"], table[COLUMNS].dropna().mean().to_numpy(), rtol=1e-13)
    assert np.allclose(true_remote["true_mean"], true_local["true_mean"], rtol=1e-13)
    assert true_remote["private_mean"].tolist() == local["private_mean"]
    code, out, err = _cli(capsys, *common[:-1], "--data", str(csv), "--engine", "dask", "--scheduler",
                          clients[2].scheduler.address)
    assert code == 0 and "engine     : dask (1 partition, 2 workers)" in out


def test_cli_mean_bounds_from_data_same_on_both_engines_and_analyst_only(tmp_path, table, clients, capsys):
    csv = tmp_path / "t.csv"
    table.to_csv(csv, index=False)
    common = ["mean", "--columns", ",".join(COLUMNS), "--epsilon", str(EPS), "--delta", str(DELTA),
              "--seed", str(SEED), "--json"]
    # refused without --bounds or --bounds-from-data, on the Dask engine as on the local one
    code, out, err = _cli(capsys, *common, "--data", str(csv), "--engine", "dask", "--scheduler",
                          clients[2].scheduler.address)
    assert code == 2 and json.loads(out)["parameter"] == "--bounds" and err.startswith(
        "sharpdp mean: error: --bounds: the --data dataset needs public clipping bounds"), err
    local, remote = _local_and_dask(capsys, clients, [*common, "--bounds-from-data"], csv, [], [])
    complete = table[COLUMNS].dropna().to_numpy(dtype=np.float64)
    minmax = np.column_stack([complete.min(axis=0), complete.max(axis=0)]).tolist()
    for r in (local, remote):
        a = r["analyst_only_not_private"]
        assert a["bounds"] == minmax and r["bounds"] is None
        assert r["expected_rmse_original_units"] is None and r["central_gaussian"]["rmse_original_units"] is None
        assert a["expected_rmse_original_units"] is not None and a["central_rmse_original_units"] is not None
        assert r["warnings"][0].startswith("bounds taken from the data's min/max are NOT covered")
    assert remote["private_mean"] == local["private_mean"]
    assert remote["analyst_only_not_private"] == local["analyst_only_not_private"]


# ---------------------------------------------------------------- histogram
def _reference_counts(table, keys):
    kept = table["carrier"].dropna()
    return np.array([(kept == k).sum() for k in keys], dtype=np.int64)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("nparts", [1, 3, 8])
def test_histogram_bit_identical_across_partitions_and_workers(table, clients, nparts, workers):
    mech = ShiftedLogGaussian(0.1)
    ddf = dd.from_pandas(table, npartitions=nparts, sort=False)
    res = release_histogram(ddf, "carrier", mech, keys=KEYS, rng=SEED, client=clients[workers])
    counts = _reference_counts(table, KEYS)
    assert res.keys["carrier"].tolist() == KEYS
    assert np.array_equal(res.true_counts, counts) and counts[-1] == 0  # the empty group is released too
    assert np.array_equal(res.released, mech.release(counts, rng=SEED))
    assert res.rows_dropped_missing_key == table["carrier"].isna().sum() == 10
    assert res.rows_dropped_outside_domain == (table["carrier"] == "XX").sum() > 0
    assert res.keys_outside_domain == 1
    assert (res.partitions, res.workers) == (ddf.npartitions, workers)


def test_histogram_two_columns_integer_and_keys_from_data(tmp_path, table, clients):
    mech = ShiftedLogGaussian(0.2, c=0.5)
    df = table.assign(month=(np.arange(len(table)) % 3 + 1))
    df.to_parquet(tmp_path / "h.parquet", index=False)
    domain = pd.DataFrame([(c, str(m)) for c in KEYS for m in (1, 2, 3, 4)], columns=["carrier", "month"])
    res = release_histogram(str(tmp_path / "h.parquet"), ["carrier", "month"], mech, keys=domain, rng=7,
                            integer=True, client=clients[2])
    kept = df.dropna(subset=["carrier"]).astype({"month": str})
    counts = np.array([((kept.carrier == c) & (kept.month == m)).sum() for c, m in domain.itertuples(index=False)])
    assert np.array_equal(res.true_counts, counts)
    assert np.array_equal(res.released, mech.release(counts, rng=7, integer=True))
    assert np.all(res.released == np.floor(res.released))
    # keys from the data: sorted, with a warning
    res = release_histogram(_uneven(table, [5, 5, 1200]), "carrier", mech, keys_from_data=True, rng=7)
    assert res.keys["carrier"].tolist() == ["AA", "B6", "DL", "UA", "XX"]
    assert "NOT protected" in res.warnings[0]
    assert np.array_equal(res.released, mech.release(_reference_counts(table, res.keys["carrier"]), rng=7))


# ---------------------------------------------------------------- bad input
def test_bad_inputs_are_one_line_value_errors(tmp_path, table, bmg, clients):
    c = clients[2]
    args = (COLUMNS, BOUNDS, EPS, DELTA)
    with pytest.raises(ValueError, match="data: file not found"):
        private_mean(str(tmp_path / "missing.parquet"), *args, client=c)
    with pytest.raises(ValueError, match="data: no file matches"):
        private_mean(str(tmp_path / "*.csv"), *args, client=c)
    with pytest.raises(ValueError, match="columns: no column 'zz'"):
        private_mean(dd.from_pandas(table, npartitions=2), ["a", "zz"], BOUNDS[:2], EPS, DELTA, client=c)
    with pytest.raises(ValueError, match="columns: column 'carrier' .*not numeric"):
        private_mean(dd.from_pandas(table, npartitions=2), ["a", "carrier"], BOUNDS[:2], EPS, DELTA, client=c)
    # a text value deep inside a numeric CSV column (past the sample Dask infers dtypes from)
    bad = table.astype({"c": object})
    bad.loc[2500, "c"] = "n/a?"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError) as info:
        private_mean(str(tmp_path / "bad.csv"), *args, randomizer=bmg, client=c)
    # the column and the count (reference: the one cell written above), never the cell (docs/histogram_release.md §10)
    assert str(info.value).startswith(f"columns: column 'c' is not numeric: 1 of its {len(bad)} rows holds a value ")
    assert "n/a?" not in str(info.value)
    assert "\n" not in str(info.value).strip()
    with pytest.raises(ValueError, match="bounds must have shape"):
        private_mean(dd.from_pandas(table, npartitions=2), COLUMNS, BOUNDS[:3], EPS, DELTA, client=c)
    with pytest.raises(TypeError, match="data must be a dask DataFrame or a path"):
        private_mean(table, *args)
    with pytest.raises(ValueError, match="keys: a public key domain is required"):
        release_histogram(dd.from_pandas(table, npartitions=2), "carrier", ShiftedLogGaussian(0.1))
    with pytest.raises(ValueError, match="by: no column|columns: no column 'nope'"):
        release_histogram(dd.from_pandas(table, npartitions=2), "nope", ShiftedLogGaussian(0.1), keys=["x"])


def test_unreachable_scheduler():
    with pytest.raises(ValueError, match="scheduler: cannot connect to tcp://127.0.0.1:9"):
        with cluster(scheduler="tcp://127.0.0.1:9", timeout=0.5):
            pass


def test_cli_errors_are_one_line_without_a_result(tmp_path, table, capsys, monkeypatch):
    csv = tmp_path / "t.csv"
    table.to_csv(csv, index=False)
    base = ["mean", "--columns", "a,b", "--bounds", "0:20,-5:5", "--epsilon", "0.05", "--delta", "1e-5"]
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "0.5s")
    import dask

    dask.config.refresh()
    cases = [
        (["--data", str(tmp_path / "nope"), "--engine", "dask", "--workers", "1"], "--data: file not found"),
        (["--data", str(csv), "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"], "--scheduler: cannot connect"),
        (["--data", str(csv), "--workers", "2"], "--data needs --engine dask"),
        (["--csv", str(csv), "--data", str(csv), "--engine", "dask"], "--data: give either"),
        (["--data", str(csv), "--engine", "dask", "--workers", "0"], "--workers must be >= 1"),
    ]
    for extra, message in cases:
        code, out, err = _cli(capsys, *base, *extra)
        assert code == 2 and out == "", (extra, out)
        lines = [ln for ln in err.replace("\r", "\n").splitlines() if ln.startswith("sharpdp")]
        assert len(lines) == 1 and message in lines[0], (extra, err)


# ---------------------------------------------------------------- a worker dies mid-job
def _die_on(marker: str, always: bool, frame):
    """Partition loader that kills its worker process (once, or every time)."""
    if always or not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(17)
    return frame


def _no_retries(dask_scheduler=None):
    dask_scheduler.allowed_failures = 0


def test_worker_death(tmp_path, table, bmg, reference):
    import functools

    import dask

    pieces = [table.iloc[:1500].reset_index(drop=True), table.iloc[1500:].reset_index(drop=True)]

    def frame(always):
        marker = str(tmp_path / f"died-{always}")
        load = functools.partial(_die_on, marker, always)
        return dd.from_map(lambda i: pieces[0] if i == 0 else load(pieces[1]), [0, 1], meta=table.iloc[:0])

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        # one worker process: its nanny starts a new process after the death and Dask reruns the lost
        # tasks there (a second worker would only add a process start-up, ~3 s of CPU)
        with cluster(workers=1, processes=True) as eng:
            # a worker that dies once: Dask reruns the task on the new worker process; the streams are
            # keyed by row, so the release is still bit-identical
            res = private_mean(frame(False), COLUMNS, BOUNDS, EPS, DELTA, rng=SEED, randomizer=bmg,
                               client=eng.client, keep_messages=True)
            assert (tmp_path / "died-False").exists()  # the worker did die once
            assert np.array_equal(res.messages, reference["messages"])
            # a task that kills the worker it runs on (no retry allowed now): one clear error, no result
            eng.client.run_on_scheduler(_no_retries)
            with pytest.raises(ValueError, match="a Dask worker died") as info:
                private_mean(frame(True), COLUMNS, BOUNDS, EPS, DELTA, rng=SEED, randomizer=bmg,
                             client=eng.client)
            assert "no result" in str(info.value) and "\n" not in str(info.value)


def test_cli_histogram_dask_matches_cli_histogram_csv(tmp_path, table, clients, capsys):
    csv = tmp_path / "h.csv"
    table.dropna(subset=["carrier"]).to_csv(csv, index=False)
    keys = tmp_path / "carriers.csv"  # a public domain: one carrier absent from the data, one data carrier left out
    domain = sorted(table["carrier"].dropna().astype(str).unique())
    pd.DataFrame({"carrier": domain[1:] + ["ZZ"]}).to_csv(keys, index=False)
    common = ["histogram", "--by", "carrier", "--keys", str(keys), "--r", "0.2", "--seed", "5", "--no-plot", "--json"]
    local, remote = _local_and_dask(capsys, clients, common, csv,
                                    ["--out", str(tmp_path / "local"), "--diagnostics", str(tmp_path / "l.csv")],
                                    ["--out", str(tmp_path / "dask"), "--diagnostics", str(tmp_path / "d.csv")])
    assert local["groups"] == len(domain)
    for key in ("groups", "largest_released", "guarantee", "key_domain", "missing_key_policy"):
        assert remote[key] == local[key], key
    # the dropped-row figures: in the diagnostics files only (docs/histogram_release.md §10), equal on both engines
    figures = ["rows_read", "rows_dropped_missing_key", "rows_dropped_outside_domain", "keys_outside_domain"]
    dl, dd = (pd.read_csv(tmp_path / f, keep_default_na=False)[figures].iloc[0].tolist() for f in ("l.csv", "d.csv"))
    assert dl == dd and dl[2] == (table["carrier"] == domain[0]).sum() > 0 and dl[3] == 1
    a = pd.read_csv(tmp_path / "local" / "histogram_release.csv")
    b = pd.read_csv(tmp_path / "dask" / "histogram_release.csv")
    pd.testing.assert_frame_equal(a, b, check_exact=True)


# ---------------------------------------------------------------- diagnostics and Ctrl-C
# the diagnostic true_mean_clipped: the exact mean of the clipped rows in original units (true_mean when nothing
# is clipped; it was the unit-ball round trip, off in the last digits)
N_CLIP = 400


@pytest.fixture(scope="module")
def clip_frame():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.uniform(0.1, 9.7, N_CLIP), "b": rng.normal(0.3, 2.0, N_CLIP)})
    return dd.from_pandas(df, npartitions=3, sort=False), df.to_numpy(dtype=np.float64)


@pytest.fixture(scope="module")
def clip_bmg():
    from sharpdp.shuffle import calibrate_bmg

    return calibrate_bmg(N_CLIP, 2.0, 1e-6, 2)


def _exact_mean(x):
    from fractions import Fraction

    return np.array([float(sum(Fraction(v) for v in col) / len(col)) for col in x.T])


@pytest.mark.parametrize("bounds", [[[0.0, 10.0], [-20.0, 20.0]], [[0.0, 5.0], [-1.0, 1.0]]])
def test_true_mean_clipped_is_the_clipped_rows_mean(clip_frame, clip_bmg, bounds):
    ddf, x = clip_frame
    b = np.array(bounds)
    res = private_mean(ddf, ["a", "b"], b, 2.0, 1e-6, rng=1, randomizer=clip_bmg)
    clipped = np.clip(x, b[:, 0], b[:, 1])
    assert np.array_equal(res.true_mean_clipped, _exact_mean(clipped))  # correctly rounded, like true_mean
    assert np.array_equal(res.true_mean, _exact_mean(x))
    if res.values_clipped == 0:
        assert np.array_equal(res.true_mean_clipped, res.true_mean)
    else:
        assert not np.array_equal(res.true_mean_clipped, res.true_mean)


def test_keyboard_interrupt_propagates_and_the_shutdown_is_quiet(monkeypatch):
    # Ctrl-C inside a local cluster: the interrupt propagates and Dask's shutdown is quiet (loggers silenced, its
    # exit hook run at once with errors ignored: at exit a cluster interrupted while starting printed a traceback)
    import atexit
    import logging

    from distributed.deploy import spec

    names = ("distributed", "tornado", "asyncio")
    levels = {n: logging.getLogger(n).level for n in names}
    calls = []

    def hook():
        calls.append("hook")
        raise AssertionError("Status.init")  # what the exit hook raised on a cluster interrupted while starting

    monkeypatch.setattr(spec, "close_clusters", hook)
    monkeypatch.setattr(atexit, "unregister", lambda f: calls.append(("unregister", f)))
    try:
        with pytest.raises(KeyboardInterrupt):
            with cluster(workers=1, processes=False):
                raise KeyboardInterrupt
        assert all(logging.getLogger(n).level > logging.CRITICAL for n in names)
        assert calls == [("unregister", hook), "hook"]
    finally:
        for n, lv in levels.items():
            logging.getLogger(n).setLevel(lv)
