"""The CLI as a newcomer meets it: the Dask route's log from its start and on Ctrl-C, the generator's public key
domain and README's histogram command on it, one progress rule for a log (a quick step prints nothing), the
--diagnostics file's format and --overwrite, the small-group warning of `sharpdp histogram`, whole nested labels
on an 80-column terminal."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pathlib
import re
import shlex
import time

import numpy as np
import pandas as pd
import pytest

import sharpdp._progress as P
from _cli import run

ROOT = pathlib.Path(__file__).resolve().parents[1]


class _Tty(io.StringIO):
    """A terminal stand-in (isatty, no file descriptor: 80 columns by the progress service's rule)."""

    def isatty(self):
        return True


def _frames(text: str) -> list[str]:
    """The lines a terminal shows: tqdm's redraws split at carriage returns, control codes dropped."""
    return [f for f in re.split(r"[\r\n]", re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)) if f.strip()]


# ------------------------------------------------------------------------------------- 1. the Dask route's log
def test_a_wait_with_nothing_to_count_prints_its_lines_from_a_timer(monkeypatch):
    # the first partition's wait gets no update at all: its lines come from a timer, after the quiet period
    monkeypatch.setattr(P._PlainBar, "quiet", 0.05)
    monkeypatch.setattr(P._PlainBar, "interval", 0.05)
    buf = io.StringIO()
    bar = P.progress_bar(total=None, desc="data (pass 1: count rows): workers starting (first partition)",
                         bar_format="{desc}: {elapsed}", leave=False, file=buf)
    assert isinstance(bar, P._PlainBar)
    deadline = time.monotonic() + 10.0  # (waits for the timer's line; the test's result does not depend on speed)
    while buf.getvalue().count("\n") < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    bar.close()
    lines = buf.getvalue().splitlines()
    assert len(lines) >= 3, lines
    assert all(re.fullmatch(r"data \(pass 1: count rows\): workers starting \(first partition\): \d+ s", x)
               for x in lines[:-1]), lines
    assert lines[-1].endswith(" s (done)") and "\r" not in buf.getvalue()
    n = len(lines)
    time.sleep(0.2)
    assert len(buf.getvalue().splitlines()) == n  # closed: the timer prints nothing more


def test_steps_and_bars_say_where_ctrl_c_stopped_them():
    buf = io.StringIO()
    with pytest.raises(KeyboardInterrupt):  # a quick step prints nothing, unless interrupted
        with P.progress_step("starting a local Dask cluster of 2 workers", file=buf):
            raise KeyboardInterrupt
    assert buf.getvalue() == "starting a local Dask cluster of 2 workers: 0 s (interrupted)\n"
    buf = io.StringIO()
    with P.progress_step("loading Dask", file=buf):
        pass
    assert buf.getvalue() == ""
    with pytest.raises(KeyboardInterrupt):  # a bar not shown yet (within its quiet 2 s) says it too
        with P.progress_bar(total=10, desc="calibrating BMG", unit=" evaluations", file=buf) as bar:
            bar.update(3)
            raise KeyboardInterrupt
    assert buf.getvalue() == "calibrating BMG: 3/10 evaluations (30%), 0 s (interrupted)\n"
    tty = _Tty()  # on a terminal a step is silent (the start line said it), but says where Ctrl-C stopped
    with P.progress_step("loading Dask", file=tty):
        pass
    assert tty.getvalue() == ""
    with pytest.raises(KeyboardInterrupt), P.progress_step("loading Dask", file=tty, silent=True):
        raise KeyboardInterrupt
    assert tty.getvalue() == "loading Dask: 0 s (interrupted)\n"


