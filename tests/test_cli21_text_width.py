"""`sharpdp histogram` and `sharpdp account` text output fits 80 columns (as `sharpdp mean`'s does), by the
one helper sharpdp.cli.wrap_text, losing no word."""

import json

import pytest

import sharpdp.cli
from sharpdp.cli import TEXT_WIDTH, main, wrap_text


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _check(out, module, result, monkeypatch):
    """``out`` fits 80 columns and has the words of the unwrapped text (format_text, wrap_text a no-op)."""
    with monkeypatch.context() as m:
        m.setattr(sharpdp.cli, "wrap_text", lambda text: text)
        unwrapped = module.format_text(result)
    assert max(len(line) for line in unwrapped.splitlines()) > 80  # (the case this test is for)
    assert TEXT_WIDTH == 80 and max(len(line) for line in out.splitlines()) <= 80
    assert out.split() == unwrapped.split()  # the same words in the same order: only line breaks added


def test_wrap_text_rules():
    long = "label: " + " ".join(f"w{i} = {i}" for i in range(30))
    lines = wrap_text(long).split("\n")
    assert len(lines) > 1 and all(len(x) <= 80 for x in lines)
    assert all(x.startswith(" " * 7) and not x.startswith(" " * 8) for x in lines[1:])  # under the text after "label: "
    assert all(x.strip().startswith("w") for x in lines[1:])  # never "w3 =" / "3" apart
    assert wrap_text("short\n\n  kept") == "short\n\n  kept"
    path = "/" + "x" * 100
    assert wrap_text(f"rows (analyst only, not private): see {path}").split("\n") == [
        "rows (analyst only, not private): see", f"  {path}"]  # no short label: 2 in; a long word stays whole


@pytest.mark.parametrize("argv", [
    ["--gamma", "0", "--sigma0", "8", "--n", "100", "--adjacency", "replace", "--epsilon", "1"],
    ["--k", "3", "--epsilon0", "1", "--n", "200", "--epsilon", "0.3"],
])
def test_account_text_fits_80_columns(capsys, monkeypatch, argv):
    from sharpdp.cli import account

    out = _run(capsys, "account", *argv)
    _check(out, account, json.loads(_run(capsys, "account", *argv, "--json")), monkeypatch)


def test_histogram_text_fits_80_columns(capsys, monkeypatch, tmp_path):
    import pandas as pd

    from sharpdp.cli import histogram

    monkeypatch.chdir(tmp_path)  # short paths: a path longer than a line stays whole (never cut)
    pd.DataFrame({"carrier": ["a"] * 30 + ["b"] * 5}).to_csv("d.csv", index=False)
    argv = ["histogram", "--csv", "d.csv", "--by", "carrier", "--keys-from-data", "--no-plot", "--seed", "1",
            "--out", "o"]
    out = _run(capsys, *argv)
    _check(out, histogram, json.loads(_run(capsys, *argv, "--json", "--overwrite")),  # (the same seeded release;
           monkeypatch)  # --overwrite: the first run's release file is there)
    # (--table2's text: tests/test_histogram_cli.py::test_table2)
