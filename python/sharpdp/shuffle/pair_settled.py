"""A pair's samples taken upper first covered by a small margin instead of a bracket (``docs/composition.md`` §2.26).

On a pure-LDP round (atom laws: k-RR, PrivUnit, ...) a sample taken upper first is the upper value the bracket's own
last pass would end with (``docs/composition.md`` §2.5; for atom-law sums at n >= 256 the settled pass of
``docs/accountant_atoms.md`` §14), so it is ``get_delta``'s upper value there up to the spread of the upper values of
nearby steps. :func:`pair_accuracy.capped_cover` needs a certified lower value only to bring ``cover``'s factor (the
neighbours' bracket gaps, up to 2.5 % on 10-RR at n = 1e6) down to the export's goal; with ``limits.PAIR43_SETTLED_COVER``
every sample is taken upper first and takes U (1 + m) (m = ``limits.PAIR43_SETTLED_MARGIN``): no bracket at all (not
for the even points, not ahead in ``pair_ahead.bracket_ahead``, not afterwards in ``capped_cover``). Every value stays at or above a certified upper
value of its sample (Claim A of ``docs/composition.md`` §2); the margin and the gate are estimates for the export's
accuracy goal only.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext

import numpy as np

from sharpdp.shuffle import contract
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.plain import no_lower_values

_U = 2.0 ** -53


def settled_margin(accountant) -> float | None:
    """The margin m of a pair's samples taken upper first (``docs/composition.md`` §2.26.2): ``limits.PAIR43_SETTLED_MARGIN``
    on a round of a pure-LDP randomizer (its laws are atom laws) not bounded through bot with
    ``limits.PAIR43_SETTLED_COVER`` on; else None (main's re-bracketing). An estimate that chooses values above
    certified ones, never a value itself."""
    if not limits.PAIR43_SETTLED_COVER or getattr(accountant, "via_bottom", False):
        return None
    if contract.local_epsilon(getattr(accountant, "randomizer", None)) is None and not settled_far(accountant):
        return None
    return float(limits.PAIR43_SETTLED_MARGIN)


def settled_far(accountant) -> bool:
    """Whether :func:`settled_margin` also applies to a round that is not pure-LDP, a round of a
    ``BlanketMixedGaussian``: zero-out with ``limits.PAIR45_SETTLED_BMG`` (``docs/composition.md`` §2.28.4: its upper
    values first measured within 1 % of ``get_delta``'s); replace-one with ``limits.PAIR49_SETTLED_REPLACE`` and
    ``limits.TAIL48_UPPER_B`` (docs/accountant_tail.md §79: the far-tail upper values first follow the bracket's wider
    lower clamp, within 0.13 % of its upper value in the deep tail, §77; without it they were 0.6 - 1 % above) on a
    round whose laws take the far-tail treatment from the top of its profile on (:func:`far_at_top`). A round bounded
    through bot never (:func:`settled_margin`). An estimate choosing values above certified ones."""
    from sharpdp.shuffle.randomizers.bmg import BlanketMixedGaussian

    if not isinstance(getattr(accountant, "randomizer", None), BlanketMixedGaussian):
        return False
    adjacency = getattr(accountant, "adjacency", None)
    if adjacency == "zero_out":
        return bool(limits.PAIR45_SETTLED_BMG)
    return adjacency == "replace" and bool(limits.PAIR49_SETTLED_REPLACE) and bool(limits.TAIL48_UPPER_B) and \
        far_at_top(accountant)


#: the eps (nats) at which :func:`far_at_top` asks every law of the round for the far-tail treatment
FAR_PROBES = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)


def far_at_top(accountant) -> bool:
    """Whether every law of ``accountant``'s round takes the far-tail treatment (``far_tail.applicable``,
    docs/accountant_tail.md §8, the accountant's own test) at each eps of :data:`FAR_PROBES` (from the top of its
    profile, where a pair's sampling starts, into its tail) rather than the plain engine, whose brackets' gaps vary
    between neighbouring eps (docs/composition.md §2.31.1; docs/accountant_tail.md §79.2). A gate for an accuracy
    estimate, never a value."""
    from sharpdp.shuffle.accountant.far_tail_applies import applicable
    from sharpdp.shuffle.laws import laws_for

    n, rel_tol = int(accountant.n), float(accountant.rel_tol)
    return all(applicable(law, n, rel_tol, float(gamma)) for eps in FAR_PROBES
               for gamma, law in laws_for(accountant.randomizer, eps, accountant.adjacency))


def ahead_tau(accountant, tau: float | None) -> float | None:
    """``bracket_ahead``'s margin: None (no point bracketed ahead) where :func:`settled_margin` applies, else ``tau``
    (``docs/composition.md`` §2.22, §2.26.2)."""
    return None if settled_margin(accountant) is not None else tau


def upper_sweep(accountant, fn: Callable, lower: bool = False) -> Callable:
    """The pair's ``evaluate(ks, need_lower=True, negligible=0.0)`` from ``fn`` (the same keywords). Where
    :func:`settled_margin` applies and not ``lower`` (the ``lower`` reference or explicit eps: untouched), every call
    takes upper values first and returns NaN lower values (none is read: each sample is covered by the margin); a call
    main makes for upper values first runs inside ``plain.no_lower_values`` (the plain engine's upper values alone of
    ``docs/composition.md`` §2.19 and ``docs/accountant_atoms.md`` §14), one main makes for a bracket outside it (its
    full passes measure the gaps the warm sweep aims from; §2.26.2 (a)). Else ``fn`` as it is."""
    if lower or settled_margin(accountant) is None:
        return lambda ks, need_lower=True, negligible=0.0: fn(ks, need_lower=need_lower, negligible=negligible)

    def ev(ks, need_lower=True, negligible=0.0):
        with no_lower_values() if not need_lower else nullcontext():
            _, up = fn(ks, need_lower=False, negligible=negligible)
        return np.full(np.shape(up), np.nan), up
    return ev


def settled_values(lo, up, covered, margin: float, floor: float):
    """(values, taken): each sample without a lower value (NaN: taken upper first) and with upper value U >= ``floor`` takes
    U (1 + ``margin``) (1 + 2u) (u the unit round-off: the product's rounding upward), never below U, at most 1;
    ``taken`` marks them (no bracket is taken for them). The other samples keep ``covered``."""
    lo = np.asarray(lo, dtype=float)
    up = np.asarray(up, dtype=float)
    covered = np.asarray(covered, dtype=float)
    taken = np.isnan(lo) & (up >= floor)
    out = covered.copy()
    out[taken] = np.maximum(up[taken], np.minimum(up[taken] * (1.0 + margin) * (1.0 + 2.0 * _U), 1.0))
    return out, taken


__all__ = ["FAR_PROBES", "ahead_tau", "far_at_top", "settled_far", "settled_margin", "settled_values", "upper_sweep"]
