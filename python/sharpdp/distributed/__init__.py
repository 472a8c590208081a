"""Shuffle-model means and count-dependent histograms over partitioned tables, on Dask.

Install with the ``[dask]`` extra. :func:`private_mean` and :func:`release_histogram` take a
``dask.dataframe.DataFrame`` or a path (Parquet file or directory, CSV file or glob) and
return the same figures as the single-machine releases. Calibration and accounting run once
on the driver; reading, randomization, sums and group counts run on the Dask workers, one
partition at a time, so the memory of a worker is bounded by its partitions, not by n.

Reproducibility: random streams are keyed by the global row position (and histogram noise by
the group's position in the public key domain), and sums are exact, so for a given seed the
released values are bit-identical whatever the partitioning, the number of workers and the
scheduling order, and identical to the single-machine path on the same rows in the same order.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers and IDEs
    from sharpdp.distributed._engine import Engine, cluster
    from sharpdp.distributed._histogram import HistogramResult, group_counts, release_histogram
    from sharpdp.distributed._mean import MeanResult, private_mean

# imported on first use (PEP 562): the command line registers its engine options from
# sharpdp.distributed._cli without loading numpy, scipy or the engines
_MODULES = {"Engine": "_engine", "cluster": "_engine", "HistogramResult": "_histogram", "group_counts": "_histogram",
            "release_histogram": "_histogram", "MeanResult": "_mean", "private_mean": "_mean"}

__all__ = ["Engine", "HistogramResult", "MeanResult", "cluster", "group_counts", "private_mean", "release_histogram"]


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:  # a submodule (``sharpdp.shuffle.randomizers`` after ``import sharpdp.shuffle``)
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULES))
