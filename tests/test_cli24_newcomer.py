"""Session 24's newcomer leftovers in the CLI (docs/cli.md): the sampler's charge floor of `sharpdp account`
(also at an absurd sigma0), units in --json, the K-round time note, the crlb CSV's rows before k0, no data cell in
an error, `sharpdp figures` refusing an earlier run's files, and the split of sharpdp/cli/__init__.py."""

import json
import math
import pathlib

import numpy as np
import pandas as pd
import pytest

from sharpdp.cli import main
from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant

BMG_ARGS = ["account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000000"]


def _json(capsys, argv):
    code = main([*argv, "--json"])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    return json.loads(cap.out)


# ------------------------------------------------ 1. above ~20 nats the value is the sampler's charge, not a grid cap
def test_account_names_the_charge_floor_and_the_smallest_certified_value(capsys):
    r = _json(capsys, [*BMG_ARGS, "--epsilon", "25"])
    assert "hit its size caps" not in r["bracket_note"] and "sampler's charge" in r["bracket_note"]
    f = r["sampler_charge_floor"]
    acc = ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**6)  # fresh: an independent reference
    assert f["charge"] == acc.sampler_term(25.0) and f["charge"] >= 0.5 * r["delta"]
    assert f["floor_at_any_epsilon"] == acc.sampler_term(0.0) == pytest.approx(2 * 10**6 * acc.randomizer.sampler_tv)
    # the value found is a fresh certified value at its epsilon (so a certified delta at 25: docs/cli.md §2) ...
    e, v = f["smallest_at_epsilon"], f["smallest_certified_delta"]
    assert 0.0 <= e <= 25.0 and v == float(acc.report(e).upper)
    # ... near the smallest of a brute-force grid of fresh values over [0, 25] (0.4 nats apart, 63 values)
    grid = min(float(acc.report(x).upper) for x in np.linspace(0.0, 25.0, 63))
    assert f["floor_at_any_epsilon"] <= v <= 1.05 * grid and v < 1e-9 * r["delta"]
    from sharpdp.cli.account_rounds import g_up  # (certified figures print rounded up: docs/cli.md §2)

    text = " ".join(_text(capsys, [*BMG_ARGS, "--epsilon", "25"]).split())
    assert "sampler's charge floor:" in text and f"{g_up(v)} at epsilon = {g_up(e, 4)} nats, also holds at epsilon = 25 nats" in text
    assert r["epsilon_unit"] == "nats" and r["delta_unit"] == "probability"


def test_account_without_a_dominant_charge_says_nothing_of_it(capsys):
    r = _json(capsys, [*BMG_ARGS, "--epsilon", "1e-5"])
    assert r["sampler_charge_floor"] is None and "charge" not in r["bracket_note"]
    assert "charge floor" not in _text(capsys, [*BMG_ARGS, "--epsilon", "1e-5"])


def _text(capsys, argv):
    code = main(argv)
    cap = capsys.readouterr()
    assert code == 0, cap.err
    return cap.out


# ------------------------------------------------ 8. an absurd sigma0: the charge grows with the noise table
def test_absurd_sigma0_is_explained_by_the_charge(capsys):
    big = _json(capsys, ["account", "--gamma", "0.95", "--sigma0", "1e20", "--n", "1e6", "--epsilon", "1e-5"])
    small = _json(capsys, ["account", "--gamma", "0.95", "--sigma0", "1e3", "--n", "1e6", "--epsilon", "1e-5"])
    assert big["delta"] > 1e10 * small["delta"]  # the finding: 7.8e-12 against 1.7e-28
    f = big["sampler_charge_floor"]
    rnd = BlanketMixedGaussian(0.95, 1e20, 1)
    # sampler_tv = (ceil(13.2 s) + 1) 2^-128 + 1e-38 with s = sigma0 (h = 1): docs/sampling.md §4
    assert f["sampler_tv_per_message"] == pytest.approx((math.ceil(13.2e20) + 1) * 2.0**-128, rel=1e-9)
    assert f["sampler_tv_per_message"] == pytest.approx(rnd.sampler_tv, rel=1e-12)
    assert f["floor_at_any_epsilon"] <= big["delta"] <= 1.0001 * f["floor_at_any_epsilon"]
    assert "noise table" in f["meaning"] and "refuses" in f["meaning"]
    assert small["sampler_charge_floor"] is None or small["sampler_charge_floor"]["charge"] < big["delta"]


