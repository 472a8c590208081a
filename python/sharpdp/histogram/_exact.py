"""Exact resolution of the grid release's rare ambiguous draws (docs/histogram_release.md §5).

The C++ kernel (``cpp/kernels/histogram.cpp``, ``grid_release``) inverts the bin law of the
grid release with one 64-bit word w0, i.e. the interval U in [w0 2^-64, (w0 + 1) 2^-64), and
decides only where its double-precision error bounds prove that the interval lies inside one
bin. Otherwise it hands over w0 and the 3 words it drew right after it: U is then known to
2^-256, and this module places that interval with mpmath at 352 bits, comparing with a margin
of 2^-300. An interval that still meets a bin boundary (probability <= 2^-214 per count,
docs/histogram_release.md §5) gets the bin below the boundary and is counted: that event is
the per-count total-variation distance ``RELEASE_TV_PER_COUNT`` charged to delta.

mpmath is imported on first use only (a handful of calls per million counts).
"""

from __future__ import annotations

import numpy as np

#: Per-count bound eta on the total-variation distance between the law the grid release samples
#: and the exact bin law of the real-valued mechanism (docs/histogram_release.md §5: <= 2^-214).
RELEASE_TV_PER_COUNT = 2.0**-190

_PREC = 352  # working precision (bits)
_MARGIN_EXP = -300  # comparisons are widened by 2^-300 (mpmath's error at 352 bits is far below)
_STEPS = 8  # unit steps from the candidate before a jump from the inverse CDF


def resolve(counts: np.ndarray, c: float, sigma: float, grid_bits: int, index: np.ndarray,
            candidate: np.ndarray, words: np.ndarray) -> tuple[np.ndarray, int]:
    """Bins of the ambiguous draws, exactly (up to the charged event).

    Parameters
    ----------
    counts : numpy.ndarray of float64
        All counts of the release (flat).
    c, sigma : float
        The mechanism's shift and log-space noise scale (the exact doubles the kernel used).
    grid_bits : int
        Grid exponent (grid step 2^-grid_bits).
    index, candidate : numpy.ndarray of uint64, shape (m,)
        Positions of the ambiguous draws and the kernel's candidate bins.
    words : numpy.ndarray of uint64, shape (m, 4)
        The 4 uniform words of each draw, most significant first: U = sum_i words[i] 2^(-64 (i + 1)).

    Returns
    -------
    bins : numpy.ndarray of uint64, shape (m,)
        The bin of each U.
    undecided : int
        Draws whose interval of width 2^-256 still met a bin boundary (counted in
        ``RELEASE_TV_PER_COUNT``); expected 0.
    """
    import mpmath

    from sharpdp._core_loader import core

    bins = np.empty(len(index), dtype=np.uint64)
    undecided = 0
    with mpmath.workprec(_PREC):
        cc, ss = mpmath.mpf(c), mpmath.mpf(sigma)
        s2 = ss * ss
        margin = mpmath.ldexp(1, _MARGIN_EXP)
        last = int(core.histogram.GRID_LAST_INDEX)
        for i in range(len(index)):
            n = mpmath.mpf(float(counts[int(index[i])]))
            u_int = 0
            for w in words[i]:
                u_int = (u_int << 64) | int(w)
            lo_end = mpmath.ldexp(u_int, -256) - margin
            hi_end = mpmath.ldexp(u_int + 1, -256) + margin
            log_nc = mpmath.log(n + cc)

            def cdf(j: int) -> mpmath.mpf:  # F(j) = P(bin < j)
                if j <= 0:
                    return mpmath.mpf(0)
                if j > last:
                    return mpmath.mpf(1)
                v = core.histogram.grid_values(np.array([j - 1, j], dtype=np.uint64), grid_bits)
                t = (mpmath.mpf(float(v[0])) + mpmath.mpf(float(v[1]))) / 2  # exact midpoint
                return mpmath.ncdf((mpmath.log(t + cc) - log_nc + s2) / ss)

            j = int(candidate[i])
            for it in range(4 * _STEPS):
                if it == _STEPS:  # far from the candidate: restart from the exact inverse CDF
                    um = mpmath.ldexp(2 * u_int + 1, -257)
                    z = mpmath.sqrt(2) * mpmath.erfinv(2 * um - 1)
                    v = (n + cc) * mpmath.exp(ss * z - s2) - cc
                    j = int(core.histogram.grid_index(np.array([float(v)]), grid_bits)[0])
                f_lo = cdf(j)
                if f_lo >= hi_end:
                    j -= 1
                    continue
                f_hi = cdf(j + 1)
                if f_hi <= lo_end:
                    j += 1
                    continue
                if not (f_lo <= lo_end and f_hi >= hi_end):
                    undecided += 1  # a boundary inside the 2^-256 interval (or its margin)
                break
            else:  # pragma: no cover - the inverse CDF lands within a bin or two
                raise RuntimeError("grid release: exact resolution did not converge")
            bins[i] = j
    return bins, undecided
