"""Error lines about a column holding text name the option, the column and the counts, never a cell
(docs/histogram_release.md §10), and the single-process and Dask engines give the same line for the same
condition. The counts are checked against the csv module's reading of the same file (reference)."""

import csv

import pytest

from sharpdp.cli import main

pytest.importorskip("dask")

SECRET = ("oops-4711", "bad-0815")  # the cells that must never appear in an error line


def _write(tmp_path, text, name="data.csv"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _reference_counts(path, column):
    """(rows, values of ``column`` that float() refuses), by the csv module (empty cells are missing)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    bad = 0
    for r in rows:
        v = r[column].strip()
        if v:
            try:
                float(v)
            except ValueError:
                bad += 1
    return len(rows), bad


def _errors(capsys, path, extra):
    errs = []
    for engine in (["--csv", path], ["--data", path, "--engine", "dask", "--workers", "1"]):
        assert main(["mean", *engine, *extra, "--bounds", "0:10,0:10", "--epsilon", "1"]) == 2
        out, err = capsys.readouterr()
        assert out == ""
        errs.append([line for line in err.strip().splitlines() if "error:" in line])
    return errs


def _late_text_file(tmp_path):
    rows = "".join(f"{i % 10},{(i + 1) % 10}\n" for i in range(3000))
    return _write(tmp_path, "a,b\n" + rows + f"7,{SECRET[0]}\n8,{SECRET[1]}\n,\n" + rows)


def test_text_after_the_sampled_rows_same_line_on_both_engines_with_counts(tmp_path, capsys):
    # the Dask engine's parser fails in pass 1 (its message quoted the cell); now it counts like the other engine
    path = _late_text_file(tmp_path)
    rows, bad = _reference_counts(path, "b")
    assert (rows, bad) == (6003, 2)
    single, dask = _errors(capsys, path, ["--columns", "a,b"])
    assert single == dask and len(single) == 1
    assert (f"--columns: column 'b' is not numeric: {bad} of its {rows} rows hold a value that is not a number "
            "(not shown; fix the file)") in single[0]
    assert not any(s in single[0] for s in SECRET)


def test_text_in_the_sampled_rows_same_line_on_both_engines(tmp_path, capsys):
    # the Dask engine saw a text dtype in its sample and printed "(dtype string)"; now it counts the same
    path = _write(tmp_path, f"a,b\n1,2\n3,{SECRET[0]}\n5,6\n7,8\n")
    single, dask = _errors(capsys, path, ["--columns", "a,b"])
    assert single == dask == ["sharpdp mean: error: --columns: column 'b' is not numeric: 1 of its 4 rows holds a "
                              "value that is not a number (not shown; fix the file)"]


def test_mostly_numeric_column_without_columns_names_counts_not_the_cell(tmp_path, capsys):
    path = _write(tmp_path, f"a,b\n1,2\n3,{SECRET[0]}\n5,6\n7,8\n")
    single, dask = _errors(capsys, path, [])
    tail = (f"column 'b' of {path} is mostly numeric: 1 of its 4 rows holds a value that is not a number (not shown; "
            "fix the file, or choose columns with --columns)")
    assert single == [f"sharpdp mean: error: --csv: {tail}"]
    assert dask == [f"sharpdp mean: error: --data: {tail}"]  # the same line, naming the option the user gave


def test_parser_error_without_a_path_names_the_columns_only():
    from sharpdp.distributed._engine import non_numeric_error

    exc = non_numeric_error(ValueError(f"could not convert string to float: '{SECRET[0]}'"), ["a", "b"], "dask DataFrame")
    assert isinstance(exc, ValueError) and SECRET[0] not in str(exc)
    assert str(exc) == "columns: a value in a, b of dask DataFrame is not a number (not shown; fix the file)"
    other = OSError("disk")
    assert non_numeric_error(other, ["a"], "x") is other  # any other failure is passed on unchanged
