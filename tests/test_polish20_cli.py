"""Operator frictions of the CLI found by walking README: the PPCRLB bars on Ctrl-C and their unit, the
large-epsilon note and the K-round note of ``sharpdp mean``, its 80-column text, machine-readable --json
errors, and its diagnostics file. Every test here stays well under 2 s of CPU: the ``sharpdp mean`` runs use
a small CSV, and the Ctrl-C is injected."""

from __future__ import annotations

import csv
import io
import json
import sys

import numpy as np
import pytest

import sharpdp._progress as P
from sharpdp.apps import crlb_experiments as E
from sharpdp.cli import main

from _cli import run as _run


class _Tty(io.StringIO):
    """A terminal stand-in (isatty, no file descriptor: 80 columns by the progress service's rule)."""

    def isatty(self):
        return True


@pytest.fixture
def shown_at_once(monkeypatch):
    """Bars drawn from their start (no 1 s delay) and plain ones at every update."""
    real = P.progress_bar
    monkeypatch.setattr(P, "progress_bar", lambda items=None, **kw: real(items, **{**kw, "delay": 0.0}))
    monkeypatch.setattr(P._PlainBar, "interval", 0.0)


def _stop_at(monkeypatch, name, call):
    """Replace ``crlb_experiments.<name>`` by itself raising KeyboardInterrupt at its ``call``-th call."""
    real, calls = getattr(E, name), [0]

    def stub(*a, **k):
        calls[0] += 1
        if calls[0] >= call:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(E, name, stub)


# ------------------------------------------------------------- 1. PPCRLB bars: Ctrl-C and their unit
@pytest.mark.parametrize("experiment, name, call, count", [
    ("5.3", "ml_private_estimator", 5, "2/5 values (40%)"),  # 2 trials per K: the 5th call is at the 3rd K
    ("5.1", "efficient_estimator", 3, "2/10 values (20%)"),  # one call per s
])
def test_crlb_bar_says_interrupted_at_its_true_count(tmp_path, capsys, monkeypatch, shown_at_once,
                                                      experiment, name, call, count):
    # the bar was iterated: on Ctrl-C its generator was closed as if done, and a plain bar printed nothing
    _stop_at(monkeypatch, name, call)
    code, out, err = _run(capsys, "crlb", "--experiment", experiment, "--trials", "2", "--seed", "1",
                          "--out", str(tmp_path / "o"))
    lines = err.strip().splitlines()
    assert code == 130 and out == "", err
    assert lines[-1] == "sharpdp crlb: interrupted", err
    assert lines[-2].startswith(f"PPCRLB {experiment} (values of ") and count in lines[-2], err
    assert lines[-2].endswith("(interrupted)") and "(done)" not in err, err


def test_crlb_5_2_bar_says_interrupted(tmp_path, capsys, monkeypatch, shown_at_once):
    _stop_at(monkeypatch, "_binary_probit", 2)  # one call per run: the 2nd run
    code, _, err = _run(capsys, "crlb", "--trials", "1", "--seed", "1", "--out", str(tmp_path / "o"))
    lines = err.strip().splitlines()
    assert code == 130 and lines[-1] == "sharpdp crlb: interrupted", err
    assert lines[-2].startswith("PPCRLB 5.2 (runs: blocks x repetitions): 1/") and " runs (" in lines[-2], err
    assert lines[-2].endswith("(interrupted)"), err


def test_crlb_bars_name_their_unit_on_a_terminal(monkeypatch, shown_at_once):
    pytest.importorskip("tqdm")
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    E.laplacian_measurements(K_grid=(50, 100), trials=2, rng=1)
    frames = [f for f in tty.getvalue().split("\r") if "PPCRLB 5.3" in f]
    assert frames and "2/2" in frames[-1], frames
    # the rate names the unit ("values/s" or "s/ values"), never tqdm's anonymous "it"
    assert ("values/s" in frames[-1] or "s/ values" in frames[-1]) and "it/s" not in tty.getvalue() \
        and "s/it" not in tty.getvalue(), frames[-1]
    monkeypatch.setattr(sys, "stderr", _Tty())
    _stop_at(monkeypatch, "ml_private_estimator", 3)
    with pytest.raises(KeyboardInterrupt):
        E.laplacian_measurements(K_grid=(50, 100), trials=2, rng=1)  # a library call: no CLI closes it
    last = sys.stderr.getvalue().split("\r")[-1]
    assert "1/2" in last and last.rstrip().endswith("interrupted"), repr(last)


