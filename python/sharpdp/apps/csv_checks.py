"""Checks of a user's CSV before its numbers are read: header and row shape, text columns, read errors.

Split from :mod:`sharpdp.apps.datasets` by concern (every name is re-exported there). Shared by the
single-process reader (``load_table``) and the Dask engine (``sharpdp.distributed``), so that both
refuse the same files with the same messages. An error or warning names the option, the column and
how many rows are at fault, never a cell's content (docs/histogram_release.md §10).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Sequence

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


def header_duplicate(header: Sequence[str]) -> str | None:
    """What is wrong with a header that names a column twice, or None.

    pandas reads such a header as ``a`` and ``a.1``, so which of the two columns an option means is not
    clear; both CSV readers refuse it (:func:`csv_problem`).

    Returns
    -------
    str or None
        "the header names column 'a' twice (fields i and j): ..." for the first repeated name, else None.
    """
    first: dict[str, int] = {}
    for i, name in enumerate(header):
        if name in first:
            return (f"the header names column {name!r} twice (fields {first[name] + 1} and {i + 1}), so which "
                    "column is read is not clear: rename one")
        first[name] = i
    return None


def _quote_left_open(text: str) -> bool:
    """Whether a quoted field is still open at the end of ``text`` (the lines of one CSV row), as pandas' and the
    csv module's tokenizers read it: a quote opens a field only at the field's start, ``""`` inside one is a
    quote, a quote elsewhere is a character. The csv module in strict mode answers at C speed when the row has
    no stray quote; this loop otherwise."""
    import csv as csvmod

    try:
        for _ in csvmod.reader(text.splitlines(), strict=True):
            pass
        return False
    except csvmod.Error as exc:
        if "unexpected end of data" in str(exc):
            return True
    quoted, at_start, i = False, True, 0
    while i < len(text):
        c = text[i]
        if quoted:
            if c == '"' and text[i + 1:i + 2] == '"':
                i += 1
            elif c == '"':
                quoted = at_start = False
        else:
            quoted = c == '"' and at_start
            at_start = c in ",\r\n"
        i += 1
    return quoted


#: The longest row of a user's CSV the checks read, in bytes (a quoted field's line breaks included): a quoted field
#: that stays open longer (a quote left open early in a big file) is refused with the line where it opened
#: (:class:`RowTooLong`), so the text carried from piece to piece never exceeds it (docs/cli.md §7).
MAX_ROW_BYTES = 8 << 20


class RowTooLong(ValueError):
    """A CSV row longer than :data:`MAX_ROW_BYTES` (a quoted field left open, or one that long).

    ``row``: its index among the data lines of the block checked (-1: the header line); the readers turn it into
    :func:`row_too_long_message` with the file's line."""

    def __init__(self, row: int):
        super().__init__(f"a row longer than {MAX_ROW_BYTES} bytes at data line {row} of the block")
        self.row = row


def row_too_long_message(path: str, line: int) -> str:
    """The message of both CSV readers for a row longer than :data:`MAX_ROW_BYTES` (``line``: where it starts, the
    header is line 1); no cell is shown."""
    bound = f"{MAX_ROW_BYTES / 2**20:.3g} MiB"
    return (f"malformed CSV in {path}: the row of line {line} runs on for more than {bound} (a double quote \" "
            "left open there? a quoted field goes on until its closing quote): close it, or write a quote inside a "
            f"quoted field as two quotes \"\"; rows of at most {bound} are read")


