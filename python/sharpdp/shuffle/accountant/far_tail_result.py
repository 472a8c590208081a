"""A far-tail round's result and what the accountant reads from it (docs/accountant_tail.md §2-§7, §14, §34.2).

:class:`FarTailBracket` holds a round of :func:`~.far_tail.certify_bigjump`: its certified bracket of D_up, the clamp
T0, the grid (h, B, N), its terms and its hat lattice law. :func:`law_bracket` turns it into the accountant's per-law
:class:`~.results.LawBracket`; :func:`positive_prob_up` bounds P(L_1 + S_{n-1} > 0) from it, the factor of the stored
law's rounding charge on the lower value (§14). Moved from :mod:`.far_tail`, which re-exports ``FarTailBracket`` and
``positive_prob_up`` and keeps the name ``_bracket``; the same floats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sharpdp.shuffle.accountant import concentrated
from sharpdp.shuffle.accountant.far_tail_shift import shift_prob_up
from sharpdp.shuffle.accountant.jump import JumpTerm
from sharpdp.shuffle.accountant.lattice import LatticeLaws, PassResult
from sharpdp.shuffle.accountant.limits import TINY
from sharpdp.shuffle.accountant.results import Grid, LawBracket
from sharpdp.shuffle.laws import Law


@dataclass(frozen=True)
class FarTailBracket:
    """Certified bracket of D_up by the far-tail treatment (docs/accountant_tail.md §2-§7): the
    values, the clamp T0, the grid (h, B, N) and the terms (pair term ``multi``, body bracket,
    lower-clamp penalty, jump term, the body's engine pass)."""

    lower: float
    upper: float
    T0: float
    h: float
    B: float
    N: int
    multi: float
    body_up: float
    body_lo: float
    penalty_B: float
    jump: JumpTerm
    body: PassResult | None = None
    hat: LatticeLaws | None = None  # the hat lattice law of the round (for :func:`positive_prob_up`)
    coarse_fit: bool = False  # §28's run was the default request's (a finer request's did not fit; §37.1)


def positive_prob_up(law: Law, gamma: float, n: int, r: FarTailBracket, target: float = 0.0) -> float:
    """Upper bound on P(L_1 + S_{n-1} > 0), S_{n-1} the sum of n - 1 users' B_j L_j, from a round ``r`` of
    :func:`~.far_tail.certify_bigjump` on ``law`` (docs/accountant_tail.md §14, §34.2): the least of Lemma 14's bounds over the
    splits of :func:`~.far_tail_shift.shift_prob_up` with the round's hat law and clamps (stopping at the first at or
    below ``target``), or §18's own bound for a closed-form value. 1.0 where not available (m >= 0, no hat law)."""
    if r.hat is None and r.N == 0 and math.isnan(r.h):  # a value of §18: its own bound (§18 (f))
        return concentrated.positive_prob_up(law, gamma, n, r.T0)
    if r.hat is None:
        return 1.0
    return shift_prob_up(law, gamma, n, r.hat, r.h, r.T0, target)


def law_bracket(r: FarTailBracket) -> LawBracket:
    """The accountant's per-law bracket of a far-tail result."""
    terms = dict(bigjump_T0=r.T0, body_upper=r.body_up, body_lower=r.body_lo, jump_upper=r.jump.up,
                 jump_lower=r.jump.lo, pair_term=r.multi, lower_tail_penalty=r.penalty_B)
    return LawBracket(r.lower, max(r.upper, TINY), grid=Grid(h=r.h, N=r.N, T=r.T0, B=r.B), terms=terms)


__all__ = ["FarTailBracket", "law_bracket", "positive_prob_up"]
