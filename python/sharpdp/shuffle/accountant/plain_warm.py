"""The plain engine's warm start within a sweep over eps (``docs/composition.md`` §2.18).

Inside :func:`warm_sweep` (per thread; a privacy profile's sweep enters it), :func:`~.plain.refine` remembers the final
grid of each law family's last refinement (its step as a share of sd(L), its clamps and its values), and the next
refinement of the same family (the law at the next eps) starts at that step and at clamps set from a predicted value,
instead of at sd(L) / 4 with moderate clamps. Every pass of the refinement is certified for any step and clamps
(``docs/accountant.md`` §6.1-§6.2) and its stopping rules are unchanged, so only the passes run change, never what a
pass certifies; ``limits.PLAIN_WARM_START`` False: main's passes and floats.

Upper values alone (``docs/composition.md`` §2.19, ``limits.PLAIN_WARM_UPPER``): in a sweep that reads no lower value,
a family whose last full bracket measured its gap within the target gets its next values from one pass of the upper
lattice law alone at a step aimed from that gap (:meth:`Warm.upper_step`, :func:`upper_ready`), at most
``limits.WARM_UPPER_RUNS`` in a row; the gap only chooses the step, every upper value is a certified pass's.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.laws import Law

#: per thread: the sweep's state (a dict keyed by :func:`family`) inside :func:`warm_sweep`, else None
_STATE = threading.local()
#: the warm clamps' value target is this share of refine's own (0.05 rel_tol est): a margin for the prediction
MARGIN = 0.25
#: a predicted value uses the last two values' ratio only within [RATIO_MIN, 1] (delta is non-increasing in eps)
RATIO_MIN = 1e-3
#: :func:`clamp_near`'s factors and its number of lowering steps
STEP_UP, STEP_DOWN, DOWN_STEPS = 1.25, 1.1, 3
#: the warm step aims the gap at this share of rel_tol, coarsening the last final step by at most GROW_MAX
GAP_AIM, GROW_MAX = 0.5, 2.0
#: §2.19: an upper-only pass's step is at least this share of the last one; the family's measured gap must be within
#: GAP_OK rel_tol (the refinement's own stop, 0.8 rel_tol), and the value at least FALL_MAX times that bracket's upper
UPPER_FINER, GAP_OK, FALL_MAX = 0.5, 0.8, 1e-2
#: per thread: how many of §2.19's runs an upper-only value counts (1; a stride of a profile's sweep, docs/composition.md
#: §2.29: the eps steps it covers, so a run of such values spans no more of the profile than without strides)
_WEIGHT = threading.local()


@contextlib.contextmanager
def run_weight(w: int) -> Iterator[None]:
    """Within this context (this thread) an upper-only value of §2.19 counts ``w`` runs (docs/composition.md §2.29)."""
    old = getattr(_WEIGHT, "w", 1)
    _WEIGHT.w = max(int(w), 1)
    try:
        yield
    finally:
        _WEIGHT.w = old


@dataclass(frozen=True)
class Warm:
    """The final grid of one law family's last refinement: step / sd(L), clamps T and B as shares of sd(L), its upper
    value and the one before it (NaN: none)."""

    h_ratio: float
    t_ratio: float
    b_ratio: float
    upper: float
    upper_before: float
    gap: float = math.nan  # the final bracket's relative gap (upper - lower) / lower (NaN: no lower value)
    #: §2.19: upper-only values since the last measured gap (``gap`` then the one predicted at their step), and the
    #: upper value of that last measured bracket
    runs: int = 0
    measured_upper: float = math.nan
    #: docs/composition.md §2.25: the step (a share of sd(L)) of the pass that gave the final lower value, and the step
    #: at which the refinement took its upper value as settled (NaN: none)
    lower_ratio: float = math.nan
    settled_ratio: float = math.nan
    #: ... and how many refinements in a row started with the upper lattice law alone (§2.25 (b))
    upper_runs: int = 0

    def step(self, sd: float, rel_tol: float) -> float:
        """The warm first pass's step: the last final step (as a share of sd(L)) made coarser by the factor a gap
        ~ h^2 allows from its gap to GAP_AIM rel_tol, within [1, GROW_MAX] (so a sweep's steps may also coarsen)."""
        f = math.sqrt(GAP_AIM * rel_tol / self.gap) if self.gap > 0.0 and math.isfinite(self.gap) else 1.0
        return self.h_ratio * sd * min(max(f, 1.0), GROW_MAX)

    def lower_step(self, sd: float, rel_tol: float) -> float:
        """§2.25's step of the first pass refining the lower value alone: the last final lower step (a share of sd(L))
        made coarser by the factor a gap ~ h^2 allows from its final gap to GAP_AIM rel_tol, within [1, GROW_MAX]."""
        f = math.sqrt(GAP_AIM * rel_tol / self.gap) if self.gap > 0.0 and math.isfinite(self.gap) else 1.0
        return self.lower_ratio * sd * min(max(f, 1.0), GROW_MAX)

    def upper_step(self, sd: float, rel_tol: float) -> tuple[float, float]:
        """§2.19's step for a pass of the upper law alone and the gap predicted there: the last step (a share of sd(L))
        times sqrt(WARM_UPPER_AIM rel_tol / gap) (a gap ~ h^2), within [UPPER_FINER, 1] (never coarser than a step
        whose gap was measured or predicted)."""
        f = math.sqrt(limits.WARM_UPPER_AIM * rel_tol / self.gap) if self.gap > 0.0 else 1.0
        f = min(max(f, UPPER_FINER), 1.0)
        return self.h_ratio * sd * f, self.gap * f * f

    def predicted(self) -> float:
        """An estimate of the next value of the sweep (the next eps, about as far): the last upper value times the
        ratio of the last two (within [RATIO_MIN, 1]), or the last upper value alone."""
        r = self.upper / self.upper_before if self.upper_before > 0.0 else 1.0
        r = min(max(r, RATIO_MIN), 1.0) if math.isfinite(r) else 1.0
        return self.upper * r


@contextlib.contextmanager
def warm_sweep() -> Iterator[None]:
    """Within this context (per thread, nested: the outer state kept) refinements of the plain engine whose caller
    set no absolute target (``negligible`` 0) start from the last refinement of the same law family
    (``docs/composition.md`` §2.18); off (main's passes) when ``limits.PLAIN_WARM_START`` is False."""
    old = getattr(_STATE, "on", None)
    if old is None and limits.PLAIN_WARM_START:
        _STATE.on = {}
    try:
        yield
    finally:
        _STATE.on = old


def family(law: Law, gamma: float, n: int, rel_tol: float) -> tuple:
    """The key of a law family within a sweep: the law's class, gamma, n, rel_tol, its atom flag and the sign of its
    support's top (the laws of one order of the neighbouring pair at successive eps share it)."""
    top = law.support()[1]
    return (type(law).__name__, float(gamma), int(n), float(rel_tol), bool(law.atomic), top > 0.0)


def clamp_near(law: Law, target: float, guess: float) -> float | None:
    """A clamp T >= 0 with E[(L - T)_+] <= ``target`` (``law.tail_upper``), searched from ``guess`` (the family's last
    clamp): raised by factors STEP_UP until it holds, else lowered by factors STEP_DOWN while it still holds (at most
    DOWN_STEPS times); a few evaluations instead of :func:`~.lattice.choose_T`'s bisection. A law bounded above: its
    top (as ``choose_T``). None where no such T is found within 60 raises (the caller then uses ``choose_T``)."""
    top = law.support()[1]
    if math.isfinite(top):
        return max(top, 0.0)
    T = max(guess, 1e-300)
    if law.tail_upper(T) > target:
        for _ in range(60):
            T *= STEP_UP
            if law.tail_upper(T) <= target:
                return T
        return None
    for _ in range(DOWN_STEPS):
        if law.tail_upper(T / STEP_DOWN) > target:
            break
        T /= STEP_DOWN
    return T


def sweep_state() -> dict | None:
    """The current thread's sweep state (the dict keyed by :func:`family`, shared with other modules' tagged keys,
    e.g. ``far_tail_warm``'s) inside :func:`warm_sweep` with the switch on, else None (docs/composition.md §2.26.5)."""
    return getattr(_STATE, "on", None)


def active() -> bool:
    """Whether a sweep's warm start is on in this thread (inside :func:`warm_sweep`, the switch on)."""
    return getattr(_STATE, "on", None) is not None


def get(key: tuple) -> Warm | None:
    """The family's state in the current sweep, or None (no sweep, or none recorded)."""
    st = getattr(_STATE, "on", None)
    return None if st is None else st.get(key)


def put(key: tuple, sd: float, h: float, T: float, B: float, upper: float, lower: float = 0.0,
        predicted_gap: float | None = None, steps: dict | None = None) -> None:
    """Record a refinement's final grid (step h, clamps T, B) and bracket for its family (no-op outside a sweep);
    ``predicted_gap``: an upper-only value of §2.19 (the gap predicted at its step; the count of such values in a row
    and the last measured bracket's upper value carried over); ``steps``: the refinement's final lower step and settled
    step (keys "lower", "settled") and whether it started with the upper law alone ("upper_start"; docs/composition.md
    §2.25)."""
    st = getattr(_STATE, "on", None)
    if st is None or not (sd > 0.0 and h > 0.0 and math.isfinite(h) and math.isfinite(T) and math.isfinite(B)):
        return
    prev = st.get(key)
    before = prev.upper if prev is not None else math.nan
    if predicted_gap is not None and prev is not None:
        st[key] = Warm(h / sd, T / sd, B / sd, upper, before, predicted_gap, prev.runs + getattr(_WEIGHT, "w", 1),
                       prev.measured_upper)
        return
    gap = (upper - lower) / lower if lower > 0.0 else math.nan
    lo_h, set_h = (steps or {}).get("lower"), (steps or {}).get("settled")
    lo_ratio = lo_h / sd if lo_h is not None and lower > 0.0 and lo_h > 0.0 else math.nan
    settled = set_h / sd if set_h is not None and set_h > 0.0 else math.nan
    runs = prev.upper_runs + 1 if (steps or {}).get("upper_start") and prev is not None else 0
    st[key] = Warm(h / sd, T / sd, B / sd, upper, before, gap, 0, upper, lo_ratio, settled, runs)


def settled_start(warm: Warm | None, atom_sum: bool, reads_lower: bool) -> bool:
    """Whether §2.25's rule starts this refinement (``limits.PAIR42_WARM_SETTLED`` on): a sweep whose caller reads
    lower values (a dominating pair's own sampling, docs/composition.md §2.23), an atom-law sum (``atom_sum``) whose
    family's last refinement recorded the step at which it took its upper value as settled."""
    return bool(limits.PAIR42_WARM_SETTLED and reads_lower and atom_sum and warm is not None
                and warm.settled_ratio > 0.0)


def upper_ready(warm: Warm | None, rel_tol: float, upper_first: bool) -> bool:
    """Whether §2.19's pass of the upper law alone may end this refinement: ``limits.PLAIN_WARM_UPPER`` on, the sweep
    reads no lower value (``upper_first``), the family's last measured gap is within GAP_OK rel_tol, and fewer than
    ``limits.WARM_UPPER_RUNS`` upper-only values followed it."""
    return bool(limits.PLAIN_WARM_UPPER and upper_first and warm is not None and 0.0 < warm.gap <= GAP_OK * rel_tol
                and warm.runs < runs_max())


def runs_max() -> int:
    """The most upper-only values in a row after a measured gap: ``limits.WARM_UPPER_RUNS`` (§2.19), or with
    ``limits.SWEEP_UPPER_LONG`` up to ``limits.SWEEP_UPPER_RUNS`` (docs/composition.md §2.21; those past
    WARM_UPPER_RUNS accepted only within SWEEP_UPPER_FALL of the measured value, :func:`upper_accepts`)."""
    if limits.SWEEP_UPPER_LONG:
        return max(int(limits.WARM_UPPER_RUNS), int(limits.SWEEP_UPPER_RUNS))
    return int(limits.WARM_UPPER_RUNS)


def upper_accepts(warm: Warm, upper: float) -> bool:
    """§2.19's sanity test of an upper-only value (an estimate: a failed one sends the refinement to its full passes):
    not above the family's last upper value (delta is non-increasing in eps) and at least FALL_MAX times the last
    measured bracket's upper value (the gap was measured near this value); past ``limits.WARM_UPPER_RUNS`` values in a
    row (docs/composition.md §2.21) at least ``limits.SWEEP_UPPER_FALL`` times it."""
    fall = FALL_MAX if warm.runs < limits.WARM_UPPER_RUNS else max(FALL_MAX, float(limits.SWEEP_UPPER_FALL))
    return upper <= warm.upper and upper >= fall * warm.measured_upper


__all__ = ["MARGIN", "Warm", "active", "clamp_near", "family", "get", "put", "run_weight", "runs_max", "settled_start",
           "sweep_state", "upper_accepts", "upper_ready", "warm_sweep"]
