"""Choosing among certified bounds (sits above the accountant).

:func:`smallest_certified_delta` takes the smaller of the blanket accountant's certified upper
value and, for pure-LDP randomizers under replace-one adjacency, the "hiding among the clones"
bound.
"""

from __future__ import annotations

from sharpdp import _validation as V
from sharpdp.shuffle.accountant import ShuffleAccountant
from sharpdp.shuffle.adjacency import DEFAULT_ADJACENCY, check_adjacency
from sharpdp.shuffle.clones import clones_delta

__all__ = ["smallest_certified_delta"]


def smallest_certified_delta(randomizer, n: int, epsilon: float, adjacency: str = "replace", *,
                             rel_tol: float = 1e-2) -> tuple[float, str]:
    """The smaller of two certified upper bounds on delta(eps), and which one it is.

    ``"blanket"``: :class:`sharpdp.shuffle.ShuffleAccountant` (spec fft_accountant.md);
    ``"clones"``: :func:`clones_delta` (Feldman, McMillan & Talwar 2021), used only for
    replace-one adjacency and randomizers with a pure-LDP level ``local_epsilon``. Both are valid
    upper bounds, so their minimum is one.

    Returns
    -------
    (float, str)
        delta upper bound in [0, 1] and its source, "blanket" or "clones".
    """
    check_adjacency(adjacency)
    epsilon = V.real("epsilon", epsilon, lo=0.0)
    n = V.integer("n", n, lo=1)
    blanket = float(ShuffleAccountant(randomizer, n, adjacency=adjacency, rel_tol=rel_tol).get_delta(epsilon))
    eps0 = getattr(randomizer, "local_epsilon", None)
    if adjacency == "replace" and eps0 is not None:
        clones = clones_delta(eps0, n, epsilon)
        if clones < blanket:
            return clones, "clones"
    return blanket, "blanket"