def _field_counts(block: bytes, width: int | None) -> tuple[list[str] | None, np.ndarray, Callable[[int], bool],
                                                            int | None]:
    """(header or None, field count of each data line, whether data line i is blank, open quote) of a block of
    whole lines.

    A line that continues a quoted field of the line above (a quoted line break) has count -1 (it starts no
    row); an empty line has count 0 (the csv module's ``[]`` row); a blank line holds nothing but spaces,
    tabs or a CR (asked line by line: the few lines that need it). The open quote is None, or the data line
    (-1: the header) of the block's last row when a quoted field of it is still open at the block's end. With
    ``width`` None the block's first row is the header and is left out."""
    import csv as csvmod

    if not isinstance(block, (bytes, bytearray, memoryview)):
        raise TypeError(f"block must be bytes, got {type(block).__name__}")
    block = bytes(block)
    if width is not None and (isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 0):
        raise ValueError(f"width must be None or an integer >= 0, got {width!r}")
    skip = 1 if width is None else 0  # the header's line

    if b'"' in block or block.count(b"\r") != block.count(b"\r\n"):  # quotes, or a lone CR (a line end too)
        lines = block.decode("utf-8", errors="replace").splitlines()
        counts = np.full(len(lines), -1, dtype=np.int64)
        if csvmod.field_size_limit() < MAX_ROW_BYTES:  # (the module's default, 128 KiB: raised once, never lowered)
            csvmod.field_size_limit(MAX_ROW_BYTES)
        reader = csvmod.reader(lines)
        start = last = 0
        header = None
        try:
            for row in reader:
                if width is None and header is None:
                    header = row
                else:
                    counts[start] = len(row)
                start, last = reader.line_num, start
        except csvmod.Error as exc:
            if "field larger than field limit" not in str(exc):
                raise
            raise RowTooLong(start - skip) from None
        if width is None:
            header = header if header is not None else []
        open_quote = last - skip if lines and _quote_left_open("\n".join(lines[last:])) else None
        return header, counts[skip:], lambda i: not lines[i + skip].strip(" \t\r"), open_quote
    arr = np.frombuffer(block, dtype=np.uint8)
    ends = np.flatnonzero(arr == 10)
    if arr.size and arr[-1] != 10:
        ends = np.append(ends, arr.size)
    commas = np.flatnonzero(arr == 44)  # (their positions: a cumsum over every byte took 8 bytes a byte)
    starts = np.concatenate(([0], ends[:-1] + 1))
    counts = np.searchsorted(commas, ends) - np.searchsorted(commas, starts) + 1
    length = ends - starts - (arr[np.maximum(ends - 1, 0)] == 13) * (ends > starts)  # without a CR of CRLF
    counts[length == 0] = 0  # an empty line (the csv module's [] row)
    header = None
    if width is None:
        header = next(csvmod.reader([block[:ends[0]].decode("utf-8", errors="replace")]), []) if ends.size else []
    return header, counts[skip:], lambda i: not block[starts[i + skip]:ends[i + skip]].strip(b" \t\r"), None


def csv_block_shape(block: bytes, width: int | None) -> tuple[list[str] | None, int, tuple[int, int] | None]:
    """Shape of a block of whole CSV lines (a file, or one of the Dask engine's 64 MB blocks).

    pandas reads a data row longer than the header silently wrong (an unquoted "1,000" shifts or cuts
    it, a trailing comma's empty last field is dropped), so both CSV readers (this module's and the
    Dask engine's) refuse it (through :func:`csv_block_report`, which also finds short rows). Without a
    quote character or a lone CR in the block, fields are counted as commas per line by numpy (~10x
    faster than the csv module, which handles the other blocks; the two agree, a property test checks
    it); a CRLF line is counted without its CR.

    Parameters
    ----------
    block : bytes
        Whole lines of UTF-8 text (undecodable bytes are replaced).
    width : int >= 0 or None
        The header's field count; None: the block's first row is the header.

    Returns
    -------
    (header, rows, first_long)
        header : list of str, or None when ``width`` was given; rows : int, the number of data lines
        (an empty line counts as a row of no field, as the csv module reads it; a quoted field's line
        break starts a line of its own, so that line numbers follow the file); first_long : None, or
        (index among the block's data lines, field count) of the first row with more than ``width``
        fields.

    Raises
    ------
    TypeError
        ``block`` not bytes.
    ValueError
        ``width`` negative or not an integer.
    """
    header, counts, _, _ = _field_counts(block, width)
    width = len(header or []) if width is None else width
    bad = np.flatnonzero(counts > width)
    return header, int(counts.size), (int(bad[0]), int(counts[bad[0]])) if bad.size else None


# bytes of a CSV checked at a time (csv_block_report, file_problem): peak memory is a few times this, whatever
# the file's size (a cumsum over a whole 63 MB file took 1.1 GB; docs/cli.md §7)
CHUNK_BYTES = 8 << 20

_BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark: pandas drops it before the header, and so do the checks


def _whole_lines(chunks: Iterable[Any]) -> Iterator[tuple[bytes, bool]]:
    """(piece, is the last) of a CSV's bytes given in ``chunks`` cut anywhere: each piece ends after a line
    break (the last one may not), so no line is split; one empty piece for no bytes."""
    buf, ready = b"", None
    for c in chunks:
        buf += c
        cut = buf.rfind(b"\n") + 1
        if cut:
            if ready is not None:
                yield ready, False
            ready, buf = buf[:cut], buf[cut:]
    if buf:
        if ready is not None:
            yield ready, False
        ready = buf
    yield (ready if ready is not None else b""), True


