"""A newcomer's malformed inputs to sharpdp mean / histogram: one line naming the option and the file, the same on
both engines. Before: a Parquet file given to --csv was "not UTF-8, save it as UTF-8" (mean) or had its bytes
listed as column names (histogram); the Dask engine answered an empty CSV with pandas' "An error occurred while
calling the read_csv method registered to the pandas backend" and a header-only one with "no numeric column";
histogram's header-only --csv said "the table has no rows" without the file."""

from __future__ import annotations

import pandas as pd
import pytest
from _cli import run  # noqa: E402

MEAN = ["mean", "--bounds", "0:1", "--epsilon", "1", "--delta", "1e-6"]


def _hist(tmp_path, *argv):
    keys = tmp_path / "keys.csv"
    keys.write_text("g\nx\n")
    return ["histogram", "--by", "g", "--keys", str(keys), "--out", str(tmp_path / "o"), "--no-plot", *argv]


def _one_line(capsys, *argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    return err.strip()


def test_a_parquet_file_given_to_csv_or_keys_is_named_as_such(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    # (caught, refuse_parquet_csv's calls removed: mean said "line 2 holds a byte that is not UTF-8 ... save it as
    # UTF-8", histogram "--by: no column 'g' in t.parquet (available: PAR1...)", --keys a UTF-8 message too)
    pq = tmp_path / "t.parquet"
    pd.DataFrame({"g": ["x", "y"], "a": [0.1, 0.2]}).to_parquet(pq)
    assert _one_line(capsys, *MEAN, "--csv", str(pq)) == (
        f"sharpdp mean: error: --csv: {pq} is a Parquet file, not CSV: read it with --data {pq} --engine dask, or "
        "save it as CSV")
    assert _one_line(capsys, *_hist(tmp_path, "--csv", str(pq))).endswith(
        f"--csv: {pq} is a Parquet file, not CSV: read it with --data {pq} --engine dask, or save it as CSV")
    data = tmp_path / "d.csv"
    data.write_text("g\nx\n")
    argv = _hist(tmp_path, "--csv", str(data))
    argv[argv.index("--keys") + 1] = str(pq)
    assert _one_line(capsys, *argv) == f"sharpdp histogram: error: --keys: {pq} is a Parquet file, not CSV: save it as CSV"


def test_histogram_header_only_names_the_file_as_mean_does(tmp_path, capsys):
    # (caught: s26's "--csv: the table has no rows")
    path = tmp_path / "h.csv"
    path.write_text("g,a\n")
    assert _one_line(capsys, *_hist(tmp_path, "--csv", str(path))) == (
        f"sharpdp histogram: error: --csv: no data rows in {path} (empty data)")
    assert _one_line(capsys, *MEAN, "--csv", str(path)) == f"sharpdp mean: error: --csv: no data rows in {path} (empty data)"


@pytest.mark.parametrize("text, message", [("", "empty file (no header row): {p}"),
                                           ("a,b\n", "no data rows in {p} (empty data)")])
def test_the_dask_engine_gives_the_local_message_for_an_empty_or_header_only_csv(tmp_path, monkeypatch, text,
                                                                                   message):
    pytest.importorskip("dask.dataframe")
    import sharpdp.distributed._engine as engine
    from sharpdp.distributed import open_table

    # (caught: without the two checks in check_csv_files, pandas' "An error occurred while calling the read_csv
    # method registered to the pandas backend" and, for the header only, "columns: column 'a' of ... is not
    # numeric (dtype string)" from open_table, "no numeric column" from numeric_columns)
    monkeypatch.setattr(engine, "_CHECKED", {})
    path = tmp_path / "e.csv"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        open_table(str(path), ["a"])
    assert str(err.value) == "data: " + message.format(p=path)
    with pytest.raises(ValueError) as err:
        engine.numeric_columns(str(path))
    assert str(err.value) == "data: " + message.format(p=path)
    other = tmp_path / "f.csv"
    other.write_text(text or "a,b\n")
    if text:  # a glob of header-only files: no rows; one file with a row is enough
        with pytest.raises(ValueError, match=r"^data: no data rows in .*e\.csv and the other 1 files"):
            open_table(str(tmp_path / "*.csv"), ["a"])
        other.write_text("a,b\n1,2\n")
        open_table(str(tmp_path / "*.csv"), ["a"], text=True)  # (numeric: dask takes e.csv's text dtype)