# --------------------------------------------------------------------- sharpdp mean on a small table
@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """800 rows, two columns in [0, 100) and [-50, 50) with 10 values per column (float64 repr), public bounds
    that clip nothing (--bounds 0:100,-50:50) or clip some (-10:60,-40:40)."""
    p = tmp_path_factory.mktemp("p20") / "t.csv"
    g = np.random.default_rng(7)
    x = np.round(np.c_[g.uniform(0.0, 100.0, 800), g.uniform(-50.0, 50.0, 800)], 6)
    p.write_text("a,b\n" + "\n".join(f"{float(u)!r},{float(v)!r}" for u, v in x) + "\n")
    return p, x


def _diagnostics(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_diagnostics_clipped_mean_equals_the_true_mean_when_nothing_is_clipped(tmp_path, capsys, table):
    # the clipped mean came back from the unit ball (to_original of the mean of z): off in the 10th digit
    p, x = table
    diag = tmp_path / "diag.csv"
    code, out, err = _run(capsys, "mean", "--csv", str(p), "--bounds", "0:100,-50:50", "--epsilon", "1",
                          "--diagnostics", str(diag))
    assert code == 0, err
    rows = _diagnostics(diag)
    assert [r["column"] for r in rows] == ["a", "b"]
    for j, r in enumerate(rows):
        assert r["true_mean"] == r["true_mean_clipped"], r  # the same float, digit for digit
        assert float(r["true_mean"]) == pytest.approx(np.mean(x[:, j]), rel=1e-14)
        assert float(r["abs_error"]) == abs(float(r["private_mean"]) - float(r["true_mean"]))
    # some values clipped: the mean of the clipped rows, to the last digit
    code, out, err = _run(capsys, "mean", "--csv", str(p), "--bounds=-10:60,-40:40", "--epsilon", "1",
                          "--diagnostics", str(diag), "--overwrite")
    assert code == 0, err
    lo, hi = np.array([-10.0, -40.0]), np.array([60.0, 40.0])
    for j, r in enumerate(_diagnostics(diag)):
        ref = np.mean(np.minimum(np.maximum(x[:, j], lo[j]), hi[j]))
        assert float(r["true_mean_clipped"]) == pytest.approx(ref, rel=1e-14)  # (the round trip: ~1e-11)
        assert float(r["true_mean_clipped"]) != float(r["true_mean"])


# ------------------------------------------------------------------------ 4. --json errors are JSON
@pytest.mark.parametrize("argv, parameter, command", [
    (["mean", "--epsilon", "abc"], "--epsilon", "mean"),  # argparse's type check
    (["mean", "--epsilon", "-1"], "--epsilon", "mean"),  # the validator, inside run
    (["mean", "--csv", "/nonexistent/x.csv"], "--csv", "mean"),
    (["mean", "--foo"], "--foo", "mean"),
    (["account"], "--n", "account"),  # a required option missing
    (["account", "--gamma", "0.5", "--n", "10"], "--epsilon", "account"),  # one of a group required
    (["account", "--gamma", "0.5", "--n", "10", "--epsilon", "1"], "--sigma0", "account"),  # account's own check
    (["account", "--k", "2", "--epsilon0", "1", "--gamma", "0.5", "--n", "10", "--epsilon", "1"], "--gamma",
     "account"),
    (["crlb", "--experiment", "9"], "--experiment", "crlb"),
    (["histogram", "--by"], "--by", "histogram"),
    (["nope"], "COMMAND", None),
])
def test_json_mode_errors_are_a_json_object_on_stdout(capsys, argv, parameter, command):
    # was: stdout empty, only the one-line error on stderr
    try:
        code = main([*argv, "--json"])
    except SystemExit as exc:  # argparse's errors exit
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    obj = json.loads(out)  # one object, nothing else on stdout
    assert obj["parameter"] == parameter and obj["command"] == command and obj["exit_status"] == 2, obj
    assert parameter in obj["error"] and obj["error"] in err, (obj, err)  # the stderr line stays, same words
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_text_mode_errors_stay_off_stdout(capsys):
    try:
        code = main(["mean", "--epsilon", "abc"])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.startswith("sharpdp mean: error: argument --epsilon: "), err
    code, out, err = _run(capsys, "mean", "--epsilon", "-1")
    assert code == 2 and out == "" and err.startswith("sharpdp mean: error: --epsilon must be"), err


def test_json_mode_ctrl_c_is_a_json_object(tmp_path, capsys, monkeypatch):
    _stop_at(monkeypatch, "ml_private_estimator", 1)
    code, out, err = _run(capsys, "crlb", "--experiment", "5.3", "--trials", "2", "--out", str(tmp_path), "--json")
    obj = json.loads(out)
    assert code == 130 and obj == {"error": "interrupted", "parameter": None, "command": "crlb",
                                   "exit_status": 130, "files_written": []}, obj
    assert err.strip().splitlines()[-1] == "sharpdp crlb: interrupted", err


def test_error_parameter_reads_every_form():
    from sharpdp.cli import error_parameter

    assert error_parameter("argument -h/--help: ignored explicit argument 'x'") == "-h"
    assert error_parameter("the following arguments are required: --n, --epsilon") == "--n"
    assert error_parameter("--delta: must be in (0, 1)") == "--delta"
    assert error_parameter("unrecognized arguments: -- --epsilon") == "--epsilon"
    assert error_parameter("one of the arguments --epsilon --delta is required") == "--epsilon"
    assert error_parameter("numerical failure (OverflowError: x)") is None
    assert error_parameter("interrupted") is None


# ----------------------------------------------------------------- 3. sharpdp mean's text fits 80 columns
def _figures(r):
    """The figures the text shows, as it formats them (the certified ones on the safe side: docs/cli.md §2)."""
    from sharpdp.cli.rounding import g_down, g_up

    a = r["analyst_only_not_private"]
    units = a.get("expected_rmse_original_units") or r["expected_rmse_original_units"]
    return ([g_up(r["delta_certified"]), g_down(r["delta_bounds"][0]), g_up(r["delta_bounds"][1]),
             f"{r['epsilon']:.6g}", f"{r['expected_rmse_per_coordinate']:.4g}",
             f"{r['central_gaussian']['rmse_per_coordinate']:.4g}", f"{r['rmse_ratio_bmg_over_central']:.3f}",
             f"{r['n']} rows"]
            + [f"{k} = {v:.6g}" for k, v in r["bmg"].items()]
            + [f"{v:.5g}" for v in r["private_mean"]] + [f"{v:.3g}" for v in units])


def test_mean_text_lines_fit_80_columns_and_keep_every_figure(tmp_path, capsys, table):
    from sharpdp.cli.mean import format_text

    # was: 6 lines over 80 columns (n, d; bounds; privacy up to 300; mse_single; RMSE/coord and its note)
    p, _ = table
    argv = ["mean", "--csv", str(p), "--bounds-from-data", "--epsilon", "1", "--seed", "3",
            "--diagnostics", str(tmp_path / "d.csv"), "--overwrite"]  # (run twice)
    code, out, err = _run(capsys, *argv, "--json")
    assert code == 0, err
    r = json.loads(out)
    code, text, err = _run(capsys, *argv)
    assert code == 0, err
    k3 = {**r, "rounds": 3, "composed_certifications": 2}  # the K-round lines (search, the composition)
    for res, txt in ((r, text), (k3, format_text(k3))):
        long = [ln for ln in txt.splitlines() if len(ln) > 80]
        assert not long, long
        flat = " ".join(txt.split())  # (a wrapped line joined again)
        for fig in _figures(res):
            assert fig in flat, fig
        for phrase in ("not a lower bound on delta", "data min/max (analyst only, not private): a [",
                       "diagnostics (TRUE means and realised errors, do not publish): " + str(tmp_path / "d.csv"),
                       "randomness : seeded, reproducible"):
            assert phrase in flat, phrase
    assert "the guarantee is for 3 rounds of this release" in flat and "search : 2 candidates" in flat, flat


# ----------------------------------------------------- 2. a large epsilon says up front why it takes long
@pytest.mark.parametrize("epsilon, noted, max_n", [("20", True, None), ("8", False, None), ("1", False, None),
                                                   ("20", False, 800)])
def test_mean_large_epsilon_says_why_before_the_calibration(capsys, monkeypatch, table, epsilon, noted, max_n):
    # was: only the bar, 35-40 s at --epsilon 20 on the flights table, without a word on why; the note is only
    # given on fewer than LARGE_EPSILON_N rows (the table has 800: max_n = 800 stands in for a large table)
    import sharpdp.cli.mean
    import sharpdp.shuffle

    if max_n is not None:
        monkeypatch.setattr(sharpdp.cli.mean, "LARGE_EPSILON_N", max_n)

    before = []

    def calibration(*a, **k):  # stands in for the calibration: records what was said before it started
        before.append(capsys.readouterr().err)
        raise ValueError("stand-in calibration")

    monkeypatch.setattr(sharpdp.shuffle, "calibrate_bmg_report", calibration)
    p, _ = table
    code, out, err = _run(capsys, "mean", "--csv", str(p), "--bounds", "0:100,-50:50", "--epsilon", epsilon)
    assert code == 2 and "stand-in calibration" in err and len(before) == 1, err
    notes = [ln for ln in before[0].splitlines() if ln.startswith("sharpdp mean: note: ")]
    if not noted:
        assert notes == [], before
        return
    assert len(notes) == 1, before
    for words in ("epsilon = 20 is large", "tens of seconds", "accountant evaluations", "heavy (lognormal) tail",
                  "size caps", "docs/accountant_tail.md §1", "docs/accountant.md §6.2"):
        assert words in notes[0], words


def test_large_epsilon_note_cites_sections_that_exist():
    import pathlib
    import re

    from sharpdp.cli.mean import large_epsilon_note

    docs = pathlib.Path(__file__).resolve().parents[1] / "docs"
    cited = re.findall(r"docs/(\w+\.md) §([\d.]+)", large_epsilon_note(20.0))
    assert len(cited) == 2
    for name, sec in cited:
        assert re.search(rf"^#+ {re.escape(sec)}\.? ", (docs / name).read_text(), re.M), (name, sec)


# --------------------------------------------- 5. K rounds: the candidates' time left is an upper value
def test_mean_rounds_says_the_time_left_counts_every_budgeted_candidate(capsys, monkeypatch, table):
    # was: "(seconds per candidate)", then "1/4 candidates (25%), 21 s, about 64 s left (estimate)" just
    # before finishing at the first candidate, with nothing saying the 64 s assumed all 4 would run
    import sharpdp.shuffle
    from sharpdp.cli.mean import ROUNDS_TIME_NOTE

    before = []

    def calibration(*a, **k):
        before.append(capsys.readouterr().err)
        assert k.get("rounds") == 3
        raise ValueError("stand-in calibration")

    monkeypatch.setattr(sharpdp.shuffle, "calibrate_bmg_report", calibration)
    p, _ = table
    code, _, err = _run(capsys, "mean", "--csv", str(p), "--bounds", "0:100,-50:50", "--rounds", "3")
    assert code == 2 and len(before) == 1, err
    first = before[0].splitlines()[0]
    assert first == f"sharpdp mean: loading the data, then calibrating the randomizer for 3 rounds: {ROUNDS_TIME_NOTE}"
    for words in ("stops at its first certified candidate", "counts every budgeted candidate", "upper value"):
        assert words in first, words
    assert "note:" not in before[0]  # (epsilon 0.01: no large-epsilon note)


def test_mean_rounds_says_when_no_candidate_came_within_20_percent_of_the_target(capsys, table):
    # was: "4 candidates" only, for a certified delta of 3.8e-7 against a target of 1e-6 (more noise than needed)
    from sharpdp.cli.mean import format_text

    p, _ = table
    code, out, err = _run(capsys, "mean", "--csv", str(p), "--bounds-from-data", "--epsilon", "1", "--seed", "3",
                          "--json")
    assert code == 0, err
    r = json.loads(out)
    k = {**r, "rounds": 3, "composed_certifications": 4}
    far = " ".join(format_text({**k, "delta_certified": 0.5 * r["delta_target"]}).split())
    near = " ".join(format_text({**k, "delta_certified": 0.85 * r["delta_target"]}).split())
    assert "none within 20 % of the target delta" in far and "none within 20 %" not in near
    assert all(len(ln) <= 80 for ln in format_text({**k, "delta_certified": 0.5 * r["delta_target"]}).splitlines())
