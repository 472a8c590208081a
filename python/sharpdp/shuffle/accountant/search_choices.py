"""Choices of get_epsilon's search made in session 36 (docs/accountant.md §8.14): the rel_tol of its loose looks and
when phase 1's model follows one law alone. Choices of points only: nothing here is a bound, every value the search
reads from them is a certified bracket or an upper-only value used as a model (docs/accountant.md §8, step 4)."""

from __future__ import annotations

from sharpdp.shuffle.accountant import limits

#: the looks' rel_tol below ``limits.EPS_LOOK_REL_N`` (and everywhere with ``limits.EPS_LOOK_REL_LARGE`` = 0.1)
LOOK_REL = 0.1


def look_rel(n: int) -> float:
    """The rel_tol of the loose look at the phase-1 root (docs/accountant.md §8.4) at n users:
    ``limits.EPS_LOOK_REL_LARGE`` (0.3) at n >= ``limits.EPS_LOOK_REL_N`` (1e8), else 0.1 (docs/accountant.md §8.14.1;
    the walk's later looks, §8.8, stay at 0.1). A look's bracket is certified at any rel_tol; the search uses its lower
    value (a lower end where it exceeds delta) and its geometric middle (a model value), so the choice moves points,
    never a bound."""
    return float(limits.EPS_LOOK_REL_LARGE) if n >= limits.EPS_LOOK_REL_N else LOOK_REL


def tie_lead(vals: dict[int, float]) -> int | None:
    """The law phase 1's model follows alone from now on where the largest two of ``vals`` (each law's upper-only value
    at one model point, by law index) lie within ``limits.EPS_TIE_LEAD`` (relative) of each other: the larger one
    (docs/accountant.md §8.14.2). None where fewer than two values are given, the rule is off (0.0) or the two are
    farther apart (then the 10 % rule of docs/accountant_atoms.md §8 decides, as before)."""
    tie = float(limits.EPS_TIE_LEAD)
    if not tie > 0.0 or len(vals) < 2:
        return None
    order = sorted(vals, key=lambda i: vals[i])
    top, second = vals[order[-1]], vals[order[-2]]
    if not (top > 0.0 and second > 0.0) or top > (1.0 + tie) * second:
        return None
    return order[-1]


__all__ = ["LOOK_REL", "look_rel", "tie_lead"]
