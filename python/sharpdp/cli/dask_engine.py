"""The ``--engine dask`` paths of ``sharpdp mean`` and ``sharpdp histogram``.

Called by :mod:`sharpdp.cli.mean` and :mod:`sharpdp.cli.histogram` after they have validated
their common options; returns the same result dictionaries as the single-process paths, plus
``engine``, ``partitions`` and ``workers``. Errors are ValueErrors with one-line messages
naming the option (the CLI prints them and exits with status 2).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any, Iterator, NamedTuple

from sharpdp.cli import (
    bounds_choice,
    install_hint,
    option_error,
    parse_bounds_option,
    release_rng,
    warn_seeded,
)
from sharpdp.cli.errors import integer_number


def add_engine_options(parser: argparse.ArgumentParser, command: str) -> None:
    """The options shared by the Dask paths of the CLI."""
    parser.add_argument("--data", metavar="PATH", default=None,
                        help="partitioned input for --engine dask: a Parquet file or directory, or a CSV "
                             "file or glob ('data/*.csv'); rows are taken in file order")
    parser.add_argument("--engine", choices=("local", "dask"), default="local",
                        help="local: one process, the whole table in memory (default); dask: partition by "
                             "partition on a Dask cluster (needs the [dask] extra)")
    parser.add_argument("--workers", type=integer_number, default=None, metavar="N",
                        help="--engine dask: start a local cluster of N single-threaded worker processes "
                             "(default: the machine's cores)")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="--engine dask: join the running Dask cluster at ADDRESS (e.g. tcp://host:8786) "
                             "instead; refused if the scheduler does not answer within 5 s")


def check_engine_options(args: argparse.Namespace, command: str | None = None) -> bool:
    """Validate the engine options; True if the Dask path is asked for.

    Dask's import (1-2 s) is a progress step that says nothing unless interrupted (an error stays the first
    line on stderr); ``command`` (``"mean"``, ``"histogram"``) names the run (None: no step).
    """
    if args.engine != "dask":
        for flag in ("data", "workers", "scheduler"):
            if getattr(args, flag) is not None:
                raise ValueError(f"--{flag} needs --engine dask")
        return False
    if args.workers is not None and args.scheduler is not None:
        raise ValueError("--workers: give either --workers (a new local cluster) or --scheduler, not both")
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    if args.data is None and args.csv is None:
        raise ValueError("--data: --engine dask needs a dataset (--data PATH: Parquet file or directory, "
                         "or CSV file or glob)")
    if args.data is not None and args.csv is not None:
        raise ValueError("--data: give either --data or --csv, not both")
    import importlib.util

    from sharpdp._progress import progress_step

    missing = next((m for m in ("dask", "distributed") if importlib.util.find_spec(m) is None), None)
    if missing is not None:
        raise ValueError(f"--engine dask: {missing} is not installed; the Dask engine needs the [dask] "
                         f"extra: {install_hint('dask')}")
    try:
        with progress_step("loading Dask", disable=command is None, silent=True):  # (Ctrl-C says so)
            import dask.dataframe  # noqa: F401
            import distributed  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"--engine dask: {exc.name or exc} is not installed; the Dask engine needs the [dask] "
                         f"extra: {install_hint('dask')}") from None
    if args.scheduler is not None:
        check_scheduler(args.scheduler)
    return True


def _cluster_step(args: argparse.Namespace) -> str:
    """What the cluster step is: ``"starting a local Dask cluster of 2 workers"`` or joining ``--scheduler``."""
    if args.scheduler is not None:
        return f"connecting to the Dask scheduler {args.scheduler}"
    return "starting a local Dask cluster" + (f" of {args.workers} worker{'s' * (args.workers != 1)}"
                                              if args.workers else "")


def start_line(args: argparse.Namespace, command: str) -> str:
    """The line ``sharpdp COMMAND --engine dask`` prints once its input is checked (an error comes alone, before
    it), before the cluster starts: the steps to come in order, each of which then says itself on stderr by the
    progress rule (:data:`sharpdp._progress.PROGRESS_RULE`)."""
    passes = ("pass 1 over the partitions (count rows), the calibration, pass 2 (randomize)" if command == "mean"
              else "one pass over the partitions (group counts)")
    return (f"sharpdp {command}: --engine dask: {_cluster_step(args)} (seconds), then {passes}; each pass first "
            "waits for the workers' first partition (their start-up)")


#: Seconds the CLI waits for a TCP connection to ``--scheduler`` before any work (Dask itself retries
#: a refused connection until its own timeout, 30-60 s).
SCHEDULER_PROBE_TIMEOUT = 5.0


def check_scheduler(address: str, timeout: float = SCHEDULER_PROBE_TIMEOUT) -> None:
    """Fail fast on a ``--scheduler`` that is not a Dask address or does not accept connections.

    The address is parsed as Dask parses it (``[scheme://]host:port``); for ``tcp``/``tls`` one TCP
    connection is attempted with a ``timeout`` (seconds) limit, so a typo or a scheduler that is not
    running gives a one-line error at once instead of Dask's retries until its own timeout.

    Raises
    ------
    ValueError
        One line naming ``--scheduler``.
    """
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme not in ("tcp", "tls"):
            return  # other transports (inproc, ucx, ...): left to Dask
        host, port = parse_host_port(location)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"--scheduler: {address!r} is not a Dask scheduler address (expected tcp://HOST:PORT): "
                         f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise ValueError(f"--scheduler: cannot connect to {address} within {timeout:g} s: "
                         f"{exc.strerror or type(exc).__name__}") from None


@contextlib.contextmanager
def _engine(args: argparse.Namespace, command: str) -> Iterator[Any]:
    """``distributed.cluster`` for the options; its start-up (worker processes, seconds) is a progress step
    (:func:`sharpdp._progress.progress_step`: in a log "starting a local Dask cluster of 2 workers: N s" lines
    after 2 s, and on Ctrl-C "... (interrupted)" on a terminal too); the start line said it was coming. The
    partition bars count from the first partition's end (``Engine.compute``). Ctrl-C once the cluster is up
    says first that the local cluster is being stopped (its worker processes take seconds to close)."""
    from sharpdp._progress import progress_step
    from sharpdp.distributed import cluster

    with contextlib.ExitStack() as stack:
        def waiting() -> None:  # (Ctrl-C while the workers start is held until they are up: say so at once)
            print("\n" * sys.stderr.isatty() + "interrupted: the local Dask cluster is still starting; stopping it "
                  "once it is up (a few seconds)", file=sys.stderr, flush=True)

        with progress_step(_cluster_step(args)):
            engine = stack.enter_context(cluster(workers=args.workers, scheduler=args.scheduler,
                                                 on_start_interrupt=waiting))
        try:
            yield engine
        except KeyboardInterrupt:  # (closing a local cluster's worker processes takes seconds: say so first)
            if args.scheduler is None:
                print("interrupted: stopping the local Dask cluster (a few seconds)", file=sys.stderr, flush=True)
            raise


def _path_flag(args: argparse.Namespace) -> str:
    """The option that named the input: ``--data``, or ``--csv`` (also read by the Dask engine)."""
    return "--data" if args.data is not None else "--csv"


def run_mean(args: argparse.Namespace, epsilon: float, delta: float, columns: list[str] | None,
             rounds: int = 1, adjacency: str = "zero_out") -> dict[str, Any]:
    """``sharpdp mean --engine dask``: the result dictionary of the single-process path, plus the engine."""
    from sharpdp.apps import datasets
    from sharpdp.cli.mean_result import mean_result
    from sharpdp.distributed import numeric_columns, open_table, private_mean

    path = args.data if args.data is not None else args.csv
    names = {"data": _path_flag(args), "columns": "--columns", "bounds": "--bounds", "workers": "--workers",
             "scheduler": "--scheduler", "randomizer": "--epsilon"}
    try:
        skipped_notes: list[str] = []
        if columns is None:
            columns, skipped_notes = numeric_columns(path)
        open_table(path, columns)  # a bad path or column fails here, before a cluster is started
        bounds_choice(args, columns)  # data-derived bounds only with --bounds-from-data (CliError otherwise)
        d = len(columns)
        bounds = None if args.bounds is None else parse_bounds_option(args, columns, skipped_notes)
        for w in skipped_notes:  # before any pass over the data (a --columns can still be given)
            print(f"sharpdp mean: warning: {w}", file=sys.stderr, flush=True)
        warn_seeded("mean", args.seed)
        print(start_line(args, "mean"), file=sys.stderr, flush=True)
        with _engine(args, "mean") as engine:
            # rng None (no --seed): the library's secure generator; the seed is never part of the result
            res = private_mean(path, columns, bounds, epsilon, delta, rng=release_rng(args.seed),
                               client=engine.client, threads=args.threads or 1, progress=True, rounds=rounds,
                               adjacency=adjacency)
    except ValueError as exc:
        raise option_error(exc, names) from None
    late = [] if res.bounds_public else [datasets.data_bounds_warning("--bounds")]
    for w in late:
        print(f"sharpdp mean: warning: {w}", file=sys.stderr)
    warnings = skipped_notes + late
    return mean_result(
        source=res.source, n=res.n, d=d, columns=list(res.columns), rows_dropped_missing=res.rows_dropped_missing,
        bounds=res.bounds, bounds_source="--bounds (public)" if res.bounds_public else datasets.DATA_BOUNDS_SOURCE,
        values_clipped=res.values_clipped_per_column, warnings=warnings, true_mean=res.true_mean,
        true_mean_clipped=res.true_mean_clipped, private_mean=res.private_mean,
        private_mean_scaled=res.private_mean_scaled, true_mean_clipped_scaled=res.true_mean_clipped_scaled,
        scale=datasets.UnitBallScaling(res.bounds).scale, epsilon=epsilon, delta=delta,
        cal=_Calibration(res.randomizer, res.delta_bounds, res.accountant_evaluations, res.composed_certifications),
        rounds=rounds, engine={"engine": res.engine, "partitions": res.partitions, "workers": res.workers},
        adjacency=adjacency)


class _Calibration(NamedTuple):
    """The calibration figures of a distributed release, as ``mean_result`` reads them."""

    randomizer: Any
    delta_bounds: tuple
    evaluations: int
    composed_certifications: int


def histogram_group_counts(args: argparse.Namespace, by: list[str], domain):
    """Group counts for ``sharpdp histogram --engine dask`` over the CLI's key domain.

    ``domain`` is the public key domain chosen by the CLI (a DataFrame of the ``by`` columns), or
    None when the user passed ``--keys-from-data`` (the CLI has already warned). Returns
    ``(keys, counts, info, source, engine)`` in the shapes of the single-process path:
    ``counts`` int64 true counts (NOT publishable), ``info`` the dropped-row figures, ``engine``
    the engine figures for the output.
    """
    from sharpdp.distributed import group_counts, open_table

    path = args.data if args.data is not None else args.csv
    names = {"data": _path_flag(args), "columns": "--by", "by": "--by", "keys": "--keys", "workers": "--workers",
             "scheduler": "--scheduler"}
    try:
        open_table(path, by, text=True)  # a bad path or column fails here, before a cluster is started
        print(start_line(args, "histogram"), file=sys.stderr, flush=True)
        with _engine(args, "histogram") as engine:
            keys, counts, info = group_counts(path, by, keys=domain, keys_from_data=domain is None,
                                              client=engine.client, progress=True)
    except ValueError as exc:
        raise option_error(exc, names) from None
    counted = {k: info[k] for k in ("rows", "rows_dropped_missing_key", "rows_dropped_outside_domain",
                                    "keys_outside_domain")}
    figures = {k: info[k] for k in ("engine", "partitions", "workers")}
    return keys, counts, counted, info["source"], figures


def engine_line(r: dict[str, Any]) -> str | None:
    """The text line naming the engine (None for the single-process path, ``"engine": "local"``)."""
    if r.get("engine", "local") == "local":
        return None
    w = r["workers"]
    workers = "local threads" if w is None else f"{w} worker{'' if w == 1 else 's'}"
    parts = r["partitions"]
    return f"engine     : {r['engine']} ({parts} partition{'' if parts == 1 else 's'}, {workers})"
