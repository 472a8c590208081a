"""`sharpdp crlb`: the experiments of "Privacy-Preserving Cramer-Rao Lower Bound", Section 5.

Default: Section 5.2, recursive identification with Algorithm 3 on real data
(scikit-learn's bundled diabetes table; y = log serum triglycerides), the bound
against the empirical MSE and the Fig. 3 comparison mechanisms.
``--experiment 5.1``: mechanism comparison; ``--experiment 5.3``: Laplace
measurements. Each run writes a PNG plot and a CSV of the curves to ``--out``.

These are experiments on public data (scikit-learn's bundled table and simulated noise), not
private releases, so the seed is reported (text and ``--json``): without ``--seed`` a fresh one is
drawn from OS entropy and printed, and ``--seed N`` reproduces the run. (Private releases, ``sharpdp
mean`` and ``sharpdp histogram``, never print a seed.)
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import secrets
import sys
from typing import TYPE_CHECKING, Any

from sharpdp.cli import check_not_written, check_out_dir, make_out_dir, release_file, remove_earlier_outputs
from sharpdp.cli.errors import integer_number

if TYPE_CHECKING:
    import numpy as np

DEFAULT_OUT = "sharpdp_crlb_out"
_DEFAULT_TRIALS = {"5.1": 200, "5.2": 10, "5.3": 300}


def register(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "crlb",
        parents=[parent],
        help="privacy-preserving Cramer-Rao bound experiments (default: private RLS on real data)",
        description=("The experiments of 'Privacy-Preserving Cramer-Rao Lower Bound', Section 5 (PNG + CSV in "
                     "--out). Default: Section 5.2, private recursive least squares (Algorithm 3) on scikit-learn's "
                     "diabetes data, the bound against the empirical MSE and the Fig. 3 comparison mechanisms. "
                     "Public data, not a private release: the seed is reported so that any run can be reproduced."),
    )
    p.add_argument("--experiment", choices=("5.1", "5.2", "5.3"), default="5.2",
                   help="5.2 = recursive identification on the diabetes data (default), "
                        "5.1 = mechanism comparison, 5.3 = Laplacian measurements")
    p.add_argument("--trials", type=integer_number, default=None,
                   help="Monte Carlo repetitions (defaults: 5.1: 200 per privacy level, "
                        "5.2: 10 per data block, 5.3: 300 per K; fewer give noisier MSE figures, and a warning says "
                        "how noisy; integer forms such as 3e2 are accepted)")
    p.add_argument("--seed", type=integer_number, default=None,
                   help="random seed (default: drawn from OS entropy); reported either way, so that any run can "
                        "be reproduced (an experiment on public data, not a private release)")
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"directory for the PNG and CSV (default ./{DEFAULT_OUT})")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG (the CSV of the curves only; as in sharpdp "
                                                          "histogram)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the CSV and PNG of an earlier run in --out (without it an existing one is refused, "
                        "before the experiment runs)")


def _write(out_dir: str, stem: str, columns: dict[str, np.ndarray | list[str]], plot) -> dict[str, Any]:
    """The CSV of ``columns`` (numbers as %.10g, a text column as is) and, unless ``plot`` is None (--no-plot),
    the PNG that ``plot(ax)`` draws; an earlier run's PNG that --no-plot does not replace is removed first
    (docs/cli.md §4: ``files["removed"]``)."""
    from sharpdp.cli.steps import file_step

    make_out_dir(out_dir)
    csv_path, png_path = os.path.join(out_dir, f"{stem}.csv"), os.path.join(out_dir, f"{stem}.png")
    # (after the experiment's bar: matplotlib's import and the figure, 0.5-1 s of CPU measured, 6-9 s of wall time
    # on a busy machine, said by the progress rule instead of a silence: docs/cli.md §8)
    with file_step("crlb", f"writing {csv_path}" + ("" if plot is None else f" and drawing {png_path}"),
                   "about 1 s of CPU"):
        return _write_files(csv_path, png_path, columns, plot)


def _write_files(csv_path: str, png_path: str, columns: dict[str, np.ndarray | list[str]], plot) -> dict[str, Any]:
    """:func:`_write`'s work, in its progress step."""
    removed = remove_earlier_outputs([csv_path, png_path], [csv_path] + ([] if plot is None else [png_path]), "crlb")
    with release_file(csv_path) as tmp, open(tmp, "w", newline="") as fh:  # whole or not at all
        w = csv.writer(fh)
        w.writerow(list(columns))
        for row in zip(*columns.values()):
            w.writerow([v if isinstance(v, str) else f"{float(v):.10g}" for v in row])
    if plot is None:
        return {"csv": csv_path, "png": None, "removed": removed}
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 6.2))
    plot(ax)
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)  # below the axes: hides no data
    fig.tight_layout()
    with release_file(png_path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)
    return {"csv": csv_path, "png": png_path, "removed": removed}


