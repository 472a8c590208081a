"""Printing or logging a result object never shows its non-private fields next to the release."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("dask")


def _filled(cls, secret: float):
    """An instance whose every field holds a value; the non-private ones hold ``secret``."""
    values = {}
    for f in dataclasses.fields(cls):
        if f.name.startswith("true_") or f.name == "messages":
            values[f.name] = np.array([secret])
        elif f.name == "released" or f.name.startswith("private_"):
            values[f.name] = np.array([1.25])
        else:
            values[f.name] = 0
    return cls(**values)


@pytest.mark.parametrize("module, name", [("sharpdp.distributed._mean", "MeanResult"),
                                          ("sharpdp.distributed._histogram", "HistogramResult")])
def test_repr_leaves_out_true_values(module, name):
    import importlib

    cls = getattr(importlib.import_module(module), name)
    result = _filled(cls, secret=987654.321)
    text = repr(result) + str(result)
    assert "1.25" in text  # the release is shown
    assert "987654" not in text  # true values and row-linked messages are not
    hidden = {f.name for f in dataclasses.fields(cls) if not f.repr}
    assert hidden == {f.name for f in dataclasses.fields(cls) if f.name.startswith("true_") or f.name == "messages"}
    # still reachable as attributes for evaluation
    assert all(float(getattr(result, h)[0]) == 987654.321 for h in hidden)
