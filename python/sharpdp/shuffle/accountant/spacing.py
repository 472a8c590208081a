"""The lattice step snapped to a divisor of an atom law's spacing (docs/accountant_tail.md §46.2): a choice of which
certified passes :func:`~.plain.refine` runs, never a value.

The laws of k-RR and PrivUnit under replace-one have three atoms near -s, 0 and s; the values of a block of t users
(docs/accountant.md §5.2) then lie in narrow clusters just below the multiples of s. On a lattice whose step divides s
each cluster sits in the cell just below a node: the lower lattice law's group (docs/accountant.md §4.2) reaches its
node by borrowing little mass, where on an unrelated step it borrows, on average, half a step's worth from the next
cluster, a loss first order in h.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle.laws import Law

#: the atoms' largest distance below the multiple of s at or above them, relative to s, for s to be used
SPACING_REL = 0.01


def atom_spacing(law: Law) -> float | None:
    """The spacing s of an atom law whose atoms of positive probability all lie within SPACING_REL s at or below a
    multiple of s, s its largest atom (> 0); the block law's own ``spacing`` (its user law's, docs/accountant_tail.md
    §46.2) where it has one; None otherwise (continuous laws, other atom laws)."""
    s = getattr(law, "spacing", None)
    if s is not None:
        return s
    values, probs = getattr(law, "values", None), getattr(law, "probs", None)
    if not law.atomic or values is None or probs is None:
        return None
    return spacing_of(np.asarray(values, dtype=float), np.asarray(probs, dtype=float))


def spacing_of(values: np.ndarray, probs: np.ndarray) -> float | None:
    """:func:`atom_spacing` of the atoms ``values`` with probabilities ``probs``."""
    v = values[probs > 0]
    if v.size < 2:
        return None
    s = float(np.max(v))
    if not (s > 0 and math.isfinite(s)):
        return None
    r = v - np.ceil(v / s) * s  # each atom's distance below the multiple of s at or above it (<= 0)
    return s if bool(np.all(r >= -SPACING_REL * s)) and bool(np.all(r <= 0.0)) else None


def snap(h: float, s: float | None) -> float:
    """The largest step s / m (m a positive integer) at most h; h itself without a spacing s."""
    if s is None or not h > 0:
        return h
    m = max(1, math.ceil(s / h * (1.0 - 1e-12)))
    return s / m


__all__ = ["SPACING_REL", "atom_spacing", "snap", "spacing_of"]
