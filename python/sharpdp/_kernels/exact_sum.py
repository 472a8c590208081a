"""Exact (error-free) summation of float64 columns, for sums that must not depend on order.

Every finite double is an integer multiple of 2**-1074, so a sum of doubles is exactly
``T * 2**-1074`` for an integer ``T``. The kernel accumulates ``T`` per column in a long
accumulator of 66 signed 32-bit "digits" held in int64 cells (a superaccumulator: each add
puts < 2**33 into a cell, so 2**29 rows are safe before carrying); the digits are combined into
a Python int. Partial sums of pieces of a column (partitions, blocks) are therefore combined
exactly by adding the ints, in any order and grouping, and a mean ``T / (n 2**1074)`` is
rounded once, correctly (Python's int / int true division is correctly rounded).

Imported lazily (Numba compiles on first use and caches the machine code).
"""

from __future__ import annotations

import numba as nb
import numpy as np

#: Number of 32-bit digits: exponents 0..2045 of m * 2**(E - 1074), |m| < 2**53.
_NDIGITS = 66
#: Rows per kernel call: each row adds < 2**33 to a cell, int64 cells hold 2**62 safely.
_ROWS_PER_CALL = 1 << 29
#: 2**1074: one unit of the accumulator is 2**-1074 (the smallest subnormal).
_UNIT_SHIFT = 1074


@nb.njit(cache=True, nogil=True)
def _accumulate(bits, cells):  # pragma: no cover - compiled
    """Add the rows of ``bits`` (m, d) uint64 (IEEE images of float64) into ``cells`` (d, 66).

    Returns the index of the first non-finite entry (row * d + column), or -1.
    """
    m, d = bits.shape
    mask32 = np.uint64(0xFFFFFFFF)
    for i in range(m):
        for j in range(d):
            b = bits[i, j]
            ebits = (b >> np.uint64(52)) & np.uint64(0x7FF)
            if ebits == np.uint64(0x7FF):
                return i * d + j
            frac = b & np.uint64(0xFFFFFFFFFFFFF)
            if ebits == np.uint64(0):  # subnormal (or zero): frac * 2**-1074
                mant = frac
                e = np.int64(0)
            else:  # (2**52 + frac) * 2**(ebits - 1075)
                mant = frac | np.uint64(0x10000000000000)
                e = np.int64(ebits) - np.int64(1)
            k = e >> np.int64(5)
            s = np.uint64(e & np.int64(31))
            lo = (mant & mask32) << s           # < 2**63
            hi = (mant >> np.uint64(32)) << s   # < 2**52
            d0 = np.int64(lo & mask32)
            d1 = np.int64(lo >> np.uint64(32)) + np.int64(hi & mask32)
            d2 = np.int64(hi >> np.uint64(32))
            if b >> np.uint64(63):
                cells[j, k] -= d0
                cells[j, k + 1] -= d1
                cells[j, k + 2] -= d2
            else:
                cells[j, k] += d0
                cells[j, k + 1] += d1
                cells[j, k + 2] += d2
    return -1


def exact_column_sums(values) -> list[int]:
    """Exact column sums of a 2-D float64 array, as integers in units of 2**-1074.

    Parameters
    ----------
    values : array_like of float64, shape (m, d)
        Finite values; m may be 0.

    Returns
    -------
    list of int, length d
        ``T_j`` with ``sum_i values[i, j] == T_j * 2**-1074`` exactly. Add the lists of
        several pieces of a column (in any order) to get the exact sum of the whole column.

    Raises
    ------
    ValueError
        If ``values`` is not 2-D or holds NaN or an infinity.
    """
    a = np.ascontiguousarray(values, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"values must be 2-dimensional (m, d), got shape {a.shape}")
    m, d = a.shape
    bits = a.view(np.uint64)
    totals = [0] * d
    for start in range(0, m, _ROWS_PER_CALL):
        cells = np.zeros((d, _NDIGITS), dtype=np.int64)
        bad = _accumulate(bits[start:start + _ROWS_PER_CALL], cells)
        if bad >= 0:
            row, col = divmod(int(bad), d)
            raise ValueError(f"values must be finite (found {a[start + row, col]} in row {start + row}, "
                             f"column {col})")
        for j in range(d):
            totals[j] += sum(int(c) << (32 * k) for k, c in enumerate(cells[j]) if c)
    return totals


def mean_from_exact_sums(totals, n: int) -> np.ndarray:
    """Correctly rounded means ``T_j 2**-1074 / n`` from :func:`exact_column_sums` totals.

    Parameters
    ----------
    totals : sequence of int
        Exact sums in units of 2**-1074 (one per column).
    n : int
        Number of rows, >= 1.

    Returns
    -------
    numpy.ndarray of float64, shape (len(totals),)
        Each entry is the exact mean rounded once to the nearest double.

    Raises
    ------
    ValueError
        If ``n`` < 1.
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    denominator = n << _UNIT_SHIFT
    return np.array([int(t) / denominator for t in totals], dtype=np.float64)


def exact_column_means(values) -> np.ndarray:
    """Correctly rounded column means of a non-empty 2-D float64 array (independent of row order).

    Raises
    ------
    ValueError
        If ``values`` is not 2-D, has no row or holds NaN or an infinity.
    """
    a = np.ascontiguousarray(values, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] == 0:
        raise ValueError(f"values must have shape (m, d) with m >= 1, got {a.shape}")
    return mean_from_exact_sums(exact_column_sums(a), a.shape[0])
