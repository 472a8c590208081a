"""Count-dependent zCDP histogram over a partitioned table (Dask).

Workers count the rows of each group of a public key domain, partition by partition (an
integer vector per partition, added exactly on the driver); the driver releases the counts
with the shifted-log Gaussian mechanism of *Better Privacy Guarantees for Larger Groups*
(eq. 4), sampled exactly on its grid (docs/histogram_release.md). The release draws per group,
in the order of the key domain, so the noise of a group is keyed by its position in the public
domain: the released values depend on the key and the counts only, never on how the rows were
partitioned or scheduled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from sharpdp.distributed._engine import engine_for, open_table


@dataclass
class HistogramResult:
    """A released histogram over a key domain.

    Attributes
    ----------
    keys : pandas.DataFrame
        One row per group (text columns ``by``), in the order of the release.
    released : numpy.ndarray of float64, shape (groups,)
        The released values (publishable with ``keys``).
    true_counts : numpy.ndarray of int64, shape (groups,)
        The true counts: NOT publishable (diagnostics only; left out of the repr).
    by : list of str
    rows : int
        Rows read.
    rows_dropped_missing_key : int
        Rows with an empty key value in a ``by`` column (dropped, never a group).
    rows_dropped_outside_domain, keys_outside_domain : int
        Rows whose key is not in the public domain (dropped), and their distinct keys.
    key_domain : str
        ``"public"`` (given ``keys``) or ``"taken from the data (not protected)"``.
    mechanism : sharpdp.histogram.ShiftedLogGaussian
    integer : bool
    engine : str
    partitions : int
    workers : int or None
    source : str
    warnings : list of str
    """

    keys: Any
    released: np.ndarray
    true_counts: np.ndarray = field(repr=False)  # not publishable: kept out of the repr
    by: list
    rows: int
    rows_dropped_missing_key: int
    rows_dropped_outside_domain: int
    keys_outside_domain: int
    key_domain: str
    mechanism: Any
    integer: bool
    engine: str
    partitions: int
    workers: int | None
    source: str = ""
    warnings: list = field(default_factory=list)


def _key_index(frame, by: list[str]):
    import pandas as pd

    if len(by) == 1:
        return pd.Index(frame[by[0]].to_numpy(), name=by[0])
    return pd.MultiIndex.from_frame(frame[by])


def _kept_keys(part, by: list[str]):
    """Text keys of the rows of a partition whose key is complete, and the number dropped."""
    keys = part[by]
    missing = keys.isna().any(axis=1).to_numpy()
    kept = keys[~missing].astype(str)
    return kept, int(missing.sum()), len(keys)


def _domain_task(part, by: list[str], domain) -> dict:
    """Counts over the domain (int64 vector), rows outside it and their distinct keys."""
    kept, dropped, rows = _kept_keys(part, by)
    codes = domain.get_indexer(_key_index(kept, by))
    inside = codes >= 0
    counts = np.bincount(codes[inside], minlength=len(domain)).astype(np.int64)
    outside = set(_key_index(kept[~inside], by).unique().tolist()) if not inside.all() else set()
    return {"counts": counts, "rows": rows, "dropped": dropped, "outside_rows": int((~inside).sum()),
            "outside_keys": outside}


def _data_keys_task(part, by: list[str]) -> dict:
    """Counts of the keys present in a partition (for a key set taken from the data)."""
    kept, dropped, rows = _kept_keys(part, by)
    return {"counts": kept.groupby(by, sort=False).size(), "rows": rows, "dropped": dropped}


def _domain_frame(keys, by: list[str]):
    import pandas as pd

    if isinstance(keys, pd.DataFrame):
        frame = keys
    elif len(by) == 1:
        frame = pd.DataFrame({by[0]: list(keys) if not isinstance(keys, pd.Series) else keys.to_numpy()})
    else:
        raise TypeError("keys must be a pandas DataFrame with the columns of `by` (several key columns)")
    frame = frame.copy()
    frame.columns = [str(c) for c in frame.columns]
    absent = [b for b in by if b not in frame.columns]
    if absent:
        raise ValueError(f"keys: no column {absent[0]!r} in the key domain (columns: {list(frame.columns)})")
    frame = frame[by]
    if len(frame) == 0:
        raise ValueError("keys: the key domain is empty")
    if frame.isna().any(axis=None):
        raise ValueError("keys: the key domain has a missing value (every key must be given)")
    return frame.astype(str).drop_duplicates().reset_index(drop=True)


def group_counts(data, by: str | Sequence[str], *, keys=None, keys_from_data: bool = False, client=None,
                 progress: bool = False):
    """Group counts of a partitioned table over a public key domain, computed on the workers.

    The counting step of :func:`release_histogram` (same parameters and rules); nothing is
    randomized.

    Returns
    -------
    keys : pandas.DataFrame
        The groups (text columns ``by``): the domain in its order, or the data's keys sorted.
    counts : numpy.ndarray of int64, shape (groups,)
        True counts (NOT publishable).
    info : dict
        ``by``, ``rows``, ``rows_dropped_missing_key``, ``rows_dropped_outside_domain``,
        ``keys_outside_domain``, ``key_domain``, ``engine``, ``partitions``, ``workers``,
        ``source``, ``warnings``.

    Raises
    ------
    ValueError, TypeError
        As :func:`release_histogram`.
    """
    import dask
    import pandas as pd

    by = [by] if isinstance(by, str) else [str(b) for b in by]
    if not by or any(not b for b in by):
        raise ValueError("by: give at least one column name")
    if len(set(by)) != len(by):
        raise ValueError(f"by: duplicated column in {by}")
    if keys is not None and keys_from_data:
        raise ValueError("keys_from_data: give either keys (a public domain) or keys_from_data, not both")
    if keys is None and not keys_from_data:
        raise ValueError("keys: a public key domain is required (or keys_from_data=True, which does not "
                         "protect the key set)")
    domain = None if keys is None else _domain_frame(keys, by)
    frame, source = open_table(data, by, text=True)
    engine = engine_for(client)
    parts = frame.to_delayed()
    warnings: list[str] = []
    if domain is not None:
        index = dask.delayed(_key_index(domain, by), pure=True)
        results = engine.compute([dask.delayed(_domain_task)(p, by, index) for p in parts],
                                 "data (group counts)", progress)
        counts = np.zeros(len(domain), dtype=np.int64)
        outside: set = set()
        for r in results:
            counts += r["counts"]
            outside |= r["outside_keys"]
        out_rows = int(sum(r["outside_rows"] for r in results))
        keys_frame, description = domain, "public"
    else:
        results = engine.compute([dask.delayed(_data_keys_task)(p, by) for p in parts],
                                 "data (group counts)", progress)
        series = [r["counts"] for r in results if len(r["counts"])]
        if not series:
            raise ValueError("by: no row has a complete key (every row has a missing key value)")
        total = pd.concat(series).groupby(level=list(range(len(by))), sort=True).sum()
        total.index = total.index.set_names(by)
        keys_frame = total.index.to_frame(index=False)
        counts = total.to_numpy(dtype=np.int64)
        outside, out_rows, description = set(), 0, "taken from the data (not protected)"
        warnings.append("keys_from_data: the key set is taken from the data and is NOT protected: each "
                        "released group shows that at least one row has that key")
    info = {"by": by, "rows": int(sum(r["rows"] for r in results)),
            "rows_dropped_missing_key": int(sum(r["dropped"] for r in results)),
            "rows_dropped_outside_domain": out_rows, "keys_outside_domain": len(outside),
            "key_domain": description, "engine": engine.name, "partitions": len(parts),
            "workers": engine.workers, "source": source, "warnings": warnings}
    return keys_frame, counts, info


def release_histogram(data, by: str | Sequence[str], mechanism, *, keys=None, keys_from_data: bool = False,
                      rng=None, integer: bool = False, client=None, progress: bool = False) -> HistogramResult:
    """Release the group counts of a partitioned table with count-dependent zCDP, on Dask.

    Rows are grouped by the text values of the ``by`` columns. The groups are the keys of a
    public domain ``keys`` (not derived from the data): every key of the domain is released,
    empty groups too; rows whose key is outside the domain are dropped and counted (the keys
    are not listed); rows with a missing key value are dropped and counted. The counts are
    computed on the workers and added exactly; the release
    (``mechanism.release(counts, rng=rng, integer=integer)``, *Better Privacy Guarantees for
    Larger Groups*, eq. 4, exact grid release of docs/histogram_release.md) runs once on the
    driver over the domain in its given order (one draw per group, not per row), so the released values equal those of the single-machine
    release of the same counts with the same ``rng``, for any partitioning or scheduling.

    Parameters
    ----------
    data : dask.dataframe.DataFrame or str or os.PathLike
        The table, or a Parquet file/directory or a CSV file/glob (CSV cells read as text;
        only an empty cell is missing).
    by : str or sequence of str
        Grouping column(s), at least one, no duplicates.
    mechanism : sharpdp.histogram.ShiftedLogGaussian
        The calibrated mechanism.
    keys : pandas.DataFrame or sequence, optional
        The public key domain: a DataFrame with the ``by`` columns (one key per row; values
        compared as text; duplicates dropped, order kept), or for one column a sequence of keys.
    keys_from_data : bool, default False
        Take the key set from the data instead (sorted): NOT protected, since a released group
        shows that some row has that key; a warning is added. Exclusive with ``keys``.
    rng : numpy.random.Generator, int, SeedSequence or None
        Seed source of the release, as for ``mechanism.release``.
    integer : bool, default False
        Stochastically round the released values.
    client : distributed.Client or None
        Cluster to run on (default: the active default Client, else Dask's threads).
    progress : bool, default False
        Show a progress bar (stderr; partitions done out of all).

    Returns
    -------
    HistogramResult

    Raises
    ------
    ValueError
        Bad path or absent column; no or an empty/incomplete key domain; both ``keys`` and
        ``keys_from_data``; no row with a complete key (keys from the data); a worker that
        died or a lost cluster (the job is aborted, nothing partial is returned).
    TypeError
        If ``data`` is neither a Dask DataFrame nor a path, or ``keys`` has the wrong type.
    """
    if not hasattr(mechanism, "release"):
        raise TypeError(f"mechanism must have a release method (e.g. ShiftedLogGaussian), got "
                        f"{type(mechanism).__name__}")
    keys_frame, counts, info = group_counts(data, by, keys=keys, keys_from_data=keys_from_data, client=client,
                                            progress=progress)
    released = mechanism.release(counts, rng=rng, integer=integer)
    return HistogramResult(keys=keys_frame, released=np.asarray(released), true_counts=counts,
                           mechanism=mechanism, integer=bool(integer), **info)