def csv_block_report(block: bytes, width: int | None, *, chunk: int | None = None
                     ) -> tuple[list[str] | None, int, tuple[int, int] | None, int | None, int | None]:
    """What both CSV readers check in a block of whole lines (:func:`csv_problem` turns it into the message).

    Parameters
    ----------
    block, width
        As for :func:`csv_block_shape`.
    chunk : int >= 1 or None, default None (:data:`CHUNK_BYTES`, 8 MiB), keyword-only
        The block is read ``chunk`` bytes at a time (cut after a line break; a row whose quoted field is
        open at a cut is carried into the next piece), so the memory used is a few times ``chunk``; the
        report does not depend on it (a row longer than :data:`MAX_ROW_BYTES` holding a quoted line break is
        refused when it is carried, which depends on where the cuts fall; shorter rows are always read).

    Returns
    -------
    (header, rows, first_bad, first_undecodable, open_quote)
        header and rows as :func:`csv_block_shape` gives them (a leading UTF-8 byte order mark is not part
        of the header); first_bad : None, or (index among the block's data lines, field count) of the first
        row with more fields than ``width``, or fewer but at least one (a truncated row: pandas would read
        its missing fields as missing values); an empty or blank line (spaces, tabs) is skipped by pandas
        and is not one. first_undecodable : None, or the index among the block's data lines (-1: the header
        line) of the first line holding a byte that is not UTF-8. open_quote : None, or the index of the
        block's last row when a quoted field of it is still open at the block's end (pandas: "EOF inside
        string").

    Raises
    ------
    RowTooLong
        A row longer than :data:`MAX_ROW_BYTES` (32 MiB; its ``row``: index among the block's data lines, -1 the
        header): a quoted field left open early in a big file would otherwise be carried to the file's end.
    """
    if not isinstance(block, (bytes, bytearray, memoryview)):
        raise TypeError(f"block must be bytes, got {type(block).__name__}")
    chunk = CHUNK_BYTES if chunk is None else chunk
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise ValueError(f"chunk must be an integer >= 1, got {chunk!r}")
    view = memoryview(block).cast("B")
    return _report((view[i:i + chunk] for i in range(0, len(view), chunk)), width)


def _report(chunks: Iterable[Any], width: int | None) -> tuple[list[str] | None, int, tuple[int, int] | None,
                                                               int | None, int | None]:
    """:func:`csv_block_report` of the bytes given in ``chunks``, piece by piece (:func:`_whole_lines`)."""
    header, rows, first_bad, undecodable, newlines = None, 0, None, None, 0
    w, carry, open_quote = width, b"", None
    for k, (piece, last) in enumerate(_whole_lines(chunks)):
        if undecodable is None:  # (a line break ends every piece but the last: no character is cut)
            try:
                piece.decode("utf-8")
            except UnicodeDecodeError as exc:
                undecodable = newlines + piece.count(b"\n", 0, exc.start) - (1 if width is None else 0)
            newlines += piece.count(b"\n")
        if k == 0 and width is None and piece.startswith(_BOM):
            piece = piece[len(_BOM):]
        part = carry + piece
        try:
            h, counts, is_blank, open_quote = _field_counts(part, w)
        except RowTooLong as exc:  # (a field beyond the csv module's limit: its row's line in the block)
            if _found(header, first_bad, undecodable):  # (an earlier problem: the one csv_problem reports)
                open_quote = None
                break
            raise RowTooLong(rows + exc.row) from None
        carry = b""
        if open_quote is not None and not last:  # the open row goes on in the next piece: read it there
            at = open_quote + (1 if w is None else 0)  # its line in ``part``
            carry = ("\n".join(part.decode("utf-8", errors="replace").splitlines()[at:]) + "\n").encode()
            if len(carry) > MAX_ROW_BYTES:  # (a quote left open: the carried text would grow to the whole file)
                if _found(header, first_bad, undecodable):  # (an earlier problem: the one csv_problem reports)
                    open_quote = None
                    break
                raise RowTooLong(rows + open_quote)
            if at == 0 and w is None:
                continue  # the header row itself: not known yet
            counts = counts[:open_quote]
        if w is None:
            header, w = h, len(h or [])
        if first_bad is None:
            long = np.flatnonzero(counts > w)
            first = int(long[0]) if long.size else counts.size
            for i in np.flatnonzero((counts[:first] >= 1) & (counts[:first] < w)):  # short rows before it
                if not is_blank(int(i)):  # (a blank line is skipped by pandas: not a row)
                    first = int(i)
                    break
            first_bad = (rows + first, int(counts[first])) if first < counts.size else None
        if last and open_quote is not None:
            open_quote += rows
        rows += int(counts.size)
    return header, rows, first_bad, undecodable, open_quote


