"""sharpdp histogram --table2 follows the rule of every output file (docs/cli.md §4): an existing
table2_bounds.png in --out is refused, before any work, unless --overwrite is given (before: replaced silently,
and --overwrite was refused with --table2)."""

import json

from sharpdp.cli import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_table2_refuses_an_earlier_figure_unless_overwrite(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    png = out / "table2_bounds.png"
    png.write_bytes(b"an earlier run's figure")
    argv = ["histogram", "--table2", "--out", str(out)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "table2_bounds.png exists" in captured.err and "--overwrite" in captured.err
    assert main([*argv, "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["parameter"] == "--out"
    assert png.read_bytes() == b"an earlier run's figure"  # untouched
    assert main([*argv, "--no-plot"]) == 0  # writes no figure: nothing to refuse
    capsys.readouterr()
    assert png.read_bytes() == b"an earlier run's figure"
    assert main([*argv, "--overwrite"]) == 0
    capsys.readouterr()
    assert png.read_bytes().startswith(PNG_MAGIC)  # replaced by the new figure
