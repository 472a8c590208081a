"""Output files of the sharpdp commands (docs/cli.md §4): with --overwrite no earlier run's file stays beside a new
run's (an earlier release's figure beside a new release's table publishes two releases), without it any of them
is refused; an --out that cannot be created fails before any work; a CSV row longer than its header is refused by
sharpdp histogram as by sharpdp mean (an unquoted key "A,B" would be counted as "A")."""

import json
import os
import sys

import pytest

from _cli import run
from sharpdp.cli import check_out_dir, CliError


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


@pytest.fixture
def people(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "people.csv").write_text("city,v\nA,1\nB,2\nA,3\n")
    (tmp_path / "cities.csv").write_text("city\nA\nB\nC\n")
    return ["histogram", "--csv", "people.csv", "--by", "city", "--keys", "cities.csv", "--out", "hs", "--seed", "3"]


def test_histogram_overwrite_removes_the_earlier_release_figure(people, capsys):
    os.makedirs("hs")
    _write("hs/histogram_release.csv", "group,released\nA,99\n")  # an earlier release
    _write("hs/histogram_release.png", "earlier figure")
    code, out, err = run(capsys, *people, "--no-plot", "--overwrite", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["png"] is None and r["removed"] == [os.path.join("hs", "histogram_release.png")]
    assert sorted(os.listdir("hs")) == ["histogram_release.csv"]  # (caught: no remove_earlier_outputs call)
    assert "--overwrite: removed hs/histogram_release.png" in err
    with open("hs/histogram_release.csv") as f:
        assert "A,99" not in f.read()


def test_histogram_refuses_an_earlier_figure_alone_without_overwrite(people, capsys):
    os.makedirs("hs")
    _write("hs/histogram_release.png", "earlier figure")
    code, out, err = run(capsys, *people, "--no-plot")
    assert code == 2  # (caught: checking only the files this run writes)
    assert "hs/histogram_release.png exists" in err and "--overwrite" in err
    assert os.listdir("hs") == ["histogram_release.png"]


def test_histogram_overwrite_removes_the_earlier_diagnostics_figure(people, capsys):
    os.makedirs("hs")
    _write("d.csv", "old")
    _write("d.png", "earlier diagnostics figure")
    code, out, err = run(capsys, *people, "--no-plot", "--overwrite", "--diagnostics", "d.csv", "--json")
    assert code == 0, err
    assert json.loads(out)["removed"] == ["d.png"] and not os.path.exists("d.png")  # (caught: release files only)
    # without --overwrite, the diagnostics figure alone is refused too
    os.remove("d.csv")
    _write("d.png", "earlier diagnostics figure")
    code, out, err = run(capsys, *people, "--no-plot", "--overwrite", "--diagnostics", "d.csv")
    assert code == 0 and not os.path.exists("d.png")
    _write("d.png", "earlier diagnostics figure")
    os.remove("d.csv")
    code, out, err = run(capsys, *people[:-4], "--out", "hs2", "--seed", "3", "--no-plot", "--diagnostics", "d.csv")
    assert code == 2 and "d.png exists" in err  # (caught: extra=[] under --no-plot, as on s24)


def test_crlb_overwrite_no_plot_removes_the_earlier_figure(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.makedirs("c")
    _write("c/crlb_5_3.png", "earlier figure")
    argv = ["crlb", "--experiment", "5.3", "--trials", "2", "--seed", "1", "--no-plot", "--out", "c"]
    code, out, err = run(capsys, *argv)
    assert code == 2 and "crlb_5_3.png exists" in err  # (caught: the png checked only when drawn)
    code, out, err = run(capsys, *argv, "--overwrite", "--json")
    assert code == 0, err
    assert json.loads(out)["files"]["removed"] == [os.path.join("c", "crlb_5_3.png")]
    assert os.listdir("c") == ["crlb_5_3.csv"]  # (caught: no remove_earlier_outputs call in crlb._write)


@pytest.mark.skipif(not sys.platform.startswith("linux") or not os.path.isdir("/proc/self"), reason="needs /proc")
def test_an_out_that_cannot_be_created_fails_before_any_work(tmp_path, capsys, monkeypatch):
    import sharpdp.apps.crlb_experiments as E

    def no_work(*a, **k):
        raise AssertionError("the experiment ran before --out was checked")

    for name in ("mechanism_comparison", "recursive_identification", "laplacian_measurements"):
        monkeypatch.setattr(E, name, no_work)
    # (/proc refuses mkdir even to root, for whom os.access says "writable": caught by the s24 check, access-based)
    code, out, err = run(capsys, "crlb", "--out", "/proc/sharpdp_x", "--no-plot")
    assert code == 2 and "--out: cannot create directory /proc/sharpdp_x" in err, err
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.csv").write_text("city\nA\n")
    code, out, err = run(capsys, "histogram", "--csv", "p.csv", "--by", "city", "--out", "/proc/sharpdp_nope")
    assert code == 2 and "--out: cannot create directory /proc/sharpdp_nope" in err, err


def test_check_out_dir_is_a_trial_that_leaves_nothing(tmp_path):
    check_out_dir(str(tmp_path / "a" / "b"))
    assert os.listdir(tmp_path) == []  # (caught: the trial directories left in place)
    with pytest.raises(CliError, match="is a file"):
        (tmp_path / "f").write_text("")
        check_out_dir(str(tmp_path / "f"))
    with pytest.raises(CliError, match="cannot create directory"):
        check_out_dir(str(tmp_path / "f" / "sub"))


def test_histogram_refuses_a_row_longer_than_the_header_as_mean_does(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragged.csv").write_text("x,v\nA,1\nA,B,2\nC,3\n")  # line 3: an unquoted key "A,B"
    code, out, err = run(capsys, "histogram", "--csv", "ragged.csv", "--by", "x", "--keys-from-data", "--out", "h")
    assert code == 2 and not os.path.exists("h")  # (caught: no check_field_counts call in histogram._load_rows)
    code_m, out_m, err_m = run(capsys, "mean", "--csv", "ragged.csv", "--columns", "v")
    assert code_m == 2
    expected = "--csv: malformed CSV in ragged.csv: line 3 has 3 fields, the header 2"
    assert expected in err and expected in err_m
    assert err.split("error: ")[1] == err_m.split("error: ")[1]  # the same message


def test_crlb_52_states_the_privacy_level_it_runs(tmp_path, capsys, monkeypatch):
    import sharpdp.apps.crlb_experiments as E

    monkeypatch.chdir(tmp_path)
    argv = ["crlb", "--trials", "1", "--seed", "1", "--no-plot", "--json"]
    code, out, err = run(capsys, *argv, "--out", "a")
    r = json.loads(out)
    assert code == 0 and r["privacy_level"]["s_k_range"] == [0.2, 2.0] and r["privacy_level"]["u_k_scale"] == 0.1
    assert "uniformly on [0.2, 2]" in r["privacy_level"]["meaning"]
    # the stated level is the one the run uses: at level 1 without cross terms Algorithm 3's setting is the
    # Sbar_k = I comparison, so their bounds (deterministic given the levels) agree
    # (caught: the experiment drawing S_k from a hard-coded U[0.2, 2] beside the stated constants)
    monkeypatch.setattr(E, "PRIVACY_LEVEL_RANGE_52", (1.0, 1.0))
    monkeypatch.setattr(E, "PRIVACY_CROSS_SCALE_52", 0.0)
    code, out, err = run(capsys, *argv, "--out", "b")
    r = json.loads(out)
    assert r["privacy_level"]["s_k_range"] == [1.0, 1.0]
    ok = [i for i, b in enumerate(r["bound"]) if b is not None]
    assert ok and all(abs(r["bound"][i] - r["bound_identity"][i]) <= 1e-9 * r["bound_identity"][i] for i in ok)
    code, out, err = run(capsys, *argv[:-1], "--out", "c")
    assert "privacy level: record k's privacy level S_k" in out