def _found(header: Sequence[str] | None, first_bad: Any, undecodable: int | None) -> bool:
    """Whether :func:`_report` has met a problem that :func:`csv_problem` reports before a row that comes later
    (a byte that is not UTF-8, a header problem, a row of another width): a later :class:`RowTooLong` then ends
    the report instead of being raised, so both readers name the same first problem."""
    return (undecodable is not None or first_bad is not None
            or (header is not None and bool(header_problem(header) or header_duplicate(header))))


def blank_line_between(block: bytes) -> int | None:
    """The 1-based line of the first empty or blank line (spaces, tabs) of a CSV file's text that has a row
    after it, or None: pandas skips such lines, which in a list of keys would hide an empty key; blank lines
    at the end of the file hold nothing and are accepted (docs/cli.md §7)."""
    _, counts, is_blank, _ = _field_counts(block, None)
    rows = np.flatnonzero(counts >= 0)  # (a quoted line break starts no row)
    blank = np.array([is_blank(int(i)) for i in rows], dtype=bool)
    if blank.all():
        return None
    inner = rows[blank & (rows < rows[~blank][-1])]
    return int(inner[0]) + 2 if inner.size else None


def long_row_message(path: str, line: int, fields: int, width: int) -> str:
    """The one message both CSV readers give for the first row whose field count is not the header's.

    ``line`` is the 1-based line of the file (the header is line 1), ``fields`` the row's field count,
    ``width`` the header's. A longer row and a shorter one get their own hint; no cell is quoted."""
    if fields > width:
        hint = "an unquoted comma such as 1,000, or a trailing comma?"
    else:
        hint = ("a truncated row, or a quote left open? give every row one field per header column, an empty "
                "cell for a missing value")
    return f"malformed CSV in {path}: line {line} has {fields} field{'' if fields == 1 else 's'}, the header {width} ({hint})"


def encoding_message(path: str, line: int | None) -> str:
    """The one message of every CSV reader for a file that is not UTF-8 text: the file, the line when known,
    what to do; never a byte of it (docs/cli.md §7)."""
    where = f"line {line} holds a byte that is not UTF-8" if line is not None else "it holds a byte that is not UTF-8"
    return (f"cannot read {path}: {where} (the file has another encoding, such as Latin-1 or UTF-16); save it "
            "as UTF-8 (e.g. iconv -f latin1 -t utf-8 FILE > NEW.csv, or 'CSV UTF-8' in a spreadsheet) and read "
            "that file")


def csv_problem(path: str, reports: Sequence[tuple]) -> str | None:
    """The first problem of a CSV file, from the :func:`csv_block_report` of its blocks in order, or None.

    The one check of both CSV readers (the single-process one's file is one block, the Dask engine's are
    64 MB blocks): a byte that is not UTF-8, then a header field without a name or a name given twice,
    then a row whose field count is not the header's; each message names the file and the line (the
    header is line 1), never a cell (docs/histogram_release.md §10, docs/cli.md §7)."""
    header = list(reports[0][0] or [])
    before = 0  # data lines of the earlier blocks
    for _, rows, _, undecodable, _ in reports:
        if undecodable is not None:
            return encoding_message(path, 2 + before + undecodable)
        before += rows
    open_quote = reports[-1][4]  # (the last block's only: a block boundary may cut a quoted line break)
    open_line = None if open_quote is None else 2 + before - reports[-1][1] + open_quote
    if open_line == 1:
        return open_quote_message(path, 1)
    problem = header_problem(header) or header_duplicate(header)
    if problem:
        return f"malformed CSV in {path}: {problem}"
    before = 0
    for _, rows, bad, _, _ in reports:
        if bad is not None and (open_line is None or 2 + before + bad[0] < open_line):
            return long_row_message(path, 2 + before + bad[0], bad[1], len(header))
        before += rows
    return None if open_line is None else open_quote_message(path, open_line)


def open_quote_message(path: str, line: int | None) -> str:
    """The message for a quoted field that the file never closes (``line``: where its row starts, if known)."""
    where = f"the quoted field of line {line}" if line is not None else "a quoted field"
    return (f"malformed CSV in {path}: {where} is not closed before the end of the file (a double quote \" left "
            "open): close it, or write a quote inside a quoted field as two quotes \"\"")


