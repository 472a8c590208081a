"""Regenerate the numerical evaluation of "Shuffling-Aware Optimization for Private Vector Mean Estimation"
(Section 5, Figures 1-3).

Every privacy number here comes from the certified :class:`ShuffleAccountant`
(never from the asymptotic template). The central Gaussian mechanism (GM) is
the analytic one with sensitivity 1/n, as in the paper. RMSE is per coordinate,
``sqrt(Err_n / d)`` with ``Err_n = Err_1 / n`` and ``d = 1``.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from sharpdp import _validation as V
from sharpdp._progress import progress_bar
from sharpdp.apps.figure_names import FIGURE_NAMES, figure_numbers  # noqa: F401  (FIGURE_NAMES: re-exported)
from sharpdp.conversions import gaussian_mechanism_delta, gaussian_mechanism_sigma
from sharpdp.shuffle.accountant import ShuffleAccountant
from sharpdp.shuffle.calibration import calibrate_bmg, calibrate_gaussian
from sharpdp.shuffle import BlanketMixedGaussian

#: Figure 2-3 randomizer: gamma = 0.95 with sigma0 solved for RMSE = 3.16 at n = 1e3.
#: The paper's caption value sigma0 = 4.6 gives RMSE 2.913 by its own formula
#: (`docs/papers.md` §1.2 item 8).
FIG23_GAMMA = 0.95
FIG23_RMSE = 3.16
FIG23_N = 1000


def bmg_for_rmse(gamma: float, rmse: float, n: int) -> BlanketMixedGaussian:
    """The 1-D BMG with blanket mass ``gamma`` whose per-coordinate RMSE at n users is ``rmse``.

    Solves ``Err_1(gamma, sigma0) / n = rmse^2`` for sigma0
    ("Shuffling-Aware Optimization for Private Vector Mean Estimation", Section 4.2).

    Raises
    ------
    ValueError
        If gamma is not in (0, 1), rmse <= 0, n < 1, or the target is below the
        floor ``gamma / (1 - gamma) / n`` reachable with sigma0 -> 0.
    """
    gamma = V.real("gamma", gamma, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    rmse = V.real("rmse", rmse, lo=0.0, lo_open=True)
    n = V.integer("n", n, lo=1)
    excess = n * rmse**2 - gamma / (1.0 - gamma)
    if excess <= 0:
        raise ValueError(f"rmse: {rmse} is below the floor {math.sqrt(gamma / (1 - gamma) / n):.4g} at gamma={gamma}")
    return BlanketMixedGaussian(gamma, (1.0 - gamma) * math.sqrt(excess), 1)


def _rmse(randomizer, n: int) -> float:
    return math.sqrt(randomizer.mse_single / (n * randomizer.dim))


def utility_curve(epsilons=None, *, n: int = 10**4, delta: float = 1e-5, progress: bool | None = None) -> pd.DataFrame:
    """Figure 1: RMSE against epsilon at fixed (n, delta) for BMG, the gamma = 0 Gaussian and the GM.

    BMG: :func:`calibrate_bmg`; Gaussian: :func:`calibrate_gaussian` (certified,
    infimum blanket, d = 1); GM: :func:`gaussian_mechanism_sigma` with sensitivity 1/n.

    Returns
    -------
    pandas.DataFrame
        One row per epsilon: epsilon, rmse_bmg, gamma, sigma0, rmse_gaussian_local,
        sigma0_gaussian_local, rmse_gm.
    """
    eps = np.geomspace(0.005, 1.0, 8) if epsilons is None else V.real_array("epsilons", epsilons, ndim=1, lo=0.0)
    rows = []
    for e in progress_bar(eps, desc="Figure 1", delay=1.0, disable=progress is False, leave=False):
        bmg = calibrate_bmg(n, float(e), delta, 1, progress=False)
        gl = calibrate_gaussian(n, float(e), delta)
        rows.append({
            "epsilon": float(e), "rmse_bmg": _rmse(bmg, n), "gamma": bmg.gamma, "sigma0": bmg.sigma0,
            "rmse_gaussian_local": _rmse(gl, n), "sigma0_gaussian_local": gl.sigma0,
            "rmse_gm": gaussian_mechanism_sigma(float(e), delta, 1.0 / n),
        })
    return pd.DataFrame(rows)


def privacy_profile(epsilons=None, *, n: int = FIG23_N, rmse: float = FIG23_RMSE, gamma: float = FIG23_GAMMA) -> pd.DataFrame:
    """Figure 2: certified privacy profile of the shuffled BMG at fixed (n, RMSE), and the GM's.

    Returns
    -------
    pandas.DataFrame
        epsilon, delta_bmg (certified upper), delta_bmg_lower (certified lower value of the
        blanket bound), delta_gm (GM with sigma = rmse, sensitivity 1/n), gamma, sigma0.
    """
    bmg = bmg_for_rmse(gamma, rmse, n)
    eps = np.linspace(1e-4, 2e-3, 12) if epsilons is None else V.real_array("epsilons", epsilons, ndim=1, lo=0.0)
    lower, upper = ShuffleAccountant(bmg, n).get_delta_bounds(eps)
    return pd.DataFrame({
        "epsilon": eps, "delta_bmg": upper, "delta_bmg_lower": lower,
        "delta_gm": gaussian_mechanism_delta(eps, rmse, 1.0 / n),
        "gamma": bmg.gamma, "sigma0": bmg.sigma0,
    })


def n_scaling(ns=(10**2, 10**3, 10**4), *, delta: float = 1e-5, gamma: float = FIG23_GAMMA) -> pd.DataFrame:
    """Figure 3: fixed randomizer (the Figure 2 one), epsilon_n at delta for each n, RMSE of BMG and GM.

    Returns
    -------
    pandas.DataFrame
        n, epsilon (certified, safe end), rmse_bmg, rmse_gm (GM calibrated to (epsilon_n, delta),
        sensitivity 1/n), gamma, sigma0.
    """
    bmg = bmg_for_rmse(gamma, FIG23_RMSE, FIG23_N)
    rows = []
    for n in ns:
        n = V.integer("ns", n, lo=1)
        e = ShuffleAccountant(bmg, n).get_epsilon(delta)
        rows.append({"n": n, "epsilon": e, "rmse_bmg": _rmse(bmg, n),
                     "rmse_gm": gaussian_mechanism_sigma(e, delta, 1.0 / n) if e > 0 else math.inf,
                     "gamma": bmg.gamma, "sigma0": bmg.sigma0})
    return pd.DataFrame(rows)


def figure_jobs(quick: bool):
    """Work units of write_figures as (figure, argument, relative cost) triples.

    Costs are process CPU seconds per unit measured on the reference machine (one run of every
    unit after a warm-up, 2 vCPU Xeon, 2026-12-01, with the far-tail treatment of the accountant;
    the full job is about 9 CPU s, 85 % of it Figure 1, about 1 CPU s per point); only their ratios
    matter: the progress bar's rate, and so its time estimate,
    is observed on the machine that runs the job. Returns ``(jobs, eps2)``: the list of triples and
    Figure 2's epsilon grid (float64 array). ``sharpdp figures`` counts its points from it.
    """
    eps1 = np.array([0.01, 0.05]) if quick else np.geomspace(0.005, 1.0, 8)
    eps2 = np.linspace(2e-4, 1.4e-3, 4) if quick else np.linspace(1e-4, 2e-3, 12)
    jobs = [(1, float(e), _COST_FIG1(float(e))) for e in eps1]
    jobs += [(2, float(e), _COST_FIG2) for e in eps2]
    jobs += [(3, n, _COST_FIG3[n]) for n in _FIG3_NS]
    return jobs, eps2


_FIG3_NS = (10**2, 10**3, 10**4)


# Measured CPU seconds of one Figure 1 point (calibrate_bmg + calibrate_gaussian + GM) at these
# epsilons; interpolated log-log in between.
_FIG1_EPS = (0.005, 0.0107, 0.0227, 0.0484, 0.103, 0.220, 0.469, 1.0)
_FIG1_COST = (0.45, 0.5, 1.5, 1.1, 1.1, 0.7, 0.85, 0.9)
_COST_FIG2 = 0.015  # one get_delta_bounds at n = 1e3
_COST_FIG3 = {10**2: 0.22, 10**3: 0.17, 10**4: 0.19}  # one get_epsilon each
_COST_DRAW = 0.25  # matplotlib's import, or one figure's CSV and PNG (0.18-0.27 s measured on an idle core)


def _COST_FIG1(epsilon: float) -> float:
    return float(np.exp(np.interp(np.log(epsilon), np.log(_FIG1_EPS), np.log(_FIG1_COST))))


def _bar_steps(jobs) -> list[int]:
    """Progress-bar increments of ``jobs``: each unit's estimated cost in whole 0.01 CPU s (>= 1).

    Integers, so the bar's total is their exact sum: it ends at 100 % and never beyond.
    """
    return [max(1, round(100 * w)) for *_, w in jobs]


def figure_title(number: int, title: str, *, quick: bool) -> str:
    """The title of a figure's PNG: the paper's name on two lines, then "Figure k: ..." wrapped to the
    axes' width (never cut off), marked REDUCED for a ``quick`` run (fewer points: not the paper's figure)."""
    reduced = "REDUCED smoke run (--quick), not the paper's figure. " if quick else ""
    caption = textwrap.fill(f"{reduced}Figure {number}: {title}", width=72)
    return f"'Shuffling-Aware Optimization for Private Vector\nMean Estimation'\n{caption}"


#: The first column of every CSV of a ``quick`` run (absent from the full run's), and its value on each row: a
#: reduced CSV opened alone is never taken for the paper's figure (docs/cli.md §11).
REDUCED_COLUMN = "REDUCED"
REDUCED_VALUE = "quick smoke run (--quick): fewer points, not the paper's figure"

#: The files' stems that :func:`write_figures` writes (``STEM.csv`` and ``STEM.png`` each), in order.
FIGURE_STEMS = ("figure1_utility", "figure2_privacy_profile", "figure3_n_scaling")

def write_figures(out_dir, *, quick: bool = False, progress: bool | None = None, only=None) -> dict[str, str]:
    """Compute Figures 1-3 and write ``figure{1,2,3}_*.csv`` and ``.png`` into ``out_dir``.

    ``only`` (a name of :data:`~sharpdp.apps.figure_names.FIGURE_NAMES` or a list of them; None: all three) computes and writes those figures
    alone, each with the same points and values as in the full job (their files only; the others are not touched).

    ``quick`` uses fewer epsilon points (for tests), and its CSVs start with the column :data:`REDUCED_COLUMN`
    (:data:`REDUCED_VALUE` on every row), its titles with "REDUCED". One progress bar covers the whole job
    (``progress=None``: shown on stderr when the job takes more than a second; False: never);
    it shows the percentage done, each step weighted by its estimated CPU cost on an idle core
    (``figure_jobs``), and a time estimate from the rate observed on the running machine.
    Returns the written paths.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    numbers = figure_numbers(only)
    jobs, eps2 = figure_jobs(quick)
    jobs = [j for j in jobs if j[0] in numbers]
    steps = _bar_steps(jobs)
    label = "Figures 1-3" if len(numbers) == 3 else "Figure" + "s" * (len(numbers) > 1) + " " + " and ".join(
        map(str, numbers))
    draw = _bar_steps([(_COST_DRAW,)])[0]  # matplotlib's import, then each figure's drawing, inside the same bar
    with progress_bar(total=sum(steps) + draw * (len(numbers) + 1), desc=label, delay=1.0, disable=progress is False,
                      bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]") as bar:
        return _compute_and_draw(out, numbers, jobs, eps2, steps, draw, quick, bar)


