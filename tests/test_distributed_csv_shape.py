"""The Dask engine refuses the malformed CSVs that the single-process reader refuses (same checks, same
messages; before, ``--engine dask`` read "1,000," as a = 1, b = 0 and released it), and names the text
columns its numeric-column pick skips."""

import pytest

pytest.importorskip("dask.dataframe")

from sharpdp.distributed._engine import check_csv_files, numeric_columns, open_table  # noqa: E402


def _write(tmp_path, text, name="data.csv"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize("text, message", [
    ("a,b\n1,000,\n2,000,\n", r"line 2 has 3 fields, the header 2"),
    ("a,b\n1,2\n3,4\n5,6,7\n", r"line 4 has 3 fields, the header 2"),
    ("a,,b\n1,2,3\n", r"header field 2 of 3 has no name"),
])
def test_malformed_csv_is_refused(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match=r"^data: malformed CSV in .*" + message):
        open_table(path, ["a"])


def test_long_row_found_in_a_later_block_with_its_file_line(tmp_path, monkeypatch):
    import dask.bytes

    rows = "".join(f"{i},{i + 1}\n" for i in range(3000))
    path = _write(tmp_path, "a,b\n" + rows + "7,8,9\n" + rows)
    real = dask.bytes.read_bytes
    # small blocks so the bad row is in a later block: its line number adds the earlier blocks' rows
    monkeypatch.setattr(dask.bytes, "read_bytes", lambda *a, **k: real(*a, **{**k, "blocksize": 4096}))
    with pytest.raises(ValueError, match=r"line 3002 has 3 fields, the header 2"):
        check_csv_files([path])
    check_csv_files([_write(tmp_path, "a,b\n" + rows, "good.csv")])  # a good file passes


def test_glob_checks_every_file(tmp_path):
    _write(tmp_path, "a,b\n1,2\n", "p1.csv")
    _write(tmp_path, "a,b\n1,2,\n", "p2.csv")
    with pytest.raises(ValueError, match=r"p2\.csv: line 2 has 3 fields"):
        open_table(str(tmp_path / "p*.csv"), ["a"])


def test_numeric_pick_refuses_a_stray_text_value_and_names_skipped_columns(tmp_path):
    with pytest.raises(ValueError, match=r"^data: column 'b' .* mostly numeric: 1 of its 4 rows holds a value that is "
                                         r"not a number \(not shown") as err:
        numeric_columns(_write(tmp_path, "a,b\n1,2\n3,x\n5,6\n7,8\n", "stray.csv"))
    assert "'x'" not in str(err.value)  # an error line names the column and the count, never a cell
    cols, notes = numeric_columns(_write(tmp_path, 'a,b,name\n"5,250",2,x\n"6,125",3,y\n', "quoted.csv"))
    assert cols == ["b"]
    assert len(notes) == 1 and "'a', 'name' skipped" in notes[0] and "'a' holds numbers with thousands" in notes[0]
    assert "5,250" not in notes[0] and "6,125" not in notes[0]  # warnings are printed results: no cell value


def test_bounds_count_error_is_the_same_on_both_engines_and_says_why_a_column_was_skipped(tmp_path, capsys):
    from sharpdp.cli import main

    path = _write(tmp_path, 'a,b\n"5,250",2\n"6,125",3\n"7,000",4\n', "q.csv")
    errs = []
    for engine in (["--csv", path], ["--data", path, "--engine", "dask", "--workers", "1"]):
        assert main(["mean", *engine, "--bounds", "0:10,0:10", "--epsilon", "1"]) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1
        errs.append(err)
    assert errs[0] == errs[1]
    assert "order (b)" in errs[0] and "'a' holds numbers with thousands separators" in errs[0]
    assert errs[0].rstrip().endswith("got 2") and "5,250" not in errs[0]
