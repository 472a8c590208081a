"""Phase 2 from the start model's root without phase 1 (docs/accountant.md §8.25).

Where get_epsilon's first point is the root of a start model with its slope (the single-big-jump root of
docs/accountant.md §8.11, :func:`.jump_guess.first_point`, or the shape model's root of §8.24.1,
:func:`.shape_start.shape_start`) and the other users' spread around their mean shift is small there (the spread of
:func:`.jump_guess.jump_value`, at most ``limits.EPS45_START_PROBE``), that root lay within about one xtol below
get_delta's root on the regime map, and phase 1's upper-only passes only moved phase 2's first point by less than
that. With the rule phase 1 is skipped: phase 2 probes the model's root first, with the model's slope.

:func:`start_look` (docs/accountant.md §8.26.3): at n >= 1e8, where the start is the shape model's root and the gate
above is shut, phase 1's upper-only values of a far-tail law (the body's Chernoff values, 2-5x above get_delta's)
carried the search 14-35 % away from a start 0.1-8 % from the answer, and loose looks walked back (§8.8). With
``limits.EPS46_START_LOOK`` phase 1 is skipped there too, and phase 2's look (§8.4) is taken at the start's root.

With ``limits.EPS48_BODY_START`` (:func:`body_start`, docs/accountant.md §8.28): at n >= ``limits.EPS48_BODY_N`` where the
start is the shape model's root and that model is all body (the single big jump's share below §8.26.3's gate), phase 1
is skipped too and phase 2 probes a point ``EPS48_BODY_START`` xtol above the root first, with the model's slope (no look).

A choice of points only: the model root and the spread are estimates, never bounds; phase 2's bracket ends are its
probes' own certified values (docs/accountant.md §8, step 5).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.far_tail_grid import normal_value
from sharpdp.shuffle.accountant.jump_guess import jump_value
from sharpdp.shuffle.accountant.walk_model import shape

#: the rule's least n: below it the spread did not predict the start's error (GaussianRandomizer(1), n = 100: spread
#: below 0.02, the root 5.7 xtol above the start, a third probe; docs/accountant.md §8.25.2)
N_MIN = 10**4
#: :func:`start_look` below this n only: at n = 1e9 its look at the start (a far-tail report near delta) cost 1.9 s
#: against phase 1's 0.3 s and its overshot look's 0.9 s (GaussianRandomizer(1): 7.6 s against 6.1-7.3 s;
#: docs/accountant.md §8.26.3)
LOOK_N_MAX = 10**9


def start_probe(laws_at: Callable[[float], Any], n: int, x0: float, k: float | None, lo: float,
                hi: float, jump: bool = False) -> bool:
    """Whether phase 1 is skipped (docs/accountant.md §8.25): ``limits.EPS45_START_PROBE`` > 0, n >= ``N_MIN``, ``x0`` is a start
    model's root with its slope ``k`` (given and < 0, in the units of the search's ``_root``) strictly inside the frame
    (``lo``, ``hi``) and at most ``limits.EPS_CAP``, and :func:`.jump_guess.jump_value`'s spread at ``x0`` is at most
    ``limits.EPS45_START_PROBE``. ``jump``: ``x0`` is the single-big-jump root (docs/accountant.md §8.11); then, at n >=
    ``limits.EPS49_JUMP_PROBE_N``, the spread's bound is the larger of that and ``limits.EPS49_JUMP_PROBE``
    (docs/accountant.md §8.29). An estimate's gate only."""
    q_max = float(limits.EPS45_START_PROBE)
    if jump and n >= int(limits.EPS49_JUMP_PROBE_N) and q_max > 0.0:
        q_max = max(q_max, float(limits.EPS49_JUMP_PROBE))
    if not q_max > 0.0 or n < N_MIN or k is None or not (k < 0.0 and lo < x0 < hi and x0 <= limits.EPS_CAP):
        return False
    try:
        q = jump_value(laws_at(x0), n)[1]
    except (ValueError, ArithmeticError, NotImplementedError):
        return False
    return math.isfinite(q) and q <= q_max


