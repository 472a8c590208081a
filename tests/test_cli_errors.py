"""Errors shared by the commands that write files: one line, exit 2, the parameter named."""

import pytest

from _cli import run as _run


def _one_line(code, out, err):
    return code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err


_COMMANDS = [
    ["histogram", "--by", "origin", "--no-plot"],
    ["crlb", "--experiment", "5.3", "--trials", "2"],
    ["figures", "shuffle", "--quick"],
]


@pytest.mark.parametrize("argv", _COMMANDS, ids=lambda a: a[0])
def test_out_is_an_existing_file(tmp_path, capsys, argv):
    f = tmp_path / "a_file"
    f.write_text("x")
    code, out, err = _run(capsys, *argv, "--out", str(f))
    assert _one_line(code, out, err), err
    assert "--out" in err and "is a file, not a directory" in err and "Errno" not in err, err


@pytest.mark.parametrize("argv", _COMMANDS, ids=lambda a: a[0])
def test_out_under_a_file(tmp_path, capsys, argv):
    f = tmp_path / "a_file"
    f.write_text("x")
    code, out, err = _run(capsys, *argv, "--out", str(f / "sub"))
    assert _one_line(code, out, err), err
    assert "--out: cannot create directory" in err and "Errno" not in err, err


def test_make_out_dir_names_the_flag_when_creation_fails(tmp_path, monkeypatch):
    import os

    from sharpdp.cli import CliError, make_out_dir

    def refuse(*a, **k):
        raise FileNotFoundError(2, "No such file or directory")

    assert make_out_dir(str(tmp_path)) == str(tmp_path)  # an existing directory is fine
    monkeypatch.setattr(os, "makedirs", refuse)  # e.g. /proc/nope as root: the parent looks writable
    with pytest.raises(CliError, match=r"^--out: cannot create directory .*: No such file or directory$"):
        make_out_dir(str(tmp_path / "new"))


def test_keys_is_a_directory(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("g\na\nb\n")
    code, out, err = _run(capsys, "histogram", "--csv", str(data), "--by", "g", "--keys", str(tmp_path),
                          "--no-plot", "--out", str(tmp_path / "o"))
    assert _one_line(code, out, err), err
    assert "--keys" in err and "is a directory" in err and "no such file" not in err, err
    code, out, err = _run(capsys, "histogram", "--csv", str(tmp_path), "--by", "g", "--no-plot")
    assert _one_line(code, out, err) and "--csv" in err and "is a directory" in err, err
