"""The pair's last sampling stage: brackets taken at once where :func:`~sharpdp.shuffle.pair_accuracy.capped_cover`
would take them afterwards (``docs/composition.md`` §2.22).

The last stage of :func:`sharpdp.shuffle.profile.dominating_pair`'s sampling takes upper values first (no lower value,
``docs/composition.md`` §2.2), and ``capped_cover`` then takes a second, full bracket at every such sample of value
>= ``ACCURATE_FLOOR`` whose cover factor (its nearest bracketed neighbours' gaps, §2) satisfies (1 + g)^2 > 1 + tau
(§2.12). Where the bracketed samples around a new point already say so, :func:`bracket_ahead` asks for that point's
bracket in place of its upper value first: one certified evaluation instead of two. An estimate that chooses which
certified evaluation runs, never a value.

:func:`pair_warm`: whether the pair's own sampling runs inside the plain engine's warm sweep
(``plain_warm.warm_sweep``, ``docs/composition.md`` §2.18) as a privacy profile's does (§2.23).
"""

from __future__ import annotations

import numpy as np

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.pair_accuracy import ACCURATE_FLOOR


def bracket_ahead(vals: dict, points, tau: float | None, floor: float = ACCURATE_FLOOR) -> list[int]:
    """The lattice points of ``points`` (new samples of the last stage) to evaluate with their bracket at once.

    Parameters
    ----------
    vals : dict
        The samples so far, {k: (lower, upper)} (lower NaN where taken upper first, 0 where none).
    points : iterable of int
        The new lattice points (none of them in ``vals``).
    tau : float or None
        ``capped_cover``'s margin (:func:`~sharpdp.shuffle.pair_accuracy.cap_tau`); None (no cap): no point.
    floor : float
        ``capped_cover``'s floor: a point is taken only where the upper value of the next sample above it (the
        running minimum, a value its own is expected to be at or above) is >= ``floor``.

    Returns
    -------
    list of int
        The points k, between two samples, whose predicted cover factor 1 + g (g the larger bracket gap
        (upper - lower) / lower of the nearest samples with a lower value > 0 on either side, as ``pair.cover`` fills
        a sample taken upper first) has (1 + g)^2 > 1 + tau; [] where ``limits.PAIR_BRACKET_AHEAD`` is False.
    """
    pts = sorted(int(k) for k in points)
    if tau is None or not limits.PAIR_BRACKET_AHEAD or not pts or len(vals) < 2:
        return []
    ks = np.array(sorted(vals), dtype=np.int64)
    lo = np.array([vals[k][0] for k in ks.tolist()], dtype=float)
    up = np.minimum.accumulate(np.array([vals[k][1] for k in ks.tolist()], dtype=float))
    known = np.flatnonzero(np.nan_to_num(lo) > 0.0)
    if known.size == 0:
        return []
    gap = np.clip((up[known] - lo[known]) / lo[known], 0.0, 0.05)  # (``cover``'s clip)
    out = []
    for k in pts:
        i = int(np.searchsorted(ks, k))  # the next sample above k
        if i == 0 or i == ks.size or up[i] < floor:
            continue
        p = int(np.searchsorted(ks[known], k))  # the nearest bracketed samples: known[p - 1] < k < known[p]
        g = max(gap[max(p - 1, 0)], gap[min(p, known.size - 1)])
        if (1.0 + g) ** 2 > 1.0 + tau:
            out.append(k)
    return out


def pair_warm() -> bool:
    """Whether :func:`~sharpdp.shuffle.profile.dominating_pair`'s own sampling (default ``epsilons``, not the ``lower``
    reference, not through bot) runs inside ``plain_warm.warm_sweep`` (``docs/composition.md`` §2.23): the refinements
    of the plain and block lattice paths start at the law family's last final step and clamps, each pass certified
    whatever its step and clamps; ``limits.PAIR_WARM_START`` False: main's passes and floats."""
    return bool(limits.PAIR_WARM_START)


__all__ = ["bracket_ahead", "pair_warm"]
