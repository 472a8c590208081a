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

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.laws import Law

#: the atoms' largest distance below the multiple of s at or above them, relative to s, for s to be used
SPACING_REL = 0.01


#: the relative margin by which an end atom of a sum law lies before the node it is snapped to (lattice units: m times
#: this, far above the lower law's margin 1e-6 and the cells' rounding)
END_MARGIN = 1e-4


def end_atom_spacing(law: Law) -> float | None:
    """A sum law (an atom plus a continuous part: the Gaussian randomizer's x vs bottom laws) whose one atom a != 0 is
    the end of its support where the lower lattice law's sweep starts (docs/accountant.md §4.2: the bottom, or the top
    when only the top is finite): the spacing s with a / (s / m) just before -m or m in the sweep's direction
    (|a| / s = 1 + END_MARGIN below a negative bottom atom, 1 - END_MARGIN below a positive one, the mirror at the
    top), so that on a step s / m the atom starts a group that reaches its node with little borrowed mass
    (docs/accountant_tail.md §46.2). None otherwise."""
    parts = getattr(law, "parts", None)
    if not parts or law.atomic:
        return None
    atoms = [p for p in parts if p.atomic]
    if len(atoms) != 1:
        return None
    v, pr = atoms[0].atoms()
    v = np.asarray(v, dtype=float)[np.asarray(pr) > 0]
    if v.size != 1 or not (v[0] != 0.0 and math.isfinite(v[0])):
        return None
    a = float(v[0])
    lo, hi = law.support()
    down = math.isfinite(hi) and not math.isfinite(lo)
    if (not down and a != lo) or (down and a != hi):
        return None
    before = (a < 0) != down  # the node sits above a (upward sweep, a < 0; or downward, a > 0): |a| / h = m (1 + margin)
    return abs(a) / (1.0 + END_MARGIN) if before else abs(a) / (1.0 - END_MARGIN)


def atom_spacing(law: Law) -> float | None:
    """The spacing s of an atom law whose atoms of positive probability all lie within SPACING_REL s at or below a
    multiple of s, s its largest atom (> 0); the block law's own ``spacing`` (its user law's, docs/accountant_tail.md
    §46.2) where it has one; None otherwise (continuous laws, other atom laws)."""
    s = getattr(law, "spacing", None)
    if s is not None:
        return s
    values, probs = getattr(law, "values", None), getattr(law, "probs", None)
    if not law.atomic or values is None or probs is None:
        return end_atom_spacing(law) if limits.END_ATOM_SNAP else None
    return spacing_of(np.asarray(values, dtype=float), np.asarray(probs, dtype=float))


#: atoms read first by :func:`spacing_of` (docs/composition.md §2.30.7: a block law's first atoms are 0, a, 2a, ...)
PROBE_ATOMS = 8

#: a positive atom of the probe below this fraction of the probe's largest atom decides "no spacing" (Lemma 2.30.7)
PROBE_GAP = 0.98


def spacing_of(values: np.ndarray, probs: np.ndarray) -> float | None:
    """:func:`atom_spacing` of the atoms ``values`` with probabilities ``probs``. Where the first ``PROBE_ATOMS``
    atoms already show that no spacing exists (:func:`_probe_unspaced`), None without reading the others: the same
    answer as the whole test (docs/composition.md §2.30.7, Lemma 2.30.7)."""
    if values.size > PROBE_ATOMS and _probe_unspaced(values[:PROBE_ATOMS], probs[:PROBE_ATOMS]):
        return None
    v = values[probs > 0]
    if v.size < 2:
        return None
    s = float(np.max(v))
    if not (s > 0 and math.isfinite(s)):
        return None
    r = v - np.ceil(v / s) * s  # each atom's distance below the multiple of s at or above it (<= 0)
    return s if bool(np.all(r >= -SPACING_REL * s)) and bool(np.all(r <= 0.0)) else None


def _probe_unspaced(v: np.ndarray, p: np.ndarray) -> bool:
    """True when, m the largest atom of positive probability among ``v`` (normal: m >= 1e-300, finite), some atom x
    of positive probability lies in (0, PROBE_GAP m): then every s >= m fails :func:`spacing_of`'s test at x
    (docs/composition.md §2.30.7, Lemma 2.30.7). False decides nothing."""
    w = v[p > 0]
    if w.size < 2:
        return False
    m = float(np.max(w))
    if not (1e-300 <= m < math.inf):
        return False
    return bool(np.any((w > 0.0) & (w < PROBE_GAP * m)))


#: a step above this many spacings is left alone by :func:`snap` (docs/accountant_tail.md §46.5)
SNAP_MAX_RATIO = 2.0


def snap(h: float, s: float | None) -> float:
    """The largest step s / m (m a positive integer) at most h; h itself without a spacing s, or when h exceeds
    ``SNAP_MAX_RATIO`` s (snapping would refine the step to s, a pass far finer than asked: docs/accountant_tail.md
    §46.5), unless ``limits.SNAP_COARSE`` is off (session 35's steps)."""
    if s is None or not h > 0 or (limits.SNAP_COARSE and h > SNAP_MAX_RATIO * s):
        return h
    m = max(1, math.ceil(s / h * (1.0 - 1e-12)))
    return s / m


__all__ = ["END_MARGIN", "PROBE_ATOMS", "PROBE_GAP", "SNAP_MAX_RATIO", "SPACING_REL", "atom_spacing", "end_atom_spacing", "snap", "spacing_of"]
