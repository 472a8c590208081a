"""Figures and Table 2 of ``sharpdp histogram`` (:mod:`sharpdp.cli.histogram`): the publishable release figure,
the diagnostic figure (true counts, written only to a ``--diagnostics`` file's ``.png``) and ``--table2``.

matplotlib is imported inside the functions, so ``sharpdp --help`` stays fast.
"""

from __future__ import annotations

import argparse
import math
import os
from typing import Any

from sharpdp.cli import make_out_dir, release_file

PAPER = "Better Privacy Guarantees for Larger Groups"


def log_axis(ax, axis: str = "x") -> None:
    """Log axis labelled at whole decades (no crowded minor labels); call it after plotting.

    When the axis spans less than a decade (no whole decade, or just one, inside it), the labels
    are put at 1, 2 and 5 times the powers of ten instead, so the axis is never left without
    labels.
    """
    from matplotlib.ticker import LogFormatterSciNotation, LogLocator, NullFormatter

    a = ax.xaxis if axis == "x" else ax.yaxis
    lo, hi = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    if lo > 0 and hi / lo < 10.0:
        a.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=12))
        a.set_major_formatter(LogFormatterSciNotation(labelOnlyBase=False))
    else:
        a.set_major_locator(LogLocator(base=10, numticks=8))
    a.set_minor_locator(LogLocator(base=10, subs=tuple(range(2, 10)), numticks=100))
    a.set_minor_formatter(NullFormatter())


def draw_release(released, mech, args, path: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    grid = np.unique(np.geomspace(1, 1e6, 80).round())
    fig, (a0, a1, a2) = plt.subplots(1, 3, figsize=(15, 4.3))
    pos = np.sort(released[released > 0])[::-1]
    if pos.size:
        a0.plot(np.arange(1, pos.size + 1), pos, "k.", ms=3)
        a0.set(xscale="log", yscale="log")
        log_axis(a0, "x")
        log_axis(a0, "y")
    a0.set(xlabel="rank of group", ylabel="released value",
           title=f"Released values, sorted ({released.size} groups, {_zeros(int((released == 0).sum()))})")
    a1.plot(grid, mech.expected_abs_error(grid) / np.maximum(grid, 1), "k-",
            label="guaranteed E|error| / n (bound, any group of size n)")
    a1.axhline(mech.r, color="r", ls="--", label=f"target r = {mech.r:g}")
    a1.set(xscale="log", xlabel="group size n", ylabel="relative expected error", title="Utility guarantee")
    log_axis(a1)
    a1.legend(fontsize=8)
    a2.plot(grid, mech.epsilon(grid, args.delta), "k-", label="exact Gaussian profile")
    if not mech.data_independent:
        a2.plot(grid, mech.epsilon(grid, args.delta, method="cks20"), "g--", lw=1, label="via zCDP (CKS20)")
        a2.plot(grid, mech.epsilon(grid, args.delta, method="bun_steinke"), "m:", lw=1,
                label="via zCDP (Bun-Steinke)")
        a2.set_yscale("log")
    a2.set(xscale="log", xlabel="group size n", ylabel="epsilon (nats)",
           title=f"Per-member epsilon by group size (delta = {args.delta:g})")
    log_axis(a2)
    a2.legend(fontsize=8)
    fig.suptitle(f"Shifted-log Gaussian histogram ('{PAPER}'): larger groups get stronger privacy")
    fig.tight_layout()
    with release_file(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    return path


def _zeros(k: int) -> str:
    """'k are 0' with the verb agreeing ('1 is 0')."""
    return f"{k} {'is' if k == 1 else 'are'} 0"


def draw_diagnostics(diag, mech, args, path: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    n = diag["true_count"].to_numpy(dtype=float)
    pos = n > 0
    rel = np.abs(diag["released"].to_numpy() - n) / np.maximum(n, 1)
    grid = np.unique(np.geomspace(1, max(n.max(), 2), 60).round())
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.3))
    floor = 1e-4
    a1.scatter(n[pos], np.maximum(rel[pos], floor), s=10, alpha=0.6, label="|released - n| / n (non-empty groups)")
    a1.plot(grid, mech.expected_abs_error(grid) / grid, "k-", label="bound on E|error| / n")
    a1.axhline(mech.r, color="r", ls="--", label=f"target r = {mech.r:g}")
    a1.set(xscale="log", yscale="log", xlabel="true count n", ylabel=f"relative error (floored at {floor:g})",
           title="Realised relative error (diagnostic)")
    log_axis(a1)
    a1.legend(fontsize=8)
    a2.scatter(n[pos], diag["epsilon"].to_numpy()[pos], s=10, alpha=0.6, label="per-count epsilon at the true n")
    if not mech.data_independent:
        a2.set_yscale("log")
    a2.set(xscale="log", xlabel="true count n", ylabel="epsilon (nats)", title=f"delta = {args.delta:g}")
    log_axis(a2)
    a2.legend(fontsize=8)
    fig.suptitle("DIAGNOSTIC (true counts; not for publication)", color="r")
    fig.tight_layout()
    with release_file(path, mode=0o600) as tmp:  # true counts: readable by the user only
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    return path
_TABLE2 = [
    ("two_count", "Two-count proof (Markov + Pinsker)", "lower", "1/128", 1 / 128),
    ("uniform_prior", "Uniform many-count prior", "lower", "3/(2e^3)", 3 / (2 * math.e**3)),
    ("truncated_gaussian_prior", "Truncated Gaussian prior", "lower", "pi/(4e^2)", math.pi / (4 * math.e**2)),
    ("shifted_log_gaussian", "Shifted log-Gaussian mechanism", "upper", "1/pi", 1 / math.pi),
]


def table2(args: argparse.Namespace) -> dict[str, Any]:
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
        "two-count bound (Prop. 6.2, eq. 14)": ns.astype(float) ** 2 * LB.two_count(ns, r),
        "uniform prior bound (Cor. 6.5, eq. 23)": ns.astype(float) ** 2 * LB.uniform_prior(ns, r),
        "truncated Gaussian prior bound (Cor. 6.7)": ns.astype(float) ** 2 * LB.truncated_gaussian_prior(ns, r),
    }
    png = None
    if not args.no_plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        make_out_dir(args.out)
        png = os.path.join(args.out, "table2_bounds.png")
        fig, ax = plt.subplots(figsize=(7.5, 6))
        for (label, y), style in zip(curves.items(), ["k-o", "b--s", "g-.^", "r:v"]):
            pos = y > 0
            ax.plot(ns[pos], y[pos], style, ms=4, label=label)
        if not mech.data_independent:
            ax.axhline(1 / (2 * mech.sigma**2), color="gray", lw=0.8, label="large-n limit 1/(2 sigma^2) (eq. 7)")
        ax.axhline(LB.two_count_limit(r), color="b", lw=0.6, ls=":", label="two-count limit (eq. 15)")
        ax.set(xscale="log", yscale="log", xlabel="count n", ylabel="n^2 v(n)  (nats)",
               title=f"'{PAPER}':\nbudget vs lower bounds, r = {mech.r:g}"
                     + (" (many-count bounds are 0 for r >= 1/e)" if r >= 1 / math.e else ""))
        log_axis(ax)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)  # below: hides no data
        fig.tight_layout()
        with release_file(png) as tmp:
            fig.savefig(tmp, dpi=120, format="png")
        plt.close(fig)
    return {"mode": "table2", "table2": rows, "r": mech.r, "r0": mech.r0, "c": mech.c,
            "n": ns.tolist(), "curves": {k: v.tolist() for k, v in curves.items()}, "png": png}
