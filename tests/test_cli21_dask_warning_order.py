"""`sharpdp mean --engine dask`: the warning that a text column is skipped (and the seeded-mode warning) come
before the cluster starts, i.e. before any pass over the data, so a user can still choose --columns."""

from __future__ import annotations

import contextlib

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

from _cli import run as _run  # noqa: E402

# (dask.dataframe with a newer pandas; as in tests/test_distributed.py)
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.reset_index is deprecated")


def test_skipped_column_warning_before_the_cluster(tmp_path, capsys, monkeypatch):
    import sharpdp.cli.dask_engine as de

    rng = np.random.default_rng(3)
    pd.DataFrame({"a": rng.integers(0, 10, 50).astype(float), "carrier": rng.choice(["AA", "UA"], 50)}).to_parquet(
        tmp_path / "t.parquet", index=False)
    said = []

    @contextlib.contextmanager
    def no_cluster(args, command):  # stands in for the cluster: records what was said before it started
        said.append(capsys.readouterr().err)
        raise ValueError("workers: stand-in cluster")
        yield

    monkeypatch.setattr(de, "_engine", no_cluster)
    code, out, err = _run(capsys, "mean", "--data", str(tmp_path / "t.parquet"), "--bounds", "0:10",
                          "--engine", "dask", "--workers", "1", "--seed", "4")
    assert code == 2 and "stand-in cluster" in err and len(said) == 1, err
    assert "'carrier'" in said[0] and "skipped" in said[0], said
    assert "seeded, reproducible mode" in said[0], said
