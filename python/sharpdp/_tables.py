"""Exact-sampling tables shared by the release samplers (docs/sampling.md §3).

:func:`rounded_gaussian_cdt` builds, once per scale s (cached), the cumulative distribution table
(CDT) of |D| for the *rounded Gaussian* D = round(s Z), Z ~ N(0, 1), i.e. the law
R_s(j) = Phi((j + 1/2) / s) - Phi((j - 1/2) / s) on the integers, in 128-bit fixed point computed
with mpmath at 190 bits (57 significant digits). The C++ sampler (``cpp/kernels/exact_sampling.hpp``,
``cdt_sample``) compares a uniform 128-bit integer with the entries, so the sampled law differs
from R_s only by the rounding of the entries and the truncated tail; :attr:`CdtTable.tv_bound`
bounds that total-variation distance. The module depends on no domain; any release that needs
a rounded Gaussian on a grid can use it.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["GUIDE_BITS", "MAX_TABLE_SIZE", "TAIL_BOUND", "CdtTable", "rounded_gaussian_cdt"]

GUIDE_BITS = 12
"""Guide-table index bits: the first candidate entry is looked up from the top 12 bits of a uniform."""

TAIL_BOUND = 1e-38
"""The truncation point J is the smallest with P(|D| > J) <= TAIL_BOUND."""

MAX_TABLE_SIZE = 1 << 18
"""Largest table built (J + 1 entries; about 13 s + 1): s up to about 20 000."""

_DIGITS = 57  # mpmath working precision of the entries: 190 bits
_PREC = 190
_ONE = 1 << 128
_LOW = (1 << 64) - 1


@dataclass(frozen=True)
class CdtTable:
    """CDT of |D|, D = round(s Z) (*the rounded Gaussian* R_s), for ``cdt_sample`` in C++.

    Attributes
    ----------
    s : float
        Scale (> 0): D = round(s Z).
    hi, lo : numpy.ndarray of uint64, shape (size,)
        Entry j (j < size - 1) is T[j] = hi[j] 2^64 + lo[j] = round(P(|D| <= j) 2^128); the last
        entry is a sentinel (all ones) that is never compared: it receives the remaining mass.
    guide : numpy.ndarray of uint32, shape (2**GUIDE_BITS,)
        guide[b] = min{j : T[j] > b 2^(128 - GUIDE_BITS)} (at most size - 1).
    size : int
        J + 1, J the largest magnitude sampled.
    tail : float
        Upper bound on P(|D| > J) (<= TAIL_BOUND), rounded up.
    tv_bound : float
        Upper bound on the total-variation distance between the law of the sampled D (magnitude
        from the table, uniform sign) and R_s: (J + 1) 2^-128 + tail, rounded up
        (docs/sampling.md §3). A probability, dimensionless.
    """

    s: float
    hi: np.ndarray
    lo: np.ndarray
    guide: np.ndarray
    size: int
    tail: float
    tv_bound: float

    def entries(self) -> list[int]:
        """The 128-bit entries T[0..size-2] as Python ints (the sentinel excluded)."""
        return [(int(h) << 64) | int(lo) for h, lo in zip(self.hi[:-1], self.lo[:-1])]


def _erf_entries(count: int, scale) -> list[int]:
    """round(2^128 erf((j + 1/2) / scale)) for j < count, on mpmath's low-level layer (3x faster
    than mpf objects) at _PREC bits: error below 2^-180 before the rounding to an integer."""
    from mpmath import libmp

    sc = scale._mpf_
    out = []
    for j in range(count):
        x = libmp.mpf_div(libmp.from_man_exp(2 * j + 1, -1), sc, _PREC)
        out.append(libmp.to_int(libmp.mpf_shift(libmp.mpf_erf(x, _PREC), 128), libmp.round_nearest))
    return out


def _up(x: float) -> float:
    return math.nextafter(x, math.inf)


@functools.lru_cache(maxsize=64)
def rounded_gaussian_cdt(s: float) -> CdtTable:
    """The CDT of |round(s Z)|, Z ~ N(0, 1), in 128-bit fixed point (cached per s).

    P(|D| <= j) = erf((j + 1/2) / (s sqrt 2)) is evaluated with mpmath at 190 bits (57 digits) and
    rounded to the nearest multiple of 2^-128 (error below 2^-128 per entry, including the
    evaluation error). The table stops at J, the smallest j >= 0 with
    P(|D| > J) = erfc((J + 1/2) / (s sqrt 2)) <= 1e-38 (J is about 13.1 s).

    Parameters
    ----------
    s : float
        Scale of the rounded Gaussian, finite and > 0 (sigma0 / h for a grid step h).

    Returns
    -------
    CdtTable

    Raises
    ------
    ValueError
        If s is not finite and > 0, or the table would exceed MAX_TABLE_SIZE entries
        (s above about 20 000: pick a coarser grid).
    """
    import mpmath

    s = float(s)
    if not (math.isfinite(s) and s > 0.0):
        raise ValueError(f"s must be finite and > 0, got {s}")
    ctx = mpmath.mp.clone()
    ctx.dps = _DIGITS
    scale = ctx.mpf(s) * ctx.sqrt(2)

    def upper_tail(j: int):  # P(|D| > j)
        return ctx.erfc((j + ctx.mpf(0.5)) / scale)

    # J: the smallest j >= 0 with upper_tail(j) <= TAIL_BOUND (z = 13.1 is past the bound)
    lo, hi = -1, max(1, math.ceil(13.2 * s))
    if hi + 1 > MAX_TABLE_SIZE:
        raise ValueError(f"s: a rounded-Gaussian table for s = {s:.6g} would exceed {MAX_TABLE_SIZE} entries; "
                         "choose a coarser grid (fewer grid_bits)")
    while hi - lo > 1:  # invariant: upper_tail(lo) > bound (lo = -1: P(|D| > -1) = 1), upper_tail(hi) <= bound
        mid = (lo + hi) // 2
        if upper_tail(mid) <= TAIL_BOUND:
            hi = mid
        else:
            lo = mid
    J = hi
    tail = _up(float(upper_tail(J)))
    entries = _erf_entries(J, scale)
    if any(not 0 <= t < _ONE - 1 for t in entries) or any(a > b for a, b in itertools.pairwise(entries)):
        raise AssertionError("rounded_gaussian_cdt: entries not monotone in [0, 2^128)")  # pragma: no cover
    step = _ONE >> GUIDE_BITS
    guide = np.array([bisect.bisect_right(entries, b * step) for b in range(1 << GUIDE_BITS)], dtype=np.uint32)
    full = entries + [_ONE - 1]  # the sentinel
    hi_w = np.array([t >> 64 for t in full], dtype=np.uint64)
    lo_w = np.array([t & _LOW for t in full], dtype=np.uint64)
    tv = _up(_up((J + 1) * 2.0**-128) + tail)
    return CdtTable(s=s, hi=hi_w, lo=lo_w, guide=guide, size=J + 1, tail=tail, tv_bound=tv)
