"""A reported split's leg B kept where its lower value is held by the far tail's lower-tail penalty
(docs/accountant.md §9.20; switch ``limits.VIA_BOTTOM_PENALTY_KEEP``): a choice of which certified legs are computed.

Leg B (bot vs x) of the Gaussian randomizer takes the far-tail path (docs/accountant_tail.md): its lower value is the
body's minus the lower-tail penalty at the clamp its rounds ended with, and the clamp grows (B x 4) only while the
widened lattice fits the size caps at the round's step, so a tighter rel_tol (a finer step) does not reach a wider
clamp. Where a leg B's report shows that penalty at least its own upper value and its lower value far below its upper
value, a tighter certification of the same leg is not expected to close its bracket (docs/accountant.md §9.7: the
cliff cells), and the reported split keeps the leg it has (its chain is certified whatever the leg's rel_tol)."""

from __future__ import annotations

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.results import AccountantReport


def penalty_bound(rb: AccountantReport) -> bool:
    """True (an estimate choosing which certified legs run, never a bound) where ``limits.VIA_BOTTOM_PENALTY_KEEP`` is
    on and leg B's report ``rb`` has a lower-tail penalty (its ``terms``) of at least VIA_BOTTOM_PENALTY_RATIO times
    its upper value and a lower value below VIA_BOTTOM_PENALTY_LOWER times its upper value (docs/accountant.md §9.20)."""
    if not limits.VIA_BOTTOM_PENALTY_KEEP:
        return False
    pen = rb.terms.get("lower_tail_penalty") if isinstance(rb.terms, dict) else None
    return isinstance(pen, float) and 0.0 < rb.upper < 1.0 and pen >= limits.VIA_BOTTOM_PENALTY_RATIO * rb.upper \
        and rb.lower < limits.VIA_BOTTOM_PENALTY_LOWER * rb.upper
