"""Session 49 (docs/cli.md §12): `sharpdp mean` prints its private means to the digits their expected error supports
(`sharpdp.cli.rounding.g_error`, checked against exact decimal arithmetic on the double and an independent exponent
formula); `--json` and the diagnostics file keep full precision; `sharpdp mean --explain` is the same output followed
by plain-language notes (one text per concept, shared with `sharpdp account --explain`); README's Quick start keeps
its two commands and no dated timing."""

from __future__ import annotations

import json
import math
import pathlib
import random
from decimal import Decimal

import numpy as np
import pytest

from _cli import run
from sharpdp.cli.mean import EXPLAINED, format_text
from sharpdp.cli.notes import PLAIN_HEADING, PLAIN_NOTES
from sharpdp.cli.rounding import g_error

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _flat(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------------------------- 1. the rounding itself
def test_error_0_0123_shows_the_value_to_its_third_decimal():
    assert g_error(0.456789, 0.0123) == "0.457"
    assert g_error(12.3456, 0.0123) == "12.346"
    assert g_error(-0.0004, 0.0123) == "0"  # (a value rounding to 0, without a sign)
    # the flights table's defaults: the last digit shown at the second significant digit of the exp. RMSE
    assert (g_error(15.583, 3.77), g_error(1032.3, 12.1), g_error(150.94, 1.74)) == ("15.6", "1032", "150.9")
    assert g_error(15.0, 3.77) == "15.0"  # (a trailing zero is a digit the error supports: kept)


def test_last_digit_at_the_errors_second_digit_and_within_half_a_unit():
    rng = random.Random(49)
    for _ in range(3000):
        err = rng.uniform(1.1, 9.4) * 10.0 ** rng.randint(-8, 8)  # (mantissa away from a power of ten)
        value = rng.uniform(-1.0, 1.0) * 10.0 ** rng.randint(-3, 9)
        text = g_error(value, err)
        place = math.floor(math.log10(err)) - 1  # independent of the Decimal exponent the function uses
        place = max(place, math.floor(math.log10(abs(value))) - 16) if value else place
        shown = Decimal(text)
        assert abs(shown - Decimal(value)) <= Decimal(5) * Decimal(10) ** (place - 1), (value, err, text)
        if text != "0" and place <= 0:
            assert shown.as_tuple().exponent == place, (value, err, text)  # the last digit is at that place
        elif text != "0":
            assert "." not in text and shown % (Decimal(10) ** place) == 0, (value, err, text)  # (zeros below it)


@pytest.mark.parametrize("value, error", [(3.2, 1e5), (-7.5, 1e300), (6000.0, 1e4), (0.5, 1e-12), (1032.3, 1e-15),
                                          (1.234567e-12, 1e-14), (1e30, 1e28), (5e-324, 1e-320), (-1e20, 5.0)])
def test_huge_and_tiny_errors_print_a_number_within_half_a_unit(value, error):
    text = g_error(value, error)
    place = max(Decimal(error).adjusted() - 1, Decimal(value).adjusted() - 16)
    assert abs(Decimal(text) - Decimal(value)) <= Decimal(5) * Decimal(10) ** (place - 1), text
    assert len(text) <= 24, text  # (exponent form, not hundreds of digits)


def test_zero_nan_inf_negative_errors_and_non_finite_values():
    for err in (0.0, float("nan"), float("inf"), -1.0):
        assert g_error(15.583123, err) == "15.583"  # (5 significant digits: the former output)
    assert g_error(float("nan"), 0.1) == "nan" and g_error(float("inf"), 0.1) == "inf"
    assert g_error(float("-inf"), float("nan")) == "-inf"
    with pytest.raises(ValueError, match="sig"):
        g_error(1.0, 0.1, sig=0)


def _result(private, exp_units, from_data=False):
    """A minimal `sharpdp mean` result as `format_text` reads it (the fields of tests/test_cli_mean.py's)."""
    k = len(private)
    units = {"expected_rmse_original_units": list(exp_units), "central_rmse_original_units": [0.5] * k,
             "bounds": [[0.0, 1.0]] * k}
    return {"columns": [f"c{j}" for j in range(k)], "source": "x.csv", "d": k, "n": 10,
            "analyst_only_not_private": units if from_data else {}, "bounds_source": "--bounds (public)",
            "bounds": None if from_data else [[0.0, 1.0]] * k, "epsilon": 1.0, "delta_certified": 1e-6,
            "delta_target": 1e-5, "delta_bounds": [9e-7, 1e-6], "bmg": {"gamma": 0.5, "sigma0": 1.0,
            "chi_lo": 0.1, "mse_single": 1.0}, "expected_rmse_per_coordinate": 0.1,
            "central_gaussian": {"rmse_per_coordinate": 0.05, "rmse_original_units": [0.5] * k},
            "rmse_ratio_bmg_over_central": 2.0, "private_mean": list(private),
            "expected_rmse_original_units": None if from_data else list(exp_units), "warnings": []}


def test_format_text_rounds_public_means_and_survives_odd_errors():
    errors = [0.0123, 1e9, 1e-13, 0.0, float("nan")]
    text = format_text(_result([0.456789, 3.25, 0.5, 0.123456789, 2.5], errors))
    rows = {line.split()[0]: line.split()[1] for line in text.splitlines()
            if line[:1] == "c" and line[1:2].isdigit()}
    assert rows == {"c0": "0.457", "c1": "0", "c2": "0.50000000000000", "c3": "0.12346", "c4": "2.5"}
    assert "0.45679" not in text and "rounded to 2 significant digits of their exp. RMSE" in _flat(text)
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("column"))
    assert len({len(line) for line in lines[head:head + 6]}) == 1  # (the columns stay aligned)


