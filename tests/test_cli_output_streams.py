"""What goes where: warnings on stderr once, progress as the --help epilog says (a live bar on a
terminal, plain rate-limited lines elsewhere), reduced `figures --quick` output marked as such, and
`account` saying nothing about an RMSE it does not print."""

from __future__ import annotations

import io
import json
import re

import pandas as pd
import pytest

import sharpdp._progress as P
from _cli import run as _run
from sharpdp.cli import MEAN_RMSE_NOTE, SEEDED_MODE_WARNING, build_parser


def _csv(path, n=300):
    path.write_text("a,b\n" + "\n".join(f"{i % 10},{(7 * i) % 13}" for i in range(n)) + "\n")
    return path


# ---------------------------------------------------------------- 1. the seeded-mode warning: stderr, once
def test_mean_seeded_warning_once_on_stderr(tmp_path, capsys, monkeypatch):
    f = _csv(tmp_path / "t.csv")
    argv = ["mean", "--csv", str(f), "--bounds", "0:10,0:13", "--epsilon", "1", "--seed", "7"]
    monkeypatch.setattr(P._PlainBar, "quiet", 0.0)  # the calibration's bar prints from its first update
    code, out, err = _run(capsys, *argv)
    assert code == 0, err
    assert err.count(SEEDED_MODE_WARNING) == 1 and f"sharpdp mean: warning: {SEEDED_MODE_WARNING}" in err
    # said before the calibration's bar, not after the wait
    assert err.index(SEEDED_MODE_WARNING) < err.index("calibrating"), err
    assert SEEDED_MODE_WARNING not in out and "warning:" not in out
    # the status line stays in the output (it is the run's mode, not the warning)
    assert "randomness : seeded, reproducible (NOT private unless the seed is kept secret)" in out
    code, out, err = _run(capsys, *argv, "--json")
    assert code == 0 and err.count(SEEDED_MODE_WARNING) == 1
    r = json.loads(out)  # stdout is the JSON document alone; the warning is data there
    assert r["warnings"] == [SEEDED_MODE_WARNING] and r["reproducible_seeded_mode"] is True


def test_histogram_warnings_once_on_stderr(tmp_path, capsys):
    data, keys = tmp_path / "d.csv", tmp_path / "k.csv"
    pd.DataFrame({"g": ["a"] * 3 + ["b"] * 2 + ["z"] * 5}).to_csv(data, index=False)  # small groups only
    pd.DataFrame({"g": ["a", "b"]}).to_csv(keys, index=False)
    code, out, err = _run(capsys, "histogram", "--csv", str(data), "--by", "g", "--keys", str(keys), "--seed", "1",
                          "--no-plot", "--out", str(tmp_path / "o"))
    assert code == 0, err
    warnings = [ln for ln in err.splitlines() if ln.startswith("sharpdp histogram: warning: ")]
    assert len(warnings) == 3 and err.count(SEEDED_MODE_WARNING) == 1  # small groups, key format hint, seed
    assert "2 of 2 released groups have" in warnings[0] and "every released value is at most" in warnings[1]
    assert "warning:" not in out and SEEDED_MODE_WARNING not in out
    assert "outside" not in err.replace("outside the domain are dropped", "")  # the 5 rows outside: no figure,
    assert "5 row" not in out + err  # not even a yes/no (docs/histogram_release.md §10)


# ---------------------------------------------------------------- 2. progress: the rule of the --help epilog
def test_every_help_states_the_progress_rule():
    """The rule in full once, in `sharpdp --help`; every command's --help points to it (session 30: it was
    repeated in full in every --help)."""
    from sharpdp.cli import SUBCOMMAND_EPILOG

    parser = build_parser()
    flat = " ".join(P.PROGRESS_RULE.split())
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == {"mean", "account", "histogram", "crlb", "figures"}
    assert flat in " ".join(parser.format_help().split())
    for p in sub.choices.values():
        text = " ".join(p.format_help().split())
        assert flat not in text and " ".join(SUBCOMMAND_EPILOG.split()) in text, p.prog


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_bar_kind_follows_the_stream():
    tqdm = pytest.importorskip("tqdm")
    assert isinstance(P.progress_bar(total=3, file=io.StringIO()), P._PlainBar)  # a file or pipe
    bar = P.progress_bar(total=3, file=_Tty(), disable=True)
    assert isinstance(bar, tqdm.std.tqdm) and not isinstance(bar, P._PlainBar)
    bar.close()


