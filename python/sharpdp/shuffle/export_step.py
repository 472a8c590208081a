"""The one default lattice step of a round's dominating pair: the export step (``docs/composition.md`` §5.1, §4.6).

A round's pair is built on a lattice Delta Z of privacy losses. Every consumer of a round uses the same default
step, so one pair per round and process serves them all through the pair cache (``docs/composition.md`` §2.3):
:func:`sharpdp.shuffle.dominating_pair` without a step, ``sharpdp.interop.dp_accounting.to_pld`` (its
``export_interval``) and :class:`sharpdp.shuffle.ComposedAccountant` (the smallest of its rounds' steps). The step is
eps_d / :data:`EXPORT_POINTS`, eps_d the first eps of a doubling search from 1e-6 nats whose certified delta is <=
:data:`EXPORT_DELTA` (``profile.doubling_epsilon``; capped at a pure-LDP randomizer's local epsilon and at 60 nats).
Only a resolution choice: any step gives a dominating pair (``docs/composition.md`` §2-§3).

This module sits below :mod:`sharpdp.shuffle.profile`, which imports it; the doubling search lives there and is
passed in (``doubling``), as the profile passes its value function to :mod:`sharpdp.shuffle.pair_legs`.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable

import numpy as np

from sharpdp.shuffle import contract, round_cache
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.pair import check_interval
from sharpdp.shuffle.pair_settled import settled_margin

# eps_d: the smallest delta at which the export is accurate (within about 1 % above get_delta, docs/composition.md
# §5.1); EXPORT_POINTS lattice points below eps_d (500-1000 where delta >= EXPORT_DELTA)
EXPORT_DELTA = 1e-12
EXPORT_POINTS = 1000


# the lattice indices k (of eps_d / EXPORT_POINTS) whose certified values estimate the chords of one lattice step
# (docs/composition.md §4.9)
PROBE_KS = (0, 1, 2, 4, 8, 16, 32, 64)


def export_step(accountant, doubling: Callable[..., float]) -> float:
    """The default lattice step of ``accountant``'s round (nats): ``doubling(accountant, EXPORT_DELTA)`` /
    ``EXPORT_POINTS``, ``doubling`` the profile's doubling search (:func:`sharpdp.shuffle.profile.doubling_epsilon`),
    halved :func:`lattice_halvings` times where one lattice step's chord would miss the export's goal
    (``docs/composition.md`` §4.9). >= 1e-9 / 2^``limits.EXPORT_STEP_MAX_HALVINGS``."""
    dx0 = doubling(accountant, EXPORT_DELTA) / EXPORT_POINTS
    return math.ldexp(dx0, -lattice_halvings(accountant, dx0))


def lattice_halvings(accountant, step: float) -> int:
    """How many times the export step ``step`` is halved for ``accountant``'s round (``docs/composition.md`` §4.9):
    0 with ``limits.EXPORT_STEP_CURVATURE`` False, for a round bounded through bot (its own export search, §2.11) and
    for a pure-LDP randomizer (its profile is piecewise linear in t: kinks, no curvature to estimate); else from the
    round's certified brackets at k ``step`` for k in :data:`PROBE_KS` (:func:`chord_halvings`), once per round,
    step and switches in a process. Only a resolution choice: any step gives a dominating pair."""
    if not limits.EXPORT_STEP_CURVATURE or getattr(accountant, "via_bottom", False) \
            or contract.local_epsilon(getattr(accountant, "randomizer", None)) is not None:
        return 0
    key = (round_cache.round_key(accountant), float(step), limits.EXPORT_STEP_CHORD, limits.EXPORT_STEP_AIM,
           limits.EXPORT_STEP_MAX_HALVINGS)

    def make() -> int:
        ks = np.asarray(PROBE_KS, dtype=float)
        eps = np.where(ks > 0, np.nextafter(ks * step, 0.0), 0.0)  # (where the pair evaluates k step, _grid_eval)
        lo, up = (np.asarray(v, dtype=float) for v in accountant.get_delta_bounds(eps))
        m = chord_halvings(ks * step, 0.5 * (np.nan_to_num(lo) + up), step)
        # the points are lattice points of the new step (m > 0; of this one where m = 0): the round's cache serves
        # them to its pair (where m = 0 only under the settled cover, which reads no lower value: §79.2)
        if m > 0 or settled_margin(accountant) is not None:
            cache = round_cache.value_cache(accountant)
            with round_cache.LOCK:
                for e, a, b in zip(eps.tolist(), lo.tolist(), up.tolist()):
                    cache.setdefault(e, (a, b))
        return m

    if key[0] is None:
        return make()
    return round_cache.lru_get(round_cache.SPLITS, key, round_cache.MAX_ROUNDS, make)


def chord_halvings(eps: np.ndarray, values: np.ndarray, step: float) -> int:
    """0 where e_max <= ``limits.EXPORT_STEP_CHORD``, else the least m in [1, ``limits.EXPORT_STEP_MAX_HALVINGS``] with
    e_max / 4^m <= ``limits.EXPORT_STEP_AIM``, e_max the largest estimated relative overshoot of a chord in t = e^eps over one lattice ``step`` near the points
    ``eps`` (increasing, delta ``values`` there): for three consecutive points a < b < c with values >= EXPORT_DELTA,
    the chord through a and c overshoots the value at b by o = chord / value_b - 1, and a curve of constant
    curvature overshoots by o step^2 / (4 (b - a)(c - b)) over one step (a parabola: f'' w1 w2 / 2 at b, f'' h^2 / 8
    over a chord of length h). An estimate that chooses a resolution only."""
    t = np.exp(np.asarray(eps, dtype=float))
    v = np.minimum.accumulate(np.asarray(values, dtype=float))
    worst = 0.0
    for i in range(1, t.size - 1):
        if not v[i + 1] >= EXPORT_DELTA:
            break
        chord = v[i - 1] + (v[i + 1] - v[i - 1]) * (t[i] - t[i - 1]) / (t[i + 1] - t[i - 1])
        over = chord / v[i] - 1.0
        worst = max(worst, over * step * step / (4.0 * (eps[i] - eps[i - 1]) * (eps[i + 1] - eps[i])))
    if not worst > limits.EXPORT_STEP_CHORD:
        return 0
    return min(max(int(math.ceil(0.5 * math.log2(worst / limits.EXPORT_STEP_AIM))), 1), limits.EXPORT_STEP_MAX_HALVINGS)


def pair_step(accountant, value_discretization_interval: float | None, doubling: Callable[..., float]) -> float:
    """The step of a pair of ``accountant``'s round: ``value_discretization_interval`` checked (ValueError naming it
    outside [1e-12, 1]), or for None :func:`export_step` (``docs/composition.md`` §4.6)."""
    if value_discretization_interval is None:
        return export_step(accountant, doubling)
    return check_interval(value_discretization_interval)


def composed_step(accountants: Iterable, doubling: Callable[..., float]) -> float:
    """The default step of a composition of rounds: the smallest of their :func:`export_step` (one lattice for every
    round, the finest any of them asks for; for one round type its own export step, so the composition shares the
    round's pair with ``to_pld``)."""
    return min(export_step(a, doubling) for a in accountants)


__all__ = ["EXPORT_DELTA", "EXPORT_POINTS", "PROBE_KS", "chord_halvings", "composed_step", "export_step",
           "lattice_halvings", "pair_step"]
