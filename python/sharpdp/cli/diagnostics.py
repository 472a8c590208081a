"""``--diagnostics FILE`` of ``sharpdp mean`` and ``sharpdp histogram``: the one file that may hold TRUE values.

The file's format follows its suffix (:data:`FORMATS`: ``.csv`` or ``.json``; any other suffix is refused, naming
``--diagnostics``); an existing file is not replaced unless ``--overwrite`` is given (the convention of the data
generator's ``--overwrite``). Both are checked before any work is done, with the checks of
:func:`sharpdp.cli.check_diagnostics_path` (not an input or a release file, a writable directory; a missing
directory is created with its missing parents when the file is written, as ``--out`` is). The file is
written whole or not at all, readable by its owner only (mode 0600), and says in its own content that it holds
true values: the JSON object's first key, ``"diagnostics"``, says "TRUE values, not private: do not publish"
(:data:`JSON_TITLE`), and the CSV's first column, :data:`CSV_COLUMN` (``DO_NOT_PUBLISH``), says the same on every
row (:data:`CSV_VALUE`; a column, not a comment line: every CSV reader parses it with its defaults; docs/cli.md §9.2),
beside the columns named ``true_...``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence

from sharpdp.cli import UNITS, CliError, check_diagnostics_path, make_out_dir, open_private, release_file

#: Suffix of ``--diagnostics FILE`` -> format written.
FORMATS = {".csv": "csv", ".json": "json"}

#: The JSON file's first entry (its ``"diagnostics"`` key).
JSON_TITLE = "TRUE values, not private: do not publish (sharpdp --diagnostics)"

#: The CSV file's first column; its value on every row is :data:`CSV_VALUE` (so a CSV opened alone, or a row
#: copied out of it, still says what it holds).
CSV_COLUMN = "DO_NOT_PUBLISH"
#: The value of :data:`CSV_COLUMN` on every row: :data:`JSON_TITLE`'s words with no comma and no quote, so that even
#: a reader that splits lines at commas (``numpy.genfromtxt``) reads the file's columns as they are.
CSV_VALUE = "TRUE values (not private): do not publish (sharpdp --diagnostics)"


def diagnostics_format(path: str) -> str:
    """``"csv"`` or ``"json"``, from the suffix of ``path`` (case-insensitive).

    Raises
    ------
    CliError
        One line naming ``--diagnostics`` for another suffix or none.
    """
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in FORMATS:
        shown = f"the suffix {suffix!r}" if suffix else "no suffix"
        raise CliError(f"--diagnostics: {path} has {shown}; the format follows the suffix: name a .csv or a .json "
                       "file")
    return FORMATS[suffix]


def check_diagnostics(path: str | None, inputs: Sequence[str | None], outputs: Sequence[str] = (),
                      overwrite: bool = False, extra: Sequence[str] = ()) -> None:
    """Refuse, before any work, a ``--diagnostics FILE`` that cannot be written as asked.

    Parameters
    ----------
    path : str or None
        The ``--diagnostics`` value (None: nothing to check).
    inputs, outputs : sequence of str
        The input files (data, key files) and the release files, which FILE must not be.
    overwrite : bool
        ``--overwrite`` given: an existing FILE (and ``extra`` files) may be replaced.
    extra : sequence of str
        Files written along with FILE (the histogram's ``.png``), checked the same way.

    Raises
    ------
    CliError
        One line naming ``--diagnostics``: an unsupported suffix, an existing file without ``--overwrite``, or
        a path refused by :func:`sharpdp.cli.check_diagnostics_path`.
    """
    if path is None:
        return
    check_diagnostics_path(path, inputs, outputs)
    diagnostics_format(path)
    for p in (path, *extra):
        if p != path:
            check_diagnostics_path(p, inputs, outputs)
        if os.path.exists(p) and not overwrite:
            raise CliError(f"--diagnostics: {p} exists; pass --overwrite to replace it (or name another file)")


def write_diagnostics(path: str, columns: dict[str, Sequence[Any]], meta: dict[str, Any]) -> str:
    """Write the diagnostics table to ``path`` in the format of its suffix, whole or not at all, mode 0600.

    Parameters
    ----------
    path : str
        The ``--diagnostics`` file (``.csv`` or ``.json``).
    columns : dict of str to sequence
        The table, column name -> values (one entry per row; equal lengths). The CSV has these columns after its
        first, :data:`CSV_COLUMN`; the JSON object has them under ``"rows"``, one object per row.
    meta : dict
        Entries of the JSON object after ``"diagnostics"``, followed by ``epsilon_unit`` and ``delta_unit``
        (:data:`sharpdp.cli.UNITS`; the CSV holds the table only).

    Returns
    -------
    str
        The format written: ``"csv"`` or ``"json"``.

    Raises
    ------
    ValueError
        Naming ``columns``: a column named :data:`CSV_COLUMN` (the file's own first column: two columns of one
        name, the second of which a reader would take for the warning); naming ``meta``: a key the JSON object
        writes itself (``"diagnostics"``, ``"rows"``, the units' keys). Nothing is written then.
    """
    import csv

    clash = sorted(set(own_names("columns")) & set(map(str, columns)))
    if clash:
        raise ValueError(f"columns: {', '.join(map(repr, clash))} is the diagnostics file's own column (its first, "
                         "saying on every row that the file is not to be published); rename that column")
    clash = sorted(set(own_names("meta")) & set(map(str, meta)))
    if clash:
        raise ValueError(f"meta: {', '.join(map(repr, clash))} is a key the diagnostics JSON writes itself; "
                         "rename that entry")
    fmt = diagnostics_format(path)
    make_out_dir(os.path.dirname(path) or os.curdir, "--diagnostics")  # (missing directories: created, as --out)
    names = list(columns)
    rows = [dict(zip(names, values)) for values in zip(*(columns[k] for k in names))]
    with release_file(path) as tmp, open_private(tmp) as f:  # true values (and the seed): owner only
        if fmt == "json":
            # (with the units of its epsilon and delta, as the commands' --json: docs/cli.md §1)
            json.dump({"diagnostics": JSON_TITLE, **meta, **UNITS, "rows": rows}, f, indent=2, default=_plain)
            f.write("\n")
        else:
            w = csv.writer(f)
            w.writerow([CSV_COLUMN, *names])
            for r in rows:  # floats to the last digit (repr), numpy scalars as Python ones
                w.writerow([CSV_VALUE, *(repr(float(v)) if isinstance(v, float) else _plain(v) if hasattr(v, "item")
                                          else v for v in r.values())])
    return fmt


def own_names(part: str = "columns") -> tuple[str, ...]:
    """The names :func:`write_diagnostics` writes itself, which a caller's table (``part="columns"``: the CSV's
    first column, :data:`CSV_COLUMN`) or its JSON entries (``part="meta"``: ``"diagnostics"``, ``"rows"`` and the
    units' keys) must not use.

    Parameters
    ----------
    part : {"columns", "meta"}
        Which argument of :func:`write_diagnostics` the names would clash in.

    Returns
    -------
    tuple of str
    """
    if part == "columns":
        return (CSV_COLUMN,)
    if part == "meta":
        return ("diagnostics", "rows", *UNITS)
    raise ValueError(f"part must be 'columns' or 'meta', got {part!r}")


def _plain(obj: Any) -> Any:
    """A numpy scalar or array as the Python value or list ``json`` writes."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")
