"""Choosing among certified bounds (sits above the accountant).

:func:`smallest_certified_delta` reports the sharp value of :class:`ExactShuffleAccountant`
where it applies (binary randomized response, replace-one, n <= its N_MAX = 1e9: an upper bound
on the mechanism's own delta, below every other bound up to its bracket), and otherwise the smaller of the blanket
accountant's certified upper value and, for pure-LDP randomizers under replace-one adjacency, the
"hiding among the clones" bound.
"""

from __future__ import annotations

from sharpdp import _validation as V
from sharpdp.shuffle.accountant import ShuffleAccountant
from sharpdp.shuffle.adjacency import DEFAULT_ADJACENCY, check_adjacency
from sharpdp.shuffle.clones import clones_delta
from sharpdp.shuffle.contract import LocalRandomizer
from sharpdp.shuffle.exact_krr import N_MAX as SHARP_N_MAX
from sharpdp.shuffle.exact_krr import ExactShuffleAccountant

__all__ = ["sharp_applies", "smallest_certified_delta"]


def sharp_applies(randomizer, n: int, adjacency: str) -> bool:
    """True when :class:`ExactShuffleAccountant` covers the round: binary
    :class:`~sharpdp.shuffle.RandomizedResponse`, ``adjacency == "replace"``, 1 <= n <= its N_MAX."""
    from sharpdp.shuffle.randomizers import RandomizedResponse

    return (isinstance(randomizer, RandomizedResponse) and randomizer.k == 2 and adjacency == "replace"
            and 1 <= n <= SHARP_N_MAX)


def smallest_certified_delta(randomizer, n: int, epsilon: float, adjacency: str = DEFAULT_ADJACENCY, *,
                             rel_tol: float = 1e-2) -> tuple[float, str]:
    """The smallest certified upper bound on delta(eps) available, and which one it is.

    ``"sharp"``: :class:`sharpdp.shuffle.ExactShuffleAccountant`'s certified upper value of the
    shuffled mechanism's own delta (worst case over datasets, docs/sharp_krr.md), used whenever
    it applies: ``RandomizedResponse`` with k = 2, replace-one adjacency, n <= its ``N_MAX`` = 1e7
    (every other bound is an upper bound on the same delta, so this one is the smallest up to its
    bracket: below 1e-8 relative at n <= 4000, below ``rel_tol`` above (branch and bound,
    docs/sharp_krr.md §4.11, which also uses ``rel_tol``); the others are then not computed).
    ``"blanket"``: :class:`sharpdp.shuffle.ShuffleAccountant`'s certified upper value;
    ``"clones"``: :func:`sharpdp.shuffle.clones_delta` (Feldman, McMillan & Talwar, *Hiding among
    the clones*, Theorem 3.1), used only for replace-one adjacency and randomizers that are pure
    eps0-LDP (``local_epsilon`` not None). Both are valid upper bounds, so their minimum is one.

    Parameters
    ----------
    randomizer : sharpdp.shuffle.LocalRandomizer
        The local randomizer (any object the accountant accepts; ``local_epsilon`` is read only
        from objects implementing the contract).
    n : int
        Number of users, 1 <= n <= 1e9.
    epsilon : float
        eps >= 0, nats.
    adjacency : {"zero_out", "replace"}, default "zero_out"
        The neighbouring relation. The default is ``"zero_out"``, as everywhere in
        :mod:`sharpdp.shuffle` (it was ``"replace"`` in earlier revisions: calls that relied on
        that default now get the zero-out blanket value and never the clones bound; pass
        ``adjacency="replace"`` for the former result).
    rel_tol : float
        Relative accuracy of the accountant, in (0, 1).

    Returns
    -------
    (float, str)
        delta upper bound in [0, 1] and its source, "sharp", "blanket" or "clones".

    Raises
    ------
    ValueError
        Unknown ``adjacency`` or bad ``n``, ``epsilon``, ``rel_tol`` (as the accountant).
    """
    check_adjacency(adjacency)
    epsilon = V.real("epsilon", epsilon, lo=0.0)
    n = V.integer("n", n, lo=1)
    if sharp_applies(randomizer, n, adjacency):
        V.real("rel_tol", rel_tol, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        return float(ExactShuffleAccountant(randomizer, n, adjacency, rel_tol=rel_tol).get_delta(epsilon)), "sharp"
    blanket = float(ShuffleAccountant(randomizer, n, adjacency=adjacency, rel_tol=rel_tol).get_delta(epsilon))
    eps0 = randomizer.local_epsilon if isinstance(randomizer, LocalRandomizer) else None
    if adjacency == "replace" and eps0 is not None:
        clones = clones_delta(eps0, n, epsilon)
        if clones < blanket:
            return clones, "clones"
    return blanket, "blanket"
