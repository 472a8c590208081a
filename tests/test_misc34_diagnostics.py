"""Session 34: the diagnostics file's own names are guarded (docs/cli.md §9.2): a ``--by`` column, a table column or
a JSON entry named like a column or key the command writes itself is refused up front, naming the parameter, and
nothing is written."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
from _cli import run


def _data(tmp_path, col: str):
    data, keys = tmp_path / "d.csv", tmp_path / "k.csv"
    pd.DataFrame({col: ["a"] * 30 + ["b"] * 4}).to_csv(data, index=False)
    pd.DataFrame({col: ["a", "b", "c"]}).to_csv(keys, index=False)
    return data, keys


def _histogram(capsys, tmp_path, col: str, *extra: str):
    data, keys = _data(tmp_path, col)
    return run(capsys, "histogram", "--csv", str(data), "--by", col, "--keys", str(keys), "--no-plot",
               "--out", str(tmp_path / "o"), *extra)


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_write_diagnostics_refuses_its_own_column_and_keys(tmp_path, suffix):
    from sharpdp.cli.diagnostics import CSV_COLUMN, write_diagnostics

    path = tmp_path / f"diag{suffix}"
    # caught on main: the CSV got two DO_NOT_PUBLISH columns (pandas read the second as "DO_NOT_PUBLISH.1")
    with pytest.raises(ValueError, match=r"^columns: 'DO_NOT_PUBLISH' is the diagnostics file's own column"):
        write_diagnostics(str(path), {CSV_COLUMN: ["x"], "true_count": [1]}, {})
    for key in ("rows", "diagnostics", "epsilon_unit"):
        with pytest.raises(ValueError, match=rf"^meta: '{key}' is a key the diagnostics JSON writes itself"):
            write_diagnostics(str(path), {"true_count": [1]}, {key: 1})
    assert not path.exists()
    assert write_diagnostics(str(path), {"true_count": [1]}, {"command": "x"}) == suffix[1:]  # the guard only


@pytest.mark.parametrize("col", ["DO_NOT_PUBLISH", "true_count", "epsilon", "rows_read", "seed"])
def test_histogram_refuses_a_by_column_named_like_a_diagnostics_column(tmp_path, capsys, col):
    diag = tmp_path / "diag.csv"
    code, out, err = _histogram(capsys, tmp_path, col, "--diagnostics", str(diag))
    # caught on main: DO_NOT_PUBLISH twice in the file; true_count, epsilon, rows_read, seed: the key column silently
    # replaced by the true counts' figures (the file's keys lost)
    assert code != 0 and f"--by: a column named '{col}' clashes with the --diagnostics file's own '{col}'" in err
    assert "rename that column" in err and out == ""
    assert not diag.exists() and not (tmp_path / "o" / "histogram_release.csv").exists()  # refused before any work
    # without --diagnostics the name is free
    code, out, err = _histogram(capsys, tmp_path, col)
    assert code == 0, err
    assert pd.read_csv(tmp_path / "o" / "histogram_release.csv", keep_default_na=False)[col].tolist() == ["a", "b", "c"]


@pytest.mark.parametrize("col", ["group", "released"])
def test_histogram_refuses_a_by_column_named_like_a_release_column(tmp_path, capsys, col):
    code, out, err = _histogram(capsys, tmp_path, col)
    # caught on main: "group" failed after the counting with pandas' "cannot insert group, already exists";
    # "released" replaced the key column by the released values in the published CSV
    assert code != 0 and f"--by: a column named '{col}' clashes with the release CSV's own '{col}' column" in err
    assert not (tmp_path / "o" / "histogram_release.csv").exists()


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_the_guarded_names_are_the_columns_the_file_has(tmp_path, capsys, suffix):
    from sharpdp.cli.diagnostics import CSV_COLUMN
    from sharpdp.cli.histogram import DIAGNOSTIC_COLUMNS, RELEASE_COLUMNS

    diag = tmp_path / f"diag{suffix}"
    code, out, err = _histogram(capsys, tmp_path, "g", "--diagnostics", str(diag), "--seed", "3")
    assert code == 0, err
    if suffix == ".csv":
        names = list(pd.read_csv(diag).columns)
        assert names[0] == CSV_COLUMN
        names = names[1:]
    else:
        names = list(json.loads(diag.read_text())["rows"][0])
    assert sorted(names) == sorted(["g", *RELEASE_COLUMNS, *DIAGNOSTIC_COLUMNS])
    assert oct(os.stat(diag).st_mode & 0o777) == "0o600"
