"""Adversarial review (rev-decide) of the exact histogram release at large shifts c: the fast path's per-count
choice of the bound on L = log((t + c)/(n + c)) (the series in r, the series in x, the library log1p;
docs/histogram_release.md §4.5).

Reference: F(t) = Phi((log((t + c)/(n + c)) + sigma^2)/sigma) in mpmath at 240 bits, for the double c and sigma
of the mechanism, and the grid boundaries t_j as exact midpoints of the kernel's grid values (exact doubles).
Words w0 are placed at 2^i units (of 2^-64) on both sides of exact bin boundaries, so the candidate is often one
bin off (the bin below or above the true one) and the §4.3 upper-boundary proof is exercised against a boundary
that U just crosses.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from sharpdp import _core
from sharpdp.histogram import ShiftedLogGaussian

H = _core.histogram
U = 2.0 ** -53
PREC = 240


def _grid(j: int, k: int) -> mpmath.mpf:
    return mpmath.mpf(float(H.grid_values(np.array([j], dtype=np.uint64), k)[0]))


def _t(j: int, k: int) -> mpmath.mpf:
    """Lower boundary of bin j >= 1: the midpoint of grid values j - 1 and j (exact)."""
    return (_grid(j - 1, k) + _grid(j, k)) / 2


_CDF: dict = {}


def _cdf(j: int, n: float, c: float, sigma: float, k: int) -> mpmath.mpf:
    """F(j) = P(bin < j) exactly (F(0) = 0). Memoised on the arguments and mpmath's working precision (a pure
    function of them; the checks ask for the same bins again: 21,603 calls, 3,087 distinct, in this module)."""
    key = (j, n, c, sigma, k, mpmath.mp.prec)
    got = _CDF.get(key)
    if got is None:
        got = _CDF[key] = _cdf_computed(j, n, c, sigma, k)
    return got


def _cdf_computed(j: int, n: float, c: float, sigma: float, k: int) -> mpmath.mpf:
    if j <= 0:
        return mpmath.mpf(0)
    t = _t(j, k)
    c_, s_ = mpmath.mpf(c), mpmath.mpf(sigma)
    if t + c_ <= 0:
        return mpmath.mpf(0)
    b = (mpmath.log((t + c_) / (mpmath.mpf(n) + c_)) + s_ * s_) / s_
    return mpmath.ncdf(b)


def _bin_of(q: mpmath.mpf, n: float, c: float, sigma: float, k: int) -> int:
    """Exact bin of the uniform q, starting from the real-valued mechanism's value at q."""
    c_, s_ = mpmath.mpf(c), mpmath.mpf(sigma)
    v = (mpmath.mpf(n) + c_) * mpmath.exp(s_ * mpmath.sqrt(2) * mpmath.erfinv(2 * q - 1) - s_ * s_) - c_
    j = int(H.grid_index(np.array([float(v)]), k)[0])
    while j > 0 and _cdf(j, n, c, sigma, k) > q:
        j -= 1
    while _cdf(j + 1, n, c, sigma, k) <= q:
        j += 1
    return j


class _Kernel:
    """c and sigma = sqrt(2) erfinv(r0/(1 + c)) as the mechanism computes them; for c above the public range
    (ShiftedLogGaussian takes c <= 1e12) the kernel's hook `invert` is called with them directly."""

    def __init__(self, r: float, r0: float | None, c: float) -> None:
        if c <= 1e12:
            m = ShiftedLogGaussian(r, r0, c)
            self.c, self.sigma = m.c, m.sigma
        else:
            from scipy.special import erfinv

            self.c = float(c)
            self.sigma = float(math.sqrt(2.0) * erfinv((r / 2 if r0 is None else r0) / (1.0 + c)))


def _words_near_boundaries(m: _Kernel, k: int, counts, qs, exps):
    ns, ws = [], []
    for n in counts:
        for q in qs:
            j = _bin_of(mpmath.mpf(q), n, m.c, m.sigma, k)
            for jj in (j, j + 1):
                f = _cdf(jj, n, m.c, m.sigma, k)
                w = int(mpmath.floor(mpmath.ldexp(f, 64)))
                for d in [s * (2 ** e) for e in exps for s in (-1, 1)] + [0]:
                    if 0 <= w + d < 2 ** 64:
                        ns.append(float(n))
                        ws.append(w + d)
    return ns, ws


def _check_decided_exact(m, k, ns, ws):
    bins, decided = H.invert(np.array(ns), np.array(ws, dtype=np.uint64), m.c, m.sigma, k)
    for n, w, b, dec in zip(ns, ws, bins.tolist(), decided.tolist()):
        if dec:
            lo, hi = mpmath.ldexp(w, -64), mpmath.ldexp(w + 1, -64)
            assert _cdf(b, n, m.c, m.sigma, k) <= lo, ("decided bin too high", n, w, b)
            assert _cdf(b + 1, n, m.c, m.sigma, k) >= hi, ("decided bin too low", n, w, b)
    return decided


