"""A sweep's upper value first from one pass of the upper lattice law alone at the family's settled step
(``docs/composition.md`` §2.27).

Inside a sweep (:func:`.plain_warm.warm_sweep`) whose caller reads no lower value (:func:`.plain.no_lower_values`: a
privacy profile's sweep, a pure-LDP round's pair under ``docs/composition.md`` §2.26), an atom-law sum's upper value
first is main's coarse full pass followed by a pass of the upper law alone at the aimed step whose upper value settles
(``docs/accountant_atoms.md`` §14: its estimated distance to its limit in h, by Richardson against the coarse pass, is
within 0.1 rel_tol). This module keeps, per law family, the step at which that test last held and the distance it
estimated there (:class:`Settled`); with ``limits.PAIR44_SETTLED_START`` the next refinements of the family (at most
``limits.PAIR44_SETTLED_RUNS`` in a row, then main's refinement checks the step again) run one pass of the upper law
alone at that step, coarsened by the factor the h^2 model of the distance allows up to ``limits.PAIR44_SETTLED_AIM``
rel_tol (at most ``limits.PAIR44_SETTLED_GROW``), and keep it where :func:`accepts` and the pass's own clamp tests hold.

Only the passes run change: each kept value is the certified upper value of one lattice pass (any step, any clamps,
``docs/accountant.md`` §6.1-§6.2); the state (a step, a distance, a count, a value) is an estimate that never enters a
value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from sharpdp.shuffle.accountant import limits, plain_warm

#: the tag of this module's keys in the sweep's state (shared with plain_warm's and far_tail_warm's keys)
_TAG = "settled_start44"
#: ``steps`` keys of :func:`.plain.refine`: a settled test that held (the step, the estimated relative distance), and
#: a value of this rule
CHECKED, RULE = "settled_checked44", "settled_start44"


@dataclass(frozen=True)
class Settled:
    """A law family's last settled test in a sweep: the step (a share of sd(L)) at which the upper value was taken as
    settled, its estimated relative distance to the limit in h there, that value, and this rule's values since."""

    ratio: float
    dist: float
    upper: float
    runs: int = 0


def settled_distance(prev_upper: float, prev_h: float, upper: float, h: float) -> float:
    """The estimated distance of the upper value at step ``h`` to its limit as h -> 0 from a pass at the coarser step
    ``prev_h`` (second order in h, ``docs/accountant_atoms.md`` §14): (up(h_prev) - up(h)) r^2 / (1 - r^2), r = h / h_prev.
    An estimate (a choice of passes)."""
    r2 = (h / prev_h) ** 2
    return (prev_upper - upper) * r2 / (1.0 - r2)


def _key(key: tuple) -> tuple:
    return (_TAG,) + tuple(key)


def get(key: tuple | None) -> Settled | None:
    """The family's state in the current sweep (None: no sweep, no key, or none recorded)."""
    st = plain_warm.sweep_state()
    return None if st is None or key is None else st.get(_key(key))


def record(key: tuple, sd: float, upper: float, steps: dict) -> None:
    """Record a refinement's end for its family (no-op outside a sweep): a value of this rule counts one more run; a
    refinement whose upper value was taken as settled (``steps[CHECKED]`` = (step, relative distance)) starts a new
    state; any other end drops the state (the next refinement of the family is main's)."""
    st = plain_warm.sweep_state()
    if st is None or not sd > 0.0:
        return
    k = _key(key)
    prev = st.get(k)
    if steps.get(RULE) and prev is not None:
        st[k] = replace(prev, runs=prev.runs + 1)
    elif steps.get(CHECKED) is not None and math.isfinite(upper) and upper > 0.0:
        h, dist = steps[CHECKED]
        st[k] = Settled(h / sd, dist, upper)
    else:
        st.pop(k, None)


def ready(s: Settled | None) -> bool:
    """Whether the rule starts this refinement: the switch on, a recorded settled step, fewer than
    ``limits.PAIR44_SETTLED_RUNS`` of its values since that step was checked."""
    return bool(limits.PAIR44_SETTLED_START) and s is not None and s.ratio > 0.0 \
        and s.runs < int(limits.PAIR44_SETTLED_RUNS)


def step(s: Settled, sd: float, rel_tol: float) -> float:
    """The pass's step: the settled step times g = sqrt(AIM rel_tol / dist) within [1, GROW] (the distance ~ h^2
    grows by g^2; a distance <= 0 or NaN: GROW)."""
    grow = max(float(limits.PAIR44_SETTLED_GROW), 1.0)
    g = math.sqrt(float(limits.PAIR44_SETTLED_AIM) * rel_tol / s.dist) if s.dist > 0.0 else grow
    return s.ratio * sd * min(max(g, 1.0), grow)


def accepts(s: Settled, last_upper: float, upper: float) -> bool:
    """The kept value's sanity test (an estimate: a failed one sends the refinement to main's passes): not above the
    family's last upper value (delta is non-increasing in eps) and at least ``limits.PAIR44_SETTLED_FALL`` times the
    value whose settled step was checked (the step was checked near this value)."""
    return upper <= last_upper and upper >= float(limits.PAIR44_SETTLED_FALL) * s.upper


__all__ = ["CHECKED", "RULE", "Settled", "accepts", "get", "ready", "record", "settled_distance", "step"]
