"""The probability factor of the stored law's rounding charge on the far-tail lower value (docs/accountant_tail.md
§14, §34.2): an upper bound on P(L_1 + S_{n-1} > 0), the least of Lemma 14's bounds over a few splits (t, y).

Every split t, y > 0 gives a valid bound (§14):

    P(L_1 + S_{n-1} > 0) <= P(L > t) + P(A'_B > -t - y) + (n - 1) gamma P(L > T0 + y) + ((n - 1) gamma P(L > T0))^2 / 2,

so the least over a finite list of splits is one too. The list starts with §14's split t = |m|/2, y = |m|/4
(m = (n - 1) gamma E[L] < 0), so that the bound is never larger than that split's, and goes on to smaller sums t + y
(the sum A'_B concentrates near m: P(A'_B > -t - y) falls fast as t + y shrinks), stopping at the first bound at or
below the caller's ``target``.
"""

from __future__ import annotations

import math

from sharpdp.shuffle.accountant.chernoff import Chernoff, capped_exp
from sharpdp.shuffle.accountant.lattice import LatticeLaws
from sharpdp.shuffle.laws import Law

# the splits (t / |m|, y / |m|), §14's first, then smaller sums t + y (powers of two: t, y exact; a choice, any t, y > 0
# is valid; docs/accountant_tail.md §34.2)
SPLITS = ((0.5, 0.25), (0.25, 0.25), (0.125, 0.25), (0.125, 0.125), (0.0625, 0.125), (0.0625, 0.0625),
          (0.03125, 0.0625), (0.03125, 0.03125))


def shift_prob_up(law: Law, gamma: float, n: int, hat: LatticeLaws, h: float, T0: float, target: float = 0.0) -> float:
    """Upper bound on P(L_1 + S_{n-1} > 0), S_{n-1} the sum of n - 1 users' B_j L_j, from the hat lattice law ``hat``
    (step ``h``) of a far-tail round at the clamp ``T0`` (docs/accountant_tail.md §14, §34.2): the least of Lemma 14's
    bounds over :data:`SPLITS` (t, y) = (a |m|, b |m|), m = (n - 1) gamma E[L] < 0, in that order, stopping at the first
    at or below ``target``; P(A'_B > -t - y) by the Chernoff bound of the (n - 1)-fold hat law. 1.0 where m >= 0
    (or not finite) or n < 2.

    Parameters
    ----------
    law : Law
        The (raised) law of the round.
    gamma : float
        The activity probability.
    n : int
        The number of users.
    hat : LatticeLaws
        The round's lattice laws (the hat law ``g``, ``eta``, ``k0``).
    h : float
        The round's lattice step.
    T0 : float
        The round's clamp.
    target : float
        Stop at the first bound at or below this (0: every split).

    Returns
    -------
    float
        The bound, in (0, 1].
    """
    m = (n - 1) * gamma * law.mean()
    if not (m < 0.0 and math.isfinite(m)) or n < 2:
        return 1.0
    ch = Chernoff(hat.g, hat.eta, hat.k0, h, n - 1)
    best, pT = 1.0, 0.0
    for i, (a, b) in enumerate(SPLITS):
        t, y = a * abs(m), b * abs(m)
        p_one = float(law.prob_above_up([t])[0])
        if i == 0:  # (§14's split: its terms computed as before this section, the same floats)
            p_body = capped_exp(ch.log_p_above(-t - y))
            pT, pTy = (float(v) for v in law.prob_above_up([T0, T0 + y]))
        else:  # (the point one float below the computed -t - y: at or below the exact one; §34.2)
            p_body = capped_exp(ch.log_p_above(math.nextafter(-t - y, -math.inf)))
            pTy = float(law.prob_above_up([T0 + y])[0])
        p_jump = (n - 1) * gamma * pTy + ((n - 1) * gamma * pT) ** 2 / 2.0
        best = min((p_one + p_body + p_jump) * (1 + 1e-9), best)
        if best <= target:
            break
    return best


__all__ = ["SPLITS", "shift_prob_up"]
