"""krr6: the faster class kernel (docs/sharp_krr.md §4.12: windows by four-step products and a reciprocal,
four U values per pass, the tail as four running sums) and get_epsilon's bracket search (§4.14).

References are independent of the code under test: 40-digit mpmath enumeration of the count law at small n,
scipy's binomial pmfs convolved in numpy at n ~ 1e4, and the all-class tables of §4.8 (the numpy path, log
sums) for get_epsilon.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.stats import binom

from _krr_reference import kernel_args as _kernel_args
from sharpdp import _core
from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse
from sharpdp.shuffle.exact_krr.search import gdp_epsilon_estimate, refine_bracket





def _bracket(e0: float, eps: float, n: int, j: int, nats: float) -> tuple[float, float]:
    r = _core.exact_krr.class_bracket(*_kernel_args(e0, eps, n, j, nats))
    return r[0], r[1]


def _exact_class_deltas(e0: float, eps: float, n: int) -> list:
    """delta_j(eps), j = 0..n-1 (docs/sharp_krr.md Proposition 1), 40-digit enumeration of the count law."""
    out = []
    with mp.workdps(40):
        E0, E = mp.mpf(e0), mp.mpf(eps)
        p = mp.e**E0 / (1 + mp.e**E0)
        q = 1 - p
        a, b = p - mp.e**E * q, mp.e**E * p - q
        for j in range(n):
            A = [mp.binomial(j, k) * p**k * q**(j - k) for k in range(j + 1)]
            B = [mp.binomial(n - 1 - j, k) * q**k * p**(n - 1 - j - k) for k in range(n - j)]
            Uj = [mp.mpf(0)] * n
            for i, x in enumerate(A):
                for k, y in enumerate(B):
                    Uj[i + k] += x * y
            out.append(sum(max(a * (Uj[c - 1] if c else 0) - b * (Uj[c] if c < n else 0), 0)
                           for c in range(n + 1)))
    return out


@pytest.mark.parametrize("n", [2, 5, 9, 23, 41])
def test_kernel_every_class_against_mpmath(n):
    """Every class, windows long enough for the four-step groups and the four tail segments (n = 23, 41:
    up to 40 entries), shallow and deep levels: the certified bracket contains the exact delta_j."""
    for e0, eps in ((0.5, 0.0), (1.0, 0.25), (4.0, 1.0), (8.0, 7.99), (1e-3, 4e-4)):
        exact = _exact_class_deltas(e0, eps, n)
        for j in range(n):
            for nats in (20.0, 30.0, 80.0, 300.0):
                lo, up = _bracket(e0, eps, n, j, nats)
                assert lo <= exact[j] <= up, (n, e0, eps, j, nats, lo, float(exact[j]), up)
                # tight: rounding charges ~1e-12 relative plus the truncation charges a, b times 4e^-L (§4.10)
                assert up - lo <= 1e-9 * up + 8.0 * math.exp(-nats) * (1 + math.exp(eps))


def _scipy_class_delta(e0: float, eps: float, n: int, j: int) -> float:
    """delta_j(eps) from full-support scipy pmfs convolved in numpy (threshold-free: sum of positive parts)."""
    p = math.exp(e0) / (1 + math.exp(e0))
    q = 1 - p
    A = binom.pmf(np.arange(j + 1), j, p)
    B = binom.pmf(np.arange(n - j), n - 1 - j, q)
    Uj = np.convolve(A, B)
    a, b = p - math.exp(eps) * q, math.exp(eps) * p - q
    Ul = np.concatenate([[0.0], Uj])
    Ur = np.concatenate([Uj, [0.0]])
    return float(np.sum(np.maximum(a * Ul - b * Ur, 0.0)))


@pytest.mark.parametrize("e0,eps", [(1.0, 0.05), (0.5, 0.02), (4.0, 0.3)])
def test_kernel_against_scipy_at_n_1e4(e0, eps):
    """n = 10 001: ends, middle and scattered classes (windows of a few hundred entries, truncated at the
    level), against scipy's full-support pmfs; brackets contain the reference within its own rounding."""
    n = 10_001
    for j in (0, 1, 2, 17, 1234, 5000, 7777, 9998, 9999, 10_000):
        ref = _scipy_class_delta(e0, eps, n, j)
        for nats in (30.0, 40.0):
            lo, up = _bracket(e0, eps, n, j, nats)
            assert lo <= ref * (1 + 1e-9) and ref <= up * (1 + 1e-9), (j, nats, lo, ref, up)
            assert up - lo <= 1e-9 * up + 8.0 * math.exp(-nats) * (1 + math.exp(eps))


