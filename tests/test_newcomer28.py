"""What an analyst met on a first pass over the mean release (session 28): bounds too wide for float64, Dask
directories mixing file kinds, non-numeric values named by column on Dask, ``--rounds`` on the Dask engine, the
same result keys from both engines, values clipped counted per column."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from _cli import run as _run
from sharpdp.apps.datasets import UnitBallScaling, check_bounds

HAVE_DASK = all(importlib.util.find_spec(m) is not None for m in ("dask", "distributed", "pandas", "pyarrow"))
needs_dask = pytest.mark.skipif(not HAVE_DASK, reason="needs dask, distributed, pandas and pyarrow")
# Dask's Parquet reader calls a pandas method deprecated by pandas 3.1 (a third-party warning)
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.reset_index is deprecated")

BOUNDS = "18:90,0:200000,0:100"


def _table(rng, rows: int) -> np.ndarray:
    return np.column_stack([rng.integers(18, 90, rows), rng.gamma(2.0, 20000.0, rows), rng.uniform(0, 100, rows)])


def _write_csv(path, x: np.ndarray) -> None:
    path.write_text("age,income,score\n" + "\n".join(f"{a:.0f},{b!r},{c!r}" for a, b, c in x.tolist()) + "\n")


# ---------------------------------------------------------------- bounds whose arithmetic overflows float64


@pytest.mark.parametrize("bounds", [[[-1e308, 1e308]], [[0.0, 1e301]], [[-2e300, 0.0]]])
def test_bounds_beyond_1e300_are_refused_by_name(bounds):
    with pytest.raises(ValueError, match=r"^bounds: every pair needs finite lo < hi with \|lo\|, \|hi\| <= 1e\+300"):
        UnitBallScaling(np.array(bounds))
    with pytest.raises(ValueError, match="^bounds: every pair"):
        check_bounds(bounds, 1)


def test_bounds_at_the_cap_give_a_finite_release_in_original_units():
    s = UnitBallScaling(np.array([[-1e300, 1e300], [0.0, 1.0]]))
    z, clipped = s.to_unit_ball(np.array([[5.0, 2.0], [-5.0, 0.5]]), per_column=True)
    assert clipped.tolist() == [0, 1]  # one value of the second column above its bound
    back = s.to_original(np.array([3.0, -3.0]))  # (noise can move the estimate far outside the ball)
    assert np.all(np.isfinite(back)) and np.all(np.isfinite(s.scale))


def test_cli_refuses_overflowing_bounds_in_one_line_and_in_json(tmp_path, capsys):
    f = tmp_path / "t.csv"
    _write_csv(f, _table(np.random.default_rng(1), 50))
    code, out, err = _run(capsys, "mean", "--csv", str(f), "--bounds=-1e308:1e308,0:200000,0:100")
    assert code == 2 and out == "" and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith("sharpdp mean: error: --bounds: pair 1 '-1e308:1e308' needs finite lo < hi with"), err
    code, out, err = _run(capsys, "mean", "--csv", str(f), "--bounds=-1e308:1e308,0:200000,0:100", "--json")
    r = json.loads(out)
    assert code == 2 and r["parameter"] == "--bounds" and "1e+300" in r["error"]


# ---------------------------------------------------------------- values clipped, per column


def test_diagnostics_count_values_clipped_per_column(tmp_path, capsys):
    x = _table(np.random.default_rng(2), 400)
    x[:7, 1] = 3e5  # 7 incomes above the bound, nothing else outside
    f, diag = tmp_path / "t.csv", tmp_path / "diag.json"
    _write_csv(f, x)
    code, out, err = _run(capsys, "mean", "--csv", str(f), "--bounds", BOUNDS, "--seed", "3", "--json",
                          "--diagnostics", str(diag))
    assert code == 0, err
    rows = json.loads(diag.read_text())
    per = {r["column"]: r["values_clipped"] for r in rows["rows"]}
    assert per == {"age": 0, "income": 7, "score": 0}


# ---------------------------------------------------------------- Dask: directories, non-numeric values, rounds


@needs_dask
def test_directory_mixing_csv_with_parquet_or_other_files_is_refused_naming_them(tmp_path):
    import pandas as pd

    from sharpdp.distributed import open_table

    x = _table(np.random.default_rng(3), 30)
    frame = pd.DataFrame(x, columns=["age", "income", "score"])
    mixed, extra = tmp_path / "mixed", tmp_path / "extra"
    mixed.mkdir()
    extra.mkdir()
    frame.to_parquet(mixed / "a.parquet")
    _write_csv(mixed / "b.csv", x)
    with pytest.raises(ValueError, match=r"^data: directory .*mixed mixes CSV files \(b\.csv\) with Parquet files "
                                         r"\(a\.parquet\): give a glob"):
        open_table(str(mixed), ["age"])
    _write_csv(extra / "p0.csv", x)
    _write_csv(extra / "p1.csv", x)
    (extra / "README.txt").write_text("notes\n")
    with pytest.raises(ValueError, match=r"mixes CSV files \(p0\.csv, p1\.csv\) with files that are not CSV "
                                         r"\(README\.txt\)"):
        open_table(str(extra), ["age"])
    (extra / "README.txt").unlink()
    table, source = open_table(str(extra), ["age", "score"])
    assert len(table.compute()) == 60 and source.endswith("*.csv")


@needs_dask
@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_a_text_value_in_a_later_file_is_named_by_column(tmp_path, kind):
    import pandas as pd

    from sharpdp.distributed import private_mean

    rng = np.random.default_rng(4)
    d = tmp_path / "parts"
    d.mkdir()
    for i in range(3):
        frame = pd.DataFrame(_table(rng, 200), columns=["age", "income", "score"])
        if i == 2:
            frame["score"] = frame["score"].map(repr)  # (a text column: Parquet stores one type per column)
            frame.loc[150, "score"] = "unknown"
        if kind == "csv":
            frame.to_csv(d / f"p{i}.csv", index=False)
        else:
            frame.to_parquet(d / f"p{i}.parquet")
    with pytest.raises(ValueError, match=r"^columns: column 'score' is not numeric: 1 of its 600 rows holds a value "
                                         r"that is not a number \(not shown; fix the file\)"):
        private_mean(str(d), ["age", "income", "score"], [[18, 90], [0, 2e5], [0, 100]], 1.0, 1e-6, rng=1)


@needs_dask
def test_dask_rounds_calibrates_like_the_local_path_with_the_same_result_keys(tmp_path, capsys):
    from sharpdp.shuffle import calibrate_bmg_report

    x = _table(np.random.default_rng(5), 3000)
    f = tmp_path / "t.csv"
    _write_csv(f, x)
    args = ["mean", "--csv", str(f), "--bounds", BOUNDS, "--epsilon", "1", "--rounds", "2", "--seed", "7", "--json"]
    code, out, err = _run(capsys, *args)
    assert code == 0, err
    local = json.loads(out)
    code, out, err = _run(capsys, *args, "--engine", "dask", "--workers", "1")
    assert code == 0, err
    dask = json.loads(out)
    ref = calibrate_bmg_report(3000, 1.0, 1e-6, 3, rounds=2)
    for r in (local, dask):
        assert r["rounds"] == 2 and r["composed_certifications"] >= 1
        assert r["bmg"]["gamma"] == ref.randomizer.gamma and r["bmg"]["sigma0"] == ref.randomizer.sigma0
        assert r["delta_bounds"] == [float(v) for v in ref.delta_bounds] and r["delta_certified"] <= 1e-6
    assert local["engine"] == "local" and dask["engine"] == "dask"
    assert set(dask) - set(local) == {"partitions", "workers"} and set(local) <= set(dask)
    assert dask["private_mean"] == local["private_mean"]  # the same seed, the same messages (docs/distributed.md)


@needs_dask
def test_dask_rounds_refused_with_a_given_randomizer_and_outside_the_range(tmp_path):
    from sharpdp.distributed import private_mean
    from sharpdp.shuffle import BlanketMixedGaussian

    f = tmp_path / "t.csv"
    _write_csv(f, _table(np.random.default_rng(6), 50))
    with pytest.raises(ValueError, match="^rounds: a given randomizer"):
        private_mean(str(f), ["age"], [[18, 90]], 1.0, 1e-6, randomizer=BlanketMixedGaussian(0.5, 1.0, 1), rounds=2)
    with pytest.raises(ValueError, match="^rounds"):
        private_mean(str(f), ["age"], [[18, 90]], 1.0, 1e-6, rounds=0)


# ---------------------------------------------------------------- small messages


def test_a_semicolon_file_and_the_default_by_get_a_hint(tmp_path, capsys):
    f = tmp_path / "semi.csv"
    f.write_text("a;b\n1;2\n3;4\n")
    code, out, err = _run(capsys, "mean", "--csv", str(f))
    assert code == 2 and err.strip().endswith("its header line holds semicolons and no comma: sharpdp reads "
                                              "comma-separated files"), err
    code, out, err = _run(capsys, "histogram", "--csv", str(f), "--keys-from-data", "--no-plot", "--out",
                          str(tmp_path / "o"))
    assert code == 2 and err.strip().endswith("--by defaults to the flights table's carrier,dest: name your grouping "
                                              "columns"), err


@pytest.mark.parametrize("randomizer", [["--gamma", "0.5", "--sigma0", "1"], ["--k", "2", "--epsilon0", "1"]])
def test_account_n_above_1e9_says_why(capsys, randomizer):
    code, out, err = _run(capsys, "account", "--n", "1e10", *randomizer, "--epsilon", "1")
    assert code == 2 and err.startswith("sharpdp account: error: --n must be <= 1000000000 (the largest n the "
                                        "accountant certifies"), err


def test_python_api_rough_edges():
    import sharpdp.shuffle as sh

    assert not {"TYPE_CHECKING", "annotations", "lazy_namespace"} & set(dir(sh))
    assert {"ShuffleAccountant", "ComposedAccountant", "calibrate_bmg"} <= set(dir(sh))
    acc = sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.5, 1.0, 1), 1000, sampler_charge=False)
    assert repr(acc) == ("ShuffleAccountant(BlanketMixedGaussian(gamma=0.5, sigma0=1.0, dim=1), n=1000, "
                         "adjacency='zero_out', rel_tol=0.01, sampler_charge=False)")
    assert "sampler_charge" not in repr(sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.5, 1.0, 1), 10))
    with pytest.raises(TypeError, match=r"parts is a list of pairs: ComposedAccountant\(\[\(acc, 5\)\]\)"):
        sh.ComposedAccountant((acc, 5))
