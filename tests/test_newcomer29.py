"""What a researcher met on a first pass (session 29): outputs that differ from the papers now say so and why
(crlb 5.2's stand-in data, 5.3's trace ratio, the figures' sigma0, Table 2's gap), a certified epsilon of 0 shows the
delta that allows it, counts beyond int64 get the range error, ``ComposedRelease`` has a repr."""

from __future__ import annotations

import json

import numpy as np
import pytest

from _cli import run
from sharpdp.histogram import ShiftedLogGaussian, compose


def test_table2_states_the_gap_at_the_parameters_run(capsys):
    code, out, _ = run(capsys, "histogram", "--table2", "--no-plot")
    assert code == 0
    flat = " ".join(out.split())
    # at the defaults (r = 0.1, r0 = 0.05, c = 1) the mechanism is far from the bounds; the text says why
    assert "at n = 10000: mechanism 509 against the best lower bound 3.14 (ratio 162)" in flat
    assert "limits as r -> 0 with r0 -> r and c -> 0" in flat
    code, out, _ = run(capsys, "histogram", "--table2", "--no-plot", "--r", "0.01", "--r0", "0.0099", "--c", "0.001")
    flat = " ".join(out.split())
    ratio = float(flat.split("(ratio ")[1].split(")")[0])
    assert 3.0 < ratio < 4.0  # the printed example's "ratio of 3.5"


def test_a_zero_epsilon_shows_the_delta_that_allows_it(capsys):
    code, out, _ = run(capsys, "account", "--k", "2", "--epsilon0", "0.1", "--n", "1000", "--adjacency", "replace",
                       "--delta", "0.5", "--json")
    assert code == 0
    r = json.loads(out)
    assert r["epsilon"] == 0.0 and 0.0 < r["delta_at_zero"] <= 0.5
    code, out, _ = run(capsys, "account", "--k", "2", "--epsilon0", "0.1", "--n", "1000", "--adjacency", "replace",
                       "--delta", "0.5")
    assert "(0, delta)-DP: its certified delta at epsilon = 0 is 0.00126" in " ".join(out.split())
    code, out, _ = run(capsys, "account", "--k", "2", "--epsilon0", "1", "--n", "1000", "--adjacency", "replace",
                       "--delta", "1e-6", "--json")
    assert "delta_at_zero" not in json.loads(out)  # only where the answer is 0


def test_figures_say_which_sigma0_they_use(tmp_path, capsys):
    code, out, _ = run(capsys, "figures", "shuffle", "--quick", "--out", str(tmp_path / "f"))
    assert code == 0
    flat = " ".join(out.split())
    assert "gamma = 0.95, sigma0 = 4.9916" in flat and "caption's sigma0 = 4.6 gives RMSE 2.913" in flat
    assert "not a lower bound on the shuffled mechanism's true delta" in flat


def test_crlb_texts_name_the_paper_setting(tmp_path, capsys):
    code, out, _ = run(capsys, "crlb", "--no-plot", "--out", str(tmp_path / "a"), "--trials", "1", "--seed", "1")
    assert code == 0
    text = " ".join(out.split())
    assert "NHANES triglyceride data, 2704 participants in 20 blocks of 100 with 20 repetitions" in text
    code, out, _ = run(capsys, "crlb", "--experiment", "5.3", "--no-plot", "--out", str(tmp_path / "b"), "--trials",
                       "2", "--seed", "1", "--json")
    assert code == 0
    r = json.loads(out)
    # what the text below explains (the column was ml_trace_ratio: renamed for what it is, session 30)
    assert r["ml_fisher_info_over_budget"] == pytest.approx(r["K"], rel=1e-9)
    code, out, _ = run(capsys, "crlb", "--experiment", "5.3", "--no-plot", "--out", str(tmp_path / "c"), "--trials",
                       "2", "--seed", "1")
    assert "does NOT meet the privacy constraint" in " ".join(out.split())


def test_counts_beyond_int64_get_the_range_error():
    m = ShiftedLogGaussian(0.1)
    for bad in (10**20, [-10**20, 5], [5, 10**19]):
        with pytest.raises(ValueError, match="^n must"):
            m.budget(bad)
    assert np.isfinite(m.budget(2**52))


def test_composed_release_repr_names_its_parts():
    c = compose(ShiftedLogGaussian(0.1), ShiftedLogGaussian(0.2))
    assert repr(c).startswith("ComposedRelease(ShiftedLogGaussian(r=0.1,") and repr(c).count("ShiftedLogGaussian") == 2
    with pytest.raises(ValueError, match="^mechanisms"):
        compose()