def test_dask_route_says_its_steps_at_once_and_where_ctrl_c_stopped(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    import sharpdp.distributed

    data, keys = tmp_path / "d.csv", tmp_path / "k.csv"
    pd.DataFrame({"g": ["a", "b", "a"]}).to_csv(data, index=False)
    pd.DataFrame({"g": ["a", "b"]}).to_csv(keys, index=False)

    @contextlib.contextmanager
    def interrupted_start(**_):  # Ctrl-C while the cluster starts (no cluster is started here)
        raise KeyboardInterrupt
        yield

    monkeypatch.setattr(sharpdp.distributed, "cluster", interrupted_start)
    code, out, err = run(capsys, "histogram", "--engine", "dask", "--workers", "2", "--data", str(data), "--by", "g",
                         "--keys", str(keys), "--out", str(tmp_path / "o"))
    assert code == 130 and out == ""
    lines = err.splitlines()
    assert lines[0].startswith("sharpdp histogram: --engine dask: starting a local Dask cluster of 2 workers "
                               "(seconds), then one pass over the partitions (group counts)"), lines
    assert lines[1:] == ["starting a local Dask cluster of 2 workers: 0 s (interrupted)",
                         "sharpdp histogram: interrupted"], lines
    assert "\r" not in err and "\x1b" not in err  # plain lines, no bar control codes
    # an error of the input comes alone, before the start line (nothing starts)
    code, out, err = run(capsys, "histogram", "--engine", "dask", "--workers", "2", "--data",
                         str(tmp_path / "nope.csv"), "--by", "g", "--keys", str(keys), "--out", str(tmp_path / "o"))
    assert code == 2 and err.startswith("sharpdp histogram: error: --data: file not found") and err.count("\n") == 1


# ------------------------------------------------------------------------- 2. the generator's public key domain
def test_generator_writes_the_carrier_domain_beside_the_data(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    from sharpdp.distributed.generate import CARRIERS, main

    out = tmp_path / "flights.parquet"
    assert main(["--rows", "40", "--rows-per-file", "20", "--out", str(out)]) == 0
    keys = tmp_path / "flights_carrier_keys.csv"
    assert str(keys) in capsys.readouterr().out
    assert keys.read_text() == "carrier\n" + "".join(c + "\n" for c in CARRIERS)  # header, then one key per row
    assert len(CARRIERS) == 16 and sorted(p.name for p in out.iterdir()) == ["part-00000.parquet",
                                                                             "part-00001.parquet"]
    drawn = set(pd.read_parquet(out)["carrier"])
    assert drawn <= set(CARRIERS)  # every key the data holds is in the public domain
    assert main(["--rows", "40", "--out", str(out), "--overwrite"]) == 0  # the same list: written again
    foreign = tmp_path / "mine.csv"
    foreign.write_text("carrier\nZZ\n")
    capsys.readouterr()
    assert main(["--rows", "40", "--out", str(tmp_path / "f2"), "--keys-out", str(foreign)]) == 2
    err = capsys.readouterr().err
    assert "--keys-out" in err and foreign.read_text() == "carrier\nZZ\n" and not (tmp_path / "f2").exists()
    assert main(["--rows", "40", "--out", str(out), "--overwrite", "--keys-out", str(out / "k.csv")]) == 2
    assert "inside the data directory" in capsys.readouterr().err


def test_readme_histogram_command_uses_the_generators_key_file():
    from sharpdp.distributed.generate import keys_path

    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("## Larger than one machine"):]
    block = block[:block.index("\n## ", 5)]
    cmds = [ln for ln in re.findall(r"```bash\n(.*?)```", block, flags=re.S)]
    gen = next(c for c in cmds if "sharpdp.distributed.generate" in c)
    hist = next(c for c in cmds if "sharpdp histogram" in c)
    env = {"TMPDIR": "/T"}

    def arg(cmd: str, flag: str) -> str:
        words = shlex.split(cmd.replace("${TMPDIR:-/tmp}", env["TMPDIR"]))
        return words[words.index(flag) + 1]

    out = arg(gen, "--out")
    assert arg(hist, "--data") == out and arg(hist, "--keys") == keys_path(out) == "/T/sharpdp_flights_carrier_keys.csv"
    assert arg(hist, "--by") == "carrier" and arg(hist, "--engine") == "dask"
    # its own --out: README's earlier `sharpdp histogram` wrote sharpdp_histogram_out/histogram_release.csv, and an
    # existing release is refused without --overwrite (a second release of the same data)
    assert arg(hist, "--out") not in ("sharpdp_histogram_out", "sharpdp_histogram_out/")


# ------------------------------------------------------------------------------ 3. one progress rule for a log
def test_quick_steps_print_nothing_in_a_log_and_long_ones_plain_lines(monkeypatch):
    t = [0.0]
    monkeypatch.setattr(P, "clock", lambda: t[0])
    buf = io.StringIO()
    for delay in (0.0, 1.0):  # whatever the bar's delay: nothing within the quiet 2 s, no (done) line
        with P.progress_bar(total=4, desc="quick", unit=" items", file=buf, delay=delay) as bar:
            for _ in range(4):
                t[0] += 0.45
                bar.update(1)
    assert buf.getvalue() == ""
    t[0] = 0.0
    with P.progress_bar(total=12, desc="long", unit=" items", file=buf) as bar:
        for _ in range(12):
            t[0] += 1.0
            bar.update(1)
    assert buf.getvalue().splitlines() == ["long: 2/12 items (17%), 2 s, about 10 s left (estimate)",
                                           "long: 7/12 items (58%), 7 s, about 5 s left (estimate)",
                                           "long: 12/12 items (100%), 12 s (done)"]
    t[0] = 0.0
    buf = io.StringIO()  # a step longer than 2 s with its only update at the end: one line at the end
    with P.progress_bar(total=3, desc="one", unit=" items", file=buf) as bar:
        t[0] = 3.0
        bar.update(3)
    assert buf.getvalue() == "one: 3/3 items (100%), 3 s (done)\n"
    assert "nothing for a step that ends within 2 s" in P.PROGRESS_RULE


# ------------------------------------------------------------------------------------------ 4. --diagnostics
def _mean_csv(path: pathlib.Path) -> np.ndarray:
    x = np.random.default_rng(5).uniform(0.0, 10.0, size=(400, 2))
    pd.DataFrame(x, columns=["a", "b"]).to_csv(path, index=False)
    return x


def test_mean_diagnostics_format_follows_the_suffix_and_needs_overwrite(tmp_path, capsys, monkeypatch):
    import sharpdp.shuffle

    csv = tmp_path / "d.csv"
    x = _mean_csv(csv)
    base = ["mean", "--csv", str(csv), "--bounds", "0:10,0:10", "--epsilon", "2", "--seed", "4"]
    diag = tmp_path / "true.json"
    code, out, err = run(capsys, *base, "--diagnostics", str(diag), "--json")
    assert code == 0, err
    r = json.loads(out)
    d = json.loads(diag.read_text())
    assert list(d)[0] == "diagnostics" and d["diagnostics"].startswith("TRUE values, not private: do not publish")
    assert [row["column"] for row in d["rows"]] == ["a", "b"] and d["seed"] == 4
    for j, row in enumerate(d["rows"]):
        assert row["true_mean"] == pytest.approx(x[:, j].mean(), rel=1e-14)
        assert row["private_mean"] == r["private_mean"][j]
    assert (os.stat(diag).st_mode & 0o777) == 0o600
    assert r["diagnostics"] == {"file": str(diag), "format": "json", "csv": None}
    assert "(JSON, readable by you only)" in err
    # an existing file is refused, before any work, and left as it was; --overwrite replaces it
    first = diag.read_text()
    diag.write_text("an older file")
    before = diag.read_bytes()

    def no_work(*args, **kwargs):
        raise AssertionError("work started before --diagnostics was checked")

    with monkeypatch.context() as m:
        m.setattr(sharpdp.shuffle, "calibrate_bmg_report", no_work)
        code, out, err = run(capsys, *base, "--diagnostics", str(diag))
        assert code == 2 and out == "" and diag.read_bytes() == before
        assert err == f"sharpdp mean: error: --diagnostics: {diag} exists; pass --overwrite to replace it (or name " \
                      "another file)\n"
        for bad in ("true.txt", "true"):  # another suffix, or none: refused, naming the option
            code, _, err = run(capsys, *base, "--diagnostics", str(tmp_path / bad))
            assert code == 2 and err.startswith("sharpdp mean: error: --diagnostics: ") and ".csv or a .json" in err
            assert not (tmp_path / bad).exists()
    code, out, err = run(capsys, *base, "--diagnostics", str(diag), "--overwrite")
    assert code == 0 and diag.read_text() == first  # (the same seeded run: the same file)


def _hist_csv(tmp_path: pathlib.Path, sizes: dict[str, int]) -> tuple[pathlib.Path, pathlib.Path]:
    data, keys = tmp_path / "h.csv", tmp_path / "k.csv"
    pd.DataFrame({"g": [k for k, m in sizes.items() for _ in range(m)]}).to_csv(data, index=False)
    pd.DataFrame({"g": list(sizes)}).to_csv(keys, index=False)
    return data, keys


def test_histogram_small_groups_warning_and_json_diagnostics(tmp_path, capsys):
    from sharpdp.cli.histogram import SMALL_GROUP_EPSILON, small_group_count
    from sharpdp.histogram import ShiftedLogGaussian

    mech = ShiftedLogGaussian(0.1, None, 1.0)  # the command's defaults: r = 0.1, r0 = r/2, c = 1; delta 1e-6
    k = small_group_count(mech, 1e-6)
    eps = np.asarray(mech.epsilon(np.array([0, 1, k, k + 1]), 1e-6))
    assert eps[2] > SMALL_GROUP_EPSILON >= eps[3] and k == 16  # the boundary, from the profile itself
    sizes = {"e": 0, "one": 1, "k": k, "k1": k + 1, "big": 500}  # 3 of 5 groups of at most k members
    data, keys = _hist_csv(tmp_path, sizes)
    diag = tmp_path / "true.json"
    code, out, err = run(capsys, "histogram", "--csv", str(data), "--by", "g", "--keys", str(keys), "--no-plot",
                         "--out", str(tmp_path / "o"), "--diagnostics", str(diag), "--json")
    assert code == 0, err
    lines = [x for x in err.splitlines() if "count-dependent" in x]
    assert len(lines) == 1, err  # one warning line: how many, up to which count, and the epsilon they get
    small = int((pd.read_csv(tmp_path / "o" / "histogram_release.csv")["released"] <= k).sum())
    assert lines[0].startswith(f"sharpdp histogram: warning: {small} of 5 released groups have a released value of "
                               f"at most {k}; ")  # counted on the release (post-processing), not on true counts
    assert f"up to {eps[0]:.3g} for a count of 0 or 1" in lines[0] and "349" in lines[0]
    r = json.loads(out)
    assert r["small_group"]["released_at_most"] == small and "analyst_only_not_private" not in r
    assert r["small_group"]["count_at_most"] == k and lines[0].split("warning: ", 1)[1] in r["warnings"]
    d = json.loads(diag.read_text())
    assert d["diagnostics"].startswith("TRUE values")
    assert {row["g"]: row["true_count"] for row in d["rows"]} == sizes
    release = pd.read_csv(tmp_path / "o" / "histogram_release.csv", keep_default_na=False)
    assert [row["released"] for row in d["rows"]] == release["released"].tolist()
    # no small group: no warning (groups far above k: a group of k + 1 members is released at most k with a
    # probability that is not negligible: the check failed in an unseeded run)
    data, keys = _hist_csv(tmp_path, {"x": 200, "y": 300})
    code, out, err = run(capsys, "histogram", "--csv", str(data), "--by", "g", "--keys", str(keys), "--no-plot",
                         "--out", str(tmp_path / "o2"))
    assert code == 0 and "count-dependent" not in err, err
    # the diagnostics file's .png is refused as FILE; an existing .png beside FILE needs --overwrite
    (tmp_path / "d.png").write_bytes(b"x")
    code, _, err = run(capsys, "histogram", "--csv", str(data), "--by", "g", "--keys", str(keys),
                       "--out", str(tmp_path / "o3"), "--diagnostics", str(tmp_path / "d.csv"))
    assert code == 2 and f"{tmp_path / 'd.png'} exists; pass --overwrite" in err
    assert (tmp_path / "d.png").read_bytes() == b"x" and not (tmp_path / "o3").exists()


# -------------------------------------------------------------------- 6. nested labels whole at 80 columns
@pytest.mark.parametrize("label, desc, unit, budget", [
    ("", "calibrating BMG for 10 rounds", " candidates", True),
    ("candidate 1: ", "calibrating BMG", " accountant evaluations", True),
    ("candidate 12 (fallback): ", "calibrating BMG", " accountant evaluations", True),
    ("candidate 2: ", "privacy profile (explicit points) of BMG(0.0409, 0.596, 1) n=327346 zero-out", " values",
     False),
])
def test_nested_labels_stay_whole_with_their_counts_at_80_columns(label, desc, unit, budget):
    tqdm = pytest.importorskip("tqdm")
    tty = _Tty()
    with P.progress_label(label):
        bar = P.progress_bar(total=40, desc=desc, unit=unit, file=tty, mininterval=0.0, budget=budget)
    assert isinstance(bar, tqdm.std.tqdm)
    bar.update(9)
    bar.close()
    last = [f for f in _frames(tty.getvalue()) if "9/40" in f][-1]
    want = label + desc.split(" (")[0].split(" of ")[0]  # the label whole, less its asides and " of ..." tail
    assert len(last) <= 80 and last.startswith(want + ": ") and "..." not in last, last
    assert " 22%|" in last and "9/40 [" in last and ("<=" if budget else "<") in last, last
