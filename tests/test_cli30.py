"""Session 30: the frictions a newcomer researcher met in session 29 (docs/cli.md §8), each fixed and checked here
against an independent reference where there is a number (closed forms, Monte Carlo, the released file itself)."""

from __future__ import annotations

import ast
import json
import math
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from _cli import run
from sharpdp._progress import PROGRESS_RULE
from sharpdp.cli import SUBCOMMAND_EPILOG, build_parser
from sharpdp.cli.errors import integer_number

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _flat(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------------ 1. crlb at few trials: a warning
def test_crlb_few_trials_warns_with_the_precision(tmp_path, capsys):
    code, out, err = run(capsys, "crlb", "--experiment", "5.3", "--trials", "2", "--seed", "1", "--no-plot",
                         "--out", str(tmp_path / "a"), "--json")
    assert code == 0, err
    r = json.loads(out)
    warning = r["warnings"][0]
    assert warning.startswith("--trials 2: few Monte Carlo trials, so the MSE figures are noisy")
    assert "sqrt(2/2) = 100 %" in warning and "the default 300 gives 8 %" in warning
    assert err.count("sharpdp crlb: warning: --trials 2") == 1  # on stderr once, before the wait
    from sharpdp.cli.crlb import _DEFAULT_TRIALS, few_trials_warning

    assert all(few_trials_warning(e, t) == [] for e, t in _DEFAULT_TRIALS.items())  # the defaults: no warning
    assert "3 runs over the 3 blocks" in few_trials_warning("5.2", 1)[0]
    import inspect

    from sharpdp.apps.crlb_experiments import recursive_identification
    from sharpdp.cli.crlb import _BLOCKS_52

    assert inspect.signature(recursive_identification).parameters["blocks"].default == _BLOCKS_52  # what 5.2 runs


def test_the_stated_precision_is_the_monte_carlo_one():
    """sqrt(2/N): the relative standard error of an MSE averaged over N squared Gaussian errors (independent check by
    simulation: 20,000 such averages at N = 8, whose relative spread is 0.5 within 2 %)."""
    e = np.random.default_rng(30).normal(0.0, 0.3, size=(20_000, 8))
    mse = (e ** 2).mean(axis=1)
    assert mse.std() / mse.mean() == pytest.approx(math.sqrt(2 / 8), rel=0.02)


# ------------------------------------------------------------------------ 2. crlb 5.3: the column says what it is
def test_crlb_53_ml_column_is_named_and_explained(tmp_path, capsys):
    code, out, _ = run(capsys, "crlb", "--experiment", "5.3", "--trials", "2", "--seed", "2", "--no-plot", "--out",
                       str(tmp_path / "b"))
    assert code == 0
    text = _flat(out)
    assert "ml_trace_ratio" not in text and "ml_fisher_info_over_budget" in text
    assert "1 would mean the constraint is met. It equals K here, by construction" in text
    assert "does NOT meet the privacy constraint" in text
    csv = pd.read_csv(tmp_path / "b" / "crlb_5_3.csv")
    assert "ml_trace_ratio" not in csv.columns
    np.testing.assert_allclose(csv["ml_fisher_info_over_budget"], csv["K"], rtol=1e-9)  # = K (docs/papers.md §3.2)


# ------------------------------------------------------------------------ 3. account k-RR: what is printed is explained
def test_krr_delta_answer_names_no_bracket_and_explains_mse_single(capsys):
    code, out, _ = run(capsys, "account", "--k", "2", "--epsilon0", "1", "--n", "1000", "--adjacency", "replace",
                       "--delta", "1e-6")
    assert code == 0
    text = _flat(out)
    assert "bracket" not in text  # none is printed, so none is named
    assert "target delta = 1e-06: certified epsilon = " in text and "the certified delta at this epsilon is <= 1e-06" in text
    shown = float(re.search(r"mse_single = ([0-9.e+-]+)\)", text).group(1))
    assert shown == pytest.approx(4 * math.e / (math.e - 1) ** 2, rel=1e-5)  # k = 2 closed form, epsilon0 = 1
    assert "mse_single: worst-case squared error of one user's unbiased estimate" in text
    assert "(inputs +-1 and the estimator Y/t: 4 e^epsilon0 / (e^epsilon0 - 1)^2)" in text
    code, out, _ = run(capsys, "account", "--k", "2", "--epsilon0", "1", "--n", "1000", "--adjacency", "replace",
                       "--epsilon", "0.2")
    text = _flat(out)
    assert code == 0 and "the bracket is of delta itself" in text and re.search(r"bracket \[[0-9.e-]+, ", text)
    assert "mse_single: worst-case" in text


# ------------------------------------------------------------------------ 4 and 5. figures: REDUCED CSVs, own --help
def test_quick_figures_csvs_say_reduced_on_every_row(tmp_path, capsys):
    from sharpdp.apps.shuffle_figures import FIGURE_STEMS, REDUCED_COLUMN, REDUCED_VALUE

    code, out, err = run(capsys, "figures", "shuffle", "--quick", "--out", str(tmp_path / "q"))
    assert code == 0, err
    for stem in FIGURE_STEMS:
        df = pd.read_csv(tmp_path / "q" / f"{stem}.csv")
        assert df.columns[0] == REDUCED_COLUMN == "REDUCED" and (df[REDUCED_COLUMN] == REDUCED_VALUE).all()
        assert "not the paper's figure" in REDUCED_VALUE and len(df) >= 2


def test_figures_shuffle_help_is_its_own(capsys):
    for argv, prog in ((["figures", "shuffle", "--help"], "sharpdp figures shuffle"),
                       (["figures", "--help"], "sharpdp figures")):
        with pytest.raises(SystemExit) as ex:
            build_parser().parse_args(argv)
        out = capsys.readouterr().out
        assert ex.value.code == 0 and out.startswith(f"usage: {prog} ["), out[:80]
    parser = build_parser()
    a = parser.parse_args(["figures", "shuffle", "--quick", "--out", "x", "--json"])
    b = parser.parse_args(["figures", "--quick", "--out", "x", "--json", "shuffle"])
    c = parser.parse_args(["figures", "--quick", "--out", "x", "--json"])
    assert vars(a) == vars(b) == vars(c) and a.which == "shuffle" and a.quick and a.json and a.out == "x"
    d = parser.parse_args(["figures"])
    assert (d.which, d.quick, d.out, d.overwrite, d.json) == ("shuffle", False, None, False, False)


# ------------------------------------------------------------------------ 6. the progress rule, once
def test_progress_rule_said_once_across_every_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    nested = next(a for a in sub.choices["figures"]._actions if a.dest == "which").choices["shuffle"]
    helps = [parser.format_help(), *(p.format_help() for p in sub.choices.values()), nested.format_help()]
    rule = _flat(PROGRESS_RULE)
    assert sum(_flat(h).count(rule) for h in helps) == 1
    assert all(_flat(SUBCOMMAND_EPILOG) in _flat(h) for h in helps[1:-1])


# ------------------------------------------------------------------------ 7 and 11. histogram: zeros, --epsilon
@pytest.fixture
def small_table(tmp_path):
    data, keys = tmp_path / "d.csv", tmp_path / "k.csv"
    pd.DataFrame({"g": ["a"] * 300 + ["b"] * 40}).to_csv(data, index=False)
    pd.DataFrame({"g": ["a", "b"] + [f"e{i}" for i in range(30)]}).to_csv(keys, index=False)  # 30 empty groups
    return ["histogram", "--csv", str(data), "--by", "g", "--keys", str(keys), "--no-plot", "--seed", "7"]


def test_histogram_explains_exact_zeros(tmp_path, capsys, small_table):
    from sharpdp.histogram import ShiftedLogGaussian

    code, out, err = run(capsys, *small_table, "--out", str(tmp_path / "o"), "--json")
    assert code == 0, err
    r = json.loads(out)
    released = pd.read_csv(tmp_path / "o" / "histogram_release.csv")["released"].to_numpy()
    assert r["zeros"]["released_zero"] == int((released == 0).sum()) > 0  # 30 empty groups: about half give 0
    m = ShiftedLogGaussian(0.1)
    g = 2.0 ** -m.grid_bits
    p0 = norm.cdf((math.log((g / 2 + 1.0) / 1.0) + m.sigma ** 2) / m.sigma)  # F(1) at n = 0, c = 1 (§3)
    assert r["zeros"]["p_zero_at_count_0"] == pytest.approx(p0, rel=1e-12)
    zero = np.mean(m.release(np.zeros(20_000, dtype=np.int64), rng=np.random.default_rng(3)) == 0.0)
    assert abs(zero - p0) < 4 * math.sqrt(p0 * (1 - p0) / 20_000)  # Monte Carlo of the release itself
    code, out, _ = run(capsys, *small_table, "--out", str(tmp_path / "t"))
    text = _flat(out)
    zeros = int(re.search(r"zeros: (\d+) of 32 released values are exactly 0", text).group(1))
    assert zeros == r["zeros"]["released_zero"]  # the same seed: the same release
    assert "clipping at 0, not a true count" in text and f"with probability {p0:.2f}" in text


def test_groups_meeting_against_the_exact_gaussian_profile():
    import mpmath

    from sharpdp.cli.histogram_target import groups_meeting
    from sharpdp.histogram import ShiftedLogGaussian

    mpmath.mp.prec = 200

    def exact_eps(n, m, delta):  # Balle & Wang 2018: the exact Gaussian profile of the shift mu(n) (eq. (10))
        c, s = mpmath.mpf(m.c), mpmath.mpf(m.sigma)
        mu = mpmath.log((max(n, 1) + c) / (max(n, 1) - 1 + c)) / s

        def dlt(e):
            return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2) - delta
        return mpmath.findroot(dlt, (mpmath.mpf(0), mpmath.mpf(400)), solver="bisect", tol=1e-40)

    for r, c, eps, delta in ((0.1, 1.0, 1.0, 1e-6), (0.3, 0.5, 0.2, 1e-6), (0.05, 3.0, 2.0, 1e-9)):
        m = ShiftedLogGaussian(r, c=c)
        n = groups_meeting(m, eps, delta)
        # the exact epsilon meets the target at N and misses it at N - 1 (by more than the certified rounding)
        assert exact_eps(n, m, delta) <= eps < exact_eps(n - 1, m, delta) * (1 + 1e-9)
        assert m.epsilon(n, delta) <= eps < m.epsilon(n - 1, delta)
    assert groups_meeting(ShiftedLogGaussian(1.0), 1e-9, 1e-6) == 0  # the data-independent release: every group


