"""A Dask glob whose first file holds only the header (sharpdp.distributed._engine._files_with_rows).

dd.read_csv infers the columns' dtypes from the first file's first block: a header-only first file typed every
column as text and `sharpdp mean --engine dask` failed "no numeric column" on valid data. Reference: the local
engine on the concatenation of the files (pandas)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.dataframe")

import sharpdp.distributed._engine as engine  # noqa: E402
from sharpdp.distributed import numeric_columns, private_mean  # noqa: E402

ROWS = 300


@pytest.fixture()
def glob(tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "_CHECKED", {})
    (tmp_path / "0.csv").write_text("a,b\n")  # header only, first in sorted order
    rng = np.random.default_rng(7)
    frames = []
    for k in (1, 2):
        f = pd.DataFrame({"a": rng.uniform(0, 10, ROWS).round(3), "b": rng.uniform(0, 5, ROWS).round(3)})
        f.to_csv(tmp_path / f"{k}.csv", index=False)
        frames.append(f)
    (tmp_path / "3.csv").write_text("a,b\n")  # and one in the middle of nowhere
    return str(tmp_path / "*.csv"), pd.concat(frames, ignore_index=True)


def test_numeric_columns_of_a_glob_with_a_header_only_first_file(glob):
    # (caught, _read_path reading the glob pattern itself: ValueError "columns: no numeric column in ...")
    path, _ = glob
    cols, notes = numeric_columns(path)
    assert cols == ["a", "b"] and notes == []


@pytest.mark.parametrize("columns", [["a", "b"], ["b"]])
def test_private_mean_equals_the_pandas_reference(glob, columns):
    # (caught, the second read on the glob pattern: "columns: column 'a' of ... is not numeric (dtype object)")
    path, ref = glob
    res = private_mean(path, columns, [[0.0, 10.0], [0.0, 5.0]][-len(columns):], 1.0, 1e-6,
                       rng=np.random.default_rng(3))
    assert res.n == 2 * ROWS and res.rows_dropped_missing == 0
    np.testing.assert_allclose(res.true_mean, ref[columns].mean().to_numpy(), rtol=1e-13, atol=0)


def test_every_file_header_only_keeps_the_empty_data_message(tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "_CHECKED", {})
    for k in range(2):
        (tmp_path / f"{k}.csv").write_text("a,b\n")
    with pytest.raises(ValueError, match=r"^data: no data rows in .*0\.csv and the other 1 files \(empty data\)"):
        numeric_columns(str(tmp_path / "*.csv"))
