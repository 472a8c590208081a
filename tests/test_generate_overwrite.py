"""The flight-like data generator: a second run into the same directory is refused unless --overwrite, which only
ever removes the part files an earlier run wrote."""

from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")


def test_second_run_needs_overwrite_and_keeps_foreign_files(tmp_path, capsys):
    from sharpdp.distributed.generate import main

    out = tmp_path / "flights"
    assert main(["--rows", "30", "--rows-per-file", "10", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [f"part-{i:05d}.parquet" for i in range(3)]
    capsys.readouterr()
    assert main(["--rows", "20", "--rows-per-file", "10", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--out: " in err and "--overwrite" in err, err
    assert main(["--rows", "20", "--rows-per-file", "10", "--out", str(out), "--overwrite"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [f"part-{i:05d}.parquet" for i in range(2)]
    (out / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert main(["--rows", "20", "--out", str(out), "--overwrite"]) == 2
    assert "other files" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "mine" and len(list(out.iterdir())) == 3