class _Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_plain_bar_at_most_one_line_per_interval(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(P.time, "monotonic", clock)
    buf = io.StringIO()
    bar = P._PlainBar(total=200, desc="work", unit=" items", file=buf)
    for _ in range(200):  # 200 steps of 0.1 s: 20 s in all
        clock.t += 0.1
        bar.update(1)
    bar.close()
    lines = buf.getvalue().splitlines()
    assert "\r" not in buf.getvalue()
    # nothing in the first 2 s, then at t = 2, 7, 12, 17 s (one per 5 s), then the (done) line
    assert len(lines) == 5, lines
    assert lines[0].startswith("work: 20/200 items (10%), 2 s, about 18 s left (estimate)"), lines[0]
    assert re.match(r"work: 7\d/200 items \(3\d%\), 7 s", lines[1]), lines[1]
    assert lines[-1] == "work: 200/200 items (100%), 20 s (done)"
    buf = io.StringIO()  # a step that ends within 2 s: nothing, not even a (done) line
    with P._PlainBar(total=19, desc="quick", unit=" items", file=buf) as bar:
        for _ in range(19):
            clock.t += 0.1
            bar.update(1)
    assert buf.getvalue() == ""


def test_plain_bar_silent_within_its_delay_and_percent_only_without_unit(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(P.time, "monotonic", clock)
    buf = io.StringIO()
    with P._PlainBar(total=10, desc="quick", file=buf, delay=1.0) as bar:
        for _ in range(10):
            clock.t += 0.05
            bar.update(1)
    assert buf.getvalue() == ""  # ended within its delay: nothing at all
    with P._PlainBar(total=300, desc="Figures 1-3", file=buf, delay=1.0) as bar:  # weights, no unit
        clock.t += 2.0
        bar.update(100)
        clock.t += 1.0
        bar.update(200)
    assert buf.getvalue().splitlines() == ["Figures 1-3: 33%, 2 s, about 4 s left (estimate)",
                                           "Figures 1-3: 100%, 3 s (done)"]


def test_account_rounds_progress_is_plain_lines_when_stderr_is_not_a_terminal(capsys, monkeypatch):
    pytest.importorskip("tqdm")  # installed, yet not used: captured stderr is not a terminal
    init = P._PlainBar.__init__  # shown from the first value on (no 1 s delay): a cheap round (~1 s) suffices
    monkeypatch.setattr(P._PlainBar, "__init__", lambda self, *a, **k: init(self, *a, **dict(k, delay=0.0)))
    monkeypatch.setattr(P._PlainBar, "quiet", 0.0)  # (and not the 2 s quiet period of a log's bar)
    from sharpdp.shuffle import clear_caches

    clear_caches()  # the pair is built here, not taken from another test's cached one
    code, out, err = _run(capsys, "account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000", "--epsilon",
                          "0.002", "--discretization", "1e-4", "--rounds", "2", "--json")
    assert code == 0, err
    assert json.loads(out)["rounds"] == 2
    assert "\r" not in err and "|" not in err  # no redrawn tqdm frames in a log
    bars = [ln for ln in err.splitlines() if ln.startswith("privacy profile")]
    assert bars and bars[-1].endswith("(done)")
    done, total = map(int, re.search(r": (\d+)/(\d+) values \(100%\)", bars[-1]).groups())
    assert done == total


# ---------------------------------------------------------------- 3. figures --quick: reduced, and says so
# (that the run is marked as reduced and that its note counts the points of the written files is
# checked on the one real run of `figures --quick --json`:
# tests/test_shuffle_figures.py::test_figures_regenerate_with_one_command)


def test_figures_quick_has_its_own_default_directory_and_header(tmp_path, capsys, monkeypatch):
    import sharpdp.apps.shuffle_figures as F

    calls = []
    monkeypatch.setattr(F, "write_figures", lambda out, quick: calls.append((out, quick)) or {"figure1": f"{out}/x"})
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "figures", "shuffle", "--quick")
    assert code == 0, err
    assert calls == [("sharpdp_figures_quick_out", True)]  # a smoke run never overwrites the full figures
    assert out.splitlines()[0].startswith("quick run: REDUCED figures")
    code, out, err = _run(capsys, "figures")
    assert code == 0 and calls[-1] == ("sharpdp_figures_out", False)
    assert "quick" not in out and "REDUCED" not in out
    assert build_parser().parse_args(["figures"]).which == "shuffle"


# ---------------------------------------------------------------- 4. account prints no RMSE, so no note on one
def test_account_bmg_notes_only_what_it_prints(capsys):
    code, out, err = _run(capsys, "account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000", "--epsilon", "0.5")
    assert code == 0, err
    assert "printed figure" not in out and "grid release" not in out and MEAN_RMSE_NOTE not in out
    assert "RMSE/coord :" not in out
    assert "mse_single: worst-case MSE of one user's unbiased message" in out


def test_mean_prints_the_rmse_note_under_its_rmse_line(tmp_path, capsys):
    f = _csv(tmp_path / "t.csv")
    code, out, err = _run(capsys, "mean", "--csv", str(f), "--bounds", "0:10,0:13", "--epsilon", "1")
    assert code == 0, err
    lines = out.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("RMSE/coord : expected "))
    # the note right after the RMSE entry's figures, under it (the entry is wrapped at 80 columns)
    entry = " ".join(" ".join(lines[i:i + 5]).split())
    assert re.search(r"\(scaled units; ratio [0-9.]+\) \(" + re.escape(MEAN_RMSE_NOTE) + r"\)", entry), entry
    assert " ".join(out.split()).count(MEAN_RMSE_NOTE) == 1


