"""Messages of session 25's newcomer findings (docs/cli.md §6, §7): a --keys row with an empty cell names its
line; a trailing comma on the first data row gets the line message every other row gets; column lists are
names, not a Python list; a value that underflows to 0 says "write 0" where 0 is accepted; --epsilon 1e400 is
above 700."""

from __future__ import annotations

import json

import pytest

from _cli import run  # noqa: E402


def _write(tmp_path, name, data):
    p = tmp_path / name
    p.write_text(data)
    return str(p)


def _hist(tmp_path, keys, by="carrier,dest"):
    data = _write(tmp_path, "d.csv", "carrier,dest,x\nAA,JFK,1\nUA,EWR,2\n")
    return ["histogram", "--csv", data, "--by", by, "--keys", keys, "--no-plot", "--out", str(tmp_path / "o"),
            "--json"]


def _error(capsys, argv):
    code, out, err = run(capsys, *argv)
    obj = json.loads(out)
    assert code == 2, (code, out, err)
    return obj


@pytest.mark.parametrize("text, line", [("carrier,dest\nAA,\nUA,JFK\n", 2), ("carrier,dest\nAA,JFK\n,EWR\n\n", 3),
                                        ('carrier,dest\n"A\nA",JFK\nUA,\n', 4), ("carrier,dest\nAA,JFK\nUA, \n", 3)])
def test_an_empty_key_cell_names_its_line(tmp_path, capsys, text, line):
    keys = _write(tmp_path, "k.csv", text)
    obj = _error(capsys, _hist(tmp_path, keys))
    assert obj["parameter"] == "--keys"
    assert obj["error"] == f"--keys: {keys}: line {line} has an empty cell or a blank key (every key must be given)"
    # (caught: s25's "--keys: k.csv has an empty cell or a blank key" named no line; a line taken as the row
    # index + 2 gave line 3 for the row after a quoted line break)


@pytest.mark.parametrize("option", ["--keys", "--csv"])
@pytest.mark.parametrize("row", [2, 3])
def test_a_trailing_comma_names_its_line_on_every_row(tmp_path, capsys, option, row):
    rows = ["AA,JFK", "UA,EWR"]
    rows[row - 2] += ","
    text = "carrier,dest\n" + "\n".join(rows) + "\n"
    if option == "--keys":
        path = _write(tmp_path, "k.csv", text)
        argv = _hist(tmp_path, path)
    else:
        path = _write(tmp_path, "d2.csv", text)
        keys = _write(tmp_path, "k.csv", "carrier,dest\nAA,JFK\n")
        argv = ["histogram", "--csv", path, "--by", "carrier,dest", "--keys", keys, "--no-plot", "--out",
                str(tmp_path / "o"), "--json"]
    obj = _error(capsys, argv)
    assert obj["error"].startswith(f"{option}: ") and path in obj["error"]
    assert f"line {row} has 3 fields, the header 2 (an unquoted comma such as 1,000, or a trailing comma?)" in obj[
        "error"]
    # (caught: on line 2, s25 gave the RangeIndex test's "the first data row has more fields than the header (a
    # trailing comma?)" with no line nor counts; its wording is kept, tests/test_newcomer9.py holds it)


def test_column_lists_are_names_not_a_python_list(tmp_path, capsys):
    keys = _write(tmp_path, "k.csv", "carrier,x\nAA,1\n")
    obj = _error(capsys, _hist(tmp_path, keys, by="carrier"))
    assert obj["error"] == f"--keys: {keys} has column(s) 'x' that are not --by columns (carrier)"
    keys = _write(tmp_path, "k2.csv", "carrier\nAA\n")
    obj = _error(capsys, _hist(tmp_path, keys))
    assert obj["error"] == "--keys: no key file gives the column(s) 'dest'"
    # (caught: s25 printed "['x'] that are not --by columns ['carrier']")


@pytest.mark.parametrize("argv, zero", [
    (["account", "--gamma", "0.5", "--sigma0", "1", "--n", "100", "--epsilon", "1e-400"], True),
    (["account", "--gamma", "1e-400", "--sigma0", "1", "--n", "100", "--epsilon", "1"], True),
    (["account", "--gamma", "0.5", "--sigma0", "1e-400", "--n", "100", "--epsilon", "1"], False),
    (["mean", "--bounds", "0:10", "--epsilon", "1e-400"], False)])
def test_an_underflow_says_write_0_where_0_is_accepted(capsys, argv, zero):
    from sharpdp.cli import main

    with pytest.raises(SystemExit) as exc:  # (argparse's usage error: exit status 2)
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "underflows to 0 as a double" in err
    assert ("or write 0 if you mean 0 (the option accepts 0)" in err) == zero, err
    # (caught: s25 said "give a value of at least that size" only, for --epsilon / --gamma of account too)


@pytest.mark.parametrize("value", ["1e400", "inf"])
def test_an_epsilon_beyond_the_double_range_is_above_700(tmp_path, capsys, value):
    data = _write(tmp_path, "m.csv", "a\n1\n2\n")
    code, out, err = run(capsys, "mean", "--csv", data, "--bounds", "0:10", "--epsilon", value)
    assert code == 2 and "--epsilon: inf nats is above 700" in err, err
    # (caught: s25 said "--epsilon must be finite, got inf")