def test_get_epsilon_within_xtol_of_the_tables():
    """get_epsilon by the branch and bound (n > 64, xtol 1e-3) against every class of the all-class tables
    (§4.8, numpy path): upper delta <= target over every class at the answer, and some class has lower
    delta > target at answer / (1 + xtol) (the answer is within xtol of the true one)."""
    for e0, n, d in ((1.0, 1500, 1e-6), (0.5, 900, 1e-4), (4.0, 2000, 1e-6)):
        acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
        xtol = 1e-3
        eps = acc.get_epsilon(d, xtol=xtol)
        tab = ExactShuffleAccountant(RandomizedResponse(2, e0), n)._classes
        lows, ups = tab.row_brackets(eps)
        assert float(np.max(ups)) <= d
        lows2, _ = tab.row_brackets(eps / (1 + xtol))
        assert float(np.max(lows2)) > d


def test_refine_bracket_keeps_the_invariants_and_closes():
    """On monotone stand-ins for the candidates' lower delta (smooth, a step, zero above a point): the ends
    returned are evaluated points on the right side (or the given ends), the width is reached, and few
    evaluations are spent from a good guess."""
    d = 1e-6
    cases = [
        (lambda x: math.exp(-(x / 1e-3) ** 2 * 14.0), 0.0, 0.1, 1.2e-3),  # smooth, root ~ 1.0e-3
        (lambda x: 1.0 if x < 0.0123 else 0.0, 0.0, 1.0, None),  # a step: bisection fallback
        (lambda x: max(0.0, 1e-5 * (0.5 - x)), 0.0, 1.0, 0.49),  # zero above 0.5
        (lambda x: math.exp(-x * 40.0), 0.2, 2.0, 5.0),  # the guess outside the bracket
    ]
    for f, lo0, hi0, guess in cases:
        seen: list[tuple[float, float]] = []

        def lower(x: float, f=f, seen=seen) -> float:
            v = f(x)
            seen.append((x, v))
            return v

        width = 1e-3 / 32
        lo, hi = refine_bracket(lower, d, lo0, hi0, width, 1e-12, guess)
        assert hi - lo <= width * hi or (lo == 0.0 and hi < 1e-12)
        assert lo == lo0 or (lo, f(lo)) in seen and f(lo) > d
        assert hi == hi0 or (hi, f(hi)) in seen and f(hi) <= d
        assert lo0 <= lo < hi <= hi0
        assert len(seen) <= 60
    # from a close guess on the smooth case: a handful of evaluations
    calls = []
    refine_bracket(lambda x: calls.append(x) or math.exp(-(x / 1e-3) ** 2 * 14.0), d, 0.0, 1.0,
                   1e-3 / 32, 1e-12, 1.0e-3)
    assert len(calls) <= 10


def test_gdp_estimate_is_near_the_sharp_answer():
    """The first guess (an estimate, not a bound) lies within 5 % of the certified answer at n = 1e5-1e6
    (values of docs/sharp_krr.md §6): the search then needs few evaluations."""
    for e0, n, sharp in ((1.0, 10**6, 0.00284901), (4.0, 10**6, 0.024014), (1.0, 10**5, 0.0101425)):
        g = gdp_epsilon_estimate(e0, n, 1e-6)
        assert abs(g / sharp - 1) < 0.05, (e0, n, g, sharp)
    assert gdp_epsilon_estimate(1.0, 10, 0.9) == 0.0
    assert gdp_epsilon_estimate(1.0, 1, 1e-6) == 1.0
