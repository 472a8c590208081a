"""Release files are written whole or not at all, and an interrupted command names the files it completed.

A Ctrl-C while `sharpdp histogram` draws its figure used to leave the complete release CSV on disk behind a bare
"interrupted": a user who reran the command released the data twice. `sharpdp.cli.release_file` writes through a
temporary file that replaces the target only on success, and the "interrupted" line lists the completed files.
"""

import os
import stat

import pandas as pd
import pytest

import sharpdp.cli as cli
import sharpdp.cli.histogram as hist_cli
from sharpdp.cli import main, release_file


def _small_csv(tmp_path):
    path = tmp_path / "data.csv"
    pd.DataFrame({"g": ["a"] * 50 + ["b"] * 3 + ["c"]}).to_csv(path, index=False)
    keys = tmp_path / "keys.csv"
    pd.DataFrame({"g": ["a", "b", "c", "d"]}).to_csv(keys, index=False)
    return ["histogram", "--csv", str(path), "--by", "g", "--keys", str(keys), "--r", "0.5", "--c", "0.5"]


def _leftovers(directory):
    return [f for f in os.listdir(directory) if ".partial-" in f]


def test_interrupt_while_plotting_names_the_release_already_written(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(hist_cli, "_plot_release", interrupted)
    code = main(_small_csv(tmp_path) + ["--out", str(out)])
    err = capsys.readouterr().err
    assert code == 130
    csv_path = str(out / "histogram_release.csv")
    assert f"interrupted after writing {csv_path}" in err and "releases the data again" in err
    assert len(pd.read_csv(csv_path)) == 4  # the release is complete: every group of the public domain
    assert _leftovers(out) == []


def test_interrupt_while_writing_leaves_nothing(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    argv = _small_csv(tmp_path) + ["--out", str(out), "--no-plot"]
    real = pd.DataFrame.to_csv

    def half_then_interrupt(self, path, *args, **kwargs):
        real(self.iloc[:2], path, *args, **kwargs)  # part of the release reaches the disk, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_interrupt)
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and err[-1] == "sharpdp histogram: interrupted"  # nothing completed: nothing named
    assert not (out / "histogram_release.csv").exists() and _leftovers(out) == []


def test_release_file_replaces_only_on_success(tmp_path):
    target = tmp_path / "r.csv"
    target.write_text("old\n")
    cli.WRITTEN.clear()
    with pytest.raises(KeyboardInterrupt):
        with release_file(str(target)) as tmp:
            with open(tmp, "w") as f:
                f.write("new, half")
            raise KeyboardInterrupt
    assert target.read_text() == "old\n" and _leftovers(tmp_path) == [] and cli.WRITTEN == []
    with release_file(str(target), mode=0o600) as tmp:
        assert stat.S_IMODE(os.stat(tmp).st_mode) == 0o600  # private before the first byte is written
        with open(tmp, "w") as f:
            f.write("new\n")
    assert target.read_text() == "new\n" and stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert cli.WRITTEN == [str(target)] and _leftovers(tmp_path) == []
