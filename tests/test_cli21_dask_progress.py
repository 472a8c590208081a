"""Dask partition bars on a cluster: the first partition (the workers' start-up) runs under its own label and the
pass's bar opens when it ends, at 1 done, so its first time estimate excludes the start-up."""

import time

import numpy as np
import pytest

pytest.importorskip("distributed")
dask = pytest.importorskip("dask")


class _Recorder:
    """Stands in for sharpdp._progress.progress_bar: records when each bar opens, its options and updates."""

    bars: list = []

    def __init__(self, iterable=None, *, desc="", total=None, initial=0, disable=False, **_):
        self.desc, self.total, self.initial, self.disable = desc, total, initial, disable
        self.n, self.opened, self.updates, self.closed = initial, time.monotonic(), [], None
        _Recorder.bars.append(self)

    def update(self, k=1):
        self.n += k
        self.updates.append(time.monotonic())

    def close(self):
        self.closed = time.monotonic()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_DONE: list = []  # when each task ended (the cluster's workers are threads of this process: processes=False)


def _task(i):
    if not _DONE:  # the worker's first task, whichever it is, carries the start-up (imports, first reads)
        time.sleep(0.6)
    _DONE.append(time.monotonic())
    return i * i


def test_cluster_pass_bar_opens_after_the_start_up(monkeypatch):
    import sharpdp._progress
    from sharpdp.distributed import cluster

    monkeypatch.setattr(sharpdp._progress, "progress_bar", _Recorder)
    _Recorder.bars = []
    _DONE.clear()
    tasks = [dask.delayed(_task)(i) for i in range(4)]
    with cluster(workers=1, processes=False) as engine:
        assert engine.compute(tasks, "data (pass 1: count rows)", progress=True) == [0, 1, 4, 9]
    start, bar = _Recorder.bars
    assert start.desc == "data (pass 1: count rows): workers starting (first partition)" and start.total is None
    assert bar.desc == "data (pass 1: count rows)" and bar.total == 4 and bar.initial == 1 and bar.n == 4
    first = min(_DONE)
    assert start.opened < first <= start.closed <= bar.opened  # the bar's clock starts after the start-up
    assert len(bar.updates) == 3 and np.all(np.diff([bar.opened, *bar.updates]) < 0.5)  # the 3 others, fast
    assert not start.disable and not bar.disable


def test_local_threads_keep_one_bar(monkeypatch):
    import sharpdp._progress
    from sharpdp.distributed._engine import Engine

    monkeypatch.setattr(sharpdp._progress, "progress_bar", _Recorder)
    _Recorder.bars = []
    assert Engine(None).compute([dask.delayed(_task)(i) for i in (1, 2)], "p", progress=True) == [1, 4]
    (bar,) = _Recorder.bars
    assert bar.desc == "p" and bar.total == 2 and bar.n == 2 and bar.initial == 0