def test_histogram_epsilon_target_in_the_output(tmp_path, capsys, small_table):
    code, out, err = run(capsys, *small_table, "--out", str(tmp_path / "o"), "--epsilon", "1", "--json")
    assert code == 0, err
    t = json.loads(out)["target"]
    assert (t["epsilon"], t["delta"]) == (1.0, 1e-6)
    from sharpdp.histogram import ShiftedLogGaussian

    m = ShiftedLogGaussian(0.1, 0.05, c=1.0)  # the defaults (r = 0.1, r0 = 0.05, c = 1): the table's epsilon crosses 1 at N
    N = t["groups_from"]
    assert m.epsilon(N, 1e-6) == t["epsilon_at_groups_from"] <= 1.0 < m.epsilon(N - 1, 1e-6) and 100 < N < 145
    code, out, _ = run(capsys, *small_table, "--out", str(tmp_path / "p"), "--epsilon", "1")
    assert f"every member of a group of at least {N} members gets it" in _flat(out)
    code, out, _ = run(capsys, *small_table, "--out", str(tmp_path / "q"), "--epsilon", "1", "--r", "1", "--json")
    assert code == 0 and json.loads(out)["target"]["groups_from"] == 0
    for bad in ("0", "-1", "inf"):
        code, out, err = run(capsys, *small_table, "--out", str(tmp_path / "x"), "--epsilon", bad)
        assert code == 2 and err.startswith("sharpdp histogram: error: --epsilon must be > 0") and "Traceback" not in err
    code, _, err = run(capsys, "histogram", "--table2", "--no-plot", "--epsilon", "1")
    assert code == 2 and "--epsilon" in err


