"""`sharpdp figures [shuffle]`: regenerate Figures 1-3 of
"Shuffling-Aware Optimization for Private Vector Mean Estimation" (PNG + CSV) from the certified accountant.

``--quick`` computes reduced figures (fewer epsilon points, a smoke run): they go to their own
default directory and the output says they are reduced, so they are not taken for the paper's.
"""

from __future__ import annotations

import argparse
from typing import Any

_OUT = "sharpdp_figures_out"
_OUT_QUICK = "sharpdp_figures_quick_out"


_DESCRIPTION = ("Regenerate the numerical evaluation of 'Shuffling-Aware Optimization for Private Vector Mean "
                "Estimation' (Section 5, Figures 1-3): RMSE vs epsilon at (n, delta) = (1e4, 1e-5), the certified "
                "privacy profile at (n, RMSE) = (1e3, 3.16), and the n-scaling of a fixed BMG. Every privacy number "
                "comes from the certified accountant.")


def _add_options(p: argparse.ArgumentParser, default: Any) -> None:
    """The options of ``sharpdp figures`` and ``sharpdp figures shuffle``: ``default`` is each option's default on
    ``figures`` itself and ``argparse.SUPPRESS`` on ``shuffle`` (given there, an option sets the value; not given,
    it leaves the value ``figures`` holds: ``sharpdp figures --quick shuffle`` and ``sharpdp figures shuffle
    --quick`` are the same run)."""
    p.add_argument("--out", default=default, metavar="DIR",
                   help=f"output directory (default ./{_OUT}; with --quick ./{_OUT_QUICK}, so a smoke run never "
                        "overwrites the full figures)")
    p.add_argument("--quick", action="store_true", default=default if default is argparse.SUPPRESS else False,
                   help="reduced figures for a smoke run: fewer epsilon points in Figures 1 and 2 (not the "
                        "paper's figures: the output says so, and each CSV starts with a REDUCED column)")
    p.add_argument("--only", default=default, metavar="NAME", choices=_names(),
                   help="draw this figure alone (its CSV and PNG; the other figures' files are left as they are): "
                        + "; ".join(f"{k}: {v}" for k, v in _names().items()))
    p.add_argument("--overwrite", action="store_true",
                   default=default if default is argparse.SUPPRESS else False,
                   help="replace the figures' files (figure{1,2,3}_*.csv / .png) of an earlier run in the output "
                        "directory (without it they are refused, before any work)")


def _names() -> dict[str, str]:
    from sharpdp.apps.figure_names import FIGURE_NAMES  # (no pandas: the parser is built on the core install too)

    return FIGURE_NAMES


def register(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("figures", parents=[parent], help="regenerate a paper's figures (PNG + CSV)",
                       description=_DESCRIPTION + " PAPER is shuffle (the default, and the only choice): "
                                                  "'sharpdp figures' and 'sharpdp figures shuffle' are the same run.")
    _add_options(p, None)
    papers = p.add_subparsers(dest="which", metavar="PAPER", parser_class=type(p))
    papers.required = False
    # its own parser, so that 'sharpdp figures shuffle --help' shows its own usage (it showed the parent's)
    shuffle = papers.add_parser("shuffle", help="Figures 1-3 of 'Shuffling-Aware Optimization for Private Vector "
                                                "Mean Estimation' (the default)", description=_DESCRIPTION,
                                epilog="The same run as 'sharpdp figures'.")
    shuffle.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                         help="print the result as one JSON object")
    _add_options(shuffle, argparse.SUPPRESS)
    p.set_defaults(which="shuffle")


def run(args: argparse.Namespace) -> dict[str, Any]:
    import os

    from sharpdp.apps.figure_names import figure_numbers
    from sharpdp.apps.shuffle_figures import (FIG23_GAMMA, FIG23_N, FIG23_RMSE, FIGURE_STEMS, bmg_for_rmse,
                                              figure_jobs, write_figures)
    from sharpdp.cli import check_not_written, check_out_dir, make_out_dir

    out = args.out if args.out is not None else (_OUT_QUICK if args.quick else _OUT)
    only = getattr(args, "only", None)
    numbers = figure_numbers(only)
    check_out_dir(out)
    # (a run writes the CSV and PNG of every figure it draws, so --overwrite leaves no earlier one of them beside
    # the new: docs/cli.md §4; --only NAME's set is that figure's two files, docs/cli.md §11)
    check_not_written([os.path.join(out, f"{FIGURE_STEMS[i - 1]}.{ext}") for i in numbers for ext in ("csv", "png")],
                      args.overwrite, "(an earlier run's figures)")
    make_out_dir(out)
    result: dict[str, Any] = {"figures": args.which, "quick": bool(args.quick), "only": only}
    if args.quick:
        points = {q: [sum(1 for f, *_ in figure_jobs(q)[0] if f == fig) for fig in (1, 2)] for q in (True, False)}
        (q1, q2), (f1, f2) = points[True], points[False]
        fewer = [f"Figure 1: {q1} epsilon points instead of {f1}"] * (1 in numbers) + \
            [f"Figure 2: {q2}{'' if 1 in numbers else ' epsilon points'} instead of {f2}"] * (2 in numbers) + \
            ["Figure 3: the same points as the full run"] * (numbers == (3,))
        result["note"] = (f"quick run: REDUCED figures ({', '.join(fewer)}); a smoke test, not the paper's figures "
                          "(run without --quick)")
    # (without --only the call of earlier sessions, which tests replace by a two-argument stand-in)
    result["written"] = (write_figures(out, quick=args.quick) if only is None else
                         write_figures(out, quick=args.quick, only=only))
    bmg = bmg_for_rmse(FIG23_GAMMA, FIG23_RMSE, FIG23_N)
    result["parameters"] = (
        f"Figures 2-3: gamma = {bmg.gamma}, sigma0 = {bmg.sigma0:.4f}, solved for the caption's RMSE {FIG23_RMSE} at "
        f"n = {FIG23_N} (the caption's sigma0 = 4.6 gives RMSE 2.913 by the paper's own formula: docs/papers.md §1.2 "
        "item 8); figure2's delta_bmg_lower is the lower end of the certified bracket of the blanket bound's delta, "
        "not a lower bound on the shuffled mechanism's true delta")
    return result


def format_text(result: dict[str, Any]) -> str:
    lines = [result["note"]] if result.get("quick") else []
    lines += [result["parameters"]] if result.get("parameters") else []
    lines += [f"{k:32s} {v}" for k, v in result["written"].items()]
    return "\n".join(lines)
