"""Phase 2 from the start model's root without phase 1 (docs/accountant.md §8.25).

Where get_epsilon's first point is the root of a start model with its slope (the single-big-jump root of
docs/accountant.md §8.11, :func:`.jump_guess.first_point`, or the shape model's root of §8.24.1,
:func:`.shape_start.shape_start`) and the other users' spread around their mean shift is small there (the spread of
:func:`.jump_guess.jump_value`, at most ``limits.EPS45_START_PROBE``), that root lay within about one xtol below
get_delta's root on the regime map, and phase 1's upper-only passes only moved phase 2's first point by less than
that. With the rule phase 1 is skipped: phase 2 probes the model's root first, with the model's slope.

A choice of points only: the model root and the spread are estimates, never bounds; phase 2's bracket ends are its
probes' own certified values (docs/accountant.md §8, step 5).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.jump_guess import jump_value

#: the rule's least n: below it the spread did not predict the start's error (GaussianRandomizer(1), n = 100: spread
#: below 0.02, the root 5.7 xtol above the start, a third probe; docs/accountant.md §8.25.2)
N_MIN = 10**4


def start_probe(laws_at: Callable[[float], Any], n: int, x0: float, k: float | None, lo: float,
                hi: float) -> bool:
    """Whether phase 1 is skipped (docs/accountant.md §8.25): ``limits.EPS45_START_PROBE`` > 0, n >= ``N_MIN``, ``x0`` is a start
    model's root with its slope ``k`` (given and < 0, in the units of the search's ``_root``) strictly inside the frame
    (``lo``, ``hi``) and at most ``limits.EPS_CAP``, and :func:`.jump_guess.jump_value`'s spread at ``x0`` is at most
    ``limits.EPS45_START_PROBE``. An estimate's gate only."""
    q_max = float(limits.EPS45_START_PROBE)
    if not q_max > 0.0 or n < N_MIN or k is None or not (k < 0.0 and lo < x0 < hi and x0 <= limits.EPS_CAP):
        return False
    try:
        q = jump_value(laws_at(x0), n)[1]
    except (ValueError, ArithmeticError, NotImplementedError):
        return False
    return math.isfinite(q) and q <= q_max


__all__ = ["start_probe"]
