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

from typing import Callable, Iterable

from sharpdp.shuffle.pair import check_interval

# eps_d: the smallest delta at which the export is accurate (within about 1 % above get_delta, docs/composition.md
# §5.1); EXPORT_POINTS lattice points below eps_d (500-1000 where delta >= EXPORT_DELTA)
EXPORT_DELTA = 1e-12
EXPORT_POINTS = 1000


def export_step(accountant, doubling: Callable[..., float]) -> float:
    """The default lattice step of ``accountant``'s round (nats): ``doubling(accountant, EXPORT_DELTA)`` /
    ``EXPORT_POINTS``, ``doubling`` the profile's doubling search (:func:`sharpdp.shuffle.profile.doubling_epsilon`).
    >= 1e-9 (eps_d >= 1e-6)."""
    return doubling(accountant, EXPORT_DELTA) / EXPORT_POINTS


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


__all__ = ["EXPORT_DELTA", "EXPORT_POINTS", "composed_step", "export_step", "pair_step"]
