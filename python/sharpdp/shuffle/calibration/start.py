"""The calibration search's start (docs/calibration.md §3 step 0): where the base model meets the target, and the
model's optimum of the objective along that boundary; ``expit``. Models only: nothing here is a bound."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq, minimize_scalar

# Search box: log sigma0 (below 0.1 the laws are so heavy-tailed that one evaluation takes very long; chi_lo <
# 1e-12 there for every gamma, as in the previous search's limit), and logit(gamma).
X_BOX = (math.log(0.1), math.log(1e12))
T_BOX = (-20.7, 34.5)
# The start's search in logit(gamma) around the template's optimal BMG.
_START_T = 4.0


def model_root(base: Callable[..., float], t: float | None, target: float) -> float:
    """x in X_BOX where the base model meets ``target`` at shape t (the box's end if it does not)."""
    f = lambda x: base(x, t) - target  # noqa: E731  (decreasing in x)
    lo, hi = X_BOX
    if f(lo) <= 0.0:
        return lo
    if f(hi) >= 0.0:
        return hi
    return brentq(f, lo, hi, xtol=1e-6)


def model_start(base: Callable[..., float], objective: Callable[..., float], target: float,
                 t_guess: float) -> tuple[float, float]:
    """(x, t) of least objective on the base model's boundary, t within _START_T of t_guess."""
    def err(t: float) -> float:
        return objective(model_root(base, t, target), t)

    lo_t, hi_t = max(t_guess - _START_T, T_BOX[0]), min(t_guess + _START_T, T_BOX[1])
    ts = np.linspace(lo_t, hi_t, 25)
    vals = [err(t) for t in ts]
    k = int(np.argmin(vals))
    a, b = ts[max(k - 1, 0)], ts[min(k + 1, len(ts) - 1)]
    t_best = float(ts[k])
    res = minimize_scalar(err, bounds=(a, b), method="bounded", options={"xatol": 1e-2})
    if res.fun < vals[k]:
        t_best = float(res.x)
    return model_root(base, t_best, target), t_best


def expit(t: float) -> float:
    return 1.0 / (1.0 + math.exp(-t)) if t >= 0 else math.exp(t) / (1.0 + math.exp(t))