TWO53 = 2 ** 53
# (r, r0, c, grid_bits, counts): c from 1e6 to 1e15 across the switch of `narrow` (c ~ 1.2e7 at k = 10) and of the
# per-count choice between the series in r and in x (the r-series' floor 1.5e-14 against 2^-12 of a bin's width
# in L, y ~ 2^-k/(t + c)); counts at 0, near 2^53 / c and near 2^53.
LARGE_C = [
    (0.5, 0.4, 1e6, 10, [0, 1, 2 ** 33, TWO53 - 1]),
    (0.5, 0.4, 1.2e7, 10, [0, 3, 750_599_937, TWO53 - 2]),
    (0.2, None, 3e7, 10, [0, 300_239_975, TWO53 - 1]),
    (0.9, 0.8, 1e9, 10, [0, 1, 9_007_199, 2 ** 52]),
    (0.3, 0.2, 1e12, 10, [0, 1, 9_007, TWO53 - 1]),
    (0.3, 0.2, 1e12, 34, [0, 5]),
    (0.99, 0.98, 1e15, 10, [0, 1, 9, 2 ** 40, TWO53 - 1]),
    (0.01, 0.005, 1e15, 7, [0, 2 ** 50]),
]
QS = (1e-15, 1e-6, 0.02, 0.3, 0.5, 0.77, 0.999, 1 - 1e-9)


@pytest.mark.parametrize("r,r0,c,k,counts", LARGE_C)
def test_large_c_decided_bins_are_exact_next_to_boundaries(r, r0, c, k, counts):
    """Every bin the kernel decides, for words 2^0 .. 2^60 units (2^-64) from exact bin boundaries, is the exact
    bin (mpmath, 240 bits); some are decided (the test is not vacuous)."""
    m = _Kernel(r, r0, c)
    with mpmath.workprec(PREC):
        ns, ws = _words_near_boundaries(m, k, counts, QS, range(0, 61, 3))
        decided = _check_decided_exact(m, k, ns, ws)
    assert 0.2 < decided.mean() < 0.98


def _x_series_zone(m: _Kernel, k: int, n: float, j: int) -> float:
    """The part of the proved error (in U) that the x-series' bound dL = 16 u |x| + 0.2 x^6 contributes at the
    lower boundary of bin j (docs/histogram_release.md §4.5 and §4.2 steps 3-4): phi_max dL / sigma."""
    t = float(_t(j, k))
    x = (t - n) * (1.0 / (n + m.c))
    return (16.0 * U * abs(x) + 0.2 * x ** 6) / m.sigma / math.sqrt(2.0 * math.pi)


# (r, r0, c, grid_bits, count, q): large c, where the per-count choice takes the series in x (|x| ~ sigma z tiny),
# in the tails (|z| >= 2), where its bound dominates the error budget (the erfc term ~2^-46 P is small there)
X_SERIES = [
    (0.3, 0.2, 1e12, 10, 1000.0, 0.0013),
    (0.3, 0.2, 1e12, 10, 7e6, 0.99865),
    (0.9, 0.8, 1e9, 10, 1e5, 3e-5),
    (0.99, 0.98, 1e15, 10, 1e6, 1 - 3e-5),
    (0.5, 0.4, 1e10, 10, 12345.0, 0.005),
]


@pytest.mark.parametrize("r,r0,c,k,n,q", X_SERIES)
def test_x_series_bound_is_charged_next_to_a_boundary(r, r0, c, k, n, q):
    """Sensitivity test for the x-series bound (a prior review found that setting it to 0 failed no test).

    U's interval is put above an exact lower boundary t_j of a bin at 1.15 times the x-series' own share of the
    error budget, phi_max (16 u |x| + 0.2 x^6) / sigma in U (the kernel's whole margin there, measured by
    bisection over w0, is 1.39-1.40 times that share: the x-series bound is ~72 % of it). The kernel must defer
    there; with the bound halved the margin would be ~0.89 share and with 0 ~0.39 share, so the fast path would
    decide these words (checked by rebuilding the kernel with fast_log1p_error halved: every case fails). At 4
    times the share the kernel decides, and the decided bin is exact."""
    m = _Kernel(r, r0, c)
    with mpmath.workprec(PREC):
        j = _bin_of(mpmath.mpf(q), n, m.c, m.sigma, k)
        near, far = [], []
        for jj in (j, j + 1):
            f = _cdf(jj, n, m.c, m.sigma, k)
            units = _x_series_zone(m, k, n, jj) * 2.0 ** 64
            assert units > 1e4  # the share is many units of 2^-64 (else the test could not see it)
            near.append(int(mpmath.floor(mpmath.ldexp(f, 64) + 1.15 * units)))
            far.append(int(mpmath.floor(mpmath.ldexp(f, 64) + 4.0 * units)))
        _, decided = H.invert(np.full(len(near), n), np.array(near, dtype=np.uint64), m.c, m.sigma, k)
        assert not decided.any(), decided
        assert _check_decided_exact(m, k, [n] * len(far), far).all()
