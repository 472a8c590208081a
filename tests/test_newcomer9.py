"""What a newcomer following README met on a clean clone (2026-12-03), one test per fix.

1. ``sharpdp mean --csv FILE --bounds ...`` with one pair per column of the file, when a column
   of the file is not numeric: the mean is over the numeric columns only, and the old error
   ("expected 1 lo:hi pairs (one per column), got 2") did not say which columns were meant.
2. ``sharpdp histogram --keys FILE`` whose keys are written differently from the data's
   (``1.0`` against ``1``): every row fell outside the domain, every released group was empty,
   and nothing said why; and "1 groups released".
"""

from __future__ import annotations

import json

from _cli import run as _run


def test_mean_bounds_count_names_the_columns_and_the_skipped_text_column(tmp_path, capsys):
    f = tmp_path / "mixed.csv"
    f.write_text("a,label,b\n1,x,2\n3,y,4\n")
    code, out, err = _run(capsys, "mean", "--csv", str(f), "--bounds", "0:5,0:5,0:5")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("sharpdp mean: error: --bounds: expected 2 lo:hi pairs, one per column of the mean in "
                          "order (a, b); without --columns a CSV's numeric columns are used"), err
    assert err.rstrip().endswith("got 3"), err


def test_mean_bounds_count_with_columns_names_them_without_the_csv_note(tmp_path, capsys):
    f = tmp_path / "num.csv"
    f.write_text("a,b\n1,2\n3,4\n")
    code, out, err = _run(capsys, "mean", "--csv", str(f), "--columns", "b", "--bounds", "0:5,0:5")
    assert code == 2 and out == ""
    assert err.strip() == "sharpdp mean: error: --bounds: expected 1 lo:hi pair, one per column of the mean in order (b); got 2"


def test_mean_bounds_count_right_still_runs(tmp_path, capsys):
    f = tmp_path / "mixed.csv"
    f.write_text("a,label,b\n" + "".join(f"{i % 5},t{i},{(3 * i) % 5}\n" for i in range(50)))
    code, out, err = _run(capsys, "mean", "--csv", str(f), "--bounds", "0:5,0:5", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["columns"] == ["a", "b"] and r["n"] == 50 and r["d"] == 2


def _hist(tmp_path, capsys, keys_text, *, data_text="h\n1\n2\n2\n3\n", by="h", json_out=True):
    """sharpdp histogram on rows.csv grouped by ``by`` with the key domain keys.csv; (code, out, err)."""
    data = tmp_path / "rows.csv"
    data.write_text(data_text)
    keys = tmp_path / "keys.csv"
    keys.write_text(keys_text)
    return _run(capsys, "histogram", "--csv", str(data), "--by", by, "--keys", str(keys), "--no-plot",
                "--out", str(tmp_path / "out"), *(["--json"] if json_out else []))


def test_histogram_warns_when_no_row_has_a_key_in_the_domain(tmp_path, capsys):
    """The hint now comes from the release (every released value small: docs/histogram_release.md §10), not from
    the number of rows outside the domain, which is written only to a --diagnostics file."""
    code, out, err = _hist(tmp_path, capsys, "h\n1.0\n2.0\n3.0\n")
    assert code == 0, err
    r = json.loads(out)
    assert "analyst_only_not_private" not in r and "no row has a key" not in out + err
    hint = [w for w in r["warnings"] if w.startswith("every released value is at most")]
    assert len(hint) == 1 and "compared as text" in hint[0] and "1 and 1.0" in hint[0]
    assert err.count("every released value is at most") == 1  # on stderr once


def test_histogram_no_such_warning_when_some_rows_match(tmp_path, capsys):
    code, out, err = _hist(tmp_path, capsys, "h\n1\n2.0\n", data_text="h\n" + "1\n" * 40 + "2\n" * 2)
    assert code == 0, err  # (the rows with h = 2 fall outside; the 40 with h = 1 give a large released value)
    r = json.loads(out)
    assert not any(w.startswith("every released value") for w in r["warnings"]) and "every released" not in err


def test_histogram_text_says_one_group(tmp_path, capsys):
    code, out, err = _hist(tmp_path, capsys, "h\n1\n", data_text="h\n1\n1\n", json_out=False)
    assert code == 0, err
    assert "grouped by h: 1 group released;" in out, out


# 3. A CSV whose first data row has one field more than its header (a trailing comma on each line,
#    as some exports write) made pandas take the first field as an index: every key column was
#    shifted by one (the keys released were the next column's values), silently.
def test_histogram_refuses_rows_with_more_fields_than_the_header(tmp_path, capsys):
    code, out, err = _hist(tmp_path, capsys, "g\nx\ny\n", data_text="g,h\nx,1,\ny,2,\n", by="g", json_out=False)
    data = tmp_path / "rows.csv"
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"sharpdp histogram: error: --csv: {data}: the first data row has more fields than the "
                          "header"), err
    assert not (tmp_path / "out" / "histogram_release.csv").exists()


