"""Session 32: the newcomer frictions left from session 31 (docs/cli.md §10), each fixed and checked against an
independent reference where there is a number (the sharp accountant's certified lower value, the closed form of the
mechanism, scipy's t quantile, a fresh evaluation of the mechanism at the suggested parameter)."""

from __future__ import annotations

import io
import json
import math
import sys
import time

import numpy as np
import pandas as pd
import pytest

from _cli import run
from sharpdp.cli import BMG_FIELD_HELP, build_parser


def _flat(text: str) -> str:
    return " ".join(text.split())


BMG = ["account", "--gamma", "0.5", "--sigma0", "1", "--n", "100000"]


# ------------------------------------------------------------------ 1. account: zero-out in words, replace-one implied
@pytest.mark.parametrize("target", [["--delta", "1e-6"], ["--epsilon", "0.01"]])
def test_account_zero_out_states_the_replace_one_guarantee_it_implies(capsys, target):
    code, out, err = run(capsys, *BMG, *target, "--json")
    assert code == 0, err
    r = json.loads(out)
    eps, delta = r["epsilon"], r["delta"]
    implied = r["replace_one_implied"]
    assert implied["epsilon"] == 2 * eps
    assert implied["delta"] >= (1 + math.exp(eps)) * delta and implied["delta"] <= (1 + math.exp(eps)) * delta * (1 + 1e-13)
    assert "zero-out" in r["adjacency_meaning"] and "null input" in r["adjacency_meaning"]
    code, out, _ = run(capsys, *BMG, *target)
    text = _flat(out)
    from sharpdp.cli.rounding import g_up

    assert f"this implies ({implied['epsilon']:.6g}, {g_up(implied['delta'])})-DP" in text
    assert "NOT the usual replace-one" in text and "--adjacency replace certifies replace-one directly" in text
    # (caught: account printed "zero_out adjacency" only, while sharpdp mean explained it)


def test_account_implied_delta_takes_the_factor_where_delta_is_certified(capsys):
    # at 25 nats the reported delta is certified at a smaller epsilon (the sampler's charge floor, docs/cli.md §2):
    # (e, d) zero-out gives (2 e, (1 + e^e) d) replace-one, which holds at 2 x 25 nats too; e^25 would be 7e10 x looser
    from sharpdp.cli.mean_result import replace_one_implied

    code, out, err = run(capsys, "account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000000", "--epsilon", "25",
                         "--json")
    assert code == 0, err
    r = json.loads(out)
    f = r["sampler_charge_floor"]
    at, d = f["smallest_at_epsilon"], f["smallest_certified_delta"]
    assert at < 25 and d < 0.9 * r["delta"]
    implied = r["replace_one_implied"]
    assert implied["epsilon"] == 50 and implied["delta"] == replace_one_implied(at, d)["delta"]
    assert implied["delta"] < 1e-3 * (1 + math.exp(25)) * d


def test_account_replace_one_implication_holds_against_the_sharp_lower_value(capsys):
    # k = 2 randomized response: the zero-out (blanket) certificate's implied replace-one delta at 2 eps must be at
    # least the sharp accountant's certified LOWER value of the true replace-one delta there (else the implication
    # would under-report)
    from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse

    code, out, err = run(capsys, "account", "--k", "2", "--epsilon0", "1", "--n", "1000", "--delta", "1e-3", "--json")
    assert code == 0, err
    r = json.loads(out)
    implied = r["replace_one_implied"]
    lo, up = ExactShuffleAccountant(RandomizedResponse(2, 1.0), 1000, "replace").get_delta_bounds(implied["epsilon"])
    assert 0.0 < lo <= implied["delta"]
    # and the replace run itself carries no implication: it is replace-one already
    code, out, _ = run(capsys, "account", "--k", "2", "--epsilon0", "1", "--n", "1000", "--delta", "1e-3",
                       "--adjacency", "replace", "--json")
    r = json.loads(out)
    assert "replace_one_implied" not in r and r["adjacency_meaning"].startswith("replace-one")


# ------------------------------------------------------------------ 2. chi_lo per adjacency
def test_chi_lo_note_matches_the_adjacency(capsys):
    from sharpdp.cli.notes import bmg_field_help

    code, out, _ = run(capsys, *BMG, "--adjacency", "replace", "--delta", "1e-6")
    text = _flat(out)
    assert code == 0 and "chi_lo / 2" in text and "lower shuffle index of the zero-out relation" in text
    code, out, _ = run(capsys, *BMG, "--delta", "1e-6")
    assert "chi_lo / 2" not in out and "lower shuffle index (zero-out)" in _flat(out)
    # mean's text and --json use the same notes
    full = bmg_field_help("replace")
    assert "chi_lo / 2" in full["chi_lo"] and "docs/calibration.md §2" in full["chi_lo"]
    assert bmg_field_help("zero_out") == BMG_FIELD_HELP


