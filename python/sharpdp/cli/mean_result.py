"""The result dictionary of ``sharpdp mean``, one place for both engines (local and ``--engine dask``).

Both paths hand over the same figures (the release, the calibration's certified bracket, the true values for the
diagnostics file); this module derives the rest (expected and central RMSE, the notes) so that the two outputs have
the same keys and words, the engine's own figures added by the caller.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np


#: ``sharpdp mean`` warns when the expected error per coordinate is at least this share of the bounds' range (a 95 %
#: interval of about +-2 RMSE then spans at least 40 % of the range: docs/cli.md §9.1); the "no better than the
#: midpoint" warning comes at half the range.
LARGE_ERROR_SHARE = 0.1


def useless_warning(expected_rmse: float, d: int) -> str | None:
    """The warning for a release whose expected error per coordinate is large, or None: at least half the bounds'
    range (every unit-ball coordinate lies in [-1/sqrt(d), 1/sqrt(d)], a range of 2/sqrt(d)), the estimate is no
    better than the bounds' midpoint; at least :data:`LARGE_ERROR_SHARE` of the range, the error is large (the
    default epsilon 0.01 on a CSV of a thousand rows: 19 % of the range, no warning before session 32). A function
    of n, d and the calibration only: publishable (the share of the range names no bound)."""
    share = expected_rmse * math.sqrt(d) / 2.0
    if expected_rmse >= 1.0 / math.sqrt(d):
        return (f"the expected error per coordinate ({expected_rmse:.3g} scaled units) is at least half the bounds' "
                "range: the estimate is no better than the bounds' midpoint (raise --epsilon or --delta, or use more "
                "rows)")
    if share >= LARGE_ERROR_SHARE:
        return (f"the expected error per coordinate is large: {100 * share:.3g} % of the bounds' range "
                f"({expected_rmse:.3g} scaled units; the RMSE column gives it in original units): the estimate's 95 % "
                f"interval is about +-{200 * share:.3g} % of the range (raise --epsilon or --delta, use more "
                "rows, or tighter public --bounds)")
    return None


def replace_one_implied(epsilon: float, delta: float) -> dict[str, Any]:
    """The replace-one guarantee a zero-out (epsilon, delta) release implies: (2 epsilon, (1 + e^epsilon) delta).

    Tables x and x' that differ in one row are both zero-out neighbours of the table with that row replaced by the
    null record, so for every event S, P(M(x) in S) <= e^eps P(M(null) in S) + delta <= e^{2 eps} P(M(x') in S)
    + (1 + e^eps) delta (the zero-out certificate covers both directions, x vs null and null vs x). delta is
    rounded up (to at most 1).
    """
    # (exp, the sum and the product each round within an ulp or so: a relative 1e-14 margin covers them, upwards)
    d = min(1.0, (1.0 + math.exp(epsilon)) * delta * (1.0 + 1e-14))
    return {"epsilon": 2.0 * epsilon, "delta": d,
            "meaning": "the (epsilon, delta) this zero-out release satisfies under replace-one adjacency (one row "
                       "changed into any other row), by the triangle inequality through the null record; "
                       "--adjacency replace calibrates for replace-one directly (at the same target, less noise than meeting it through "
                       "this bound; more noise than zero-out at the same epsilon)"}


def mean_result(*, source: str, n: int, d: int, columns: list[str], rows_dropped_missing: int, bounds: np.ndarray,
                bounds_source: str, values_clipped: np.ndarray, warnings: list[str], true_mean: np.ndarray,
                true_mean_clipped: np.ndarray, private_mean: np.ndarray, private_mean_scaled: np.ndarray,
                true_mean_clipped_scaled: np.ndarray, scale: np.ndarray, epsilon: float, delta: float, cal: Any,
                rounds: int, engine: dict[str, Any], adjacency: str = "zero_out") -> dict[str, Any]:
    """The ``sharpdp mean`` result (before the diagnostic fields are split off, ``mean.DIAGNOSTIC_FIELDS``).

    ``values_clipped`` holds one count per column; ``cal`` is the calibration's report
    (``calibrate_bmg_report``: ``randomizer``, ``delta_bounds``, ``evaluations``, ``composed_certifications``);
    ``scale`` the unit-ball scaling's original units per scaled unit; ``engine`` the engine's figures
    (``{"engine": "local"}`` or Dask's engine, partitions and workers). A release whose expected error is at
    least half the bounds' range gets a warning (printed to stderr and kept in ``warnings``). ``adjacency`` is the
    relation the calibration certified; a zero-out release also gets ``replace_one_implied``, the (2 epsilon,
    (1 + e^epsilon) delta) it satisfies under replace-one (group privacy through the null record: x -> null -> x'),
    and the central Gaussian's sensitivity is 1/n (zero-out: a row against the null record, all in the unit ball)
    or 2/n (replace-one).
    """
    from sharpdp.cli.notes import bracket_note, delta_bounds_meaning, evaluations_meaning, release_scope
    from sharpdp.shuffle import gaussian_mechanism_sigma

    bmg = cal.randomizer
    delta_lo, delta_cert = (float(v) for v in cal.delta_bounds)
    # the mean of n grid-exact messages has MSE release_mse_single / n, over d coordinates
    expected_rmse = math.sqrt(bmg.release_mse_single / (n * d))
    useless = useless_warning(expected_rmse, d) if epsilon > 0.0 else None
    if useless is not None:
        print(f"sharpdp mean: warning: {useless}", file=sys.stderr)
        warnings.append(useless)
    observed_rmse = float(np.sqrt(np.mean((private_mean_scaled - true_mean_clipped_scaled) ** 2)))
    # per-round central Gaussian for the same K-round budget: K Gaussian rounds of noise sigma
    # compose exactly to one of sigma / sqrt(K)
    sensitivity = (2.0 if adjacency == "replace" else 1.0) / n
    sigma_gm = gaussian_mechanism_sigma(epsilon, delta, sensitivity=sensitivity) * math.sqrt(rounds)
    return {
        "source": source,
        "n": n,
        "d": d,
        "columns": list(columns),
        "rows_dropped_missing": int(rows_dropped_missing),
        "bounds": np.asarray(bounds).tolist(),
        "bounds_source": bounds_source,
        "values_clipped": [int(v) for v in values_clipped],
        "warnings": warnings,
        "true_mean": np.asarray(true_mean).tolist(),
        "true_mean_clipped": np.asarray(true_mean_clipped).tolist(),
        "private_mean": np.asarray(private_mean).tolist(),
        "expected_rmse_per_coordinate": expected_rmse,
        "expected_rmse_original_units": (expected_rmse * scale).tolist(),
        "observed_rmse_per_coordinate": observed_rmse,
        "observed_abs_error_original_units": np.abs(np.asarray(private_mean) - true_mean_clipped).tolist(),
        "epsilon": epsilon,
        "delta_target": delta,
        "delta_certified": delta_cert,
        "delta_bounds": [delta_lo, delta_cert],
        "delta_bounds_meaning": delta_bounds_meaning(rounds),
        # one round: why the bracket is as wide as it is (the calibration's accountant runs at rel_tol 1e-2)
        "delta_bounds_note": None if rounds > 1 else bracket_note(
            delta_lo, delta_cert, (delta_cert - delta_lo) / delta_lo if delta_lo > 0 else math.inf, 1e-2),
        "adjacency": adjacency,
        **({} if adjacency == "replace" else {"replace_one_implied": replace_one_implied(epsilon, delta)}),
        "rounds": rounds,
        "release_scope": release_scope(rounds),
        "accountant_evaluations": cal.evaluations,
        "accountant_evaluations_meaning": evaluations_meaning(rounds),
        **({"composed_certifications": cal.composed_certifications} if rounds > 1 else {}),
        "bmg": {"gamma": bmg.gamma, "sigma0": bmg.sigma0, "chi_lo": bmg.chi_lo, "mse_single": bmg.mse_single},
        "central_gaussian": {
            "sigma": sigma_gm,
            "sensitivity": sensitivity,
            "rmse_per_coordinate": sigma_gm,
            "rmse_original_units": (sigma_gm * scale).tolist(),
        },
        "rmse_ratio_bmg_over_central": expected_rmse / sigma_gm,
        **engine,
    }