def test_histogram_refuses_a_key_file_with_trailing_commas(tmp_path, capsys):
    # the keys read as index 'x', 'y' and an all-empty g: the old error blamed blank keys
    code, out, err = _hist(tmp_path, capsys, "g\nx,\ny,\n", data_text="g\nx\ny\n", by="g", json_out=False)
    keys = tmp_path / "keys.csv"
    assert code == 2 and out == ""
    assert err.startswith(f"sharpdp histogram: error: --keys: {keys}: the first data row has more fields"), err


def test_histogram_well_formed_csv_keeps_its_columns(tmp_path, capsys):
    data = tmp_path / "rows.csv"
    data.write_text("g,h\nx,1\ny,2\nx,3\n")
    code, out, err = _run(capsys, "histogram", "--csv", str(data), "--by", "g", "--keys-from-data", "--no-plot",
                          "--out", str(tmp_path / "out"), "--json", "--seed", "1")
    assert code == 0, err
    released = (tmp_path / "out" / "histogram_release.csv").read_text().splitlines()
    assert released[0] == "group,g,released" and [r.split(",")[0] for r in released[1:]] == ["x", "y"]


# 4. "1 values clipped" in the text output of sharpdp mean; since the release-safety rule (docs/histogram_release.md
# §10) the count is written only to a --diagnostics file.
def test_mean_text_says_one_value_clipped(tmp_path, capsys):
    f = tmp_path / "one.csv"
    f.write_text("a\n" + "".join(f"{i % 4}\n" for i in range(40)) + "9\n")  # only the 9 lies outside [0, 5]
    diag = tmp_path / "d.csv"
    code, out, err = _run(capsys, "mean", "--csv", str(f), "--bounds", "0:5", "--seed", "3", "--diagnostics", str(diag))
    assert code == 0, err
    assert "value clipped" not in out and "values clipped" not in out, out
    assert diag.read_text().splitlines()[0].split(",")[-2:] == ["values_clipped", "seed"]
    assert diag.read_text().splitlines()[1].split(",")[-2:] == ["1", "3"]


def test_mean_csv_row_with_more_fields_than_the_header_is_refused(tmp_path, capsys):
    """An unquoted "1,000" makes a row one field longer than the header: pandas would take the first
    data row's extra field as an index (shifting every column), or drop it with usecols (1,000 -> 1)."""
    for body in ("a,b\n1,000,2\n3,4\n", "a,b\n1,2\n3,000,4\n5,6\n"):
        f = tmp_path / "shift.csv"
        f.write_text(body)
        code, out, err = _run(capsys, "mean", "--csv", str(f), "--bounds", "0:5,0:5")
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert "malformed CSV" in err, err


def test_mean_csv_trailing_comma_rows_are_refused_not_misread(tmp_path, capsys):
    """With a trailing comma pandas (index_col=False) drops the empty last field without a warning:
    "1,000," was read as a = 1, b = 0. Every row longer than the header is refused, whatever its last field."""
    for body in ("a,b\n1,000,\n3,4,\n", "a,b\n1,000,\n3,4\n", "a,b\n1,2,\n3,4,\n", "a,b\n1,2\n3,4\n5,6,7\n"):
        f = tmp_path / "trail.csv"
        f.write_text(body)
        code, out, err = _run(capsys, "mean", "--csv", str(f), "--bounds", "0:5,0:5")
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (body, err)
        assert "malformed CSV" in err and "fields, the header 2" in err, err
