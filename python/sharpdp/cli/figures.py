"""`sharpdp figures shuffle`: regenerate Figures 1-3 of
"Shuffling-Aware Optimization for Private Vector Mean Estimation" (PNG + CSV) from the certified accountant.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("figures", parents=[parent], help="regenerate a paper's figures (PNG + CSV)",
                       description="Regenerate the numerical evaluation of 'Shuffling-Aware Optimization for Private "
                                   "Vector Mean Estimation' (Section 5, Figures 1-3): "
                                   "RMSE vs epsilon at (n, delta) = (1e4, 1e-5), the certified privacy profile at "
                                   "(n, RMSE) = (1e3, 3.16), and the n-scaling of a fixed BMG. Every privacy "
                                   "number comes from the certified accountant.")
    p.add_argument("which", choices=["shuffle"], help="which paper's figures")
    p.add_argument("--out", default="sharpdp_figures_out", help="output directory (default ./sharpdp_figures_out)")
    p.add_argument("--quick", action="store_true", help="fewer epsilon points (a smoke run)")


def run(args: argparse.Namespace) -> dict[str, Any]:
    from sharpdp.apps.shuffle_figures import write_figures
    from sharpdp.cli import make_out_dir

    make_out_dir(args.out)
    return {"written": write_figures(args.out, quick=args.quick)}


def format_text(result: dict[str, Any]) -> str:
    return "\n".join(f"{k:32s} {v}" for k, v in result["written"].items())
