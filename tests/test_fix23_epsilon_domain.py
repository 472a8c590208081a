"""ShuffleAccountant.get_delta / get_delta_bounds at eps < 0 and +-inf (docs/composition.md §1, §8).

References: the exact hockey-stick divergence of one neighbouring pair of shuffled binary randomized response
(the shuffled output is the number of 1s: a binomial plus one user's Bernoulli, summed term by term), which the
certified value must not fall below at any eps; the trivial bound H_t >= 1 - t; privacy_profile (the swap
identity), which a single round's value at eps < 0 must equal.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

import sharpdp.shuffle as sh

E0, N = 1.0, 300


@pytest.fixture(scope="module")
def acc():
    return sh.ShuffleAccountant(sh.RandomizedResponse(k=2, epsilon0=E0), N, "zero_out")


def _exact_pair(eps: float) -> float:
    """max over both orders of H_{e^eps} between D = (1, 0, ..., 0) and its zero-out neighbour (bot, 0, ..., 0):
    the others' 1s ~ Bin(N - 1, q), user 1 reports 1 with probability p (x = 1) or 1/2 (bot: the blanket)."""
    p, q = math.e**E0 / (1 + math.e**E0), 1 / (1 + math.e**E0)
    rest = binom.pmf(np.arange(N + 1), N - 1, q)  # (the pmf at N is 0)
    shift = np.concatenate([[0.0], rest[:-1]])
    a, b = (1 - p) * rest + p * shift, 0.5 * rest + 0.5 * shift
    t = math.exp(eps)
    return max(float(np.maximum(a - t * b, 0).sum()), float(np.maximum(b - t * a, 0).sum()))


def test_negative_epsilon_is_the_swap_identity_and_above_the_exact_pair(acc):
    for eps in (-2.0, -0.5, -0.1, -0.01, -1e-6):
        got = acc.get_delta(eps)
        assert got == float(sh.privacy_profile(acc, eps)), eps  # the same value, one code path
        exact = _exact_pair(eps)
        assert got >= exact * (1 - 1e-12) and got >= -math.expm1(eps), (eps, got, exact)
        assert got <= 1.25 * exact, (eps, got, exact)  # (this pair is near the worst case: not a loose answer)
        lo, up = acc.get_delta_bounds(eps)
        assert up == got and 0.0 <= lo <= up


def test_mixed_signs_and_infinities_elementwise(acc):
    grid = np.array([[0.2, -math.inf, -0.3], [0.0, math.inf, -0.05]])
    lo, up = acc.get_delta_bounds(grid)
    assert lo.shape == up.shape == grid.shape and np.all(lo <= up)
    assert (lo[0, 1], up[0, 1]) == (1.0, 1.0)  # H_0 = 1
    assert up[1, 1] == 0.0  # the blanket bound at +inf (no sampler charge): docs/composition.md §8
    assert up.tolist() == [[acc.get_delta(float(e)) for e in row] for row in grid]
    order = np.argsort(grid.ravel())
    assert np.all(np.diff(up.ravel()[order]) <= 0)  # non-increasing in eps, through eps = 0
    # a fresh accountant asked at eps < 0 first answers the same
    fresh = sh.ShuffleAccountant(sh.RandomizedResponse(k=2, epsilon0=E0), N, "zero_out")
    assert fresh.get_delta(-0.3) == pytest.approx(up[0, 2], rel=1e-12)
    with pytest.raises(ValueError, match="NaN"):
        acc.get_delta([-0.1, math.nan])
    with pytest.raises(ValueError, match="epsilon"):
        acc.report(-0.1)  # the bracket of the blanket divergence itself: eps >= 0 only


def test_lower_form_at_a_negative_epsilon_stays_below_the_upper_value(acc):
    lo = acc.get_delta_lower_form(np.array([-0.5, -0.1]))
    up = acc.get_delta([-0.5, -0.1])
    assert np.all(lo <= up) and np.all(lo >= -np.expm1([-0.5, -0.1]) * (1 - 1e-15))


def test_dominating_pair_refuses_a_point_whose_lattice_index_would_wrap(acc):
    """eps / Delta beyond int64 wrapped to a negative index, which the accountant refused (eps < 0); it now answers
    eps < 0, so dominating_pair refuses such a point itself, naming it, before sampling anything."""
    with pytest.raises(ValueError, match="^epsilons must be <= 4611686.01"):
        sh.dominating_pair(acc, 1e-12, epsilons=[0.0, 1e-6, 1e8], progress=False)
