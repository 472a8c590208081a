"""The epsilon arguments of :class:`sharpdp.shuffle.ShuffleAccountant`: their validation, and the split of an
array of any sign between the accountant's own values (eps >= 0) and the swap identity (eps < 0).

Every real eps is a point of the privacy profile delta(eps) = sup H_{e^eps} over ordered neighbouring pairs
(docs/composition.md §1); for eps < 0 the accountant answers with the swap identity
delta(eps) = 1 - e^eps + e^eps delta(-eps) on its certified values at -eps, rounded up: the values of
:func:`sharpdp.shuffle.privacy_profile` (docs/composition.md §8 lists what each public accountant answers).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from sharpdp import _validation as V

#: (lower, upper) of a 1-D array of epsilons, as two arrays of its length.
Bounds = Callable[[np.ndarray], tuple[Any, Any]]


def epsilon_array(epsilon: Any) -> np.ndarray:
    """``epsilon`` (a real number or an array of them, any sign, +-inf allowed) as a float64 array of its shape.

    Raises
    ------
    TypeError
        None, text, or an array that is not of integers or floats (complex, boolean, object).
    ValueError
        NaN anywhere.
    """
    if epsilon is None or isinstance(epsilon, (str, bytes)):
        raise TypeError(f"epsilon must be a real number or an array of them, got {type(epsilon).__name__}")
    arr = np.asarray(epsilon)
    if arr.dtype.kind not in "iuf":  # complex, bool, object, strings
        raise TypeError(f"epsilon must be real (int or float), got dtype {arr.dtype}")
    arr = arr.astype(float)
    if np.any(np.isnan(arr)):
        raise ValueError("epsilon must not be NaN")
    return arr


def by_sign(arr: np.ndarray, nonnegative: Bounds, negative: Bounds) -> tuple[Any, Any]:
    """(lower, upper) in the shape of ``arr``: ``nonnegative`` answers its entries >= 0 (first, so that an
    accountant's running minimum sees them in its own order), ``negative`` those < 0 (-inf included)."""
    flat = arr.ravel()
    lo, up = np.empty(flat.size), np.empty(flat.size)
    for mask, fn in ((flat >= 0, nonnegative), (flat < 0, negative)):
        if mask.any():
            a, b = fn(flat[mask])
            lo[mask], up[mask] = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return V.pair_like(arr, lo, up)