def _compute_and_draw(out, numbers, jobs, eps2, steps, draw, quick, bar) -> dict[str, str]:
    """``write_figures``' work inside its progress bar: the figures' points, then their CSVs and PNGs."""
    rows1, rows3 = [], []
    bmg2 = bmg_for_rmse(FIG23_GAMMA, FIG23_RMSE, FIG23_N)
    acc2 = ShuffleAccountant(bmg2, FIG23_N)
    lo2, up2 = {}, {}
    for (fig, arg, _), w in zip(jobs, steps):
        if fig == 1:
            rows1.append(utility_curve(np.array([arg]), progress=False))
        elif fig == 2:
            lo2[arg], up2[arg] = acc2.get_delta_bounds(arg)
        else:
            rows3.append(n_scaling((arg,)))
        bar.update(w)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

    bar.update(draw)
    paths = {}
    specs = [] if 1 not in numbers else [
        (FIGURE_STEMS[0], pd.concat(rows1, ignore_index=True), "epsilon",
         ["rmse_bmg", "rmse_gaussian_local", "rmse_gm"], "RMSE per coordinate", "n = 1e4, delta = 1e-5", True)]
    if 2 in numbers:
        # as in privacy_profile: the upper value at eps' certifies every eps >= eps' (non-increasing)
        up_sorted = np.minimum.accumulate(np.array([up2[e] for e in eps2]))
        f2 = pd.DataFrame({"epsilon": eps2, "delta_bmg": up_sorted, "delta_bmg_lower": [lo2[e] for e in eps2],
                           "delta_gm": gaussian_mechanism_delta(eps2, FIG23_RMSE, 1.0 / FIG23_N),
                           "gamma": bmg2.gamma, "sigma0": bmg2.sigma0})
        specs.append((FIGURE_STEMS[1], f2, "epsilon", ["delta_bmg", "delta_gm"], "delta(epsilon)",
                      f"n = 1e3, RMSE = {FIG23_RMSE} (gamma = {f2.gamma[0]}, sigma0 = {f2.sigma0[0]:.4f})", True))
    if 3 in numbers:
        f3 = pd.concat(rows3, ignore_index=True)
        specs.append((FIGURE_STEMS[2], f3, "n", ["rmse_bmg", "rmse_gm"], "RMSE per coordinate",
                      f"fixed BMG (gamma = {f3.gamma[0]}, sigma0 = {f3.sigma0[0]:.4f}), delta = 1e-5", True))
    labels = {"rmse_bmg": "shuffled BMG", "rmse_gaussian_local": "shuffled Gaussian (gamma = 0)",
              "rmse_gm": "central GM", "delta_bmg": "shuffled BMG (certified upper)", "delta_gm": "central GM"}
    for name, df, x, ys, ylabel, title, logy in specs:
        csv = out / f"{name}.csv"
        # a quick CSV says on every row, in its first column, that it is reduced (docs/cli.md §11)
        (df.assign(**{REDUCED_COLUMN: REDUCED_VALUE})[[REDUCED_COLUMN, *df.columns]] if quick else df).to_csv(
            csv, index=False)
        fig, ax = plt.subplots(figsize=(5.6, 4.6))
        for y in ys:
            ax.plot(df[x], df[y], marker="o", label=labels[y])
        if logy:
            ax.set_yscale("log")
        if x == "n":
            ax.set_xscale("log")
        else:  # linear epsilon axis: few ticks, one shared power of ten (labels never overlap)
            fmt = ScalarFormatter(useMathText=True)
            fmt.set_powerlimits((0, 0))
            ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
            ax.xaxis.set_major_formatter(fmt)
        ax.set_xlabel(x)
        ax.set_ylabel(ylabel)
        ax.set_title(figure_title(int(name[6]), title, quick=quick), fontsize=8)
        ax.legend()
        fig.tight_layout()
        png = out / f"{name}.png"
        fig.savefig(png, dpi=120)
        plt.close(fig)
        paths[name] = str(png)
        paths[name + "_csv"] = str(csv)
        bar.update(draw)
    return paths