def start_look(laws_at: Callable[[float], Any], n: int, x0: float, k: float | None, lo: float, hi: float,
               led: list[int]) -> bool:
    """Whether phase 1 is skipped for a look at the shape model's root ``x0`` (slope ``k``; docs/accountant.md
    §8.26.3): ``limits.EPS46_START_LOOK`` > 0 and n at least it and below ``LOOK_N_MAX``, ``k`` given and < 0, ``x0``
    strictly inside the frame (``lo``, ``hi``) and at most ``limits.EPS_CAP``, the laws at ``x0`` not all atom laws,
    and the single big jump's share of the shape model M at ``x0`` (:func:`.jump_guess.jump_value` over
    :func:`.walk_model.shape`) at least ``limits.EPS46_START_LOOK_SHARE`` (as :func:`.looks.walks` reads a look's
    jump share). Then ``led[0]`` is set to the law that leads the model (the look's law, §8.4): of largest
    :func:`.far_tail_grid.normal_value` at ``x0`` among the laws with a positive top. An estimate's choice only."""
    n_min = int(limits.EPS46_START_LOOK)
    if n_min <= 0 or not n_min <= n < LOOK_N_MAX or k is None or not (k < 0.0 and lo < x0 < hi
                                                                        and x0 <= limits.EPS_CAP):
        return False
    try:
        pairs = laws_at(x0)
        if all(law.atoms() is not None for _, law in pairs):
            return False
        vals = [(normal_value(law, float(g), n), i) for i, (g, law) in enumerate(pairs) if law.top_bound() > 0]
        m, jump = shape(pairs, n), jump_value(pairs, n)[0]
    except (ValueError, ArithmeticError, NotImplementedError):
        return False
    vals = [(v, i) for v, i in vals if math.isfinite(v)]
    if not vals or not (m > 0.0 and jump >= float(limits.EPS46_START_LOOK_SHARE) * m):
        return False  # (a model all body: its loose look places the root no better than phase 1, §8.26.3)
    led[0] = max(vals)[1]
    return True


def body_start(laws_at: Callable[[float], Any], n: int, x0: float, k: float | None, lo: float, hi: float,
               xtol: float, delta: float = 1.0) -> tuple[float, bool]:
    """(x, True): phase 2's first point x where phase 1 is skipped at an all-body shape start (docs/accountant.md
    §8.28), or (``x0``, False) where the rule is shut. Open where ``limits.EPS48_BODY_START`` = c > 0, n >=
    ``limits.EPS48_BODY_N``, ``k`` given and < 0, ``x0`` (the shape model's root) at most ``limits.EPS_CAP``, the laws
    at ``x0`` not all atom laws, the single big jump's share of the shape model at ``x0`` below
    ``limits.EPS46_START_LOOK_SHARE`` (where :func:`start_look` is shut), and x = x0 (1 + c xtol) strictly inside the
    frame (``lo``, ``hi``); at ``delta`` <= ``limits.EPS49_BODY_DELTA``, c is ``limits.EPS49_BODY_SMALL`` where that
    is > 0 (docs/accountant.md §8.29.6). An estimate's choice only."""
    c = float(limits.EPS48_BODY_START)
    if c > 0.0 and delta <= float(limits.EPS49_BODY_DELTA) and float(limits.EPS49_BODY_SMALL) > 0.0:
        c = float(limits.EPS49_BODY_SMALL)
    if not c > 0.0 or n < int(limits.EPS48_BODY_N) or k is None or not (k < 0.0 and 0.0 < x0 <= limits.EPS_CAP):
        return x0, False
    x = x0 * (1.0 + c * xtol)
    if not lo < x < hi:
        return x0, False
    try:
        pairs = laws_at(x0)
        if all(law.atoms() is not None for _, law in pairs):
            return x0, False
        m, jump = shape(pairs, n), jump_value(pairs, n)[0]
    except (ValueError, ArithmeticError, NotImplementedError):
        return x0, False
    return (x, True) if m > 0.0 and jump < float(limits.EPS46_START_LOOK_SHARE) * m else (x0, False)


__all__ = ["body_start", "start_look", "start_probe"]
