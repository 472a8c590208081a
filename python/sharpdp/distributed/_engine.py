"""Dask plumbing shared by the distributed releases: input resolution, clusters, running tasks.

Everything that touches Dask's scheduler lives here; the releases only build per-partition
tasks (plain functions of a pandas partition) and reduce their small results on the driver.
"""

from __future__ import annotations

import contextlib
import glob
import os
import signal
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

_PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")

#: Bytes of a CSV file per partition (``dask.dataframe.read_csv``'s blocksize) and per block of the input check;
#: blocks are cut at line ends (docs/distributed.md §5). Tests set a few bytes.
CSV_BLOCKSIZE: int | str = "64MB"


def _dd():
    try:
        import dask.dataframe as dd
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise ImportError('sharpdp.distributed needs the [dask] extra: pip install "sharpdp[dask]" '
                          '(or pip install ".[dask]" from a clone of the repository)') from exc
    return dd


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def open_table(data: Any, columns: Sequence[str], *, text: bool = False):
    """A Dask DataFrame of ``columns`` from a Dask DataFrame or a path.

    Parameters
    ----------
    data : dask.dataframe.DataFrame or str or os.PathLike
        A Dask DataFrame, or a path: a Parquet file or a directory of Parquet files, or a
        CSV file or glob (``*.csv``; files in sorted order, each with a header row). The rows'
        global order is the order of the partitions, then of the rows inside each.
    columns : sequence of str
        Columns to read (at least one, no duplicates).
    text : bool, default False
        Read CSV columns as text (only an empty cell is missing); used for group keys.

    Returns
    -------
    (dask.dataframe.DataFrame, str)
        The table restricted to ``columns`` and a description of its source.

    Raises
    ------
    ValueError
        Naming ``data`` if the path does not exist, matches no file or cannot be read;
        naming ``columns`` if a column is absent.
    TypeError
        If ``data`` is neither a Dask DataFrame nor a path.
    """
    dd = _dd()
    columns = list(columns)
    if isinstance(data, dd.DataFrame):
        frame, source = data, "dask DataFrame"
    elif isinstance(data, (str, os.PathLike)):
        frame, source = _read_path(os.fspath(data), columns, text)
    else:
        raise TypeError(f"data must be a dask DataFrame or a path, got {type(data).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        shown = ", ".join(map(str, list(frame.columns)[:12]))
        raise ValueError(f"columns: no column {missing[0]!r} in {source} (available: {shown})")
    return frame[columns], source


def _read_path(path: str, columns: list[str], text: bool):
    dd = _dd()
    is_glob = any(ch in path for ch in "*?[")
    if not is_glob and not os.path.exists(path):
        raise ValueError(f"data: file not found: {path}")
    if is_glob:
        matches = sorted(glob.glob(path))
        if not matches:
            raise ValueError(f"data: no file matches {path}")
        parquet = all(m.endswith(_PARQUET_SUFFIXES) for m in matches)
    elif os.path.isdir(path):
        parquet = _directory_is_parquet(path)
        if not parquet:
            path = os.path.join(path, "*.csv")
    else:
        parquet = not path.endswith((".csv", ".csv.gz", ".txt"))
    blocksize = None if parquet else _csv_blocksize(path)
    try:
        if parquet:
            frame = dd.read_parquet(path)
        else:
            kwargs: dict[str, Any] = {"blocksize": blocksize}
            if text:
                kwargs.update(dtype=str, keep_default_na=False, na_values=[""])
            frame = dd.read_csv(_files_with_rows(path), **kwargs)
    except Exception as exc:  # OSError, ValueError, pyarrow's ArrowInvalid and friends
        kind = "Parquet" if parquet else "CSV"
        raise ValueError(f"data: cannot read {path} as {kind}: {_one_line(exc)}") from None
    if not parquet and not text and columns:
        # Read the chosen columns as float64 (a non-numeric cell then fails loudly), but first
        # reject columns that the header sample already shows to be text.
        check_numeric(frame, columns, path, csv=True)
        present = [c for c in columns if c in frame.columns]
        frame = dd.read_csv(_files_with_rows(path), blocksize=blocksize, usecols=present,
                            dtype={c: "float64" for c in present})
    return frame, path


def _directory_is_parquet(path: str) -> bool:
    """Whether the directory ``path`` is read as Parquet (else as its ``*.csv`` files).

    Its entries (names starting with '.' or '_' ignored, as Parquet writers' metadata) are all CSV files (``.csv``)
    or none is: a directory mixing CSV files with Parquet files or with other files is refused, naming them, since
    reading one kind would drop the other's rows without a word (the Parquet reader skips CSV files)."""
    entries = sorted(e for e in os.listdir(path) if not e.startswith((".", "_")))
    if not entries:
        raise ValueError(f"data: empty directory: {path}")
    csv = [e for e in entries if e.endswith(".csv")]
    if not csv:
        return True
    other = [e for e in entries if not e.endswith(".csv")]
    if other:
        kind = "Parquet files" if any(e.endswith(_PARQUET_SUFFIXES) for e in other) else "files that are not CSV"
        raise ValueError(f"data: directory {path} mixes CSV files ({_names(csv)}) with {kind} ({_names(other)}): "
                         f"give a glob to choose, e.g. {os.path.join(path, '*.csv')}")
    return False


def _names(files: list[str], shown: int = 3) -> str:
    more = f", ... ({len(files)} in all)" if len(files) > shown else ""
    return ", ".join(files[:shown]) + more


def _is_csv_path(path: str) -> bool:
    """Whether ``path`` (a file, a glob or a directory) is read by :func:`open_table` as CSV."""
    if any(ch in path for ch in "*?["):
        return not all(m.endswith(_PARQUET_SUFFIXES) for m in glob.glob(path))
    if os.path.isdir(path):
        return not _directory_is_parquet(path)
    return path.endswith((".csv", ".csv.gz", ".txt"))


# rows of the first partition sampled to find text columns when no column is chosen
_SAMPLE_ROWS = 100_000

# files already checked by check_csv_files in this process: (path, size, mtime_ns) -> (the file's header, whether
# a block cut of CSV_BLOCKSIZE falls inside a quoted field, so the file is read whole, whether it has a data line)
_CHECKED: dict[tuple[str, int, int], tuple[list[str], bool, bool]] = {}


def _files_with_rows(path: str) -> str | list[str]:
    """The CSV file or glob ``path`` as ``dd.read_csv`` should read it (after :func:`check_csv_files`): a glob
    whose files include header-only ones becomes the list of its files with data rows, as dd.read_csv infers the
    columns' dtypes from the first file's first block (a header-only first file typed every column as text)."""
    if not any(ch in path for ch in "*?["):
        return path
    files = sorted(glob.glob(path))
    rows = []
    for f in files:
        st = os.stat(f)
        checked = _CHECKED.get((os.path.abspath(f), st.st_size, st.st_mtime_ns))
        if checked is None or checked[2]:  # (unchecked: keep it; the check refuses what it must)
            rows.append(f)
    return path if len(rows) == len(files) or not rows else rows


def _csv_blocksize(path: str) -> int | str | None:
    """:func:`check_csv_files` of the CSV file or glob ``path`` (checked once per process): its blocksize."""
    return check_csv_files(sorted(glob.glob(path)) if any(ch in path for ch in "*?[") else [path])


def check_csv_files(paths: Sequence[str]) -> int | str | None:
    """ValueError naming ``data`` for a CSV file that the single-process reader (``sharpdp.apps.datasets``)
    refuses: a byte that is not UTF-8, a header field without a name or a name given twice, a data row
    with more or fewer fields than the header (:func:`sharpdp.apps.csv_checks.csv_problem`, the same check
    and message, with the file line), made here over 64 MB blocks in parallel (Dask's threaded scheduler).
    pandas would read such a row silently wrong (an unquoted 1,000 becomes 1, a truncated row's missing
    fields become missing values), so the Dask engine must refuse the files the single-process path
    refuses. Each file is checked once per process (size and mtime). Every file of a glob must have the first
    file's header, names and order: dd.read_csv reads the later files by position, so a file with its columns
    in another order would be read silently wrong (docs/cli.md §7).

    Returns the blocksize at which ``dask.dataframe.read_csv`` reads the files the same as pandas reads each
    file whole: :data:`CSV_BLOCKSIZE`, or None (one partition per file) when a block cut of some file falls
    inside a quoted field (a quoted line break), which would split a row between two partitions
    (docs/distributed.md §5). Such a file is then checked by the single-process reader's own check (one pass
    over the file, :func:`sharpdp.apps.csv_checks.file_problem`), as its later blocks do not start at a row."""
    import csv as csvmod

    import dask
    from dask.bytes import read_bytes

    from sharpdp.apps.csv_checks import RowTooLong, csv_block_report, csv_problem, file_problem, row_too_long_message

    first: tuple[str, list[str]] | None = None  # the first file and its header
    whole = False  # some file is read as one partition
    data = False  # some file has a data line
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue  # the reader reports it
        key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
        if st.st_size == 0:  # (the single-process reader's message; pandas' own named its backend)
            raise ValueError(f"data: empty file (no header row): {path}")
        if key in _CHECKED:
            first = _same_header(first, path, _CHECKED[key][0])
            whole, data = whole or _CHECKED[key][1], data or _CHECKED[key][2]
            continue
        cut_in_quote = False
        try:
            packed = path.endswith(".gz")  # a compressed file is one block (not splittable)
            _, (blocks,) = read_bytes(path, delimiter=b"\n", blocksize=None if packed else CSV_BLOCKSIZE, sample=False,
                                      compression="infer" if packed else None)
            try:
                reports = [dask.compute(dask.delayed(csv_block_report)(blocks[0], None))[0]]
            except RowTooLong as exc:  # (the first block starts the file: its lines are the file's)
                raise ValueError(f"data: {row_too_long_message(path, 2 + exc.row)}") from None
            # (a block cut inside a quoted field leaves it open at the block's end: the first such block starts
            # at a row, so its report says so; RowTooLong in a later block may come from a block cut the same way)
            cut_in_quote = len(blocks) > 1 and reports[0][4] is not None
            problem = None if cut_in_quote else csv_problem(path, reports)
            if problem is None and not cut_in_quote and len(blocks) > 1:
                width = len(reports[0][0] or [])
                try:
                    reports += dask.compute(*[dask.delayed(csv_block_report)(b, width) for b in blocks[1:]])
                    cut_in_quote = any(r[4] is not None for r in reports[:-1])
                except RowTooLong:
                    cut_in_quote = True
                problem = None if cut_in_quote else csv_problem(path, reports)
            if cut_in_quote:  # the single-process check over the whole file: the local engine's message
                problem = file_problem(path)
                with open(path, encoding="utf-8-sig", newline="") as f:  # (the header; BOM dropped, as pandas does)
                    reports = [(next(csvmod.reader(f), []),)]
        except OSError as exc:
            raise ValueError(f"data: cannot read {path} as CSV: {exc.strerror or type(exc).__name__}") from None
        if problem is not None:
            raise ValueError(f"data: {problem}")
        header = list(reports[0][0] or [])
        first = _same_header(first, path, header)
        rows = cut_in_quote or sum(r[1] for r in reports) > 0  # (a cut inside a quoted field: a row is there)
        _CHECKED[key] = (header, cut_in_quote, rows)
        whole, data = whole or cut_in_quote, data or rows
    if paths and first is not None and not data:  # (the single-process reader's message)
        more = f" and the other {len(paths) - 1} files" if len(paths) > 1 else ""
        raise ValueError(f"data: no data rows in {paths[0]}{more} (empty data)")
    return None if whole else CSV_BLOCKSIZE


def _same_header(first: tuple[str, list[str]] | None, path: str, header: list[str]) -> tuple[str, list[str]]:
    """The first file of a glob and its header; ValueError naming ``data`` if ``header`` (of the file ``path``)
    is not the first file's (no cell is shown: a header holds column names only)."""
    if first is None:
        return path, header
    if header != first[1]:
        how = "the same names in another order" if sorted(header) == sorted(first[1]) else "other names"
        raise ValueError(f"data: the header of {path} differs from the first file's ({first[0]}): {how}; "
                         "every CSV file of --data must have the first file's header, names and order (the "
                         "files are read by position)")
    return first


def non_numeric_error(exc: BaseException, columns: Sequence[str], source: str, data: Any = None) -> BaseException:
    """A ValueError for a parser's "could not convert" failure on ``columns``, else ``exc``.

    The parser's own text quotes the value and is not used (docs/histogram_release.md §10). When ``data``
    is a path (CSV or Parquet) the table was read from, one more pass reads ``columns`` as text and counts their
    non-numeric values: the message is then the single-process reader's (``columns: column 'b' is not
    numeric: 2 of its 3 rows hold a value that is not a number ...``,
    :func:`sharpdp.apps.datasets.non_numeric_message`); else it names the columns only.
    """
    text = _one_line(exc)
    if not (isinstance(exc, ValueError) and ("could not convert" in text or "Unable to parse" in text)):
        return exc
    from sharpdp.apps.datasets import non_numeric_message

    if isinstance(data, (str, os.PathLike)):
        try:
            rows, bad = _count_non_numeric(source, list(columns))
        except Exception:  # pragma: no cover - the count is a courtesy; the error below still names the columns
            rows, bad = 0, {}
        for c in columns:
            if bad.get(c):
                return ValueError(non_numeric_message("columns", c, bad[c], rows))
    return ValueError(f"columns: a value in {', '.join(columns)} of {source} is not a number (not shown; fix the "
                      "file)")


def _count_non_numeric(path: str, columns: list[str]) -> tuple[int, dict[str, int]]:
    """Rows of the table at ``path`` (a CSV file or glob, or Parquet, as :func:`open_table` reads it) and, per column
    of ``columns``, how many of its values are not numbers (CSV: read as text with pandas' usual missing values, as
    the numeric read treats them; Parquet: each file's values as stored)."""
    import dask

    from sharpdp.apps.datasets import count_non_numeric

    if _is_csv_path(path):
        frame = _dd().read_csv(_files_with_rows(path), blocksize=_csv_blocksize(path), usecols=columns,
                               dtype={c: object for c in columns})
        parts = frame.to_delayed()
    else:  # one task per file: a file whose column holds text has its own schema
        files = sorted(glob.glob(os.path.join(path, "**", "*"), recursive=True)) if os.path.isdir(path) else [path]
        parts = [dask.delayed(_read_parquet_columns)(f, columns) for f in files if os.path.isfile(f)
                 and not os.path.basename(f).startswith((".", "_"))]

    def count(part) -> tuple[int, dict[str, int]]:
        return len(part), {c: count_non_numeric(part[c].astype(object)) for c in columns}

    results = dask.compute(*[dask.delayed(count)(p) for p in parts])
    return (sum(r[0] for r in results), {c: sum(r[1][c] for r in results) for c in columns})


def _read_parquet_columns(path: str, columns: list[str]):
    import pandas as pd

    return pd.read_parquet(path, columns=columns)


def check_numeric(frame, columns: Sequence[str], source: str, *, csv: bool = False) -> None:
    """Raise ValueError naming ``columns`` if a column's declared dtype is not numeric.

    With ``csv`` (``source`` is the CSV file or glob ``frame`` was read from) the column's non-numeric
    values are counted in one more pass and the message is the single-process reader's
    (:func:`sharpdp.apps.datasets.non_numeric_message`); never a value (docs/histogram_release.md §10).
    """
    import pandas as pd

    for c in columns:
        if c in frame.columns and not pd.api.types.is_numeric_dtype(frame.dtypes[c]):
            if csv:
                from sharpdp.apps.datasets import non_numeric_message

                rows, bad = _count_non_numeric(source, [c])
                if bad[c]:
                    raise ValueError(non_numeric_message("columns", c, bad[c], rows))
            raise ValueError(f"columns: column {c!r} of {source} is not numeric (dtype {frame.dtypes[c]})")


def numeric_columns(data: Any) -> tuple[list[str], list[str]]:
    """Names of the numeric columns of a table (Dask DataFrame or path), in order, and warnings.

    The non-numeric columns are skipped with a warning naming them (as the single-process reader of
    ``sharpdp.apps.datasets`` does); one that is mostly numeric in the first partition (a stray text
    value) is refused.

    Raises
    ------
    ValueError
        Naming ``data`` as :func:`open_table` does, naming ``csv`` for a mostly numeric column holding
        text, or naming ``columns`` if none is numeric.
    """
    import pandas as pd

    from sharpdp.apps.datasets import check_text_columns, skipped_columns_warning

    dd = _dd()
    if isinstance(data, dd.DataFrame):
        full, source = data, "dask DataFrame"
    elif isinstance(data, (str, os.PathLike)):
        full, source = _read_path(os.fspath(data), [], False)
    else:
        raise TypeError(f"data must be a dask DataFrame or a path, got {type(data).__name__}")
    cols = [str(c) for c in full.columns if pd.api.types.is_numeric_dtype(full.dtypes[c])]
    others = [c for c in full.columns if str(c) not in cols]
    notes = []
    if others:
        sample = full[others].head(_SAMPLE_ROWS, npartitions=1)
        skipped = check_text_columns(sample, source, "data", sampled=len(sample) >= _SAMPLE_ROWS)
        if cols:
            notes.append(skipped_columns_warning(sample, skipped))
    if not cols:
        raise ValueError(f"columns: no numeric column in {source}; choose columns with --columns")
    return cols, notes


@dataclass
class Engine:
    """Where the tasks run: a distributed Client, or Dask's local threaded scheduler (client None)."""

    client: Any = None

    @property
    def workers(self) -> int | None:
        """Number of workers of the cluster (None for the local threaded scheduler)."""
        if self.client is None:
            return None
        try:
            info = self.client.scheduler_info(n_workers=-1)  # newer Dask lists only a few by default
        except TypeError:  # pragma: no cover - older Dask
            info = self.client.scheduler_info()
        return len(info["workers"])

    @property
    def name(self) -> str:
        return "dask" if self.client is not None else "dask (local threads)"

    def compute(self, tasks: list, what: str, progress: bool = False) -> list:
        """Run delayed ``tasks`` (one per partition) and return their results in order.

        With ``progress``, a bar on stderr (:func:`sharpdp._progress.progress_bar`, shown at once)
        counts the tasks finished out of ``len(tasks)``, on a cluster and on the local threaded
        scheduler. On a cluster a pass's first task carries the workers' start-up (imports, the
        first reads: seconds, where a partition may take a fraction of one), so a bar labelled
        ``"<what>: workers starting (first partition)"`` runs until it finishes, and the pass's
        bar opens then at 1 done: its rate and time left count the partitions after the start-up
        only (a first estimate from the start-up's time was ~8x too long).
        A worker that dies, a lost connection or a cancelled task aborts the whole job with
        one ValueError (no partial result); exceptions raised by a task are re-raised as is.
        """
        from sharpdp._progress import progress_bar

        if self.client is None:
            import dask

            with progress_bar(total=len(tasks), desc=what, unit=" partitions", leave=False,
                              disable=not progress) as bar, _task_counter({t.key for t in tasks}, bar):
                return list(dask.compute(*tasks, scheduler="threads"))
        from distributed import as_completed

        futures = self.client.compute(tasks)
        try:
            done = as_completed(futures, loop=self.client.loop)
            with progress_bar(total=None, desc=f"{what}: workers starting (first partition)",
                              bar_format="{desc}: {elapsed}", leave=False, disable=not progress or not tasks):
                next(done, None)
            with progress_bar(total=len(tasks), initial=min(1, len(tasks)), desc=what, unit=" partitions",
                              leave=False, disable=not progress) as bar:
                bar.n = min(1, len(tasks))  # (tqdm starts at initial; the plain bar takes no initial)
                for _ in done:
                    bar.update(1)
            return self.client.gather(futures)
        except BaseException as exc:
            self.client.cancel(futures)
            raise translate_error(exc, what) from None


def _task_counter(keys: set, bar):
    """A dask local-scheduler callback that advances ``bar`` when a task whose key is in ``keys``
    finishes (the per-partition tasks; the reading tasks before them are not counted)."""
    from dask.callbacks import Callback

    class Counter(Callback):
        def _posttask(self, key, result, dsk, state, worker_id):
            if key in keys:
                bar.update(1)

    return Counter()


def translate_error(exc: BaseException, what: str) -> BaseException:
    """Map Dask's failure modes to one-line ValueErrors; leave task errors (ValueError...) as is."""
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    if isinstance(exc, KilledWorker):
        return ValueError(f"{what}: a Dask worker died while running a task ({_one_line(exc)}); "
                          "the job was aborted and no result was produced")
    if isinstance(exc, (CommClosedError, FutureCancelledError)):
        return ValueError(f"{what}: lost the Dask cluster ({_one_line(exc)}); the job was aborted "
                          "and no result was produced")
    if isinstance(exc, (ValueError, TypeError, KeyboardInterrupt)):
        return exc
    if isinstance(exc, (OSError, TimeoutError)):
        return ValueError(f"{what}: Dask cluster failure ({_one_line(exc)}); the job was aborted and no "
                          "result was produced")
    return exc


@contextlib.contextmanager
def sigint_held(on_interrupt: Callable[[], None] | None = None) -> Iterator[None]:
    """SIGINT blocked in the calling (main) thread while the body runs, then delivered if it came.

    A local cluster started in the body creates its event-loop thread, its process-watching threads and, from
    them, its worker processes; each inherits the signal mask of the thread that created it, so the worker
    processes keep SIGINT blocked for their whole life. A Ctrl-C in a terminal goes to the whole process group:
    without this, each worker process raised its own KeyboardInterrupt and printed a traceback on the terminal,
    and its nanny then waited for it. The cluster's owner (this process) still gets the interrupt: pending while
    blocked, raised as KeyboardInterrupt when the body ends (the cluster then closes its workers itself).
    ``on_interrupt`` (called once, from a helper thread) says that a Ctrl-C came during the body. Outside the
    main thread, or without ``pthread_sigmask`` (Windows), the body runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    from multiprocessing import resource_tracker

    # the spawned processes' resource tracker, started first: starting it unblocks SIGINT in the thread that does
    # it (which then spawned the workers unblocked)
    resource_tracker.ensure_running()
    import select
    import socket

    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    # a thread started earlier (a progress ticker) may take the signal instead (then Python's handler records it
    # for the main thread, which sees it when the body ends): its number arrives on the wakeup fd
    r, w = socket.socketpair()
    r.setblocking(False)
    w.setblocking(False)
    old_fd = signal.set_wakeup_fd(w.fileno(), warn_on_full_buffer=False)
    done = threading.Event()

    def watch() -> None:  # (created while SIGINT is blocked: it keeps it blocked too)
        while not done.is_set():
            ready = select.select([r], [], [], 0.1)[0]
            came = bool(ready) and signal.SIGINT in r.recv(64)
            if came or signal.SIGINT in signal.sigpending():
                if on_interrupt is not None:
                    on_interrupt()
                return

    watcher = threading.Thread(target=watch, name="sharpdp-sigint-watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
        signal.set_wakeup_fd(old_fd)
        r.close()
        w.close()
        signal.pthread_sigmask(signal.SIG_SETMASK, old)  # a pending SIGINT is raised here


@contextlib.contextmanager
def cluster(workers: int | None = None, scheduler: str | None = None, *, processes: bool = True,
            timeout: float | str | None = None,
            on_start_interrupt: Callable[[], None] | None = None) -> Iterator[Engine]:
    """Context manager yielding an :class:`Engine` on a new LocalCluster or an existing scheduler.

    Parameters
    ----------
    workers : int or None
        Workers of a new ``LocalCluster`` (one thread each; default: the machine's cores).
        Must be None when ``scheduler`` is given.
    scheduler : str or None
        Address of a running Dask scheduler to join (e.g. ``tcp://host:8786``).
    processes : bool, default True
        Worker processes (True) or threads in this process (False; for tests).
    timeout : float or str or None
        Connection timeout (default: Dask's ``distributed.comm.timeouts.connect``).
    on_start_interrupt : callable or None
        A new local cluster starts with SIGINT held (:func:`sigint_held`: its worker processes never see a
        terminal's Ctrl-C, which would print their tracebacks); a Ctrl-C during the start calls this at once
        (e.g. to say that the interrupt waits for the start) and is raised as KeyboardInterrupt when the start
        ends, after which the cluster is closed.

    Raises
    ------
    ValueError
        If ``workers`` < 1, both ``workers`` and ``scheduler`` are given, or the scheduler
        cannot be reached within the timeout.
    """
    import logging

    from distributed import Client, LocalCluster

    if workers is not None and scheduler is not None:
        raise ValueError("workers: give either workers (a new local cluster) or scheduler, not both")
    if scheduler is not None:
        try:
            kwargs = {} if timeout is None else {"timeout": timeout}
            client = Client(scheduler, set_as_default=False, **kwargs)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            raise ValueError(f"scheduler: cannot connect to {scheduler}: {_one_line(exc)}") from None
        try:
            yield Engine(client)
        finally:
            client.close()
        return
    n = (os.cpu_count() or 1) if workers is None else int(workers)
    if n < 1:
        raise ValueError(f"workers must be >= 1, got {n}")
    # A Ctrl-C while the cluster closes is held until it has closed: Dask's close interrupted half-way stays
    # "closing", and its exit hook then waited 10 s (its timeout) for it, in silence, before the process ended.
    closing, held = contextlib.ExitStack(), []  # (closing is left after the cluster's own exit stack)

    def hold_while_closing() -> None:
        if not held:  # (once)
            held.append(closing.enter_context(sigint_held()))

    with closing, contextlib.ExitStack() as stack:
        try:
            try:
                # workers' own log lines silenced: their failures reach the caller as one-line errors (and
                # after Ctrl-C they were tracebacks of heartbeats to the closed scheduler)
                with sigint_held(on_start_interrupt):  # (a Ctrl-C is raised at its end, the cluster registered)
                    local = stack.enter_context(LocalCluster(n_workers=n, threads_per_worker=1,
                                                             processes=processes, dashboard_address=":0",
                                                             silence_logs=logging.CRITICAL))
            except (RuntimeError, OSError, TimeoutError) as exc:
                # the usual cause in a script: worker processes are spawned and re-import the main module
                guard = ("; in a script, start the cluster under `if __name__ == \"__main__\":` (the worker "
                         "processes import the script again)" if processes else "")
                raise ValueError(f"workers: cannot start a local Dask cluster of {n} workers: "
                                 f"{_one_line(exc)}{guard}") from None
            yield Engine(stack.enter_context(Client(local, set_as_default=False)))
        except KeyboardInterrupt:
            hold_while_closing()
            quiet_shutdown()  # before the cluster closes: its logs would be tracebacks
            raise
        finally:
            hold_while_closing()


def quiet_shutdown() -> None:
    """After Ctrl-C: the cluster's shutdown without Dask's log lines and tracebacks (heartbeats to a closed
    scheduler, a cluster interrupted while starting that the exit hook fails to close): the interrupt is
    the one message. Dask's exit hook ``close_clusters`` runs now, its errors ignored."""
    import atexit
    import logging

    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    try:
        from distributed.deploy import spec
    except ImportError:
        return
    atexit.unregister(spec.close_clusters)
    with contextlib.suppress(Exception):
        spec.close_clusters()


def engine_for(client: Any) -> Engine:
    """The Engine of an explicit Client, else of the default Client if one is active, else local threads."""
    if client is not None:
        return Engine(client)
    try:
        from distributed import default_client

        return Engine(default_client())
    except (ImportError, ValueError):
        return Engine(None)
