"""A quote left open early in a big CSV: refused at its line once the row passes MAX_ROW_BYTES (before, the
check carried the rest of the file and then raised the csv module's "field larger than field limit"); quoted
fields up to that bound are read; --diagnostics into a directory that does not exist yet is created, as --out."""

from __future__ import annotations

import json
import os
import stat

import pytest
from _cli import run  # noqa: E402

import sharpdp.apps.csv_checks as checks
from sharpdp.apps.csv_checks import MAX_ROW_BYTES, csv_block_report, file_problem


def _open_early(path, rows=400):
    path.write_text("a,b\n1,2\n3,4\n\"open,5\n" + "6,7\n" * rows)
    return str(path)


def test_a_quote_left_open_early_is_refused_at_its_line_once_the_row_passes_the_bound(tmp_path, monkeypatch,
                                                                                      capsys):
    # (caught: without the carry's bound the message was "the quoted field of line 4 is not closed before the
    # end of the file", after carrying the whole rest of the file)
    monkeypatch.setattr(checks, "CHUNK_BYTES", 64)  # pieces of 64 bytes: the carry grows piece by piece
    monkeypatch.setattr(checks, "MAX_ROW_BYTES", 1000)
    carried = []
    real = checks._field_counts
    monkeypatch.setattr(checks, "_field_counts", lambda block, w: carried.append(len(block)) or real(block, w))
    path = _open_early(tmp_path / "big.csv")
    code, out, err = run(capsys, "mean", "--csv", path, "--bounds", "0:10,0:10", "--epsilon", "1", "--delta", "1e-6")
    assert code == 2 and out == "" and err.strip().splitlines() == [
        f"sharpdp mean: error: --csv: malformed CSV in {path}: the row of line 4 runs on for more than 0.000954 MiB "
        "(a double quote \" left open there? a quoted field goes on until its closing quote): close it, or write a "
        "quote inside a quoted field as two quotes \"\"; rows of at most 0.000954 MiB are read"], err
    assert max(carried) <= 1000 + 2 * 64 + 8  # (the text parsed at once: the bound plus one piece)
    assert len(carried) < 30  # stopped after about 1000 bytes of the file's 1612
    with open(path, "rb") as f:  # the same file under the default bound: the old message (the row is short)
        monkeypatch.setattr(checks, "MAX_ROW_BYTES", MAX_ROW_BYTES)
        assert "the quoted field of line 4 is not closed before the end of the file" in file_problem(f.name)


def test_the_dask_check_gives_the_local_message(tmp_path, monkeypatch):
    pytest.importorskip("dask.dataframe")
    import sharpdp.distributed._engine as engine

    monkeypatch.setattr(checks, "CHUNK_BYTES", 64)
    monkeypatch.setattr(checks, "MAX_ROW_BYTES", 1000)
    path = _open_early(tmp_path / "big.csv")
    local = file_problem(path)
    for size in (100, 10**6):  # cut blocks (the open quote crosses them) and one block
        monkeypatch.setattr(engine, "_CHECKED", {})
        monkeypatch.setattr(engine, "CSV_BLOCKSIZE", size)
        with pytest.raises(ValueError) as err:
            engine.check_csv_files([path])
        assert str(err.value) == f"data: {local}" and "the row of line 4 runs on" in local


def test_an_earlier_problem_is_named_first(tmp_path, monkeypatch):
    # (caught: with _found always False, the message was the open quote's "row of line 5 runs on")
    monkeypatch.setattr(checks, "CHUNK_BYTES", 64)
    monkeypatch.setattr(checks, "MAX_ROW_BYTES", 1000)
    path = tmp_path / "two.csv"
    path.write_text("a,b\n1,2\n1,000,3\n4,5\n\"open,5\n" + "6,7\n" * 400)
    assert "line 3 has 3 fields, the header 2" in file_problem(str(path))


def test_quoted_fields_up_to_the_bound_are_read_and_a_longer_one_is_refused_at_its_line(tmp_path):
    # (caught: without raising the csv module's field limit, the 200 kB field raised _csv.Error "field larger than
    # field limit (131072)" out of csv_block_report; without turning that error into RowTooLong, the 8 MiB + 1 one)
    block = b'a,b\n1,2\n"' + b"x" * 200_000 + b'\n' + b"y" * 1000 + b'",3\n4,5\n'
    assert csv_block_report(block, None) == (["a", "b"], 4, None, None, None)  # (4 lines: the field spans two)
    path = tmp_path / "long.csv"
    path.write_bytes(b'a,b\n1,2\n3,4\n"' + b"z" * (MAX_ROW_BYTES + 1) + b'",5\n6,7\n')
    assert file_problem(str(path)).startswith(f"malformed CSV in {path}: the row of line 4 runs on for more than "
                                              "8 MiB")
    with pytest.raises(checks.RowTooLong) as err:
        csv_block_report(path.read_bytes(), None)
    assert err.value.row == 2  # the third data line


@pytest.mark.parametrize("command", ["mean", "histogram"])
def test_diagnostics_into_a_new_directory_is_created_as_out_is(tmp_path, capsys, command):
    # (caught: with s26's "directory ... does not exist" refusal both commands exited 2; with the check passing but
    # write_diagnostics not creating the directory, the run failed after the release: "error: [Errno 2] No such
    # file or directory: .../new/sub/.diag.json.partial-PID")
    csv = tmp_path / "d.csv"
    if command == "mean":
        csv.write_text("a,b\n" + "".join(f"{i % 10},{i % 3}\n" for i in range(50)))
        argv = ["mean", "--csv", str(csv), "--bounds", "0:10,0:3", "--epsilon", "1", "--delta", "1e-6"]
    else:
        csv.write_text("g\n" + "x\ny\n" * 20)
        keys = tmp_path / "keys.csv"
        keys.write_text("g\nx\ny\n")
        argv = ["histogram", "--csv", str(csv), "--by", "g", "--keys", str(keys), "--out", str(tmp_path / "o"),
                "--no-plot"]
    target = tmp_path / "new" / "sub" / "diag.json"
    code, out, err = run(capsys, *argv, "--diagnostics", str(target), "--json")
    assert code == 0, err
    assert json.loads(target.read_text())["diagnostics"].startswith("TRUE values")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert json.loads(out)["diagnostics"] is not None
    # a parent that is a file: one line, before any work, and nothing created
    code, out, err = run(capsys, *argv, "--diagnostics", str(csv / "x" / "diag.json"))
    assert code == 2 and out == "" and err.strip().splitlines() == [
        f"sharpdp {command}: error: --diagnostics: cannot create directory {csv / 'x'}: {csv} is a file, not a "
        "directory"], err