def run(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from sharpdp.cli import CliError
    from sharpdp.apps import crlb_experiments as E

    exp = args.experiment
    trials = _DEFAULT_TRIALS[exp] if args.trials is None else args.trials
    if trials < 2 and exp != "5.2" or trials < 1:
        raise CliError(f"--trials must be >= {1 if exp == '5.2' else 2}, got {trials}")
    if args.seed is not None and args.seed < 0:
        raise CliError(f"--seed must be a non-negative integer, got {args.seed}")
    check_out_dir(args.out)
    stem = os.path.join(args.out, "crlb_" + exp.replace(".", "_"))
    check_not_written([stem + ".csv", stem + ".png"], args.overwrite,  # (both: docs/cli.md §4)
                      "(an earlier run's output)")
    warnings = few_trials_warning(exp, trials)
    if warnings:  # (once the options are known good, before the wait: not lost after the bars)
        print(f"sharpdp crlb: warning: {warnings[0]}", file=sys.stderr, flush=True)
    seed = secrets.randbits(63) if args.seed is None else int(args.seed)
    rng = np.random.default_rng(seed)

    if exp == "5.1":
        r = E.mechanism_comparison(trials=trials, rng=rng)
        cols = {"s": r["s"], "bound_ppcrlb": r["bound"], "classical_crlb": r["classical"]}
        for name in r["mse"]:
            cols[f"mse_{name}"] = r["mse"][name]
            cols[f"stderr_{name}"] = r["stderr"][name]

        def plot(ax):
            ax.plot(r["s"], r["bound"], "k-", lw=2, label="privacy-preserving CRLB")
            ax.plot(r["s"], r["classical"], "k:", label="classical CRLB")
            for name, v in r["mse"].items():
                ax.errorbar(r["s"], v, yerr=2 * r["stderr"][name], marker="o", ms=3, capsize=2, label=name)
            ax.set_xscale("log")
            ax.set_xlabel("privacy level s (S = s I)")
            ax.set_ylabel("MSE  E||theta_hat - theta||^2")
            ax.set_title("'Privacy-Preserving Cramer-Rao Lower Bound', Section 5.1:\n"
                         f"mechanisms under I_z(y) <= sI ({trials} trials; bars: +-2 standard errors)", fontsize=9)

        files = _write(args.out, "crlb_5_1", cols, None if args.no_plot else plot)
        ratio = {k: (v / r["bound"]).tolist() for k, v in r["mse"].items()}
        return {"experiment": "5.1", "trials": trials, "seed": seed, "s": r["s"], "bound": r["bound"],
                "mse": r["mse"], "stderr": r["stderr"], "mse_over_bound": ratio, "files": files,
                "warnings": warnings}

    if exp == "5.3":
        r = E.laplacian_measurements(trials=trials, rng=rng)
        cols = {k: r[k] for k in ("K", "bound", "classical", "mse_ml", "mse_avg_gaussian", "mse_avg_laplace")}
        # (the library's ml_trace_ratio under a name that says what it is: docs/papers.md §3.2 item 6)
        cols[ML_INFO_COLUMN] = r["ml_trace_ratio"]

        def plot(ax):
            ax.plot(r["K"], r["bound"], "k-", lw=2, label="privacy-preserving CRLB 1/(2K) + 1/K^2")
            ax.plot(r["K"], r["classical"], "k:", label="classical CRLB 1/(2K)")
            ax.plot(r["K"], r["mse_ml"], "o-", label="ML-based estimator (eq. 21 of the paper)")
            ax.plot(r["K"], r["mse_avg_gaussian"], "s-", label="averaging + Gaussian noise")
            ax.plot(r["K"], r["mse_avg_laplace"], "^-", label="averaging + Laplace noise")
            ax.set_xscale("log")
            ax.set_xlabel("K")
            ax.set_ylabel("MSE")
            ax.set_title("'Privacy-Preserving Cramer-Rao Lower Bound', Section 5.3:\n"
                         f"Laplace measurements, trace I_z = K ({trials} trials)", fontsize=9)

        files = _write(args.out, "crlb_5_3", cols, None if args.no_plot else plot)
        return {"experiment": "5.3", "trials": trials, "seed": seed, **{k: v for k, v in cols.items()},
                "files": files, "warnings": warnings, f"{ML_INFO_COLUMN}_meaning": ML_INFO_MEANING}

    r = E.recursive_identification(repetitions=trials, rng=rng)
    cols = {k: r[k] for k in ("k", "bound", "mse", "mse_stderr", "bound_identity", "mse_identity", "mse_laplace",
                              "mse_binary")}

    B = int(r["blocks"])
    iv = intervals_52(r)
    tq, lo_ci, hi_ci = iv["t_quantile"], iv["mse_ci_low"], iv["mse_ci_high"]
    ok = ~np.isnan(r["bound"])
    below = r["mse"][ok] < r["bound"][ok]
    explained = below & (hi_ci[ok] >= r["bound"][ok])
    wholly, flagged = iv["ci_wholly_below_bound"], iv["flagged"]
    # (after the columns of earlier sessions, whose order scripts may rely on; the note stays last)
    cols.update(mse_ci_low=lo_ci, mse_ci_high=hi_ci,
                ci_wholly_below_bound=np.where(ok & (B > 1), wholly.astype(float), np.nan),
                bound_stderr=iv["bound_stderr"], diff_ci_high=iv["diff_ci_high"],
                flagged=np.where(ok & (B > 1), flagged.astype(float), np.nan))

    def plot_52(ax):
        ax.plot(r["k"], r["bound"], "k-", lw=2, label="PPCRLB, S_k~U[0.2,2], U_k=0.1 sqrt(S_k) xi_k")
        curves = np.concatenate([np.asarray(r[c], dtype=float) for c in ("bound", "mse", "bound_identity",
                                                                          "mse_identity", "mse_laplace")])
        y_min = 0.3 * np.nanmin(curves[curves > 0])
        if B > 1:
            ax.fill_between(r["k"], np.maximum(lo_ci, y_min), hi_ci, color="C0", alpha=0.2,
                            label=f"95% CI of the MSE (t, {B - 1} d.o.f., across {B} data blocks; cut at the axis)")
        ax.set_ylim(bottom=y_min)
        ax.plot(r["k"], r["mse"], "C0.", label="Algorithm 3 (same privacy levels)")
        ax.plot(r["k"], r["bound_identity"], "k--", label="PPCRLB, Sbar_k = I")
        ax.plot(r["k"], r["mse_identity"], "C1.", label="Algorithm 3, Sbar_k = I")
        ax.plot(r["k"], r["mse_laplace"], "C2-", label="Laplace mechanism + RLS (Fisher info 1)")
        ax.plot(r["k"], r["mse_binary"], "C3-", label="binary quantiser + probit MAP (biased at small k)")
        ax.set_xlabel("k (records processed)")
        ax.set_ylabel("MSE  E||theta_hat_k - theta||^2")
        ax.set_title("'Privacy-Preserving Cramer-Rao Lower Bound', Section 5.2:\nprivate RLS on the diabetes data "
                     f"(y = log triglycerides); {trials} repetitions x {B} data blocks", fontsize=9)

    # the CSV says on each row before k0 why its cells are nan (docs/cli.md §3.1); the JSON has k0 and nulls
    before = f"k < k0 = {r['k0']}: {BEFORE_K0}"
    notes = [before if k < r["k0"] else "" for k in r["k"]]
    files = _write(args.out, "crlb_5_2", {**cols, "note": notes}, None if args.no_plot else plot_52)
    # JSON has no NaN: steps before k0 (no estimate, infinite bound) become null
    curves = {k: [None if math.isnan(v) else float(v) for v in np.asarray(c, dtype=float)] for k, c in cols.items()}
    curves["k"] = [int(v) for v in r["k"]]
    return {"experiment": "5.2", "repetitions": trials, "seed": seed, "theta_reference": r["theta"],
            "sigma2": r["sigma2"], "k0": r["k0"], "records": r["records"], "blocks": B, **curves, "files": files,
            "warnings": warnings,
            "steps_mse_below_bound": int(below.sum()), "steps_with_bound": int(ok.sum()),
            "steps_below_bound_within_ci": int(explained.sum()), "privacy_level": _privacy_level_52(E),
            "steps_ci_wholly_below_bound": int(wholly.sum()),
            "steps_flagged": [int(k) for k in np.asarray(r["k"])[flagged]],
            "mse_ci": {"level": 0.95, "t_quantile": tq if B > 1 else None,
                       "meaning": ci_meaning_52(B, tq, int(r["records"]["reference"]))},
            "flag_rule": {"level": 0.95, "sigma2_dof": int(r["sigma2_dof"]), "meaning": FLAG_MEANING_52},
            "why_mse_below_bound": (
                "Monte Carlo error, not a violation: the bound is the privacy-preserving CRLB for unbiased "
                "estimators, which Algorithm 3 attains in expectation over data and privacy noise; the data noise "
                f"is drawn only {B} times (one per block, shared by every step k), so for one seed the empirical "
                "MSE can sit below (or above) the bound at most steps however many repetitions of the privacy "
                "noise are run; the 95% interval across blocks shows this error, and is itself rough: a "
                f"t-interval with {B - 1} degree{'s' if B != 2 else ''} of freedom (its quantile {tq:.3g}: wide, and its "
                f"width is estimated from {B} values). The reference theta the MSE is measured against is also a "
                f"Monte Carlo figure: a least-squares fit on the {r['records']['reference']} reference records, which "
                "the seed picks, so it carries its own estimation error and changes from seed to seed (another seed "
                "gives another count of steps below the bound)" if B > 1 else
                "noise are run; with one block there is no interval across blocks to show this error. The reference "
                "theta the MSE is measured against is also a Monte Carlo figure: a least-squares fit on the "
                f"{r['records']['reference']} reference records, which the seed picks, so it changes from seed to "
                "seed")}


def intervals_52(r: dict[str, Any]) -> dict[str, Any]:
    """The 95 % intervals of Section 5.2's run ``r`` (:func:`sharpdp.apps.crlb_experiments.recursive_identification`)
    and its flagged steps (docs/cli.md §3.2): the MSE's t-interval across the blocks and the interval of
    mse - bound with the bound's own error from sigma2 (the delta method).

    The MSE's interval is ``mse +- t mse_stderr`` (t the Student quantile with B - 1 degrees of freedom, its lower
    end cut at 0). The bound is computed at sigma2, estimated on the reference records with ``sigma2_dof``
    degrees of freedom: var(sigma2) = 2 sigma2^2 / dof for normal residuals, so the bound's standard error is
    ``|d bound / d sigma2| sigma2 sqrt(2 / dof)`` (``bound_stderr``). The reference records are not in the blocks,
    so the two errors are independent, and mse - bound has the standard error sqrt(mse_stderr^2 +
    bound_stderr^2); its 95 % interval's upper end ``diff_ci_high`` takes the t quantile of the smaller of the
    two degrees of freedom (B - 1), at least Welch-Satterthwaite's (conservative). A step is ``flagged`` where
    diff_ci_high < 0: the MSE lies below the bound by more than both errors explain. ``ci_wholly_below_bound``
    is the earlier rule (the MSE's interval below the bound taken as exact), kept for comparison.

    Parameters
    ----------
    r : dict
        ``mse``, ``mse_stderr``, ``bound``, ``bound_sigma2_slope``, ``sigma2``, ``sigma2_dof``, ``blocks``.

    Returns
    -------
    dict
        ``t_quantile`` (float, NaN for one block), ``mse_ci_low``, ``mse_ci_high``, ``bound_stderr``,
        ``diff_ci_high`` (arrays; NaN before k0) and the boolean arrays ``ci_wholly_below_bound``, ``flagged``
        (all False for one block: no spread across blocks).
    """
    import numpy as np
    from scipy.special import stdtrit  # (Student's t quantile; scipy.stats' import cost ~0.3 s of CPU after the bar)

    B, dof = int(r["blocks"]), int(r["sigma2_dof"])
    mse, se, bound = (np.asarray(r[c], dtype=float) for c in ("mse", "mse_stderr", "bound"))
    tq = float(stdtrit(B - 1, 0.975)) if B > 1 else math.nan
    t_diff = float(stdtrit(min(B - 1, dof), 0.975)) if B > 1 else math.nan
    # (an MSE is >= 0: the interval's lower end is cut at 0, which keeps its coverage)
    lo_ci, hi_ci = np.maximum(mse - tq * se, 0.0), mse + tq * se
    bound_se = np.abs(np.asarray(r["bound_sigma2_slope"], dtype=float)) * float(r["sigma2"]) * math.sqrt(2.0 / dof)
    diff_high = mse - bound + t_diff * np.sqrt(se ** 2 + bound_se ** 2)
    ok = ~np.isnan(bound) & (B > 1)
    with np.errstate(invalid="ignore"):
        wholly, flagged = ok & (hi_ci < bound), ok & (diff_high < 0.0)
    return {"t_quantile": tq, "mse_ci_low": lo_ci, "mse_ci_high": hi_ci, "bound_stderr": bound_se,
            "diff_ci_high": diff_high, "ci_wholly_below_bound": wholly, "flagged": flagged}


#: What a flagged step of 5.2 is (``flag_rule.meaning`` in ``--json``, the text's note; :func:`intervals_52`).
FLAG_MEANING_52 = (
    "a step is flagged (flagged = 1 in the CSV, steps_flagged) only when the 95% interval of mse - bound lies wholly "
    "below 0: diff_ci_high = mse - bound + t sqrt(mse_stderr^2 + bound_stderr^2) < 0, where bound_stderr is the "
    "bound's standard error from its noise variance sigma2, estimated on the reference records (the delta method: "
    "|d bound / d sigma2| sigma2 sqrt(2 / dof), dof = reference records - 5), and t the Student quantile with the "
    "blocks' degrees of freedom (the smaller: conservative); ci_wholly_below_bound is the earlier rule, the MSE's "
    "interval below the bound taken as exact")


#: The interval's measured behaviour (``python bench/bench_crlb_ci.py 0 30``: seeds 0-29 at the default 10
#: repetitions; docs/cli.md §3.2): the share of the steps whose MSE interval lay wholly below the bound, the seeds
#: with no such step and the most steps of one seed (2026-12-05, the same on 2026-12-06).
CI_CALIBRATION_52 = {"seeds": 30, "mean_share_flagged": 0.043, "seeds_with_none": 13, "most_in_one_seed": 26}
#: The same for the flags (:func:`intervals_52`: the interval of mse - bound, the bound's error from sigma2 included;
#: 2026-12-06): 111 of 2860 steps.
FLAG_CALIBRATION_52 = {"seeds": 30, "mean_share_flagged": 0.0388, "seeds_with_none": 13, "most_in_one_seed": 24}


def ci_meaning_52(blocks: int, tq: float, reference: int) -> str:
    """What the 95 % interval of 5.2's simulated MSE is (``mse_ci_low``, ``mse_ci_high``) and how the steps are
    flagged, with its measured behaviour (:data:`CI_CALIBRATION_52`); ``reference``: the reference records, on
    which the noise variance sigma2 (n - 5 degrees of freedom: its relative standard error sqrt(2 / (n - 5))) is
    estimated."""
    if blocks < 2:
        return "no interval: one data block gives no spread across blocks (no step is flagged)"
    c, f = CI_CALIBRATION_52, FLAG_CALIBRATION_52
    rse = 100 * math.sqrt(2.0 / max(reference - 5, 1))
    return (f"95% confidence interval of the expected MSE at each step: mse +- t * mse_stderr (its lower end cut at "
            f"0), with t = {tq:.3g} the Student t quantile with {blocks - 1} degrees of freedom ({blocks} data blocks, each one value: the "
            "data noise is drawn once per block) and mse_stderr the standard error across blocks. "
            "ci_wholly_below_bound = 1 where the whole interval lies below the bound taken as exact; a step whose MSE "
            "is below the bound but whose interval reaches it is Monte Carlo noise. Even such steps are expected now "
            "and then: each step has a 2.5% chance under the bound's own model (normal block values), the steps share "
            "each block's data (they come in runs), the interval holds the spread across blocks only (the bound rests "
            f"on the noise variance sigma2 estimated on the {reference} reference records, relative standard error "
            f"about {rse:.0f}%, which the flag carries, and on a linear model of real data, which it does not: errors "
            "shared by every step and block), and with "
            f"{blocks} skewed values (squared errors) it misses low more often: measured over seeds "
            f"0-{c['seeds'] - 1} at the default 10 repetitions, the MSE's interval lay wholly below the bound at "
            f"{100 * c['mean_share_flagged']:.1f}% of steps on average, none for {c['seeds_with_none']} "
            f"of the {c['seeds']} seeds and up to {c['most_in_one_seed']} steps for one seed; with the bound's own "
            f"error from sigma2 carried into the flag (below) {100 * f['mean_share_flagged']:.2f}% of steps were "
            f"flagged, none for {f['seeds_with_none']} seeds, up to {f['most_in_one_seed']} for one: sigma2's error "
            "is up to half the MSE's own error (a fifth at seed 7's median step), so most of the excess over 2.5% is the "
            "skew of 3 block values, which no interval from 3 values can remove")


#: Section 5.3's column (CSV, text, ``--json``) for the ML-based estimator's realised trace I_z over its budget s_K:
#: named for what it is (it was ``ml_trace_ratio``, which read like a figure near 1; it equals K).
ML_INFO_COLUMN = "ml_fisher_info_over_budget"
ML_INFO_MEANING = (
    f"{ML_INFO_COLUMN} is the ML-based estimator's (eq. 21) realised Fisher information trace I_z divided by the "
    "trace budget s_K = K that the privacy constraint allows: 1 would mean the constraint is met. It equals K here, "
    "by construction, not by noise: for Laplace measurements the median's released value carries K times the "
    "information the budget allows, since Theorem 30 calibrates the estimator only as K -> inf. So at finite K this "
    "estimator does NOT meet the privacy constraint and its MSE may sit at or below the bound; the two averaging "
    "mechanisms meet it exactly (their ratio is 1; docs/papers.md §3.2 item 6)")

#: Section 5.2's data blocks (``recursive_identification``'s default, which the command runs)
_BLOCKS_52 = 3


def few_trials_warning(exp: str, trials: int) -> list[str]:
    """The warning (a list of one line, or empty) for ``--trials`` below the experiment's default
    (``_DEFAULT_TRIALS``, docs/cli.md §3.3): the MSE figures are then noisy. An MSE averaged
    over N independent squared errors has relative standard error sqrt(Var(e^2) / N) / E[e^2] = sqrt(2 / N) for a
    Gaussian error e (kurtosis 3), sqrt(5 / N) for a Laplace one (kurtosis 6); 5.2 averages N repetitions in each
    of its ``_BLOCKS_52`` = 3 data blocks, and its data noise (once per block) adds the error of its 95 % interval."""
    default = _DEFAULT_TRIALS[exp]
    if trials >= default:
        return []

    def rse(m: int) -> str:
        return f"{100 * math.sqrt(2.0 / m):.0f} %"

    if exp == "5.2":
        m, m_default = _BLOCKS_52 * trials, _BLOCKS_52 * default
        what = f"{trials} repetition{'s' if trials > 1 else ''} per data block ({m} runs over the {_BLOCKS_52} blocks)"
        extra = "; the data noise, drawn once per block, adds the error the 95 % interval across blocks shows"
    else:
        m, m_default = trials, default
        what = f"{trials} trial{'s' if trials > 1 else ''} per {'privacy level' if exp == '5.1' else 'K'}"
        extra = "; the CSV's stderr_* columns give each point's own" if exp == "5.1" else ""
    return [f"--trials {trials}: few Monte Carlo trials, so the MSE figures are noisy: {what} give each MSE a "
            f"relative standard error of about sqrt(2/{m}) = {rse(m)} for a Gaussian error (more for heavier tails; "
            f"a 95 % interval is about twice that); the default {default} gives {rse(m_default)}, and 4 times the "
            f"trials halve it{extra}"]


def _privacy_level_52(E: Any) -> dict[str, Any]:
    """The privacy level of Algorithm 3's setting in Section 5.2 (``apps.crlb_experiments`` constants)."""
    lo, hi = E.PRIVACY_LEVEL_RANGE_52
    a = E.PRIVACY_CROSS_SCALE_52
    return {"s_k_range": [lo, hi], "u_k_scale": a,
            "meaning": (f"record k's privacy level S_k, drawn uniformly on [{lo:g}, {hi:g}] (once per block and "
                        "record), bounds the Fisher information its release holds about y_k (I_z(y_k) <= S_k: the "
                        f"smaller, the more private); recursion (16) adds the cross terms U_k = {a:g} sqrt(S_k) xi_k, "
                        "xi_k ~ N(0, I_{k-1}); the comparison Sbar_k = I is level 1 with U_k = 0. A Fisher-information "
                        "privacy level, not a differential-privacy epsilon")}


#: Why the rows of ``crlb_5_2.csv`` before k0 hold nan (its ``note`` column on those rows; docs/cli.md §3.1).
BEFORE_K0 = ("no estimate yet: the recursion starts at k0, the first step at which every block's information matrix "
             "sum_{j<=k} H_j H_j^T is invertible, so bound, mse, mse_stderr, mse_ci_low, mse_ci_high, "
             "ci_wholly_below_bound, bound_stderr, diff_ci_high, flagged, bound_identity, mse_identity and "
             "mse_laplace are nan (undefined) here; "
             "mse_binary (a probit MAP estimate with a prior) starts at k = 1")


def _ranges(ks: list[int]) -> str:
    """``[3, 4, 5, 9]`` as ``"3-5, 9"``."""
    runs: list[list[int]] = []
    for k in ks:
        if runs and k == runs[-1][-1] + 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else f"{r[0]}" for r in runs)


