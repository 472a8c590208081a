"""The histogram release's fast path without library log1p/exp (docs/histogram_release.md §4.5).

The fast path proves bins with L = a + log1p(r) (a the candidate's exponent, a degree-5 series)
and the §4.3 mass bound with ``exp_bounded``; both rest on the proved relative error of
``exp_bounded`` (<= 2^-47 on [-700, 700]), checked here against mpmath, and every bin the kernel
decides is checked against the exact bin (mpmath) where the fast path applies and where it
falls back (a small c, where |r| > 2^-6 near 0).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from sharpdp._core_loader import core
from sharpdp.histogram import ShiftedLogGaussian

from tests.test_histogram_grid_release import ref_cdf


def test_exp_bounded_error_within_its_proved_bound():
    rng = np.random.default_rng(3)
    ln2 = math.log(2.0)
    xs = np.concatenate([
        rng.uniform(-700.0, 700.0, 6000),
        rng.uniform(-2.0, 2.0, 3000),
        # the reduction's switch points k ln2 +- ln2/2 (largest |t|) and the ends of the domain
        np.array([(k + 0.5) * ln2 for k in range(-1010, 1009, 7)]),
        np.nextafter(np.array([(k + 0.5) * ln2 for k in range(-1010, 1009, 7)]), 0.0),
        np.array([-700.0, 700.0, 0.0, -0.0, 1e-300, -1e-300]),
    ])
    got = core.histogram._exp_bounded(xs)
    worst = 0.0
    with mpmath.workprec(120):
        for x, y in zip(xs.tolist(), got.tolist()):
            ref = mpmath.exp(mpmath.mpf(x))
            worst = max(worst, float(abs(mpmath.mpf(y) / ref - 1)))
    assert worst <= 2.0**-47, worst
    # it is a real approximation (not the library exp in disguise), a few ulp at most
    assert 2.0**-60 < worst < 2.0**-50
    with pytest.raises(ValueError, match="x"):
        core.histogram._exp_bounded(np.array([-700.5]))
    with pytest.raises(ValueError, match="x"):
        core.histogram._exp_bounded(np.array([np.nan]))


@pytest.mark.parametrize("r, c, k, counts", [
    (0.2, 1.0, 10, [0.0, 1.0, 7.0, 12345.0, 1e6]),
    (0.2, 0.01, 10, [0.0, 1.0, 3.0]),       # tiny c: near 0 |r| > 2^-6, the fall-back path decides
    (0.5, 1e9, 12, [0.0, 5.0, 2.0**40]),    # huge c: L ~ 0, the exp error term dominates dL
    # c up to the API's 1e12: bins narrower in L than the r-series' floor, the series in x decides
    (0.2, 1e12, 7, [0.0, 5000.0, 9999.0, 2.0**52]),
    (0.2, 1e9, 7, [0.0, 5000.0, 1e6]),
    (0.2, 1.0, 40, [0.0, 1.0, 2.0]),        # fine grid near 0: narrow bins at small c
])
def test_decided_bins_are_the_exact_bins(r, c, k, counts):
    m = ShiftedLogGaussian(r, c=c, grid_bits=k)
    rng = np.random.default_rng(11)
    per = 40
    cnt = np.repeat(np.asarray(counts, dtype=np.float64), per)
    w0 = rng.integers(0, 2**64, cnt.size, dtype=np.uint64)
    bins, decided = core.histogram.invert(cnt, w0, m.c, m.sigma, k)
    assert decided.mean() > 0.99
    with mpmath.workprec(200):
        for n, w, j, d in zip(cnt.tolist(), w0.tolist(), bins.tolist(), decided.tolist()):
            if not d:
                continue
            lo, hi = mpmath.ldexp(w, -64), mpmath.ldexp(w + 1, -64)
            assert ref_cdf(j, n, m.c, m.sigma, k) <= lo, (n, w, j)
            assert ref_cdf(j + 1, n, m.c, m.sigma, k) >= hi, (n, w, j)


def test_r0_whose_sigma_underflows_is_rejected_naming_r0():
    with pytest.raises(ValueError, match="r0"):
        ShiftedLogGaussian(0.5, r0=5e-324)
    with pytest.raises(ValueError, match="r0"):
        ShiftedLogGaussian(0.5, r0=1e-300, c=1e12)   # sigma ~ 1.25e-312: subnormal
    m = ShiftedLogGaussian(0.5, r0=1e-290, c=1e12)  # normal sigma: accepted
    assert m.sigma == pytest.approx(math.sqrt(math.pi / 2.0) * 1e-290 / (1.0 + 1e12), rel=1e-12)


@pytest.mark.parametrize("r, c, k, n, qs", [
    # a fine grid at small c (narrow bins): the series in x at 2^-9 < |x| <= 2^-6, where its
    # truncation (~x^6/6, up to ~2e-12) is a sizeable part of a bin (~7e-12 in L)
    (0.2, 1.0, 40, 0.0, (0.605, 0.61, 0.615, 0.62)),
    # c = 1e12: |x| ~ 1e-13, bins ~ 8e-15 in L, below the r-series' floor
    (0.2, 1e12, 7, 5000.0, (0.02, 0.3, 0.77)),
])
def test_narrow_bins_decided_next_to_boundaries_are_exact(r, c, k, n, qs):
    """w0 at 2^0 .. 2^56 units of 2^-64 on both sides of exact bin boundaries, where the fast path
    takes L from the series in x (docs/histogram_release.md §4.5): every bin it decides is exact.
    (This does not catch a bound that omits the series' truncation: the truncation overestimates L,
    which is harmful only when the candidate is one bin low, and the candidate is within ~2^11
    units of U; checked by mutation. The choice rule keeps the truncation below 2^-12 of a bin.)"""
    from tests.test_histogram_grid_release import ref_bin

    m = ShiftedLogGaussian(r, c=c, grid_bits=k)
    ns, ws = [], []
    with mpmath.workprec(200):
        for q in qs:
            j = ref_bin(mpmath.mpf(q), n, m.c, m.sigma, k)
            for jj in (j, j + 1):
                w = int(mpmath.floor(mpmath.ldexp(ref_cdf(jj, n, m.c, m.sigma, k), 64)))
                for d in [s * 2**e for e in range(0, 57, 2) for s in (-1, 1)]:
                    ns.append(n)
                    ws.append(w + d)
        bins, decided = core.histogram.invert(np.array(ns), np.array(ws, dtype=np.uint64), m.c, m.sigma, k)
        assert 0.3 < decided.mean() < 0.99
        for w, b, dec in zip(ws, bins.tolist(), decided.tolist()):
            if dec:
                lo, hi = mpmath.ldexp(w, -64), mpmath.ldexp(w + 1, -64)
                assert ref_cdf(b, n, m.c, m.sigma, k) <= lo and ref_cdf(b + 1, n, m.c, m.sigma, k) >= hi, (w, b)
