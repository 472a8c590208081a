"""The upper-only runs of a law bounded above below the maximum so far (docs/accountant_tail.md §52.2, §54.3, §56).

:func:`~.far_tail.try_certify` asks a law bounded above whose bracket is wanted below a positive maximum so far (the
caller's ``negligible``) for its upper value alone at a coarser step first (:func:`top_upper`); such a run's round is
redone with its lower clamp B x 4 where the clamp's own charge may be what keeps its upper value above that maximum
(:func:`clamp_redo`, §56). Choices of which certified runs and rounds are computed, never a value: every round's upper
value is certified at any lower clamp B (the clamp only raises each user's value; docs/accountant_tail.md §7, §56).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.far_tail_keep import top_factors
from sharpdp.shuffle.accountant.jump import TailCoarsen
from sharpdp.shuffle.accountant.lattice import PassResult
from sharpdp.shuffle.laws import Law


def top_upper(run: Callable, law: Law, gamma: float, n: int, rel_tol: float, workers: int, negligible: float):
    """§52.2's upper-only run of ``law`` (bounded above, the raised law of :func:`~.far_tail.try_certify`) at
    TOP_COARSE times its step, then (§54.3) at the next factor of :func:`~.far_tail_keep.top_factors` where the size
    caps bind at one: the run's result (a :class:`~.far_tail.FarTailBracket`, its lower value to be read as 0) where its
    upper value is below ``negligible``, else None (the caller's run as before). ``run``:
    :func:`~.far_tail.certify_bigjump` (passed by the caller)."""
    if not (negligible > 0.0 and limits.TOP_COARSE > 1.0 and n >= limits.TOP_COARSE_N
            and math.isfinite(law.support()[1])):
        return None
    for tc in top_factors():  # (§54.3: once more at a coarser factor where the caps bind at the first)
        try:
            rb = run(law, gamma, n, rel_tol, workers, lower=False, negligible=negligible, top_coarse=tc)
            return rb if rb.upper < negligible else None
        except TailCoarsen:
            pass  # (the next factor, else the run as before)
    return None


def clamp_redo(body: PassResult | None, up: float, negligible: float, fits: bool) -> bool:
    """Whether an upper-only round of a law bounded above at a coarser step (§52.2, §54.3: ``top_coarse`` > 1) is redone
    with its lower clamp B x 4 (docs/accountant_tail.md §56): with ``limits.TOP_CLAMP_REDO``, where its upper value
    ``up`` is at or above the positive maximum so far ``negligible`` by less than its last engine pass's charge of the
    lower clamp (``body.tail_B``, a bound on what the clamp at -B adds to the value: the wider clamp may bring the upper
    value below that maximum) and the wider clamp fits the size caps at the round's step (``fits``). An estimate
    choosing which certified rounds run; the run returns the least upper value of its rounds."""
    return limits.TOP_CLAMP_REDO and fits and body is not None and 0.0 < negligible <= up < negligible + body.tail_B


__all__ = ["clamp_redo", "top_upper"]
