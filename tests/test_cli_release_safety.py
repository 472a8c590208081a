"""The CLI's releases keep their promise: no seed in any output, secure randomness by default,
the diagnostics file never overwrites the user's data, bad options refused before any work.

References: the seed value itself (it must never appear next to a release), the library calls the
CLI makes (``rng`` handed to the sampler), the files on disk before and after a refused run.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from _cli import run

SEED = 987654321  # distinctive: it cannot appear in an output by accident
SEED_WORD = re.compile(r"seed\W{0,3}\d", re.IGNORECASE)  # "seed: 12", "seed=12", '"seed": 12'


def _mean_csv(path, n=400):
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.uniform(0, 10, n), "b": rng.uniform(-1, 1, n)}).to_csv(path, index=False)
    return path


def _hist_csv(tmp_path):
    data, keys = tmp_path / "h.csv", tmp_path / "k.csv"
    pd.DataFrame({"g": ["a"] * 30 + ["b"] * 12 + ["c"] * 5}).to_csv(data, index=False)
    pd.DataFrame({"g": ["a", "b", "c", "d"]}).to_csv(keys, index=False)
    return data, keys


def _no_seed_in(*texts):
    for t in texts:
        assert str(SEED) not in t and not SEED_WORD.search(t), t[:500]


MEAN = ["mean", "--bounds", "0:10,-1:1", "--epsilon", "0.5", "--delta", "1e-5"]


@pytest.mark.parametrize("fmt", [[], ["--json"]])
def test_mean_never_prints_the_seed(tmp_path, capsys, monkeypatch, fmt):
    csv = _mean_csv(tmp_path / "d.csv")
    from sharpdp.shuffle import BlanketMixedGaussian

    seen = []
    real = BlanketMixedGaussian.sample
    monkeypatch.setattr(BlanketMixedGaussian, "sample",
                        lambda self, x, rng=None, **kw: seen.append(rng) or real(self, x, rng=rng, **kw))
    # unseeded: the library's secure generator (rng=None), no seed anywhere, said so
    code, out, err = run(capsys, *MEAN, "--csv", str(csv), *fmt)
    assert code == 0, err
    assert seen == [None]
    _no_seed_in(out, err)
    if fmt:
        r = json.loads(out)
        assert r["reproducible_seeded_mode"] is False and "seed" not in r
    else:
        assert "randomness : cryptographically secure generator keyed by OS entropy" in out
    # seeded: reproducible, labelled NOT private, still no seed in stdout or stderr
    diag = tmp_path / "diag.csv"
    code, out, err = run(capsys, *MEAN, "--csv", str(csv), *fmt, "--seed", str(SEED), "--diagnostics", str(diag))
    assert code == 0, err
    assert isinstance(seen[-1], np.random.Generator)
    _no_seed_in(out, err)
    assert "NOT private unless the seed is kept secret" in err
    if fmt:
        r = json.loads(out)
        assert r["reproducible_seeded_mode"] is True and "seed" not in r
        assert any("NOT private" in w for w in r["warnings"])
    else:
        assert "randomness : seeded, reproducible (NOT private unless the seed is kept secret)" in out
    # only the diagnostics file holds it
    assert pd.read_csv(diag)["seed"].tolist() == [SEED, SEED]


def test_histogram_never_writes_the_seed(tmp_path, capsys):
    data, keys = _hist_csv(tmp_path)
    base = ["histogram", "--csv", str(data), "--by", "g", "--keys", str(keys)]
    code, out, err = run(capsys, *base, "--out", str(tmp_path / "o1"), "--json", "--no-plot")
    assert code == 0, err
    r = json.loads(out)
    assert r["reproducible_seeded_mode"] is False
    _no_seed_in(out, err)
    diag = tmp_path / "diag.csv"
    for fmt in ([], ["--json"]):
        code, out, err = run(capsys, *base, "--out", str(tmp_path / "o2"), "--seed", str(SEED), "--no-plot",
                             "--diagnostics", str(diag), "--overwrite", *fmt)
        assert code == 0, err
        _no_seed_in(out, err, (tmp_path / "o2" / "histogram_release.csv").read_text())
        assert "NOT private unless the seed is kept secret" in err
    assert json.loads(out)["reproducible_seeded_mode"] is True
    assert set(pd.read_csv(diag)["seed"]) == {SEED}
    # the seeded release is reproducible
    again = tmp_path / "o3"
    run(capsys, *base, "--out", str(again), "--seed", str(SEED), "--no-plot")
    assert (again / "histogram_release.csv").read_text() == (tmp_path / "o2" / "histogram_release.csv").read_text()


@pytest.mark.parametrize("command", ["mean", "histogram"])
def test_diagnostics_may_not_overwrite_an_input_or_miss_its_directory(tmp_path, capsys, monkeypatch, command):
    import sharpdp.histogram
    import sharpdp.shuffle

    def no_work(*args, **kwargs):
        raise AssertionError("work started before the --diagnostics path was checked")

    monkeypatch.setattr(sharpdp.shuffle, "calibrate_bmg_report", no_work)
    monkeypatch.setattr(sharpdp.histogram, "ShiftedLogGaussian", no_work)
    if command == "mean":
        csv = _mean_csv(tmp_path / "d.csv")
        base, inputs = [*MEAN, "--csv", str(csv)], [csv]
    else:
        csv, keys = _hist_csv(tmp_path)
        base, inputs = ["histogram", "--csv", str(csv), "--by", "g", "--keys", str(keys),
                        "--out", str(tmp_path / "o")], [csv, keys]
    before = {p: p.read_bytes() for p in inputs}
    bad = [*(str(p) for p in inputs), str(csv / "diag.csv"), str(tmp_path)]  # (a missing directory is created)
    if command == "histogram":
        bad += [str(tmp_path / "o" / "histogram_release.csv"), str(tmp_path / "o" / "histogram_release.png"),
                str(tmp_path / "diag.png")]
    for path in bad:
        code, out, err = run(capsys, *base, "--diagnostics", path)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (path, err)
        assert err.startswith(f"sharpdp {command}: error: --diagnostics"), err
    assert {p: p.read_bytes() for p in inputs} == before
    assert not (tmp_path / "missing").exists() and not (tmp_path / "o" / "histogram_release.csv").exists()


def test_histogram_dask_uses_no_builtin_domain_on_custom_data(tmp_path, capsys):
    """--engine dask --data with a `carrier` column refuses without --keys, as --csv does on the same rows."""
    pytest.importorskip("distributed")
    data = tmp_path / "flights_like.csv"
    pd.DataFrame({"carrier": ["AA", "UA", "ZZ"], "dest": ["JFK", "LAX", "SFO"]}).to_csv(data, index=False)
    code, _, err_csv = run(capsys, "histogram", "--csv", str(data), "--by", "carrier", "--out", str(tmp_path / "a"))
    assert code == 2 and "--keys: a custom CSV needs a public key domain" in err_csv
    code, _, err_dask = run(capsys, "histogram", "--data", str(data), "--engine", "dask", "--by", "carrier",
                            "--out", str(tmp_path / "b"))
    assert code == 2 and "--keys: a --data table needs a public key domain" in err_dask
    assert len(err_dask.strip().splitlines()) == 1


@pytest.mark.parametrize("address,needle", [("notanaddress", "is not a Dask scheduler address"),
                                            ("tcp://127.0.0.1:1", "cannot connect to tcp://127.0.0.1:1")])
def test_bad_scheduler_fails_at_once_in_one_line(tmp_path, capsys, address, needle):
    pytest.importorskip("distributed")
    csv = _mean_csv(tmp_path / "d.csv")
    code, out, err = run(capsys, *MEAN, "--data", str(csv), "--engine", "dask", "--scheduler", address)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("sharpdp mean: error: --scheduler: ") and needle in err


_DASK_BAD = [
    (["--engine", "dask", "--workers", "0"], "--workers must be >= 1"),
    (["--engine", "dask", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "--workers: give either"),
    (["--workers", "2"], "--workers needs --engine dask"),
    (["--scheduler", "tcp://127.0.0.1:8786"], "--scheduler needs --engine dask"),
    (["--engine", "dask", "--scheduler", "tcp://host"], "--scheduler: 'tcp://host' is not a Dask scheduler address"),
    (["--engine", "dask", "--scheduler", ""], "--scheduler"),
    (["--engine", "dask", "--scheduler", "tcp://127.0.0.1:99999"], "--scheduler"),
    (["--engine", "dask", "--data", "x.parquet", "--csv", "y.csv"], "--data: give either --data or --csv"),
]


@pytest.mark.parametrize("command", ["mean", "histogram"])
@pytest.mark.parametrize("extra,needle", _DASK_BAD, ids=[" ".join(a) for a, _ in _DASK_BAD])
def test_dask_options_fuzz_one_line_errors(tmp_path, capsys, monkeypatch, command, extra, needle):
    """Bad Dask engine options: one line naming the option, exit 2, before a cluster is started."""
    pytest.importorskip("distributed")
    import sharpdp.distributed

    monkeypatch.setattr(sharpdp.distributed, "cluster", lambda *a, **k: pytest.fail("a cluster was started"))
    csv = _mean_csv(tmp_path / "d.csv")
    base = ([*MEAN] if command == "mean" else ["histogram", "--by", "a", "--keys-from-data", "--no-plot",
                                               "--out", str(tmp_path / "o")])
    if "--data" not in extra and "--csv" not in extra:
        base += ["--data" if "--engine" in extra else "--csv", str(csv)]
    code, out, err = run(capsys, *base, *extra)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert needle in err, err


@pytest.mark.parametrize("which", ["csv", "keys"])
def test_histogram_release_may_not_overwrite_its_input(tmp_path, capsys, monkeypatch, which):
    """An input named histogram_release.csv inside --out would be replaced by the release: refused
    before any work, one line naming --out, the input unchanged."""
    import sharpdp.histogram

    def no_work(*args, **kwargs):
        raise AssertionError("work started before the release paths were checked")

    monkeypatch.setattr(sharpdp.histogram, "ShiftedLogGaussian", no_work)
    csv, keys = _hist_csv(tmp_path)
    out = tmp_path / "o"
    out.mkdir()
    clash = out / "histogram_release.csv"
    clash.write_bytes((csv if which == "csv" else keys).read_bytes())
    if which == "csv":
        csv = clash
    else:
        keys = clash
    before = clash.read_bytes()
    code, stdout, err = run(capsys, "histogram", "--csv", str(csv), "--by", "g", "--keys", str(keys),
                            "--out", str(out), "--seed", "1")
    assert code == 2 and stdout == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith("sharpdp histogram: error: --out: the release file") and "would overwrite the input" in err
    assert clash.read_bytes() == before
