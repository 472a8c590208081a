"""What ``sharpdp histogram`` and ``sharpdp mean`` print and write beside the release depends on the data only
through the release (docs/histogram_release.md §10).

Each command runs on a dataset and on neighbours of it with the same ``--seed`` (the same noise): one row more,
one row with a missing key / value more, one row with a key outside the public domain more, one value clipped
more. Everything printed (stdout: text and ``--json``; stderr) and written (the release CSV) must be identical
except the released values (and the figures the output computes from them). The data-dependent figures that
used to be printed beside the release (rows read and dropped, keys outside the domain, values clipped) are
checked against counts made here, in the ``--diagnostics`` file, the one place they now go.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import sharpdp._progress
from sharpdp.cli import main

SEED = "7"


@pytest.fixture(autouse=True)
def _no_timed_progress(monkeypatch):
    """A clock that never advances: no progress line (whose times would differ between runs) is printed."""
    monkeypatch.setattr(sharpdp._progress, "clock", lambda: 0.0)


def _run_in(path, monkeypatch, capsys, argv):
    """``sharpdp ARGV`` run with ``path`` as the working directory (relative names: the same printed paths)."""
    path.mkdir(exist_ok=True)
    monkeypatch.chdir(path)
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


# ---------------------------------------------------------------- histogram

KEYS = "g\na\nb\nc\n"
BASE_ROWS = ["a"] * 60 + ["b"] * 80 + ["c"] * 120 + ["z"] * 3 + [""] * 2  # 3 rows outside, 2 with no key


def _histogram(tmp_path, monkeypatch, capsys, name, rows, json_out, diagnostics=False):
    where = tmp_path / name
    where.mkdir()
    (where / "rows.csv").write_text("g,x\n" + "".join(f"{g},1\n" for g in rows))
    (where / "keys.csv").write_text(KEYS)
    argv = ["histogram", "--csv", "rows.csv", "--by", "g", "--keys", "keys.csv", "--seed", SEED, "--no-plot",
            "--out", "out", *(["--json"] if json_out else []), *(["--diagnostics", "diag.csv"] if diagnostics else [])]
    out, err = _run_in(where, monkeypatch, capsys, argv)
    release = (where / "out" / "histogram_release.csv").read_text()
    diag = pd.read_csv(where / "diag.csv", keep_default_na=False) if diagnostics else None
    return out, err, release, diag


NEIGHBOURS = {"missing_key": BASE_ROWS + [""], "outside_domain": BASE_ROWS + ["y"], "one_row_more": BASE_ROWS + ["a"]}


@pytest.mark.parametrize("json_out", [True, False], ids=["json", "text"])
def test_histogram_prints_the_same_on_neighbouring_datasets(tmp_path, monkeypatch, capsys, json_out):
    base = _histogram(tmp_path, monkeypatch, capsys, "base", BASE_ROWS, json_out)
    for name in ("missing_key", "outside_domain"):  # the same true counts: everything identical, byte for byte
        other = _histogram(tmp_path, monkeypatch, capsys, name, NEIGHBOURS[name], json_out)
        assert other == base, name
    out, err, release, _ = _histogram(tmp_path, monkeypatch, capsys, "one_row_more", NEIGHBOURS["one_row_more"],
                                      json_out)
    assert err == base[1]
    a, b = (pd.read_csv(pd.io.common.StringIO(r)) for r in (base[2], release))
    assert a.drop(columns="released").equals(b.drop(columns="released"))
    assert a["released"].iloc[1:].tolist() == b["released"].iloc[1:].tolist()  # (group a: its own noise, n + 1)
    if json_out:  # all but the release's own figures
        ra, rb = json.loads(base[0]), json.loads(out)
        for r in (ra, rb):
            r.pop("largest_released")
            r["small_group"].pop("released_at_most")
        assert ra == rb
    else:
        assert [x for x in base[0].splitlines() if "released values:" not in x] == \
               [x for x in out.splitlines() if "released values:" not in x]


def test_histogram_dropped_rows_are_in_the_diagnostics_file_only(tmp_path, monkeypatch, capsys):
    expected = {"base": (265, 2, 3, 1), "missing_key": (266, 3, 3, 1), "outside_domain": (266, 2, 4, 2),
                "one_row_more": (266, 2, 3, 1)}  # rows read, missing key, outside, distinct keys outside
    outputs = set()
    for name, rows in {"base": BASE_ROWS, **NEIGHBOURS}.items():
        out, err, _, diag = _histogram(tmp_path, monkeypatch, capsys, name, rows, True, diagnostics=True)
        assert len(rows) == expected[name][0] and rows.count("") == expected[name][1]
        for column, value in zip(("rows_read", "rows_dropped_missing_key", "rows_dropped_outside_domain",
                                  "keys_outside_domain"), expected[name]):
            assert diag[column].tolist() == [value] * 3, (name, column)
        assert diag["true_count"].tolist() == [60 + (name == "one_row_more"), 80, 120]
        r = json.loads(out)
        assert "analyst_only_not_private" not in r and "dropped" in r["missing_key_policy"]
        outputs.add((json.dumps({k: v for k, v in r.items() if k not in ("largest_released", "small_group")}),
                     err))
    assert len(outputs) == 1  # the diagnostics differ, the printed output does not


def test_histogram_empty_release_hint_is_a_function_of_the_release(tmp_path, monkeypatch, capsys):
    """A key file written unlike the data (1.0 against 1): every count 0; the hint says so from the release."""
    (tmp_path / "rows.csv").write_text("h\n" + "1\n" * 40 + "2\n" * 50)
    (tmp_path / "keys.csv").write_text("h\n1.0\n2.0\n")
    common = ["histogram", "--csv", "rows.csv", "--by", "h", "--keys", "keys.csv", "--no-plot", "--out", "o", "--json"]
    out, err = _run_in(tmp_path, monkeypatch, capsys, common)
    r = json.loads(out)
    hint = [w for w in r["warnings"] if w.startswith("every released value is at most")]
    assert len(hint) == 1 and "1 and 1.0" in hint[0] and err.count("every released value is at most") == 1
    (tmp_path / "keys.csv").write_text("h\n1\n2\n")  # matching keys: large released values, no hint
    out, err = _run_in(tmp_path, monkeypatch, capsys, [*common[:-2], "o2", "--json"])
    assert "every released value is at most" not in out + err


# ---------------------------------------------------------------- mean

def _mean_rows(rng_seed=0, n=400):
    rng = np.random.default_rng(rng_seed)
    return [f"{a:.6f},{b:.6f}" for a, b in rng.uniform(1.0, 9.0, size=(n, 2))]


def _mean(tmp_path, monkeypatch, capsys, name, rows, json_out, diagnostics=False):
    where = tmp_path / name
    where.mkdir()
    (where / "m.csv").write_text("a,b\n" + "\n".join(rows) + "\n")
    argv = ["mean", "--csv", "m.csv", "--bounds", "0:10,0:10", "--epsilon", "1", "--seed", SEED,
            *(["--json"] if json_out else []), *(["--diagnostics", "diag.csv"] if diagnostics else [])]
    out, err = _run_in(where, monkeypatch, capsys, argv)
    return out, err, (pd.read_csv(where / "diag.csv") if diagnostics else None)


def test_mean_prints_the_same_on_neighbouring_datasets(tmp_path, monkeypatch, capsys):
    """n is public (zero-out neighbours have the same n: docs/embedding.md §1); a row with a missing value more
    (dropped) or one value moved outside the bounds (clipped) must change nothing printed but the mean."""
    base = _mean_rows()
    missing = base + ["3.0,"]
    clipped = [("12.5," + base[0].split(",")[1])] + base[1:]  # one value more outside [0, 10]
    out0, err0, d0 = _mean(tmp_path, monkeypatch, capsys, "base", base, True, diagnostics=True)
    out1, err1, d1 = _mean(tmp_path, monkeypatch, capsys, "missing", missing, True, diagnostics=True)
    assert (out1, err1) == (out0, err0)  # the same rows used, the same noise: identical
    assert d0["rows_dropped_missing"].tolist() == [0, 0] and d1["rows_dropped_missing"].tolist() == [1, 1]
    out2, err2, d2 = _mean(tmp_path, monkeypatch, capsys, "clipped", clipped, True, diagnostics=True)
    assert d0["values_clipped"].tolist() == [0, 0] and d2["values_clipped"].tolist() == [1, 0]  # (per column)
    r0, r2 = json.loads(out0), json.loads(out2)
    assert r0["private_mean"][1] == r2["private_mean"][1] and r0["private_mean"][0] != r2["private_mean"][0]
    for r in (r0, r2):
        r.pop("private_mean")
    assert r0 == r2 and err0 == err2
    assert r0["analyst_only_not_private"] == {} and "clipped" in r0["missing_value_policy"]
    # every figure of the bmg block is explained under bmg_meaning (the text explains chi_lo and mse_single too)
    assert r0["bmg_meaning"].keys() == r0["bmg"].keys() and all(len(v) > 20 for v in r0["bmg_meaning"].values())
    text0, _, _ = _mean(tmp_path, monkeypatch, capsys, "base_text", base, False)
    text1, _, _ = _mean(tmp_path, monkeypatch, capsys, "missing_text", missing, False)
    assert text1 == text0 and "dropped    : rows with a missing value" in text0


# ---------------------------------------------------------------- an earlier release is not replaced silently

def test_histogram_refuses_to_replace_an_earlier_release_without_overwrite(tmp_path, monkeypatch, capsys):
    (tmp_path / "rows.csv").write_text("g\n" + "a\n" * 30 + "b\n" * 40)
    (tmp_path / "keys.csv").write_text("g\na\nb\n")
    argv = ["histogram", "--csv", "rows.csv", "--by", "g", "--keys", "keys.csv", "--no-plot", "--out", "o"]
    _run_in(tmp_path, monkeypatch, capsys, argv)
    first = (tmp_path / "o" / "histogram_release.csv").read_bytes()
    for extra in ([], ["--json"]):
        code = main([*argv, *extra])
        out, err = capsys.readouterr()
        assert code == 2 and "o/histogram_release.csv exists" in err and "--overwrite" in err, err
        assert (json.loads(out)["parameter"] == "--out") if extra else out == ""
    assert (tmp_path / "o" / "histogram_release.csv").read_bytes() == first  # untouched
    _run_in(tmp_path, monkeypatch, capsys, [*argv, "--overwrite"])
    assert (tmp_path / "o" / "histogram_release.csv").read_bytes() != first  # a new release (fresh noise)
    # the figure is a release file too: an existing one is refused when the run would draw it
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "histogram_release.png").write_bytes(b"x")
    code = main([*argv[:-3], "--out", "p"])
    _, err = capsys.readouterr()
    assert code == 2 and "p/histogram_release.png exists" in err
    assert not (tmp_path / "p" / "histogram_release.csv").exists()


# ---------------------------------------------------------------- --table2 refuses every option it ignores

@pytest.mark.parametrize("extra", [["--keys-from-data"], ["--integer"], ["--workers", "2"], ["--delta", "1e-5"],
                                   ["--scheduler", "tcp://127.0.0.1:1"]])  # (--overwrite applies: table2_bounds.png)
def test_table2_refuses_the_options_it_ignores(tmp_path, monkeypatch, capsys, extra):
    monkeypatch.chdir(tmp_path)
    code = main(["histogram", "--table2", "--out", "o", "--json", *extra])
    out, err = capsys.readouterr()
    obj = json.loads(out)
    assert code == 2 and obj["parameter"] == extra[0] and "--table2" in obj["error"], (out, err)
    assert not any(tmp_path.iterdir())  # refused before anything is written


def test_table2_every_option_is_used_or_refused():
    """Each option of sharpdp histogram either enters Table 2 (--r, --r0, --c, --out, --no-plot, --json) or is in
    the one list --table2 refuses: a new option must be put in one or the other."""
    from sharpdp.cli import build_parser
    from sharpdp.cli.histogram import TABLE2_IGNORED

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["histogram"]
    dests = {a.dest for a in sub._actions} - {"help", "table2_ignored"}
    assert dests - set(TABLE2_IGNORED) == {"r", "r0", "c", "out", "no_plot", "json", "table2", "overwrite"}
    assert sub.get_default("table2_ignored").keys() == {"--" + d.replace("_", "-") for d in TABLE2_IGNORED}
