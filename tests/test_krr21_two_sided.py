"""docs/sharp_krr.md §2.4 (Proposition 4): one class of n - k users inside a range bounds the range from
both sides, and the branch and bound's use of it (§4.16).

References: exact 40-digit mpmath sums over every class of small populations (the proposition itself,
before any rounding, for every representative, reach and number of dropped users; and that it is
tight enough to fail when the coverage is stretched by one class or the tail term is dropped), the
all-class tables of §4.8 (the slow numpy path) at n = 2000, and the answers of the one-sided range
bound of §2.3 on the benchmark grid.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse
from sharpdp.shuffle.exact_krr import all_equal_delta_bounds
from sharpdp.shuffle.exact_krr.binomial import chernoff_edges
from sharpdp.shuffle.exact_krr.branch_bound import OneClass
from sharpdp.shuffle.exact_krr.ranges import ONE_SIDED_PI, dropped_estimate, reach, representative, size_for_budget, upper_edge
from sharpdp.shuffle.exact_krr.tables import Classes


def _mp_pop(e0: float, eps: float, ones: int, zeros: int) -> mp.mpf:
    """delta(eps) of the pair x1 = 1 vs 0 whose other users are ``ones`` with input 1 and ``zeros`` with
    input 0 (docs/sharp_krr.md §3, every term summed; q = 1/(1 + e^e0))."""
    E = mp.mpf(e0)
    p, q = 1 / (1 + mp.e ** (-E)), 1 / (1 + mp.e**E)
    t = mp.e ** mp.mpf(eps)
    a, b = p - t * q, t * p - q
    A = [mp.binomial(ones, i) * p**i * q ** (ones - i) for i in range(ones + 1)]
    B = [mp.binomial(zeros, i) * q**i * p ** (zeros - i) for i in range(zeros + 1)]
    U = [mp.mpf(0)] * (ones + zeros + 1)
    for i, x in enumerate(A):
        for k, y in enumerate(B):
            U[i + k] += x * y
    M = ones + zeros
    return mp.fsum(max(a * (U[c - 1] if c >= 1 else 0) - b * (U[c] if c <= M else 0), 0) for c in range(M + 2))


@pytest.mark.parametrize("e0,eps", [(0.5, 0.0), (1.0, 0.1), (2.0, 0.3), (0.05, 0.01)])
def test_proposition_4_exact_at_small_n(e0, eps):
    """For every a, r and k (0 <= k <= r, a + k <= N): every class j in [a + k - r, a + r] has
    delta_j <= g + (p - q) P(Bin(r, 1 - q/p) > k), g the delta of a users of input 1 and N - k - a of
    input 0. Not vacuous: without the tail term some class of the coverage exceeds g."""
    n = 11
    N = n - 1
    with mp.workdps(40):
        E = mp.mpf(e0)
        p, q = 1 / (1 + mp.e ** (-E)), 1 / (1 + mp.e**E)
        pi = 1 - q / p
        cls = [_mp_pop(e0, eps, j, N - j) for j in range(n)]
        pop: dict[tuple[int, int], mp.mpf] = {}
        no_tail = 0
        slack = mp.mpf(10) ** -30
        for a in range(N + 1):
            for r in range(1, N + 1):
                for k in range(0, r + 1):
                    if a + k > N:
                        continue
                    key = (a, N - k - a)
                    if key not in pop:
                        pop[key] = _mp_pop(e0, eps, *key)
                    tail = mp.fsum(mp.binomial(r, i) * pi**i * (1 - pi) ** (r - i) for i in range(k + 1, r + 1))
                    bound = pop[key] + (p - q) * tail
                    js = range(max(0, a + k - r), min(N, a + r) + 1)
                    for j in js:
                        assert cls[j] <= bound * (1 + slack), (a, r, k, j)
                    no_tail += any(cls[j] > pop[key] * (1 + slack) for j in js)
        assert no_tail > 0


def test_reach_and_representative():
    """reach: 2 r - k >= mix, r <= mix and k the Chernoff edge of Bin(r, 1 - q/p) (the certified part);
    representative: the conditions of Proposition 4 hold, and no representative exists where they
    cannot (ValueError)."""
    rng = np.random.default_rng(21)
    for e0 in (1e-3, 0.5, 1.0, 2.0, 4.0, 8.0, 30.0):
        pi, pi_c = -math.expm1(-e0), math.exp(-e0)
        for nats in (20.0, 25.0, 40.0, 300.0):
            for mix in [1, 2, 3, 7, 100, *(int(x) for x in 10 ** rng.uniform(0, 9, size=12))]:
                r, k = reach(mix, pi, pi_c, nats)
                assert 0 < r <= mix and 2 * r - k >= mix
                assert k == upper_edge(r, pi, pi_c, nats) == chernoff_edges(r, pi, pi_c, nats)[1]
                top = 2 * mix + 5
                for j1 in (0, 1, mix // 2, top - mix - 1, top - mix):
                    j2 = j1 + mix
                    a = representative(j1, j2, top, r, k)
                    assert a + k - r <= j1 and j2 <= a + r and 0 <= a and a + k <= top
                if r > 1:  # a reach too short for the range has no representative
                    with pytest.raises(ValueError):
                        representative(0, 2 * r - k + 1, 10 * r, r, k)
    with pytest.raises(ValueError):
        representative(0, 5, 10, 3, 4)  # k > r


def test_estimates_invert_each_other():
    """dropped_estimate and size_for_budget (estimates that only steer the range sizes) are inverse
    to within a few classes, and the two-sided ranges drop fewer users than the one-sided ones of §2.3."""
    for e0 in (0.5, 1.0, 2.0, 4.0):
        pi = -math.expm1(-e0)
        for budget in (50.0, 1e3, 1e5, 1e7):
            size = size_for_budget(budget, pi, 25.0)
            assert abs(dropped_estimate(int(size), pi, 25.0) - budget) <= 0.02 * budget + 10
        for mix in (10**4, 10**6):
            one_sided = upper_edge(mix, pi, math.exp(-e0), 25.0)
            assert reach(mix, pi, math.exp(-e0), 25.0)[1] < one_sided or pi >= ONE_SIDED_PI
            assert dropped_estimate(mix, pi, 25.0) <= one_sided + 20


@pytest.mark.parametrize("e0,n,eps", [(1.0, 2000, 0.1), (0.5, 1500, 0.02), (2.0, 1000, 0.5)])
def test_range_bound_above_every_class_and_tighter_than_one_sided(e0, n, eps):
    """The certified range bracket (Proposition 4 at 40 nats) is >= every class's tabulated upper value
    in the range (the numpy tables of §4.8, a separate path), its representative lies strictly inside
    long ranges, and it is below the one-sided bound of §2.3 (class j1 of n - k1) for long ranges."""
    _, up = Classes(e0, n, range(n)).row_brackets(eps)
    one = OneClass(e0)
    N = n - 1
    rng = np.random.default_rng(5)
    ranges = [(0, N), (0, N // 8), (N - N // 8, N), (0, 300), (N - 300, N), (N // 3, N // 3 + 400)]
    for _ in range(12):
        j1, j2 = sorted(int(x) for x in rng.integers(0, N + 1, size=2))
        ranges.append((j1, j2))
    tighter = inside = 0
    for j1, j2 in ranges:
        if j1 == j2:
            continue
        r_up = one.bracket(eps, n, j1, mix=j2 - j1)[1]
        assert float(np.max(up[j1:j2 + 1])) <= r_up, (j1, j2)
        r, k = reach(j2 - j1, one._conv, one._conv_c, 40.0)
        inside += j1 < representative(j1, j2, N, r, k) < j2
        k1 = upper_edge(j2 - j1, one._conv, one._conv_c, 40.0)
        one_sided = one.bracket(eps, n - k1, j1)[1]
        if j2 - j1 >= 100:
            tighter += r_up < one_sided * (1 - 1e-4)
    assert inside >= 3 and tighter >= 3


#: get_epsilon(1e-6) with the one-sided range bound of §2.3 (before §2.4; default xtol 1e-3)
BEFORE = {(10**6, 0.5): 0.0012670623362139007, (10**6, 2.0): 0.007006711644783695,
          (10**9, 1.0): 4.898128981585614e-05, (10**9, 2.0): 0.00013567518522201777}


@pytest.mark.parametrize("n,e0", sorted(BEFORE))
def test_get_epsilon_within_xtol_of_the_one_sided_answers(n, e0):
    """The answers stay within xtol of those of the one-sided bound, and above the certified all-equal
    lower bound's epsilon (its delta exceeds the target a factor 1 + xtol below the answer)."""
    acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    eps = acc.get_epsilon(1e-6)
    old = BEFORE[(n, e0)]
    assert old / (1 + 1e-3) <= eps <= old * (1 + 1e-3)
    assert all_equal_delta_bounds(e0, n, eps)[0] <= 1e-6
    assert acc.get_delta(eps) <= 1e-6