# ------------------------------------------------------------------------ 8. README: a runnable script
def _readme_block() -> str:
    return re.search(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S).group(1)


def test_readme_python_block_is_a_script():
    code = _readme_block()
    assert ">>>" not in code
    for node in ast.parse(code).body:  # no bare expression whose value a script would drop
        if isinstance(node, ast.Expr):
            assert isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "print", ast.dump(node)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 5 and lines[0].startswith("certified delta at eps = 1e-5: ")
    assert lines[4].startswith("Gaussian, replace: True ")  # via_bottom
    assert 0.02 < float(lines[4].split()[-1]) < 0.022  # ~0.021, as its comment says


# ------------------------------------------------------------------------ 9. integer options in e-notation
def test_integer_options_accept_e_notation(tmp_path, capsys):
    assert integer_number("1e12") == 10**12 and integer_number("1e23") == 10**23  # exact (float gives ...991611392)
    assert integer_number("1_000") == 1000 and integer_number("2.5e1") == 25 and integer_number("300.0") == 300
    code, out, err = run(capsys, "crlb", "--experiment", "5.3", "--seed", "1e12", "--trials", "2e0", "--no-plot",
                         "--out", str(tmp_path / "c"), "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["seed"] == 10**12 and r["trials"] == 2
    for bad, why in (("1.5", "is not a whole number"), ("1e-3", "is not a whole number"), ("abc", "is not a number"),
                     ("1e400", "more than 100 digits"), ("nan", "is not finite")):
        with pytest.raises(SystemExit) as ex:  # (argparse's own exit, as for every parse error)
            run(capsys, "crlb", "--seed", bad, "--json")
        out, err = capsys.readouterr()
        assert ex.value.code == 2 and "Traceback" not in err
        assert why in err and "expected a whole number such as 42, 1000000 or 1e6" in err
        assert json.loads(out)["parameter"] == "--seed"


# ------------------------------------------------------------------------ 10. one --delta wording
def test_delta_has_one_wording():
    from sharpdp.cli.notes import DELTA_HELP

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in ("mean", "account", "histogram"):
        action = next(a for a in sub.choices[name]._actions if "--delta" in a.option_strings)
        assert action.help.startswith(DELTA_HELP), (name, action.help)
    # the outputs say "target delta = D": account above (test 3), histogram below, mean in test_round26b


def test_histogram_says_target_delta(tmp_path, capsys, small_table):
    code, out, _ = run(capsys, *small_table, "--out", str(tmp_path / "o"), "--delta", "1e-7")
    assert code == 0 and "(target delta = 1e-07;" in _flat(out)


def test_histogram_data_independent_json_has_no_traceback(tmp_path, capsys, small_table):
    """--r 1 (the data-independent release, sigma = inf): --json raised "Out of range float values" as a traceback;
    sigma is null there now, and the text says inf."""
    code, out, err = run(capsys, *small_table, "--out", str(tmp_path / "o"), "--r", "1", "--json")
    assert code == 0 and "Traceback" not in err
    assert json.loads(out)["sigma"] is None
    code, out, _ = run(capsys, *small_table, "--out", str(tmp_path / "t"), "--r", "1")
    assert code == 0 and "sigma = inf" in out


def test_figures_bad_paper_or_option_is_one_line(capsys):
    for argv, msg in ((["figures", "bogus"], "argument PAPER: invalid choice: 'bogus' (choose from 'shuffle')"),
                      (["figures", "shuffle", "--bogus"], "unrecognized arguments: --bogus")):
        with pytest.raises(SystemExit) as ex:
            run(capsys, *argv)
        _, err = capsys.readouterr()
        assert ex.value.code == 2 and err == f"sharpdp figures: error: {msg} (see --help)\n"
