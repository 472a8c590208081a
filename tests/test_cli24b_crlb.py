"""sharpdp crlb's text is wrapped at 80 columns like the other commands' (sharpdp.cli.wrap_text), its tables
unbroken: each row on one line with its values under their headers, and no word of the prose lost."""

import json
import re

from sharpdp.cli import main


def _run(capsys, *argv):
    assert main(["crlb", *argv]) == 0
    return capsys.readouterr().out


def _is_table_line(line, header):
    return line == header or all(re.fullmatch(r"-?[\d.e+-]+|nan|inf", t) for t in line.split())


def test_crlb_text_is_wrapped_at_80_columns_and_its_table_is_not(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # short --out paths (a path is one word: never cut, so it may pass 80 columns)
    for experiment, trials, first in (("5.2", "1", ["k", "bound"]), ("5.3", "2", ["K", "bound"])):
        argv = ["--experiment", experiment, "--trials", trials, "--seed", "1", "--no-plot"]
        r = json.loads(_run(capsys, *argv, "--json", "--out", f"j{experiment}"))
        out = _run(capsys, *argv, "--out", f"t{experiment}")
        lines = out.splitlines()
        header = next(ln for ln in lines if ln.split()[:2] == first)
        table = [ln for ln in lines if _is_table_line(ln, header)]
        prose = [ln for ln in lines if ln not in table]
        assert len(table) >= 6 and max(map(len, prose)) <= 80, prose
        assert max(map(len, table)) > 80  # (these tables are wider: left unbroken, so their columns stay aligned)
        edges = [m.end() for m in re.finditer(r"\S+", header)]
        assert all([m.end() for m in re.finditer(r"\S+", row)] == edges for row in table)
        flat = " ".join(out.split())
        assert f"seed {r['seed']} (rerun with --seed {r['seed']} to reproduce; public data, not a release)" in flat
        if experiment == "5.2":
            assert " ".join(r["why_mse_below_bound"].split()) in flat  # nothing lost in the wrapping