def file_problem(path: Any) -> str | None:
    """:func:`csv_problem` of the file ``path`` read whole (one block); None when it finds none, or ``path`` is
    not a file name (an open file) or cannot be read (the reader then reports that)."""
    if not isinstance(path, (str, bytes)) and not hasattr(path, "__fspath__"):
        return None
    try:
        with open(path, "rb") as f:
            report = _report(iter(lambda: f.read(CHUNK_BYTES), b""), None)
    except OSError:
        return None
    except RowTooLong as exc:
        return row_too_long_message(str(path), 2 + exc.row)
    return csv_problem(str(path), [report])


def check_field_counts(path: str, option: str = "csv") -> None:
    """Refuse a CSV file that :func:`csv_problem` finds a problem in (one ValueError naming ``option``).

    An unreadable file passes (the reader then reports it)."""
    problem = file_problem(path)
    if problem:
        raise ValueError(f"{option}: {problem}")


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

    Its text depends on the column names only, never on a cell: warnings are printed beside the release
    (``--json`` included), so a hint given only when some cell looks like 1,000 would publish one bit of
    that cell (docs/cli.md §7). The hint on thousands separators is therefore given for every skipped
    column.

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows (or a sample) the columns come from; not read (kept for the callers' signature).
    skipped : sequence of str
        Columns of ``frame`` that were skipped (:func:`check_text_columns`), at least one.

    Returns
    -------
    str
    """
    del frame  # (the text must not depend on it)
    names = [repr(str(c)) for c in skipped]
    others = f" (or {', '.join(names[1:])} {'does' if len(names) == 2 else 'do'})" if len(names) > 1 else ""
    return (f"column(s) {', '.join(names)} skipped: not numeric (if {names[0]} holds numbers with thousands "
            f"separators such as 1,000{others}, they are read as text: remove the separators; choose columns "
            "with --columns)")


def parser_message(path: Any, exc: Exception) -> str:
    """A pandas ParserError as one line naming the file and, when pandas gives it, the line; pandas' own text
    ("Error tokenizing data. C error: ...") is not passed on: it may quote a cell and it names pandas'
    internals, not what to do."""
    import re

    text = str(exc)
    m = re.search(r"Expected (\d+) fields? in line (\d+), saw (\d+)", text)
    if m:
        return long_row_message(str(path), int(m.group(2)), int(m.group(3)), int(m.group(1)))
    if "EOF inside string" in text:
        return open_quote_message(str(path), None)
    return (f"malformed CSV in {path}: its rows cannot be split into fields (check the quotes and that every row "
            "has one field per header column)")


def read_failure(path: Any, exc: BaseException, option: str = "csv") -> ValueError:
    """A failure of pandas.read_csv on a user's file as one ValueError naming ``option``, the file and what to
    do; no pandas or decoder text in it (:func:`parser_message`, :func:`encoding_message`). Shared by every
    reader of a user's CSV (``read_user_csv``, the histogram's key and data files)."""
    import pandas as pd

    if isinstance(exc, FileNotFoundError):
        return ValueError(f"{option}: file not found: {path}")
    if isinstance(exc, IsADirectoryError):
        return ValueError(f"{option}: is a directory, not a CSV file: {path}")
    if isinstance(exc, pd.errors.EmptyDataError):
        return ValueError(f"{option}: empty file (no header row): {path}")
    if isinstance(exc, pd.errors.ParserError):  # the check's own message where it finds the fault (with its line)
        return ValueError(f"{option}: {file_problem(path) or parser_message(path, exc)}")
    if isinstance(exc, UnicodeDecodeError):
        return ValueError(f"{option}: {file_problem(path) or encoding_message(str(path), None)}")
    if isinstance(exc, OSError):
        return ValueError(f"{option}: cannot read {path}: {exc.strerror or type(exc).__name__}")
    raise TypeError(f"not a read failure: {type(exc).__name__}")


def read_user_csv(path: Any, *, option: str = "csv", **kwargs):
    """pandas.read_csv with its failures turned into one-line ValueErrors naming ``option`` (:func:`read_failure`)."""
    import pandas as pd

    import warnings

    try:
        with warnings.catch_warnings():
            # index_col=False: a first data row with more fields than the header is not taken as
            # an index (which would shift every column); pandas warns instead, made an error here
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(path, index_col=False, **kwargs)
    except pd.errors.ParserWarning:
        raise ValueError(f"{option}: malformed CSV in {path}: a data row has more fields than the header "
                         "(an unquoted comma, or a trailing comma on each line?)") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as exc:
        raise read_failure(path, exc, option) from None
