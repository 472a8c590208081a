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

from typing import TYPE_CHECKING

from sharpdp._lazy import lazy_namespace

if TYPE_CHECKING:  # the same names, for type checkers and IDEs
    from sharpdp.distributed._engine import Engine, cluster, numeric_columns, open_table
    from sharpdp.distributed._histogram import HistogramResult, group_counts, release_histogram
    from sharpdp.distributed._mean import MeanResult, private_mean

# imported on first use (PEP 562): the command line registers its engine options from
# sharpdp.cli.dask_engine without loading numpy, scipy or the engines
_P = "sharpdp.distributed."
_MODULES = {"Engine": _P + "_engine", "cluster": _P + "_engine", "numeric_columns": _P + "_engine",
            "open_table": _P + "_engine", "HistogramResult": _P + "_histogram",
            "group_counts": _P + "_histogram", "release_histogram": _P + "_histogram", "MeanResult": _P + "_mean",
            "private_mean": _P + "_mean"}

__all__ = ["Engine", "HistogramResult", "MeanResult", "cluster", "group_counts", "numeric_columns", "open_table",
           "private_mean", "release_histogram"]

__getattr__, __dir__ = lazy_namespace(__name__, _MODULES, globals())
