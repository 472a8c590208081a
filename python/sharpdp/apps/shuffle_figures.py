"""Regenerate the numerical evaluation of seed 001 (Section 5, Figures 1-3).

Every privacy number here comes from the certified :class:`ShuffleAccountant`
(never from the asymptotic template). The central Gaussian mechanism (GM) is
the analytic one with sensitivity 1/n, as in the seed. RMSE is per coordinate,
``sqrt(Err_n / d)`` with ``Err_n = Err_1 / n`` and ``d = 1``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from sharpdp import _validation as V
from sharpdp._progress import progress_bar
from sharpdp.conversions import gaussian_mechanism_delta, gaussian_mechanism_sigma
from sharpdp.shuffle.accountant import ShuffleAccountant
from sharpdp.shuffle.calibration import calibrate_bmg, calibrate_gaussian
from sharpdp.shuffle import BlanketMixedGaussian

#: Figure 2-3 randomizer: gamma = 0.95 with sigma0 solved for RMSE = 3.16 at n = 1e3.
#: The seed's caption value sigma0 = 4.6 gives RMSE 2.913 by its own formula (errata).
FIG23_GAMMA = 0.95
FIG23_RMSE = 3.16
FIG23_N = 1000


def bmg_for_rmse(gamma: float, rmse: float, n: int) -> BlanketMixedGaussian:
    """The 1-D BMG with blanket mass ``gamma`` whose per-coordinate RMSE at n users is ``rmse``.

    Solves ``Err_1(gamma, sigma0) / n = rmse^2`` for sigma0 (seed 001, Section 4.2).

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


def write_figures(out_dir, *, quick: bool = False, progress: bool | None = None) -> dict[str, str]:
    """Compute Figures 1-3 and write ``figure{1,2,3}_*.csv`` and ``.png`` into ``out_dir``.

    ``quick`` uses fewer epsilon points (for tests). Returns the written paths.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    f1 = utility_curve(np.array([0.01, 0.05]) if quick else None, progress=progress)
    f2 = privacy_profile(np.linspace(2e-4, 1.4e-3, 4) if quick else None)
    f3 = n_scaling()
    paths = {}
    specs = [
        ("figure1_utility", f1, "epsilon", ["rmse_bmg", "rmse_gaussian_local", "rmse_gm"], "RMSE per coordinate",
         "n = 1e4, delta = 1e-5", True),
        ("figure2_privacy_profile", f2, "epsilon", ["delta_bmg", "delta_gm"], "delta(epsilon)",
         f"n = 1e3, RMSE = {FIG23_RMSE} (gamma = {f2.gamma[0]}, sigma0 = {f2.sigma0[0]:.4f})", True),
        ("figure3_n_scaling", f3, "n", ["rmse_bmg", "rmse_gm"], "RMSE per coordinate",
         f"fixed BMG (gamma = {f3.gamma[0]}, sigma0 = {f3.sigma0[0]:.4f}), delta = 1e-5", True),
    ]
    labels = {"rmse_bmg": "shuffled BMG", "rmse_gaussian_local": "shuffled Gaussian (gamma = 0)",
              "rmse_gm": "central GM", "delta_bmg": "shuffled BMG (certified upper)", "delta_gm": "central GM"}
    for name, df, x, ys, ylabel, title, logy in specs:
        csv = out / f"{name}.csv"
        df.to_csv(csv, index=False)
        fig, ax = plt.subplots(figsize=(5, 4))
        for y in ys:
            ax.plot(df[x], df[y], marker="o", label=labels[y])
        if x == "n":
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel(x)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        ax.legend()
        fig.tight_layout()
        png = out / f"{name}.png"
        fig.savefig(png, dpi=120)
        plt.close(fig)
        paths[name] = str(png)
        paths[name + "_csv"] = str(csv)
    return paths
