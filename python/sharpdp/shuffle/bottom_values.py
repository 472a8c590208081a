"""Cheap certified comparisons for a replace-one round bounded through bot, from its zero-out legs
(``docs/composition.md`` §2.11).

The accountant of such a round reports, at eps, the certified value of one split e1 + e2 = eps of the weak triangle
inequality, A(e1) + e^{e1} B(e2) (A: x vs bot, B: bot vs x, each the zero-out certification of that order; the split
found by a search: ``docs/accountant.md`` §9). A search costs up to a dozen leg certifications at the accountant's
``rel_tol`` (0.5-3 s at n = 1e4); one leg at rel_tol 0.1 costs ~0.01-0.03 s. Where only the comparison of the
round's value with a level matters (the doubling search of the export step, ``docs/composition.md`` §5.1), two facts
decide most points from legs alone:

* **above**: every split's certified value is >= max(A_lo(eps), B_lo(eps)), the legs' certified lower values at eps
  (A_up(e1) >= D_A(e1) >= D_A(eps) >= A_lo(eps), D_A non-increasing; e^{e1} B_up(e2) >= D_B(e2) >= D_B(eps)), and so
  is the running minimum of such values over eps' <= eps; so a level below that is below every value the accountant
  can report at eps (the same decision as the full search's);
* **at most the level**: any split's certified value is a certified upper value of the round's delta at eps.
"""

from __future__ import annotations

import math
from collections.abc import Callable

_U = 2.0**-53
LEG_TOL = 0.1  # rel_tol of the legs of the cheap comparisons
# first-leg fractions f (e1 = f eps) tried, in this order, for a split at or below the level (stops at the first)
SPLIT_FS = (0.5, 0.65, 0.8, 0.35, 0.9, 0.95, 0.975, 0.99)


def bottom_of(accountant):
    """The replace bound through bot of ``accountant`` (a :class:`sharpdp.shuffle.accountant.ViaBottom`: ``leg``,
    ``split``, ``bottom``), or None for a round with its own law."""
    if not getattr(accountant, "via_bottom", False):
        return None
    vb = getattr(accountant, "_bottom", None)
    return vb if callable(getattr(vb, "leg", None)) and callable(getattr(vb, "split", None)) else None


def level_decider(accountant, level: float) -> Callable[[float], float | None] | None:
    """``decide(eps)`` for a round bounded through bot (None for any other round): a value deciding the comparison of
    the round's certified delta at eps (>= 0) with ``level`` from its legs at rel_tol LEG_TOL, or None where the legs
    do not decide it (the caller then asks the accountant).

    A returned value > ``level`` is max(A_lo(eps), B_lo(eps)) rounded down: a certified lower value of every upper
    value the accountant can report at eps (module docstring), so the accountant's value there is > ``level`` too (the
    value itself is only an estimate of delta). A returned value <= ``level`` is a split's certified upper value of
    delta at eps (fractions SPLIT_FS). Above the legs' ``eps_tau`` (the release sampler's rule, docs/accountant.md
    §9.1) or beyond 60 nats: None."""
    vb = bottom_of(accountant)
    if vb is None:
        return None
    top = min(60.0, float(getattr(vb.bottom, "eps_tau", math.inf)))
    memo: dict[float, float | None] = {}

    def decide(eps: float) -> float | None:
        if eps in memo:
            return memo[eps]
        out: float | None = None
        if 0.0 <= eps <= top:
            lo = max(vb.leg(0, eps, LEG_TOL).lower, vb.leg(1, eps, LEG_TOL).lower) * (1.0 - 4 * _U)
            if lo > level:
                out = lo
            elif eps > 0.0:
                out = _split_at_most(vb, eps, level)
        memo[eps] = out
        return out

    return decide


def _split_at_most(vb, eps: float, level: float) -> float | None:
    """The certified value of the first split of SPLIT_FS (legs at LEG_TOL) that is <= ``level``, or None. Splits
    that cannot be are skipped (speed only): a split at f has a value >= A(f eps) >= A_lo(f eps) and >= e^{f eps}
    B_lo(eps - f eps), so once A_lo(f eps) > level no split at f' <= f can be <= level (A non-increasing), and once
    e^{f eps} B_lo((1 - f) eps) > level none at f' >= f can (e^{e1} grows and B(e2) does not fall as e2 shrinks);
    leg B first (cheap where e2 is small)."""
    f_lo, f_hi = 0.0, 1.0
    for f in SPLIT_FS:
        if not f_lo < f < f_hi:
            continue
        e1 = f * eps
        rb = vb.leg(1, vb._second(eps, e1), LEG_TOL)
        if math.exp(e1) * rb.lower * (1.0 - 8 * _U) > level:
            f_hi = f
            continue
        if vb.leg(0, e1, LEG_TOL).lower * (1.0 - 4 * _U) > level:
            f_lo = f
            continue
        s = vb.split(eps, f, LEG_TOL, absolute=False, b_tol=LEG_TOL)  # (its legs cached by the two above)
        if s.upper <= level:
            return float(s.upper)
    return None
