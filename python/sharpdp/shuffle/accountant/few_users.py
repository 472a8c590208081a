"""get_epsilon at small n (docs/accountant.md §8.15): the few-user bracket of docs/accountant.md §6.8
(:func:`sharpdp.shuffle.accountant.closed_forms.small_n_bracket`) as phase 1's model value and as a certified lower
value of D_up at phase 2's expected lower ends. Choices of points only: the model value places points, and a lower
value above delta makes a point a lower end exactly as the closed forms of docs/accountant.md §8.1 do."""

from __future__ import annotations

from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.closed_forms import few_user_n_max, small_n_bracket


def few_user_bracket(pairs: Any, n: int) -> tuple[float, float] | None:
    """(max over the laws of their few-user lower values, max of their upper values) at n users, for the laws
    ``pairs`` ((gamma, law) as ``laws_for`` gives them) of one epsilon; the first is a certified lower value of D_up
    (the maximum over the laws of the blanket divergences, docs/accountant.md §6.8), so of ``get_delta`` there.
    None where the rule is off (``limits.EPS_FEW_USERS``), n > ``few_user_n_max()`` (500, or beyond it under
    docs/accountant.md §8.16), no law has a positive top, or a law
    with a positive top has no few-user bracket (not continuous, or none formed). A law whose top is <= 0 has D_up =
    0 and is left out, as in the search's values. The two-user quadrature is computed where the other terms' gap is
    within 0.5 ``limits.EPS_FEW_WIDTH`` of the value (small_n_bracket's ``rel_tol``)."""
    if not limits.EPS_FEW_USERS or not 2 <= n <= few_user_n_max():
        return None
    lo = up = 0.0
    for gamma, law in pairs:
        if not law.top_bound() > 0:
            continue
        if not getattr(law, "continuous", False):
            return None
        jb = small_n_bracket(law, float(gamma), n, float(limits.EPS_FEW_WIDTH))
        if jb is None:
            return None
        lo, up = max(lo, float(jb[0])), max(up, float(jb[1]))
    return (lo, up) if up > 0.0 else None


def few_user_model(pairs: Any, n: int) -> float | None:
    """Phase 1's model value at one epsilon where the few-user bracket is narrow (docs/accountant.md §8.15; not a
    bound): its lower value where upper <= (1 + ``limits.EPS_FEW_WIDTH``) lower, else None (phase 1's upper-only
    pass, as before). The lower value, not the middle: where one user's jump makes D_up (the bulk of the law near its
    bottom, a heavy tail above, docs/accountant.md §6.8 (b)) the lower value is within 1e-3 of D_up while the upper
    value carries the two-jump term (BMG(0.0511, 0.567), n = 100, eps = 7.95: 9.9992e-7 against get_delta's
    1.0000e-6, upper 1.0861e-6)."""
    jb = few_user_bracket(pairs, n)
    if jb is None or not 0.0 < jb[0] or jb[1] > (1.0 + float(limits.EPS_FEW_WIDTH)) * jb[0]:
        return None
    return jb[0]


def few_user_lower(pairs: Any, n: int) -> float:
    """The certified lower value of :func:`few_user_bracket` (0.0 where none is formed)."""
    jb = few_user_bracket(pairs, n)
    return jb[0] if jb is not None else 0.0


__all__ = ["few_user_bracket", "few_user_lower", "few_user_model"]
