"""Choosing among certified bounds (sits above the accountant).

:func:`smallest_certified_delta` takes the smaller of the blanket accountant's certified upper
value and, for pure-LDP randomizers under replace-one adjacency, the "hiding among the clones"
bound.
"""

from __future__ import annotations

from sharpdp.shuffle.accountant import ShuffleAccountant
from sharpdp.shuffle.adjacency import DEFAULT_ADJACENCY, check_adjacency
from sharpdp.shuffle.clones import clones_delta
from sharpdp.shuffle.contract import LocalRandomizer

__all__ = ["smallest_certified_delta"]


def smallest_certified_delta(randomizer, n: int, epsilon: float, adjacency: str = DEFAULT_ADJACENCY, *,
                             rel_tol: float = 1e-2) -> tuple[float, str]:
    """The smaller of two certified upper bounds on delta(eps), and which one it is.

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
        delta upper bound in [0, 1] and its source, "blanket" or "clones".

    Raises
    ------
    ValueError
        Unknown ``adjacency`` or bad ``n``, ``epsilon``, ``rel_tol`` (as the accountant).
    """
    check_adjacency(adjacency)
    blanket = float(ShuffleAccountant(randomizer, n, adjacency=adjacency, rel_tol=rel_tol).get_delta(epsilon))
    eps0 = randomizer.local_epsilon if isinstance(randomizer, LocalRandomizer) else None
    if adjacency == "replace" and eps0 is not None:
        clones = clones_delta(eps0, n, epsilon)
        if clones < blanket:
            return clones, "clones"
    return blanket, "blanket"