def _fmt_rows(header: list[str], rows: list[list[float]]) -> str:
    widths = [max(14, len(h)) for h in header]  # a long name widens its column: headers stay over their values
    lines = ["  ".join(f"{h:>{w}s}" for h, w in zip(header, widths))]
    for row in rows:
        lines.append("  ".join(f"{v:{w}.6g}" for v, w in zip(row, widths)))
    return "\n".join(lines)


def _join(head: str, table: str, *notes: str) -> str:
    """The text output: ``head`` and ``notes`` wrapped at 80 columns (:func:`sharpdp.cli.wrap_text`), the table
    between them unbroken (each row on one line, its columns aligned; a table wider than 80 columns stays so)."""
    from sharpdp.cli import wrap_text

    return "\n".join([wrap_text(head), table, *(wrap_text(n) for n in notes)])


def format_text(result: dict[str, Any]) -> str:
    """The text output of ``sharpdp crlb``: prose wrapped at 80 columns, the table unbroken (:func:`_join`)."""
    import numpy as np

    exp = result["experiment"]
    png, csv_path = result["files"]["png"], result["files"]["csv"]
    files = ((f"wrote {png} and {csv_path}\n" if png else f"wrote {csv_path} (--no-plot)\n")
             + f"seed {result['seed']} (rerun with --seed {result['seed']} to reproduce; public data, not a release)")
    if exp == "5.1":
        names = list(result["mse"])
        rows = [[s, b] + [result["mse"][n][i] / b for n in names] for i, (s, b) in
                enumerate(zip(result["s"], result["bound"]))]
        head = (f"'Privacy-Preserving Cramer-Rao Lower Bound', Section 5.1 mechanism comparison, "
                f"{result['trials']} trials per s "
                "(columns: s, bound = the privacy-preserving CRLB at s, then each mechanism's MSE / bound; "
                "1 = attains the bound)")
        return _join(head, _fmt_rows(["s", "bound"] + names, rows), files)
    if exp == "5.3":
        keys = ["K", "bound", "mse_ml", "mse_avg_gaussian", "mse_avg_laplace", ML_INFO_COLUMN]
        rows = [[result[k][i] for k in keys] for i in range(len(result["K"]))]
        head = (f"'Privacy-Preserving Cramer-Rao Lower Bound', Section 5.3 Laplace measurements, "
                f"{result['trials']} trials per K")
        legend = ("columns: bound = privacy-preserving CRLB 1/(2K) + 1/K^2; mse_ml = the ML-based estimator (eq. 21); "
                  "mse_avg_gaussian / mse_avg_laplace = averaging + Gaussian / Laplace noise of the same trace; "
                  + ML_INFO_MEANING)
        return _join(head, _fmt_rows(keys, rows), legend, files)
    keys = ["k", "bound", "mse", "mse_ci_low", "mse_ci_high", "bound_identity", "mse_identity", "mse_laplace",
            "mse_binary"]
    k = np.asarray(result["k"])
    pick = [i for i in range(len(k)) if k[i] in (result["k0"], 10, 20, 50, len(k))]
    rows = [[math.nan if result[key][i] is None else result[key][i] for key in keys] for i in pick]
    theta = ", ".join(f"{v:.4g}" for v in result["theta_reference"])
    head = (f"'Privacy-Preserving Cramer-Rao Lower Bound', Section 5.2, private RLS on the diabetes data: "
            f"{result['records']['experimental']} records in {result['blocks']} blocks, "
            f"{result['records']['reference']} reference records, {result['repetitions']} repetitions per block "
            "(the paper's NHANES triglyceride data, 2704 participants in 20 blocks of 100 with 20 repetitions, "
            "is not bundled: scikit-learn's 442-row diabetes table stands in, docs/papers.md §3.2)\n"
            f"reference theta = ({theta}) for H_k = [1, age, BMI, sex, bp], noise variance {result['sigma2']:.4g}, "
            f"k0 = {result['k0']}\nprivacy level: {result['privacy_level']['meaning']}")
    flagged = result["steps_flagged"]
    wholly = result["steps_ci_wholly_below_bound"]
    note = (f"simulated MSE below the bound at {result['steps_mse_below_bound']} of {result['steps_with_bound']} steps, "
            f"{result['steps_below_bound_within_ci']} of them with the bound inside the MSE's 95% interval (Monte "
            f"Carlo noise); the MSE's whole interval below the bound: {wholly} step" + ("" if wholly == 1 else "s")
            + f"; flagged, the whole 95% interval of mse - bound below 0 (the bound's error from sigma2 included): "
            f"{len(flagged)} step" + ("" if len(flagged) == 1 else "s")
            + (f" (k = {_ranges(flagged)})" if flagged else "")
            + f". Interval: {result['mse_ci']['meaning']}. Flags: {result['flag_rule']['meaning']}. Why the MSE can "
            f"sit below the bound: {result['why_mse_below_bound']}")
    legend = ("columns: bound/mse = Algorithm 3 with the recursion of Section 5.2; bound_identity/mse_identity = "
              "Algorithm 3 with Sbar_k = I (Fig. 3); mse_laplace = Laplace(1) noise + recursive least squares; "
              "mse_binary = binary quantisation 1{y_k + d_k <= C} identified by a probit MAP estimate (biased "
              "towards its prior at small k, so not comparable with the bound there); in the CSV the rows k < k0 "
              "hold nan in every column but mse_binary, and their note column says why")
    return _join(head, _fmt_rows(keys, rows), legend, note, files)
