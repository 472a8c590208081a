"""Checks of a user's CSV before its numbers are read: header and row shape, text columns, read errors.

Split from :mod:`sharpdp.apps.datasets` by concern (every name is re-exported there). Shared by the
single-process reader (``load_table``) and the Dask engine (``sharpdp.distributed``), so that both
refuse the same files with the same messages. An error or warning names the option, the column and
how many rows are at fault, never a cell's content (docs/histogram_release.md §10).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


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


def check_field_counts(path: str) -> None:
    """Refuse a CSV whose header has an unnamed field or with a data row longer than its header."""
    try:
        with open(path, "rb") as f:
            header, _, bad = csv_block_shape(f.read(), None)
    except OSError:
        return  # unreadable: read_user_csv reports it
    problem = header_problem(header or [])
    if problem:
        raise ValueError(f"csv: malformed CSV in {path}: {problem}")
    if bad is not None:
        raise ValueError("csv: " + long_row_message(path, bad[0] + 2, bad[1], len(header or [])))


def count_non_numeric(values) -> int:
    """How many non-missing values of a pandas Series do not parse as numbers (pandas.to_numeric)."""
    import pandas as pd

    return int((pd.to_numeric(values, errors="coerce").isna() & values.notna()).sum())


def non_numeric_message(option: str, column: str, bad: int, rows: int, what: str = "is not numeric", *,
                        first: bool = False, fix: str = "fix the file") -> str:
    """The one message of both readers (single-process and Dask) for a column holding text values.

    It names the option, the column and the counts, never a value (docs/histogram_release.md §10).

    Parameters
    ----------
    option : str
        The option the message names ("columns", "csv" or "data").
    column : str
        The column's name.
    bad : int
        How many of its values are not numbers, >= 1.
    rows : int
        How many rows were looked at (the whole table, or a sample of its first rows: ``first``).
    what : str, default "is not numeric"
        What is wrong with the column, after its name.
    first : bool, default False, keyword-only
        ``rows`` counts the table's first rows only (a sample).
    fix : str, default "fix the file"
        What to do, at the end of the message.

    Returns
    -------
    str
        "<option>: column '<column>' <what>: <bad> of its [first ]<rows> rows hold(s) a value that is not a
        number (not shown; <fix>)".
    """
    return (f"{option}: column {column!r} {what}: {bad} of its {'first ' if first else ''}{rows} rows "
            f"hold{'s' if bad == 1 else ''} a value that is not a number (not shown; {fix})")


def check_text_columns(frame, source: str, option: str = "csv", *, sampled: bool = False) -> list[str]:
    """The non-numeric columns of a table, which a reader that picks the numeric columns skips.

    Parameters
    ----------
    frame : pandas.DataFrame
        A CSV's rows, or a sample of them (the Dask engine passes its first partition's head).
    source : str
        Where the rows come from (for the message).
    option : str, default "csv"
        The option the error names ("csv" or "data").
    sampled : bool, default False, keyword-only
        ``frame`` holds only the table's first rows (the message then says "of its first N rows").

    Returns
    -------
    list of str
        The names of the non-numeric columns, in order.

    Raises
    ------
    ValueError
        Naming ``option`` if a non-numeric column is mostly numeric (more values parse as numbers than
        not): one stray text value would otherwise drop the whole column silently. The message names the
        column and how many of its values are not numbers, never a value (:func:`non_numeric_message`).
    """
    import pandas as pd

    skipped = []
    for c in frame.columns:
        if pd.api.types.is_numeric_dtype(frame[c]):
            continue
        bad = count_non_numeric(frame[c])
        if int(frame[c].notna().sum()) - bad > bad:  # more values parse as numbers than not
            raise ValueError(non_numeric_message(option, str(c), bad, len(frame), f"of {source} is mostly numeric",
                                                 first=sampled, fix="fix the file, or choose columns with --columns"))
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


def read_user_csv(path: Any, **kwargs):
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
