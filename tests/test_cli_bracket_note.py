"""Why a certified bracket is wide: the same note from `sharpdp account --epsilon` and `sharpdp mean` (one round)."""

import json
import math

import numpy as np
import pandas as pd

from sharpdp.cli import bracket_note, main


def test_bracket_note_branches():
    assert bracket_note(0.0, 0.0, math.inf, 1e-2).startswith("delta is 0")
    assert bracket_note(0.995e-6, 1e-6, 0.005, 1e-2) == "relative gap <= 0.01 (the accountant's target)"
    assert "floor 1e-24" in bracket_note(0.0, 1e-30, math.inf, 1e-2)
    wide = bracket_note(0.0, 9.8e-7, math.inf, 1e-2)  # sharpdp mean --epsilon 20 on 2 000 rows: [0, 9.84e-7]
    assert "size caps or the law is heavy-tailed" in wide and "still certified" in wide
    assert bracket_note(0.9e-6, 1e-6, 0.11, 1e-2) == wide  # a gap just above the target: the same reason


def _mean_result(extra):
    r = {"columns": ["a"], "source": "x.csv", "d": 1, "n": 2000,
         "analyst_only_not_private": {},
         "bounds_source": "--bounds", "epsilon": 20.0, "delta_certified": 9.8e-7, "delta_target": 1e-6,
         "delta_bounds": [0.0, 9.8e-7], "bmg": {"gamma": 0.5, "sigma0": 1.0, "chi_lo": 0.1, "mse_single": 1.0},
         "expected_rmse_per_coordinate": 0.1,
         "central_gaussian": {"rmse_per_coordinate": 0.05, "rmse_original_units": [0.05]},
         "rmse_ratio_bmg_over_central": 2.0, "private_mean": [1.0], "expected_rmse_original_units": [0.1],
         "warnings": [], "reproducible_seeded_mode": False}
    r.update(extra)
    return r


def test_mean_text_says_why_the_bracket_is_wide_and_is_quiet_otherwise():
    from sharpdp.cli.mean import format_text

    wide = bracket_note(0.0, 9.8e-7, math.inf, 1e-2)
    text = " ".join(format_text(_mean_result({"delta_bounds_note": wide})).split())  # (wrapped at 80 columns)
    assert "zero-out adjacency (neighbouring tables differ in one row, replaced by a null record whose report is " \
           "drawn from the blanket law: docs/embedding.md §1); NOT the usual replace-one epsilon" in text
    assert "--adjacency replace calibrates for replace-one directly" in text and f"; bracket: {wide}" in text
    tight = bracket_note(9.75e-7, 9.8e-7, 0.005, 1e-2)
    assert "bracket:" not in format_text(_mean_result({"delta_bounds": [9.75e-7, 9.8e-7], "delta_bounds_note": tight}))


def test_mean_json_carries_the_note_of_its_own_bracket(tmp_path, capsys):
    p = tmp_path / "m.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.uniform(0, 1, 500)}).to_csv(p, index=False)
    assert main(["mean", "--csv", str(p), "--bounds", "0:1", "--epsilon", "1", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    lo, up = r["delta_bounds"]
    assert up <= 1e-6 and r["delta_bounds_note"] == bracket_note(lo, up, (up - lo) / lo if lo > 0 else math.inf, 1e-2)
