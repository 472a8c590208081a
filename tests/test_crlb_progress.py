"""The PPCRLB experiments show progress (a run of section 5.1 takes ~9 s, ~90 s at the paper's 2000 trials)."""

from __future__ import annotations

import pytest

from sharpdp import _progress
from sharpdp.apps import crlb_experiments as C


@pytest.mark.parametrize("progress", [None, True, False])
def test_laplacian_measurements_bar_counts_the_values_of_K(monkeypatch, progress):
    seen = []
    real = _progress.progress_bar

    def spy(items=None, **kw):
        seen.append(kw)
        return real(items, **kw)

    monkeypatch.setattr(_progress, "progress_bar", spy)
    C.laplacian_measurements(K_grid=(50, 100, 200), trials=4, rng=1, progress=progress)
    assert len(seen) == 1 and seen[0]["total"] == 3 and "5.3" in seen[0]["desc"]
    assert seen[0]["disable"] is (progress is False) and seen[0]["delay"] == 1.0


def test_recursive_identification_bar_ends_at_blocks_times_repetitions(monkeypatch, capsys):
    monkeypatch.setattr(_progress._PlainBar, "interval", 0.0, raising=False)
    real = _progress.progress_bar
    monkeypatch.setattr(_progress, "progress_bar", lambda items=None, **kw: real(items, **{**kw, "delay": 0.0}))
    C.recursive_identification(blocks=2, block_size=60, repetitions=2, rng=1)
    err = capsys.readouterr().err.strip().splitlines()
    assert err and err[-1].startswith("PPCRLB 5.2") and "100%" in err[-1] and err[-1].endswith("(done)"), err
