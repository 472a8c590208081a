"""A certified lower value of D_up from the single big jump (docs/accountant.md §8.12): the closed forms that rule out
get_epsilon's answer 0 at large n, where the lower values of §8.1 (Jensen over n users, the single active user) vanish.

With S = sum_{i<=n} X_i, X_i = B_i L_i (B_i ~ Bernoulli(gamma)), D_up = E[S_+] / (n gamma). For any c >= 0 the events
"X_j > c and X_i <= c for every i != j" are disjoint; on each, S_+ >= the others' sum's contribution is bounded below by
Jensen over the others restricted to {X_i <= c}:

    D_up >= p^(n-1) E[(L - max(c, T_c))_+],   p = P(X <= c) = 1 - gamma P(L > c),
    T_c = -(n - 1) E[X 1{X <= c}] / p = (n - 1) gamma (-E[L] + E[L 1{L > c}]) / p,

(the proof: docs/accountant.md §8.12). Here c is the others' mean shift (n - 1) gamma (-E[L]), and every unknown is
replaced by a closed-form bound on the safe side: P(L > c) <= 2 E[(L - c/2)_+] / c (Markov), E[L 1{L > c}] <= E[(L - c)_+]
+ 2 E[(L - c/2)_+], E[L] >= the law's mean less its value error; thresholds and the weight rounded on the safe side."""

from __future__ import annotations

import math
from typing import Any

from sharpdp.shuffle.accountant.closed_forms import stop_loss_bracket

#: relative rounding allowances: the threshold rounded up by this (a few ulp of its handful of operations), the
#: value and the weight p^(n-1) each rounded down by it
_ROUND = 1e-12


def jump_lower(law: Any, gamma: float, n: int) -> float:
    """Certified lower value of one law's D_up at n users (docs/accountant.md §8.12); 0 where none is formed (a
    trivially bounded law, no positive top, E[L] not available or not negative, n < 2).

    Parameters
    ----------
    law : Law
        One law of the randomizer at the eps of interest (``laws_for``).
    gamma : float
        Its blanket weight, in (0, 1].
    n : int
        Number of users.

    Returns
    -------
    float
        p_lo^(n-1) E[(L - T_up)_+] rounded down, <= D_up of this law (hence of the maximum over the laws, and of
        every certified upper value of delta at this eps or any smaller one).
    """
    if getattr(law, "trivial_bound", False) or not law.top_bound() > 0 or n < 2 or not 0.0 < gamma <= 1.0:
        return 0.0
    try:
        mu = law.mean()
    except (ArithmeticError, ValueError, NotImplementedError):
        return 0.0
    neg = -mu + law.value_error  # >= -E[L] of the exact law (its mean >= mu - err)
    if not (math.isfinite(neg) and neg > 0.0):
        return 0.0
    act = (n - 1) * gamma
    c = act * neg  # (any c >= 0 is valid: the others' mean shift puts the bound at the single big jump's value)
    if not (math.isfinite(c) and c > 0.0):
        return 0.0
    half = stop_loss_bracket(law, 0.5 * c)[1]  # >= E[(L - c/2)_+]
    above = stop_loss_bracket(law, c)[1]  # >= E[(L - c)_+]
    q = min(2.0 * half / c * (1.0 + _ROUND), 1.0)  # >= P(L > c)
    gq = gamma * q * (1.0 + _ROUND)  # >= gamma P(L > c) = 1 - p
    if not gq < 1.0:
        return 0.0
    p_lo = (1.0 - gq) * (1.0 - _ROUND)  # <= p
    t_up = max(act * (neg + above + 2.0 * half) / p_lo * (1.0 + 4.0 * _ROUND), c)  # >= max(c, T_c)
    if not math.isfinite(t_up):
        return 0.0
    val = stop_loss_bracket(law, t_up)[0]  # <= E[(L - t_up)_+] <= E[(L - max(c, T_c))_+]
    if not (val > 0.0 and math.isfinite(val)):
        return 0.0
    weight = math.exp((n - 1) * math.log1p(-gq)) * (1.0 - _ROUND)  # <= p^(n-1)
    return max(val * weight * (1.0 - _ROUND), 0.0)


def jump_lower_max(pairs: list[Any], n: int) -> float:
    """The largest :func:`jump_lower` over the (gamma, law) pairs (a lower value of the reported D_up, their maximum)."""
    return max((jump_lower(law, float(g), n) for g, law in pairs), default=0.0)


__all__ = ["jump_lower", "jump_lower_max"]
