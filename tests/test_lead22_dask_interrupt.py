"""Ctrl-C on the Dask route once the cluster is up: a line says the local cluster is being stopped before its
worker processes close (seconds of silence otherwise); joining a scheduler stops nothing."""

import argparse
import contextlib

import pytest

pytest.importorskip("dask")
import sharpdp.distributed  # noqa: E402
from sharpdp.cli import dask_engine  # noqa: E402


@pytest.mark.parametrize("scheduler", [None, "tcp://127.0.0.1:1"])
def test_interrupt_after_start_says_the_cluster_is_stopping(monkeypatch, capsys, scheduler):
    @contextlib.contextmanager
    def fake_cluster(**_):
        yield object()

    monkeypatch.setattr(sharpdp.distributed, "cluster", fake_cluster)
    args = argparse.Namespace(workers=2, scheduler=scheduler)
    with pytest.raises(KeyboardInterrupt):
        with dask_engine._engine(args, "mean"):
            raise KeyboardInterrupt
    err = capsys.readouterr().err
    assert ("stopping the local Dask cluster" in err) == (scheduler is None), err
