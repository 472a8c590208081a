"""CLI text tables: every header sits right-aligned over its column of values (long names widen their column)."""

import re

from sharpdp.cli import main


def _right_edges(line: str) -> list[int]:
    return [m.end() for m in re.finditer(r"\S+", line)]


def test_crlb_5_1_headers_sit_over_their_values(tmp_path, capsys, monkeypatch):
    import functools

    from sharpdp.apps import crlb_experiments as E

    # three privacy levels instead of the command's ten (the table's rows are alike; 3/10 of the CPU)
    monkeypatch.setattr(E, "mechanism_comparison", functools.partial(E.mechanism_comparison, s_grid=[0.1, 1.0, 10.0]))
    main(["crlb", "--experiment", "5.1", "--trials", "4", "--seed", "3", "--out", str(tmp_path), "--no-plot"])
    lines = capsys.readouterr().out.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.split()[:2] == ["s", "bound"])
    header, rows = lines[i], lines[i + 1:i + 4]
    assert "trigonometric_output" in header  # the longest name (20 characters) is in the table
    assert [float(row.split()[0]) for row in rows] == [0.1, 1.0, 10.0]
    for row in rows:
        assert _right_edges(row) == _right_edges(header)
