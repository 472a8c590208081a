"""Ctrl-C inside a local Dask cluster: the interrupt propagates, and Dask's shutdown is quiet (its loggers
silenced, its exit hook run at once, errors ignored, instead of at exit, where a cluster interrupted while starting
printed a traceback)."""

from __future__ import annotations

import atexit
import logging

import pytest

pytest.importorskip("distributed")

from distributed.deploy import spec  # noqa: E402

from sharpdp.distributed import cluster  # noqa: E402


def test_keyboard_interrupt_propagates_and_the_shutdown_is_quiet(monkeypatch):
    names = ("distributed", "tornado", "asyncio")
    levels = {n: logging.getLogger(n).level for n in names}
    calls = []

    def hook():
        calls.append("hook")
        raise AssertionError("Status.init")  # what the exit hook raised on a cluster interrupted while starting

    monkeypatch.setattr(spec, "close_clusters", hook)
    monkeypatch.setattr(atexit, "unregister", lambda f: calls.append(("unregister", f)))
    try:
        with pytest.raises(KeyboardInterrupt):
            with cluster(workers=1, processes=False):
                raise KeyboardInterrupt
        assert all(logging.getLogger(n).level > logging.CRITICAL for n in names)
        assert calls == [("unregister", hook), "hook"]
    finally:
        for n, lv in levels.items():
            logging.getLogger(n).setLevel(lv)