# ---------------------------------------------------------------- 5. histogram input errors read like mean's
def test_histogram_unknown_by_column_lists_every_column(tmp_path, capsys):
    data = tmp_path / "d.csv"
    cols = [f"c{i}" for i in range(15)]  # more than the 12 the message used to show, unsaid
    data.write_text(",".join(cols) + "\n" + ",".join("1" for _ in cols) + "\n")
    code, out, err = _run(capsys, "histogram", "--csv", str(data), "--by", "c14,nope", "--keys-from-data")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.strip() == (f"sharpdp histogram: error: --by: no column 'nope' in {data} (available: "
                           + ", ".join(cols) + ")")


@pytest.mark.parametrize("option", ["--csv", "--keys"])
def test_histogram_missing_file_wording_matches_mean(tmp_path, capsys, option):
    data = tmp_path / "d.csv"
    data.write_text("g\na\n")
    argv = ["--csv", str(tmp_path / "nope.csv")] if option == "--csv" else \
        ["--csv", str(data), "--keys", str(tmp_path / "nope.csv")]
    code, out, err = _run(capsys, "histogram", "--by", "g", *argv, "--out", str(tmp_path / "o"))
    assert code == 2 and err.strip() == f"sharpdp histogram: error: {option}: file not found: {tmp_path / 'nope.csv'}"
    code, out, err = _run(capsys, "mean", "--csv", str(tmp_path / "nope.csv"))
    assert code == 2 and err.strip() == f"sharpdp mean: error: --csv: file not found: {tmp_path / 'nope.csv'}"
    # the Dask engine words it the same way (its library error names `data`, the CLI maps it to --csv)
    code, out, err = _run(capsys, "mean", "--engine", "dask", "--csv", str(tmp_path / "nope.csv"),
                          "--bounds", "0:1", "--columns", "a")
    assert code == 2 and err.strip() == f"sharpdp mean: error: --csv: file not found: {tmp_path / 'nope.csv'}"


def test_figures_bad_paper_is_one_line_naming_the_argument(capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["figures", "nope"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "argument PAPER: invalid choice: 'nope' (choose from 'shuffle')" in err