def test_mean_replace_json_explains_chi_lo_for_replace_one(tmp_path, capsys):
    rng = np.random.default_rng(32)
    path = tmp_path / "x.csv"
    pd.DataFrame({"a": rng.uniform(0, 10, 3000)}).to_csv(path, index=False)
    code, out, err = run(capsys, "mean", "--csv", str(path), "--bounds", "0:10", "--epsilon", "1", "--adjacency",
                         "replace", "--seed", "1", "--json")
    assert code == 0, err
    assert "chi_lo / 2" in json.loads(out)["bmg_meaning"]["chi_lo"]


# ------------------------------------------------------------------ 3. --adjacency zero-out
@pytest.mark.parametrize("command", [["mean"], ["account", "--n", "10", "--gamma", "0.5", "--sigma0", "1",
                                                "--epsilon", "1"]])
@pytest.mark.parametrize("given, read", [("zero-out", "zero_out"), ("Zero-Out", "zero_out"),
                                         ("replace-one", "replace"), ("zero_out", "zero_out"), ("replace", "replace")])
def test_adjacency_aliases(command, given, read):
    assert build_parser().parse_args([*command, "--adjacency", given]).adjacency == read


def test_adjacency_alias_gives_the_same_answer_and_a_bad_one_is_refused(capsys):
    a = run(capsys, *BMG, "--delta", "1e-6", "--adjacency", "zero-out", "--json")
    b = run(capsys, *BMG, "--delta", "1e-6", "--json")
    assert a[0] == b[0] == 0 and json.loads(a[1]) == json.loads(b[1])
    with pytest.raises(SystemExit) as exc:  # (argparse's exit: one line, status 2)
        run(capsys, *BMG, "--delta", "1e-6", "--adjacency", "zero out")
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and "argument --adjacency: invalid choice: 'zero out'" in err and out == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err


# ------------------------------------------------------------------ 4. progress: no silence, no repeated line
def test_a_counted_plain_bar_prints_while_its_item_takes_long(monkeypatch):
    from sharpdp import _progress as P

    monkeypatch.setattr(P._PlainBar, "silence", 0.2)
    monkeypatch.setattr(P._PlainBar, "quiet", 0.0)
    f = io.StringIO()
    bar = P.progress_bar(total=3, desc="values", unit=" values", file=f)
    bar.update(1)
    time.sleep(1.5)  # one slow item: lines from the timer while it runs
    bar.update(2)
    bar.close()
    lines = f.getvalue().splitlines()
    waiting = [ln for ln in lines if ln.startswith("values: 1/3 values")]
    assert len(waiting) >= 2, lines  # (caught: a counted bar printed only on updates: 34 s of silence at n = 1e9)
    assert lines[-1].startswith("values: 3/3 values") and lines[-1].endswith("(done)")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_bar_is_redrawn_while_its_item_takes_long(monkeypatch):
    pytest.importorskip("tqdm")
    from sharpdp import _progress as P

    monkeypatch.setattr(P, "_REDRAW", 0.3)
    f = _Tty()
    bar = P.progress_bar(total=3, desc="values", unit=" values", file=f)
    bar.update(1)
    time.sleep(1.5)
    frames = [x for x in f.getvalue().split("\r") if "1/3" in x]
    bar.update(2)
    bar.close()
    assert len(frames) >= 2, frames  # (caught: tqdm redraws on updates only: a frozen bar for minutes at n = 1e9)


def test_file_step_one_line_on_a_terminal_none_for_a_short_step_in_a_log(monkeypatch):
    from sharpdp.cli import steps

    monkeypatch.setattr(steps, "TERMINAL_AFTER", 0.05)
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    with steps.file_step("crlb", "drawing x.png", "about 1 s of CPU"):
        time.sleep(1.0)
    assert tty.getvalue().splitlines() == ["sharpdp crlb: drawing x.png (about 1 s of CPU; longer on a busy "
                                           "machine)"]
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    with steps.file_step("histogram", "drawing x.png", "about 1 s of CPU"):
        time.sleep(2.3)  # (the rule's 2 s printed "drawing x.png: 2 s" and then "... (done)" here)
    assert log.getvalue() == ""


def test_crlb_says_what_it_does_after_its_bar(tmp_path, monkeypatch, capsys):
    from sharpdp.cli import steps

    monkeypatch.setattr(steps, "TERMINAL_AFTER", 0.0)
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    code, _, _ = run(capsys, "crlb", "--experiment", "5.3", "--trials", "2", "--out", str(tmp_path), "--seed", "1")
    assert code == 0
    text = tty.getvalue()
    assert f"sharpdp crlb: writing {tmp_path}/crlb_5_3.csv and drawing {tmp_path}/crlb_5_3.png" in text, text