# ------------------------------------------------ 2. units in every --json result with an epsilon or a delta
def _keys(obj, prefix=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _keys(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _keys(v)


@pytest.mark.parametrize("argv", [
    [*BMG_ARGS, "--delta", "1e-6"],
    ["account", "--k", "2", "--epsilon0", "1", "--n", "1000", "--adjacency", "replace", "--delta", "1e-6"],
    ["account", "--k", "3", "--epsilon0", "1", "--n", "1000", "--epsilon", "0.5"],
    ["histogram", "--table2", "--no-plot"],  # (no figure written into the working directory: a rerun would refuse it)
], ids=["account-bmg", "account-sharp", "account-krr", "histogram-table2"])
def test_json_carries_the_units(capsys, argv):
    r = _json(capsys, argv)
    assert any("epsilon" in k for k in _keys(r)) or any("delta" in k for k in _keys(r))
    assert r["epsilon_unit"] == "nats" and r["delta_unit"] == "probability"


def test_mean_and_histogram_release_json_carry_the_units(tmp_path, capsys):
    p = tmp_path / "m.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.uniform(0, 1, 500), "g": rng.choice(["x", "y"], 500)}).to_csv(p, index=False)
    r = _json(capsys, ["mean", "--csv", str(p), "--columns", "a", "--bounds", "0:1", "--epsilon", "1",
                       "--diagnostics", str(tmp_path / "m.json")])
    assert r["epsilon_unit"] == "nats" and r["delta_unit"] == "probability" and "delta_certified" in r
    r = _json(capsys, ["histogram", "--csv", str(p), "--by", "g", "--keys-from-data", "--no-plot",
                       "--out", str(tmp_path / "h"), "--diagnostics", str(tmp_path / "h.json")])
    assert r["mode"] == "release" and r["epsilon_unit"] == "nats" and r["delta_unit"] == "probability"
    for name in ("m.json", "h.json"):  # the --diagnostics files hold an epsilon too
        d = json.loads((tmp_path / name).read_text())
        assert "epsilon" in {**d, **d["rows"][0]} and d["epsilon_unit"] == "nats" and d["delta_unit"] == "probability"


# ------------------------------------------------ 3. the K-round note: seconds, as measured, not "a minute"
def test_rounds_time_note_is_the_measured_one():
    from sharpdp.cli.mean import ROUNDS_TIME_NOTE

    assert "minute" not in ROUNDS_TIME_NOTE and "a few seconds per candidate" in ROUNDS_TIME_NOTE


# ------------------------------------------------ 4. crlb_5_2.csv: the rows before k0 say why they hold nan
def test_crlb_csv_explains_its_rows_before_k0(tmp_path, capsys):
    r = _json(capsys, ["crlb", "--trials", "2", "--seed", "1", "--no-plot", "--out", str(tmp_path)])
    text = (tmp_path / "crlb_5_2.csv").read_text()
    assert text.splitlines()[0].startswith("k,bound,mse,mse_stderr,bound_identity,mse_identity,mse_laplace,mse_binary")
    df = pd.read_csv(tmp_path / "crlb_5_2.csv", keep_default_na=False, na_values=["nan"])
    k0 = r["k0"]
    before = df["k"] < k0
    assert before.sum() == k0 - 1 > 0
    assert df.loc[before, "note"].str.startswith(f"k < k0 = {k0}: no estimate yet").all()
    assert (df.loc[~before, "note"] == "").all()
    undefined = ["bound", "mse", "mse_stderr", "bound_identity", "mse_identity", "mse_laplace"]
    assert df.loc[before, undefined].isna().all().all() and df.loc[~before, undefined].notna().all().all()
    assert df["mse_binary"].notna().all()  # (why the rows are kept)


# ------------------------------------------------ 5. a non-numeric cell: the column and a count, never the cell
def test_non_numeric_error_names_the_column_not_the_cell(tmp_path, capsys):
    p = tmp_path / "bad.csv"
    p.write_text("a,b\n1,x-secret\n2,3\n4,y-secret\n")
    code = main(["mean", "--csv", str(p), "--columns", "a,b", "--bounds", "0:1,0:1", "--json"])
    cap = capsys.readouterr()
    assert code == 2 and "secret" not in cap.err and "secret" not in cap.out
    assert "--columns: column 'b' is not numeric: 2 of its 3 rows hold a value that is not a number" in cap.err


# ------------------------------------------------ 6. sharpdp figures refuses an earlier run's files
def test_figures_refuse_an_existing_output_without_overwrite(tmp_path, capsys, monkeypatch):
    import sharpdp.apps.shuffle_figures as F

    calls = []
    monkeypatch.setattr(F, "write_figures", lambda out, quick: calls.append(out) or {})
    (tmp_path / "figure2_privacy_profile.png").write_bytes(b"earlier run")
    code = main(["figures", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and calls == [] and "figure2_privacy_profile.png exists" in err and "--overwrite" in err
    assert main(["figures", "--out", str(tmp_path), "--overwrite"]) == 0 and calls == [str(tmp_path)]


# ------------------------------------------------ 7. sharpdp/cli/__init__.py below 600 lines, every name where it was
def test_cli_package_split_keeps_its_names():
    import sharpdp.cli as cli

    init = pathlib.Path(cli.__file__)
    assert len(init.read_text().splitlines()) < 600
    for name in ("CliError", "option_error", "install_hint", "WRITTEN", "release_file", "open_private",
                 "check_diagnostics_path", "check_releases_not_inputs", "check_not_written", "check_out_dir",
                 "make_out_dir", "BMG_FIELD_HELP", "MEAN_RMSE_NOTE", "bracket_note", "delta_bounds_meaning",
                 "release_scope", "evaluations_meaning", "wrap_text", "wrap_entry", "usage_error", "json_error",
                 "error_parameter", "bounds_choice", "parse_bounds_option", "slow_note", "build_parser", "main",
                 "release_rng", "warn_seeded", "SEEDED_MODE_WARNING", "START_HINT", "TEXT_WIDTH"):
        assert hasattr(cli, name), name
    from sharpdp.cli import files

    assert cli.WRITTEN is files.WRITTEN  # (the list _main clears is the one release_file appends to)


# ------------------------------------------------ 9. sharpdp mean's entries keep "name = value" on one line
def test_mean_entries_never_split_name_equals_value():
    from sharpdp.cli import TEXT_WIDTH, wrap_entry

    # the BMG line of `sharpdp mean` on the flights table (README command 1) broke as "mse_single" / "= 7.57727"
    text = "gamma = 0.335181, sigma0 = 0.884054, chi_lo = 0.540603, mse_single = 7.57727"
    lines = wrap_entry("BMG", text)
    assert len(lines) == 2 and all(len(line) <= TEXT_WIDTH for line in lines)
    assert lines[1].strip() == "mse_single = 7.57727" and " ".join(" ".join(lines).split()) == "BMG : " + text


# ------------------------------------------------ 9. a calibration that finds no randomizer: one line, no traceback
def test_mean_at_a_delta_below_the_charge_is_one_error_line(tmp_path, capsys):
    p = tmp_path / "m.csv"
    pd.DataFrame({"a": np.random.default_rng(0).uniform(0, 1, 20000)}).to_csv(p, index=False)
    # (was a RuntimeError traceback: delta = 1e-28 is below every certified value, the sampler's charge included)
    code = main(["mean", "--csv", str(p), "--bounds", "0:1", "--delta", "1e-28", "--json"])
    cap = capsys.readouterr()
    err = json.loads(cap.out)
    assert code == 2 and err["exit_status"] == 2 and err["command"] == "mean"
    assert err["error"].startswith("calibration: no feasible randomizer found for delta = 1e-28")
    assert cap.err.strip().splitlines() == [f"sharpdp mean: error: {err['error']}"]
