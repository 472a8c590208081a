"""The calibrations' checks before any accountant evaluation: ``progress`` validated, and targets no calibrated grid
release can meet refused, epsilon above EPS_MAX and delta at or below :func:`delta_floor`, the release sampler's
smallest charge (docs/calibration.md §5). Moved from ``calibration.search``, which re-exports these names."""

from __future__ import annotations

import math
from typing import Any

# Fewest entries of the BMG sampler's noise table on the default grid: ceil(13.2 s) + 1, s >= 2^8 (delta_floor)
_MIN_TABLE_ENTRIES = math.ceil(13.2 * 2.0**8) + 1


def check_progress(progress: Any) -> bool | None:
    """``progress`` validated: None, True or False (a TypeError naming it otherwise)."""
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None, got {type(progress).__name__} {progress!r:.40}")
    return progress


def delta_floor(n: int, epsilon: float, dim: int) -> float:
    """Float (1 + e^min(epsilon, eps_tau)) n eta_min rounded down, eta_min = dim (3381 2^-128 + TAIL_BOUND) the
    smallest ``sampler_tv`` of a BMG on its default grid (docs/calibration.md §5, docs/sampling.md §4): no BMG of
    ``dim`` >= 1 on that grid with sigma0 >= 2^-44 (every sigma0 the calibration searches) certifies delta <= it for
    ``n`` >= 1 users at ``epsilon`` (nats, >= 0); :func:`check_targets` refuses those."""
    from sharpdp._tables import TAIL_BOUND
    # (s = sigma0 2^k >= 2^8 for sigma0 >= 2^-44: >= 3381 entries; the factor 1 - 1e-9 covers the products' ulps)
    tau = n * dim * (_MIN_TABLE_ENTRIES * 2.0**-128 + TAIL_BOUND)
    eps_c = min(epsilon, 60.0, 0.5 * math.log(1.0 / tau))
    return (1.0 + math.exp(eps_c)) * tau * (1.0 - 1e-9)


def check_targets(n: int, epsilon: float, delta: float, dim: int) -> None:
    """Refuse targets no calibrated grid release can meet, before any evaluation (ValueError naming the argument):
    epsilon above EPS_MAX (e^epsilon must be finite; delta(epsilon) is non-increasing, so a randomizer calibrated at
    EPS_MAX is certified for every larger epsilon), and delta at or below :func:`delta_floor`, the release sampler's
    smallest charge g(n eta_min): every certified upper value includes g(tau) = (1 + e^eps') tau, tau = n sampler_tv,
    eps' = min(epsilon, eps_tau), eps_tau = min(60, ln(1/tau) / 2), increasing in tau (docs/calibration.md §5)."""
    from sharpdp.shuffle.accountant.limits import EPS_MAX

    if epsilon > EPS_MAX:
        raise ValueError(f"epsilon: {epsilon!r} nats is above {EPS_MAX}, the largest epsilon the calibration "
                         f"supports (e^epsilon must be finite); delta(epsilon) is non-increasing, so a randomizer "
                         f"calibrated at epsilon = {EPS_MAX} is certified for every larger epsilon")
    floor = delta_floor(n, epsilon, dim)
    if delta <= floor:
        raise ValueError(f"delta: {delta!r} is at or below {floor:.3g}, the smallest delta the released messages "
                         f"can be certified for at any sigma0 at epsilon = {epsilon!r}: the release sampler's "
                         f"charge (1 + e^min(epsilon, eps_tau)) n sampler_tv with sampler_tv >= dim (3381 2^-128 + "
                         f"1e-38) (docs/calibration.md §5, docs/sampling.md §4)")
