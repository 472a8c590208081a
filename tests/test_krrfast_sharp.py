"""The compiled class evaluation, the mixture range bound and composition of the sharp k-RR accountant.

docs/sharp_krr.md §2.3 (range bound keeping a fraction q/p of the range's users), §4.12 (the class
evaluation in C++), §5 (composition). References: exact 40-digit mpmath sums at n <= 8 (the range
bound's inequality itself, before any rounding), the all-class tables (§4.8, the slow path) at
n <= 2000, the numpy class evaluation of §4.10 (a separate code path: summed logs, not
multiplied ratios), scipy's binomial pmfs over every class at n = 3000, and the blanket accountant.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.stats import binom

from sharpdp.shuffle import ComposedAccountant, ExactShuffleAccountant, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.exact_krr.branch_bound import BranchAndBound as _BranchAndBound
from sharpdp.shuffle.exact_krr.branch_bound import OneClass as _OneClass
from sharpdp.shuffle.exact_krr.tables import Classes as _Classes


def _mp_delta(e0: float, npop: int, j: int, eps: float) -> mp.mpf:
    """delta_j(eps) of the class j of a population of npop users, every term summed (40 digits)."""
    with mp.workdps(40):
        E = mp.e ** mp.mpf(e0)
        p, q = E / (1 + E), 1 / (1 + E)
        t = mp.e ** mp.mpf(eps)
        m1, m2 = j, npop - 1 - j
        U = [mp.mpf(0)] * (m1 + m2 + 1)
        for i in range(m1 + 1):
            for k in range(m2 + 1):
                U[i + k] += mp.binomial(m1, i) * p**i * q**(m1 - i) * mp.binomial(m2, k) * q**k * p**(m2 - k)
        total = mp.mpf(0)
        for c in range(npop + 1):
            u1 = U[c - 1] if 0 <= c - 1 < len(U) else 0
            u0 = U[c] if c < len(U) else 0
            P = p * u1 + q * u0
            Q = q * u1 + p * u0
            total += max(P - t * Q, 0)
        return total


@pytest.mark.parametrize("e0,eps", [(1.0, 0.1), (0.5, 0.0), (2.0, 0.3)])
def test_mixture_inequality_exact_at_small_n(e0, eps):
    """§2.3 before any rounding: delta_j <= E[g(K')] for every j in [j1, j2], g(k) = class j1 of the
    population n - k, K' ~ Bin(j2 - j1, 1 - q/p); and E[g(K')] <= g(j2 - j1) (the bound of §2.2)."""
    n = 8
    with mp.workdps(40):
        pi = 1 - mp.e ** (-mp.mpf(e0))
        for j1, j2 in [(0, 7), (0, 3), (2, 6), (5, 7), (1, 2)]:
            r = j2 - j1
            g = [_mp_delta(e0, n - k, j1, eps) for k in range(r + 1)]
            bound = sum(mp.binomial(r, k) * pi**k * (1 - pi)**(r - k) * g[k] for k in range(r + 1))
            assert bound <= g[r] * (1 + mp.mpf(10)**-30)
            for j in range(j1, j2 + 1):
                assert _mp_delta(e0, n, j, eps) <= bound * (1 + mp.mpf(10)**-30), (j1, j2, j)


@pytest.mark.parametrize("e0,n,eps", [(1.0, 2000, 0.1), (0.5, 1500, 0.02), (2.0, 1000, 0.5), (0.3, 401, 0.225)])
def test_mixture_range_bound_above_every_class_and_below_prop2(e0, n, eps):
    """The range bracket (§2.3, certified) is >= every class's tabulated upper value in the range, and
    never above the bound of §2.2 (class j1 of the population n - (j2 - j1)); strictly below it for
    ranges of a hundred classes or more (the mixture keeps a fraction of the range's users)."""
    lo, up = _Classes(e0, n, range(n)).row_brackets(eps)
    bb = _BranchAndBound(e0, n)
    one = _OneClass(e0)
    rng = np.random.default_rng(3)
    N = n - 1
    ranges = [(0, N), (0, N // 8), (N - N // 8, N), (0, 300), (N - 300, N)]
    for _ in range(10):
        j1, j2 = sorted(int(x) for x in rng.integers(0, N + 1, size=2))
        ranges.append((j1, j2))
    tighter = 0
    for j1, j2 in ranges:
        if j1 == j2:
            continue
        _, r_up = bb.range_bracket(eps, j1, j2)
        assert float(np.max(up[j1:j2 + 1])) <= r_up, (j1, j2)
        prop2 = one.bracket(eps, n - (j2 - j1), j1)[1]
        assert r_up <= prop2 * (1 + 1e-9)
        if j2 - j1 >= 100:
            tighter += r_up < prop2 * (1 - 1e-3)
    assert tighter >= 2


def _scipy_class(e0: float, npop: int, j: int, eps: float) -> float:
    """delta_j(eps) from full-support scipy pmfs, threshold form of §3 (an independent reference)."""
    p = 1 / (1 + math.exp(-e0))
    q = 1 - p
    U = np.convolve(binom.pmf(np.arange(j + 1), j, p), binom.pmf(np.arange(npop - j), npop - 1 - j, q))
    a, b = p - math.exp(eps) * q, math.exp(eps) * p - q
    U1 = np.concatenate([[0.0], U])
    U0 = np.concatenate([U, [0.0]])
    return float(np.sum(np.maximum(a * U1 - b * U0, 0.0)))


def test_compiled_class_against_scipy_every_class():
    """The C++ class evaluation (§4.12) against scipy over every class of n = 3000 (eps0 = 1,
    delta ~ 1e-3): each scipy value inside the certified bracket up to scipy's own rounding (1e-9)."""
    e0, n, eps = 1.0, 3000, 0.05
    one = _OneClass(e0)
    assert one.compiled
    for j in range(0, n, 7):
        ref = _scipy_class(e0, n, j, eps)
        lo, up = one.bracket(eps, n, j)
        assert lo * (1 - 1e-9) <= ref <= up * (1 + 1e-9), (j, lo, ref, up)
        assert up - lo <= 1e-6 * up


@pytest.mark.parametrize("e0,n,j,eps", [(1.0, 10**6, 0, 0.00285), (1.0, 10**6, 500_000, 0.00285),
                                        (4.0, 10**6, 999_999, 0.024), (0.5, 10**5, 12_345, 0.004),
                                        (8.0, 10**5, 3, 0.5), (1.0, 10**6, 17, 0.02), (2.0, 5000, 2500, 0.0)])
def test_compiled_equals_numpy_path(e0, n, j, eps):
    """C++ (multiplied ratios) and numpy (summed logs) evaluations of one class at every tail level
    the compiled path serves: certified brackets overlap and uppers agree to 1e-6."""
    one = _OneClass(e0)
    for nats in (40.0, 80.0, 300.0):
        one.compiled = True
        lo_c, up_c, _ = one._at(eps, n, j, nats)
        one.compiled = False
        lo_p, up_p, _ = one._at(eps, n, j, nats)
        assert lo_c <= up_p and lo_p <= up_c, (nats, lo_c, up_c, lo_p, up_p)
        assert up_c == pytest.approx(up_p, rel=1e-6, abs=1e-300)


def test_sharp_accountant_composes_between_the_round_and_the_blanket():
    """ComposedAccountant takes ExactShuffleAccountant: 3 rounds of n = 200, eps0 = 1. The composed
    delta is at least one round's certified lower delta (dropping two rounds is post-processing) and
    at most the composition of the blanket rounds (sharp <= blanket round by round)."""
    rr = RandomizedResponse(2, 1.0)
    sharp = ExactShuffleAccountant(rr, 200)
    blanket = ShuffleAccountant(rr, 200, adjacency="replace")
    cs = ComposedAccountant([(sharp, 3)])
    cb = ComposedAccountant([(blanket, 3)], value_discretization_interval=cs.value_discretization_interval)
    for eps in (0.4, 0.6):
        d_s = float(cs.get_delta(eps))
        assert float(sharp.get_delta_bounds(eps)[0]) <= d_s <= float(cb.get_delta(eps))
    e_s = cs.get_epsilon(1e-6)
    assert sharp.get_epsilon(1e-6) <= e_s < cb.get_epsilon(1e-6)


def test_to_pld_and_shuffled_round_event_take_the_sharp_bound():
    """dp_accounting: to_pld(ExactShuffleAccountant) dominates the round (its delta >= the certified
    lower value) and is below the blanket round's PLD; ShuffledRoundEvent(bound="sharp") composes
    through ShufflePLDAccountant, below the blanket event; bad bounds are refused."""
    pytest.importorskip("dp_accounting")
    from dp_accounting import NeighboringRelation

    from sharpdp.interop.dp_accounting import ShuffledRoundEvent, ShufflePLDAccountant, to_pld

    rr = RandomizedResponse(2, 1.0)
    sharp = ExactShuffleAccountant(rr, 200)
    blanket = ShuffleAccountant(rr, 200, adjacency="replace")
    step = 1e-3
    ps, pb = to_pld(sharp, step), to_pld(blanket, step)
    for eps in (0.3, 0.4, 0.6):
        d = ps.get_delta_for_epsilon(eps)
        assert float(sharp.get_delta_bounds(eps)[0]) <= d <= pb.get_delta_for_epsilon(eps)
    acc_s = ShufflePLDAccountant(NeighboringRelation.REPLACE_ONE, step)
    acc_s.compose(ShuffledRoundEvent(rr, 200, "replace", bound="sharp"), 2)
    acc_b = ShufflePLDAccountant(NeighboringRelation.REPLACE_ONE, step)
    acc_b.compose(ShuffledRoundEvent(rr, 200, "replace"), 2)
    assert sharp.get_epsilon(1e-6) < acc_s.get_epsilon(1e-6) < acc_b.get_epsilon(1e-6)
    with pytest.raises(ValueError, match="bound"):
        ShuffledRoundEvent(rr, 1000, "replace", bound="exact")
    with pytest.raises(ValueError, match="replace"):
        ShuffledRoundEvent(rr, 1000, "zero_out", bound="sharp")
    with pytest.raises(ValueError, match="k = 2"):
        ShuffledRoundEvent(RandomizedResponse(3, 1.0), 1000, "replace", bound="sharp")
