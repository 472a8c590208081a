"""Figures of "Shuffling-Aware Optimization for Private Vector Mean Estimation":
parameters, certified safe side, and the one-command regeneration."""

import math

import numpy as np
import pandas as pd
import pytest

from sharpdp.conversions import gaussian_mechanism_delta
from sharpdp.shuffle import ShuffleAccountant
from sharpdp.apps.shuffle_figures import bmg_for_rmse, n_scaling, privacy_profile


def test_bmg_for_rmse_hits_the_target_not_the_caption_sigma0():
    bmg = bmg_for_rmse(0.95, 3.16, 1000)
    assert math.sqrt(bmg.mse_single / 1000) == pytest.approx(3.16, rel=1e-12)
    assert bmg.sigma0 == pytest.approx(4.99, abs=0.01)  # docs/papers.md §1.2 item 8: sigma0 ~ 4.99 at gamma = 0.95
    with pytest.raises(ValueError, match="rmse"):
        bmg_for_rmse(0.95, 0.01, 1000)


def test_privacy_profile_is_certified_and_non_increasing():
    df = privacy_profile(np.array([3e-4, 6e-4, 1.2e-3]))
    assert np.all(df.delta_bmg_lower <= df.delta_bmg)
    assert np.all(np.diff(df.delta_bmg) <= 0)
    assert np.allclose(df.delta_gm, gaussian_mechanism_delta(df.epsilon.to_numpy(), 3.16, 1e-3))


def test_n_scaling_epsilon_is_on_the_safe_side():
    df = n_scaling(ns=(100,))
    bmg = bmg_for_rmse(0.95, 3.16, 1000)
    e = float(df.epsilon[0])
    acc = ShuffleAccountant(bmg, 100)
    assert acc.get_delta(e) <= 1e-5 < acc.get_delta(0.97 * e)
    assert df.rmse_bmg[0] == pytest.approx(math.sqrt(bmg.mse_single / 100))


def test_figures_regenerate_with_one_command(tmp_path, capsys):
    """One real run of the command (``--json``, in-process through the CLI's main(); the ``python -m
    sharpdp.cli`` entry point is run by tests/test_cli_mean.py); it also serves the checks that
    ``figures --quick`` is marked as reduced and that its note counts the points of the written files
    (formerly a second, in-process run of the same computation in tests/test_cli_output_streams.py;
    the text output of ``--quick`` is checked there without recomputing the figures)."""
    import json

    from sharpdp.apps.shuffle_figures import figure_jobs
    from sharpdp.cli import main

    capsys.readouterr()
    code = main(["figures", "shuffle", "--quick", "--out", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    res = json.loads(out)
    assert res["quick"] is True and res["figures"] == "shuffle"
    quick, full = (figure_jobs(q)[0] for q in (True, False))
    n1, n2 = (sum(1 for f, *_ in quick if f == k) for k in (1, 2))
    assert res["note"].startswith(f"quick run: REDUCED figures (Figure 1: {n1} epsilon points instead of "
                                  f"{sum(1 for f, *_ in full if f == 1)}, Figure 2: {n2} instead of "
                                  f"{sum(1 for f, *_ in full if f == 2)})")
    assert "not the paper's figures" in res["note"]
    # the counts in the note are those of the written files (the files named in the answer)
    assert len(pd.read_csv(res["written"]["figure1_utility_csv"])) == n1 == 2
    assert len(pd.read_csv(res["written"]["figure2_privacy_profile_csv"])) == n2 == 4
    assert pd.read_csv(res["written"]["figure1_utility_csv"]).equals(pd.read_csv(tmp_path / "figure1_utility.csv"))
    for name in ("figure1_utility", "figure2_privacy_profile", "figure3_n_scaling"):
        assert (tmp_path / f"{name}.png").stat().st_size > 1000
        assert len(pd.read_csv(tmp_path / f"{name}.csv")) >= 2
    f1 = pd.read_csv(tmp_path / "figure1_utility.csv")
    assert np.all(f1.rmse_gm <= f1.rmse_bmg)  # the central mechanism is the benchmark
    # one progress bar for the whole job (weighted by estimated CPU seconds), not one per figure; it
    # appears after 1 s (delay), which a quick run on an idle machine may not reach
    assert "Figure 1:" not in err and ("Figures 1-3" in err or not err.strip())
    f2 = pd.read_csv(tmp_path / "figure2_privacy_profile.csv")
    assert np.all(np.diff(f2.delta_bmg) <= 0) and np.all(f2.delta_bmg_lower <= f2.delta_bmg)


def test_the_progress_bar_covers_the_drawing_and_ends_at_its_total(tmp_path, monkeypatch):
    """The PNGs are drawn inside the one progress bar (no silent seconds after it ends), and its increments sum to
    its total exactly (it ends at 100 %, never beyond)."""
    import contextlib

    import sharpdp.apps.shuffle_figures as sf

    seen: dict = {"updates": 0, "pngs_at_close": None}

    class Bar:
        def update(self, k):
            seen["updates"] += k

    @contextlib.contextmanager
    def recording_bar(*, total, **_):
        seen["total"] = total
        yield Bar()
        seen["pngs_at_close"] = sorted(p.name for p in tmp_path.glob("*.png"))

    monkeypatch.setattr(sf, "progress_bar", recording_bar)
    sf.write_figures(tmp_path, quick=True, progress=False, only="figure2")
    assert seen["pngs_at_close"] == ["figure2_privacy_profile.png"]
    assert seen["updates"] == seen["total"] > 0