# ------------------------------------------------------------------ 5. account's notes: short, --explain in full
def test_account_notes_short_by_default_full_with_explain(capsys):
    code, short, _ = run(capsys, *BMG, "--epsilon", "0.01")
    code2, full, _ = run(capsys, *BMG, "--epsilon", "0.01", "--explain")
    assert code == code2 == 0
    assert "--explain prints them in full" in short and "--explain" not in full
    for text in BMG_FIELD_HELP.values():  # every full note with --explain, none without
        assert _flat(text) in _flat(full) and _flat(text) not in _flat(short)
    assert len(full.splitlines()) - len(short.splitlines()) >= 4
    # what the privacy claim needs stays in the short output
    for phrase in ("certified delta = ", "(upper bound)", "not a lower bound on delta", "neighbours: zero-out"):
        assert phrase in _flat(short)
    assert json.loads(run(capsys, *BMG, "--epsilon", "0.01", "--json")[1]) == \
        json.loads(run(capsys, *BMG, "--epsilon", "0.01", "--json", "--explain")[1]) | {"notes_in_full": False}


# ------------------------------------------------------------------ 6. crlb 5.2: why the MSE is below the bound
def test_crlb_52_names_the_t_interval_and_the_seeded_reference_theta(tmp_path, capsys):
    from scipy.stats import t

    code, out, err = run(capsys, "crlb", "--trials", "1", "--no-plot", "--out", str(tmp_path), "--seed", "5",
                         "--json")
    assert code == 0, err
    r = json.loads(out)
    why = r["why_mse_below_bound"]
    assert r["blocks"] == 3 and "t-interval with 2 degrees of freedom" in why
    assert f"quantile {t.ppf(0.975, 2):.3g}" in why  # 4.3
    assert "changes from seed to seed" in why and f"{r['records']['reference']} reference records" in why
    code, out2, _ = run(capsys, "crlb", "--trials", "1", "--no-plot", "--out", str(tmp_path), "--seed", "6",
                        "--overwrite", "--json")
    assert json.loads(out2)["theta_reference"] != r["theta_reference"]  # (what the text says)


# ------------------------------------------------------------------ 7. histogram --epsilon: which --r; mean's warning
def test_histogram_suggests_r_for_a_target_and_the_suggestion_holds():
    from sharpdp.cli.histogram_target import groups_meeting, r_for_target
    from sharpdp.histogram import ShiftedLogGaussian

    for eps, groups in ((1.0, 100), (0.5, 50), (0.1, 10000), (2.0, 30)):
        r = r_for_target(eps, 1e-6, groups, 1.0)
        assert r is not None and r == float(f"{r:.3g}")
        mech = ShiftedLogGaussian(r, None, 1.0)
        assert float(mech.epsilon(groups, 1e-6)) <= eps and groups_meeting(mech, eps, 1e-6) <= groups
        smaller = r - 10.0 ** (math.floor(math.log10(r)) - 2)  # one step of the 3rd digit down: misses
        assert float(ShiftedLogGaussian(smaller, None, 1.0).epsilon(groups, 1e-6)) > eps
    assert r_for_target(1.0, 1e-6, 10, 1.0) is None  # at r -> 1 the per-count epsilon at 10 stays above 1.3


def test_histogram_epsilon_prints_the_r_choices(tmp_path, capsys):
    code, out, err = run(capsys, "histogram", "--epsilon", "0.5", "--for-groups", "50", "--no-plot", "--out",
                         str(tmp_path), "--json")
    assert code == 0, err
    s = json.loads(out)["target"]["r_for_groups"]
    assert s["sizes"] == [{"groups_from": 50, "r": 0.508}]
    code, out, err = run(capsys, "histogram", "--for-groups", "50", "--no-plot", "--out", str(tmp_path))
    assert code == 2 and "--for-groups" in err and "--epsilon" in err and "Traceback" not in err
    fresh = tmp_path / "fresh"
    code, out, err = run(capsys, "histogram", "--epsilon", "1", "--for-groups", "1e30", "--no-plot", "--out", str(fresh))
    assert code == 2 and err.startswith("sharpdp histogram: error: --for-groups:") and not fresh.exists()
    # (caught: "n must hold non-negative integers < 2**53" after the release file was written)


def test_mean_warns_of_a_large_expected_error_before_it_is_useless(tmp_path, capsys):
    from sharpdp.cli.mean_result import LARGE_ERROR_SHARE, useless_warning

    rng = np.random.default_rng(7)
    path = tmp_path / "small.csv"
    pd.DataFrame({"x": rng.uniform(0, 10, 1000)}).to_csv(path, index=False)
    code, out, err = run(capsys, "mean", "--csv", str(path), "--bounds", "0:10", "--json")
    assert code == 0, err
    r = json.loads(out)
    share = r["expected_rmse_per_coordinate"] * math.sqrt(r["d"]) / 2  # of the range 2/sqrt(d)
    assert LARGE_ERROR_SHARE <= share < 0.5  # (caught: 18.6 % of the range, and no warning)
    large = [w for w in r["warnings"] if "expected error per coordinate is large" in w]
    assert len(large) == 1 and f"{100 * share:.3g} % of the bounds' range" in large[0]
    assert err.count("is large") == 1
    assert useless_warning(0.05, 4) is None and "no better than" in useless_warning(0.6, 4)
