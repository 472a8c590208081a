"""The Dask engine on CSV files whose quoted fields hold line breaks and commas: at every block size, the same
figures as the single-process engine (docs/distributed.md §5). Before, a block cut inside a quoted field made the
input check refuse a valid file (a "truncated row" or an unclosed quote at a line that closes it) or split a row
between two partitions."""

import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

import sharpdp.distributed._engine as engine  # noqa: E402
from sharpdp.apps.csv_checks import file_problem  # noqa: E402
from sharpdp.cli import main  # noqa: E402
from sharpdp.distributed import cluster, group_counts, private_mean  # noqa: E402

# keys with line breaks and commas inside quotes, a numeric column, a text column with a quoted line break
ROWS = 90


def _quoted_csv(path) -> str:
    lines = ["k,v,note"]
    for i in range(ROWS):
        key = f'"key {i % 4}\nsecond line, with a comma"' if i % 3 == 0 else f"k{i % 5}"
        note = '"a\n""b"", c"' if i % 4 == 1 else "n"
        value = "" if i % 17 == 5 else f"{(i * 7919) % 101 / 10}"  # a few missing values: dropped rows
        lines.append(f"{key},{value},{note}")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture()
def quoted(tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "_CHECKED", {})  # (each block size checks the file again)
    return _quoted_csv(tmp_path / "q.csv")


# block sizes from a few dozen bytes (many cuts inside quoted fields) to the whole file
SIZES = [23, 40, 64, 97, 150, 400, 10**6]


@pytest.mark.parametrize("size", SIZES)
def test_group_counts_and_mean_inputs_equal_pandas_at_every_block_size(quoted, monkeypatch, size):
    # (caught: with the blocks' cut_in_quote detection removed, sizes 23-400 refused the valid file ("line 7 has 1
    # field, the header 3", an unclosed quote at line 35, ...); with _read_path ignoring the None blocksize, too)
    monkeypatch.setattr(engine, "CSV_BLOCKSIZE", size)
    assert file_problem(quoted) is None
    ref = pd.read_csv(quoted, dtype=str, keep_default_na=False, na_values=[""])  # the local engine's read
    keys, counts, info = group_counts(quoted, ["k"], keys_from_data=True)
    expected = ref["k"].value_counts()
    assert dict(zip(keys["k"], counts.tolist())) == expected.to_dict()
    assert info["rows"] == ROWS and info["rows_dropped_missing_key"] == 0
    res = private_mean(quoted, ["v"], [[0.0, 10.0]], 1.0, 1e-6, rng=np.random.default_rng(3))
    values = pd.to_numeric(ref["v"]).dropna().to_numpy()
    assert (res.n, res.rows_dropped_missing) == (values.size, ROWS - values.size) and values.size < ROWS
    assert res.true_mean[0] == pytest.approx(values.mean(), rel=1e-15, abs=0)


def test_a_cut_outside_quotes_keeps_the_partitions(tmp_path, monkeypatch):
    """Quoted line breaks alone do not cost the parallel read: only a block cut inside a quoted field does."""
    monkeypatch.setattr(engine, "_CHECKED", {})
    rows = ["k,v"] + [f'"a\nb",{i}' if i == 0 else f"c,{i}" for i in range(200)]
    path = tmp_path / "one.csv"
    path.write_text("\n".join(rows) + "\n")
    monkeypatch.setattr(engine, "CSV_BLOCKSIZE", 100)  # the quoted field is in the first 20 bytes
    assert engine.check_csv_files([str(path)]) == 100
    _, counts, info = group_counts(str(path), ["k"], keys_from_data=True)
    assert info["partitions"] > 5 and sorted(counts.tolist()) == [1, 199]
    monkeypatch.setattr(engine, "CSV_BLOCKSIZE", 5)  # now the first cut falls inside it: one partition per file
    monkeypatch.setattr(engine, "_CHECKED", {})
    assert engine.check_csv_files([str(path)]) is None
    _, counts, info = group_counts(str(path), ["k"], keys_from_data=True)
    assert info["partitions"] == 1 and sorted(counts.tolist()) == [1, 199]


@pytest.mark.parametrize("size", [5, 9, 10**6])
def test_an_unclosed_quote_gets_the_local_message_with_its_line(tmp_path, monkeypatch, size):
    # (caught, the blocks' cut_in_quote detection removed: size 5 named line 2's quote, which closes, and size 9
    # a "truncated row" with 1 field)
    monkeypatch.setattr(engine, "_CHECKED", {})
    monkeypatch.setattr(engine, "CSV_BLOCKSIZE", size)
    path = tmp_path / "open.csv"
    path.write_text('k,v\n"x\ny",1\nb,2\n"c\nd",3\ne,4\n"open,5\nf,6\ng,7\n')
    local = file_problem(str(path))
    assert "the quoted field of line 8 is not closed" in local
    with pytest.raises(ValueError) as err:
        engine.check_csv_files([str(path)])
    assert str(err.value) == f"data: {local}"


@pytest.fixture(scope="module")
def scheduler():
    with cluster(workers=1, processes=False) as one:
        yield one.client.scheduler.address


def _cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_cli_histogram_and_mean_dask_equal_local_on_a_quoted_file_at_a_tiny_block_size(tmp_path, quoted, scheduler,
                                                                                      monkeypatch, capsys):
    # (caught, the cut_in_quote detection removed: the dask histogram exits 2, "--data: malformed CSV in ...: line
    # 7 has 1 field, the header 3")
    monkeypatch.setattr(engine, "CSV_BLOCKSIZE", 40)
    keys = tmp_path / "keys.csv"
    pd.DataFrame({"k": [f"key {i}\nsecond line, with a comma" for i in range(4)] + ["k0", "k1", "k2"]}).to_csv(
        keys, index=False)
    hist = ["histogram", "--by", "k", "--keys", str(keys), "--r", "0.2", "--seed", "5", "--no-plot", "--json"]
    local = _cli(capsys, *hist, "--csv", quoted, "--out", str(tmp_path / "l"), "--diagnostics",
                 str(tmp_path / "l.csv"))
    remote = _cli(capsys, *hist, "--data", quoted, "--engine", "dask", "--scheduler", scheduler, "--out",
                  str(tmp_path / "d"), "--diagnostics", str(tmp_path / "d.csv"))
    assert remote["partitions"] == 1 and remote["groups"] == local["groups"] == 7
    a, b = (pd.read_csv(tmp_path / f / "histogram_release.csv") for f in ("l", "d"))
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    da, db = (pd.read_csv(tmp_path / f, keep_default_na=False) for f in ("l.csv", "d.csv"))
    pd.testing.assert_frame_equal(da, db, check_exact=True)  # true counts and dropped-row figures
    assert da["rows_dropped_outside_domain"].iloc[0] == sum(1 for i in range(ROWS) if i % 3 and i % 5 in (3, 4))
    mean = ["mean", "--columns", "v", "--bounds", "0:10", "--epsilon", "1", "--delta", "1e-6", "--seed", "4",
            "--json"]
    local = _cli(capsys, *mean, "--csv", quoted)
    remote = _cli(capsys, *mean, "--data", quoted, "--engine", "dask", "--scheduler", scheduler)
    assert remote["private_mean"] == local["private_mean"] and remote["n"] == local["n"] < ROWS
