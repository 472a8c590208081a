"""Exact resolution of the grid release's rare ambiguous draws (docs/histogram_release.md §5).

The C++ kernel (``cpp/kernels/histogram.cpp``, ``grid_release``) inverts the bin law of the
grid release with one 64-bit word w0, i.e. the interval U in [w0 2^-64, (w0 + 1) 2^-64), and
decides only where its double-precision error bounds prove that the interval lies inside one
bin. Otherwise it hands over w0 and the 3 words it drew right after it: U is then known to
2^-256, and this module places that interval with mpmath (precision 256 + 96 bits, comparisons
widened by 2^-(256 + 44)). An interval that still meets a bin boundary (probability <= 2^-214
per count) is refined by 256 more bits, read from the ChaCha20 stream 2^63 + position of the
same key (a stream no block of the release uses), at 256 more bits of precision, and so on:
the result is the bin of an infinitely precise uniform U, i.e. an exact draw from the bin law
(no total-variation term), and the loop ends with probability 1.

mpmath is imported on first use only (a handful of calls per million counts).
"""

from __future__ import annotations

import numpy as np

#: First ChaCha20 stream of the refinement words (stream = this + position of the count).
EXTENSION_STREAM = 2**63

_GUARD_BITS = 96  # working precision = resolution bits + 96
_MARGIN_BITS = 44  # comparisons widened by 2^-(resolution bits + 44)
_STEPS = 8  # unit steps from the candidate before a jump from the inverse CDF
_MAX_ROUNDS = 64  # 2^14 bits of U: reached with probability < 2^-16000
_Z_SATURATE = 1e6  # |b| above which Phi(b) is 0 or 1 to far below 2^-(2^14 + 96)


class _BinLaw:
    """The bin law of one count at the current mpmath precision (docs/histogram_release.md §3)."""

    def __init__(self, n: float, c: float, sigma: float, grid_bits: int, hist, mpmath) -> None:
        self.mp, self.hist, self.bits = mpmath, hist, grid_bits
        self.last = int(hist.GRID_LAST_INDEX)
        self.n, self.c, self.s = mpmath.mpf(n), mpmath.mpf(c), mpmath.mpf(sigma)
        self.s2 = self.s * self.s

    def cdf(self, k: int):
        """F(k) = P(bin < k) = Phi(b(t_k)), t_k the exact midpoint of grid values k - 1 and k."""
        mp = self.mp
        if k <= 0:
            return mp.mpf(0)
        if k > self.last:
            return mp.mpf(1)
        v = self.hist.grid_values(np.array([k - 1, k], dtype=np.uint64), self.bits)
        t = (mp.mpf(float(v[0])) + mp.mpf(float(v[1]))) / 2
        # log((t + c)/(n + c)) as log1p((t - n)/(n + c)): no cancellation when t and n are close
        # relative to n + c (tiny sigma with a large c)
        z = (mp.log1p((t - self.n) / (self.n + self.c)) + self.s2) / self.s
        if abs(z) > _Z_SATURATE:  # Phi(-1e6) < 2^-(7e11): far below every resolution used here
            return mp.mpf(1) if z > 0 else mp.mpf(0)
        return mp.ncdf(z)

    def near(self, u) -> int:
        """A bin near the inverse CDF of u."""
        mp = self.mp
        z = mp.sqrt(2) * mp.erfinv(2 * u - 1)
        v = (self.n + self.c) * mp.exp(self.s * z - self.s2) - self.c
        return int(self.hist.grid_index(np.array([float(v)]), self.bits)[0])


def _bin_of_interval(law: _BinLaw, j: int, u_int: int, bits: int) -> tuple[int, bool]:
    """(bin, decided) for U in [u_int 2^-bits, (u_int + 1) 2^-bits), starting from bin j."""
    mp = law.mp
    margin = mp.ldexp(1, -(bits + _MARGIN_BITS))
    lo_end = mp.ldexp(u_int, -bits) - margin
    hi_end = mp.ldexp(u_int + 1, -bits) + margin
    for it in range(4 * _STEPS):
        if it == _STEPS:  # far from the candidate: restart from the inverse CDF at the interval's middle
            j = law.near(mp.ldexp(2 * u_int + 1, -(bits + 1)))
        f_lo = law.cdf(j)
        if f_lo >= hi_end:
            j -= 1
            continue
        f_hi = law.cdf(j + 1)
        if f_hi <= lo_end:
            j += 1
            continue
        return j, bool(f_lo <= lo_end and f_hi >= hi_end)
    raise RuntimeError("grid release: exact resolution did not converge")  # pragma: no cover


def resolve(counts: np.ndarray, c: float, sigma: float, grid_bits: int, index: np.ndarray,
            candidate: np.ndarray, words: np.ndarray, key: bytes) -> np.ndarray:
    """Bins of the ambiguous draws of one ``_core.histogram.release`` call, exactly.

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
    key : bytes
        The 32-byte ChaCha20 key of the call (refinement words, when needed).

    Returns
    -------
    numpy.ndarray of uint64, shape (m,)
        The bin of each draw: bin j has probability F(j + 1) - F(j), F(j) = Phi(b(t_j)),
        t_j the lower boundary of bin j (docs/histogram_release.md §3).
    """
    import mpmath

    from sharpdp._core_loader import core

    hist = core.histogram
    bins = np.empty(len(index), dtype=np.uint64)
    for i in range(len(index)):
        pos = int(index[i])
        u_int = 0
        for w in words[i]:
            u_int = (u_int << 64) | int(w)
        bits = 256
        j = int(candidate[i])
        for rnd in range(_MAX_ROUNDS):
            with mpmath.workprec(bits + _GUARD_BITS):
                j, decided = _bin_of_interval(_BinLaw(float(counts[pos]), c, sigma, grid_bits, hist, mpmath), j,
                                              u_int, bits)
            if decided:
                break
            more = core.samplers.keystream_words(key, EXTENSION_STREAM + pos, 4 * (rnd + 1))[4 * rnd:]
            for w in more:
                u_int = (u_int << 64) | int(w)
            bits += 256
        else:  # pragma: no cover - probability < 2^-16000
            raise RuntimeError("grid release: exact resolution did not converge")
        bins[i] = j
    return bins
