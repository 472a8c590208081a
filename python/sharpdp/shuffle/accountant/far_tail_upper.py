"""An upper-first far-tail run's lower clamp B (docs/accountant_tail.md §77): the bracket's redo with B x 4 followed.

The jump term's upper value E phi_c(A_hat) - c E(A_low + T0)_+ of docs/accountant_tail.md §4 is taken on the sum
A'_B of the per-user terms clamped below at -B: phi is non-decreasing, so a wider clamp lowers it. The bracket
widens B (x 4 per round) where the lower clamp's penalty exceeds 0.05 rel_tol of its value; an upper-first run
(§15) computed no penalty and kept the first round's B, its upper value up to 1 % above the bracket's. Every
round's values are certified at any B (§7), so which rounds run is a choice of speed and tightness only.
"""

from __future__ import annotations

from sharpdp.shuffle.accountant.chernoff import Chernoff, lower_tail_penalty
from sharpdp.shuffle.accountant.lattice import LatticeLaws
from sharpdp.shuffle.laws import Law

# an upper-first round is redone with B x 4 where its penalty exceeds this many times the bracket's level 0.05 rel_tol
# of its value (the upper value moves far less than the lower one: measured 0.6 % at penalty / value 16, 4e-5 at 2e-3)
UPPER_REDO = 20.0
SKIP_OVER = 4.0  # a round is skipped before its jump term where its penalty exceeds this many times the redo's level
BRACKET_SKIP = 2.0  # a bracket's round is skipped where its penalty exceeds this many times est (§77.6)


def penalty(law: Law, gamma: float, n: int, lat: LatticeLaws, h: float, T0: float, B: float) -> float:
    """The lower clamp's penalty tau_low(B) P(S^B_{n-1} > B) of a round (:func:`~.chernoff.lower_tail_penalty`, the
    round's hat lattice law ``lat`` at step ``h``)."""
    return lower_tail_penalty(law, gamma, n, T0, B, Chernoff(lat.g, lat.eta, lat.k0, h, n - 1))


def skip_round(pen: float, rel_tol: float, est: float) -> bool:
    """Whether an upper-first round with penalty ``pen`` is redone with B x 4 before its jump term is computed: the
    penalty exceeds SKIP_OVER times the redo's level 0.05 UPPER_REDO ``rel_tol`` ``est`` (``est``: the one-jump estimate
    of the value; an estimate, it chooses which certified rounds run, never a value; docs/accountant_tail.md §77)."""
    if rel_tol <= 0.0 or est <= 0.0:
        raise ValueError(f"rel_tol and est must be positive, got rel_tol={rel_tol!r}, est={est!r}")
    return pen > SKIP_OVER * 0.05 * UPPER_REDO * rel_tol * est


def skip_bracket_round(pen: float, est: float) -> bool:
    """Whether a bracket's round (``lower``) with penalty ``pen`` on its first lattice law is redone with B x 4 before its
    jump term (``limits.TAIL48_BRACKET_SKIP``): the penalty exceeds BRACKET_SKIP times the one-jump estimate ``est``
    of the value, so that the round's lower value Body_lo + J_lo - pen would be about 0 and its redo certain
    (docs/accountant_tail.md §77.6; an estimate: it chooses which certified rounds run, never a value)."""
    if est <= 0.0:
        raise ValueError(f"est must be positive, got est={est!r}")
    return pen > BRACKET_SKIP * est


__all__ = ["BRACKET_SKIP", "SKIP_OVER", "UPPER_REDO", "penalty", "skip_bracket_round", "skip_round"]
