"""A round's dominating pair moved onto another lattice step without new certified values (``docs/composition.md``
§4.7).

dp_accounting composes only PLDs on one lattice, so :class:`sharpdp.interop.dp_accounting.ShufflePLDAccountant` needs
each shuffled round on its own step (dp_accounting's default 1e-4 nats), while ``to_pld``, ``dominating_pair`` and
``ComposedAccountant`` share the round's pair on its export step (``docs/composition.md`` §4.6). :func:`relattice`
gives a pair on any step Delta' from an existing pair: its hockey-stick curve G (convex in t = e^eps, above the
round's privacy profile at every eps of either sign) sampled at points of Delta' Z and connected by the same
pessimistic connect-the-dots construction (:func:`sharpdp.shuffle.pair.build_pair`). The result dominates the given
pair, hence the round; it costs no certified accountant value, so a round is built once per process whatever step its
consumers ask for.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle.pair import DominatingPair, build_pair, check_interval

def relattice_points(losses: np.ndarray, dx: float) -> np.ndarray:
    """The indices j of the points j ``dx`` at which :func:`relattice` samples a curve that is linear in t = e^eps
    between consecutive ``losses`` (nats, increasing): the lattice index at or above each loss (a loss within 1e-9
    relative of a lattice point taken as that point), one below the first and one above the last, and 0. Only an
    accuracy choice: the chords through upper values of a convex curve lie above it whatever the points
    (``docs/composition.md`` §4.7); with these the new curve is at most the old one moved by one step ``dx``."""
    if losses.size == 0:
        return np.array([-1, 0, 1], dtype=np.int64)
    q = losses / dx
    near = np.round(q)
    j = np.where(np.abs(q - near) <= 1e-9 * np.maximum(1.0, np.abs(q)), near, np.ceil(q))
    lo = math.floor(float(q[0])) - 1
    hi = int(j.max()) + 1
    return np.unique(np.concatenate([j, [lo, hi, 0]]).astype(np.int64))


def relattice(pair: DominatingPair, value_discretization_interval: float) -> DominatingPair:
    """A dominating pair on the step ``value_discretization_interval`` whose hockey-stick curve lies above ``pair``'s
    at every eps (``docs/composition.md`` §4.7).

    Parameters
    ----------
    pair : DominatingPair
        A pair of the round (e.g. the export pair :func:`sharpdp.shuffle.dominating_pair` builds).
    value_discretization_interval : float
        The new lattice step Delta' (nats) in [1e-12, 1]; ``pair`` itself when it is already ``pair``'s step.

    Returns
    -------
    DominatingPair
        Masses on multiples of Delta': the connect-the-dots pair through upper values of ``pair``'s curve G at the
        points of :func:`relattice_points` (each evaluated a hair below its lattice point, G being non-increasing),
        so its curve is >= G >= the round's profile; ``certified`` as ``pair``'s. Its samples are those points
        (eps >= 0) and values. G is linear in t between ``pair``'s losses, so the new curve is G itself where every
        loss is a lattice point of Delta' (Delta' dividing Delta) and otherwise at most G moved by one step Delta'
        in eps (each loss taken at the lattice point at or above it).

    Raises
    ------
    TypeError
        ``pair`` is not a DominatingPair.
    ValueError
        The step is outside [1e-12, 1].
    """
    if not isinstance(pair, DominatingPair):
        raise TypeError(f"pair must be a DominatingPair, got {type(pair).__name__}")
    dx = check_interval(value_discretization_interval)
    if dx == pair.value_discretization_interval:
        return pair
    js = relattice_points(pair.losses.astype(float) * pair.value_discretization_interval, dx)
    # G is non-increasing: its value a hair below the float of j dx is >= its value at the real j dx
    at = np.nextafter(js.astype(float) * dx, -np.inf)
    h = np.minimum(np.asarray(pair.get_delta(at), dtype=float), 1.0)  # (upper values, rounded up)
    h = np.minimum.accumulate(h)  # (each still >= G at its point: G is non-increasing)
    pos = js >= 0
    samples = (js[pos].astype(float) * dx, h[pos].copy())
    return build_pair(js, h, dx, pair.adjacency, pair.certified, samples)


__all__ = ["relattice", "relattice_points"]