def test_bounds_from_data_keep_five_digits():
    # rounding at the analyst-only error's scale would print that error's size beside the means
    text = format_text(_result([0.456789], [0.0123], from_data=True))
    assert "0.45679" in text and "rounded to 2 significant digits" not in _flat(text)


def test_outside_bounds_warning_rounds_the_value(capsys):
    from sharpdp.cli.mean import _warn_outside_bounds

    r = {"columns": ["a"], "private_mean": [10.4567], "bounds": [[0.0, 10.0]],
         "expected_rmse_original_units": [0.31], "warnings": []}
    _warn_outside_bounds(r, from_data=False)
    assert "a = 10.46 not in [0, 10]" in r["warnings"][0]


# ------------------------------------------------------------------- 2. the command: text, --json, --explain
@pytest.fixture(scope="module")
def small_csv(tmp_path_factory):
    p = tmp_path_factory.mktemp("cli49") / "small.csv"
    rng = np.random.default_rng(49)
    x = np.column_stack([rng.uniform(0, 20, 2000), rng.normal(0, 2, 2000)])
    np.savetxt(p, x, delimiter=",", header="a,b", comments="")
    return str(p)


def test_mean_text_json_and_explain_agree(small_csv, capsys, tmp_path):
    argv = ["mean", "--csv", small_csv, "--bounds", "0:20,-5:5", "--epsilon", "1", "--seed", "7"]
    code, plain, err = run(capsys, *argv)
    assert code == 0, err
    code, explained, err = run(capsys, *argv, "--explain")
    assert code == 0, err
    assert explained.startswith(plain.rstrip("\n")) and len(explained) > len(plain)  # the same output first
    tail = _flat(explained[len(plain.rstrip("\n")):])
    assert tail.startswith(PLAIN_HEADING)
    for label in EXPLAINED:
        assert _flat(f"{label} : {PLAIN_NOTES[label]}") in tail, label
    assert PLAIN_HEADING not in plain
    assert all(len(line) <= 80 for line in explained.splitlines())
    # --json: full precision, and the notes under "explain" with --explain only
    diag = tmp_path / "d.json"
    code, out, err = run(capsys, *argv, "--json", "--diagnostics", str(diag))
    r = json.loads(out)
    assert code == 0 and "explain" not in r
    code, out2, err = run(capsys, *argv, "--json", "--explain")
    r2 = json.loads(out2)
    assert r2.pop("explain") == {k: PLAIN_NOTES[k] for k in EXPLAINED}
    assert r2["private_mean"] == r["private_mean"]
    for v, e in zip(r["private_mean"], r["expected_rmse_original_units"]):
        shown = g_error(v, e)
        assert f" {shown} " in plain  # the table's value
        assert float(shown) != v  # (rounded in the text, the double in --json)
    rows = json.loads(diag.read_text())["rows"]
    assert [row["private_mean"] for row in rows] == r["private_mean"]  # the diagnostics file: full precision


def test_mean_help_names_explain():
    from sharpdp.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    help_text = _flat(sub.choices["mean"].format_help())
    assert "--explain" in help_text and "plain words" in help_text


def test_account_explain_prints_the_same_plain_notes(capsys):
    bmg = ["account", "--gamma", "0.5", "--sigma0", "1", "--n", "100000", "--epsilon", "0.01"]
    code, short, _ = run(capsys, *bmg)
    code2, full, _ = run(capsys, *bmg, "--explain")
    assert code == code2 == 0
    for label in ("epsilon", "delta", "bracket", "adjacency"):
        assert _flat(PLAIN_NOTES[label]) in _flat(full) and _flat(PLAIN_NOTES[label]) not in _flat(short), label
    code, out, _ = run(capsys, *bmg[:-2], "--delta", "1e-6", "--explain")  # (no bracket printed: none explained)
    assert code == 0 and _flat(PLAIN_NOTES["delta"]) in _flat(out) and _flat(PLAIN_NOTES["bracket"]) not in _flat(out)


# ------------------------------------------------------------------------------------------ 3. README
def test_readme_quick_start_keeps_its_commands_and_no_dated_timing():
    readme = (ROOT / "README.md").read_text()
    head = readme[:readme.index("### The main job in detail")]
    for cmd in ('python3 -m pip install ".[cli]" && sharpdp mean',
                'python3 -m pip install ".[test]" && python3 -m pytest tests',
                'python3 -m pip install ".[all]"', 'python3 -m pip install --no-build-isolation ".[x]"'):
        assert cmd in head, cmd
    assert "2026-" not in head and "load average" not in head  # (the dated figures: bench/README.md "Test suite")
    bench = (ROOT / "bench" / "README.md").read_text()
    assert "1,579 s of pytest" in bench[bench.index("## Test suite"):]


def test_plain_notes_refuses_an_unknown_label():
    from sharpdp.cli import plain_notes

    with pytest.raises(ValueError, match="labels"):
        plain_notes(("epsilon", "no such line"))
    assert plain_notes(("epsilon",))[:2] == ["", PLAIN_HEADING]
