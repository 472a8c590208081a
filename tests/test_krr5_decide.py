"""The branch and bound's range sizes are estimates (docs/sharp_krr.md §4.11, "first partition"):
whatever they are, get_epsilon stays certified and within xtol. References: the all-class tables
(n = 1000 here, every class, docs/sharp_krr.md §4.8-4.9, a route that does not use the branch and bound)
and scipy pmfs of sampled classes at n = 1e4."""

import functools

import pytest

from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse
from sharpdp.shuffle.exact_krr import branch_bound as bb

from _krr_reference import class_delta_scipy

TARGET = 1e-6


@functools.lru_cache(maxsize=None)
def _reference(n: int, eps0: float):
    """(eps at xtol 1e-7 and an accountant) of the all-class tables (n <= 4000, no branch and bound)."""
    tables = ExactShuffleAccountant(RandomizedResponse(2, eps0), n)
    return tables.get_epsilon(TARGET, xtol=1e-7), tables


@pytest.mark.parametrize("beta", ["learnt", None, 1e-12, 1.0])
@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_epsilon_certified_whatever_the_range_sizes(monkeypatch, eps0, beta):
    """beta None: halves only; 1e-12: pieces far too large (most fail and are split); 1.0: pieces
    of the smallest size allowed. The answer lies in [true eps, true eps (1 + xtol)] each time."""
    n = 1000
    ref, tables = _reference(n, eps0)  # (before the patch below: the tables' own route)
    monkeypatch.setattr(bb, "N_EXACT", 500)  # the predicted sizes apply beyond N_EXACT: here at n = 1000
    if beta != "learnt":
        monkeypatch.setattr(bb.BranchAndBound, "_learn", lambda self, *a: setattr(self, "beta", beta))
    acc = ExactShuffleAccountant(RandomizedResponse(2, eps0), n)
    eps = acc.get_epsilon(TARGET)
    assert ref / (1 + 1e-7) <= eps <= ref * (1 + 1.01e-3)
    assert tables.get_delta(eps) <= TARGET  # every class, from the tables
    assert tables.get_delta_bounds(eps / (1 + 1.01e-3))[0] > TARGET or eps == 0.0


def test_split_sizes_are_sane():
    b = bb.BranchAndBound(1.0, 10**6)
    assert b.split_count(999, 2.0, 1.0) == 2 and b.split_size(999, 2.0, 1.0) == 1000  # nothing learnt
    b._learn(2000, 1.02, 1000, 1.01)  # 2 % and 1 % above at twice and once the users dropped
    assert b.beta is not None and b.beta > 0
    size = b.split_size(1000, 1.01, 1.0)
    assert 1 <= size < 1001  # the estimate of the class itself is 1.0 * (1 - ~0): a small piece
    assert 2 <= b.split_count(9999, 1.005, 1.0) <= 64
    assert b.split_count(9999, 0.9, 1.0) == 2  # not above the target: halves


def test_epsilon_at_n_1e4_against_scipy_classes():
    """n = 1e4 (branch and bound only): at the answer, sampled classes (the ends, the middle and every
    613th) are below the target by scipy, and the middle class is above it a factor (1 + xtol) lower
    (a factor 1 + 3 xtol lower: delta rises ~ z^2 3e-3 ~ 7 %, far above the classes' spread),
    so the answer is not loose."""
    n, eps0 = 10**4, 1.0
    eps = ExactShuffleAccountant(RandomizedResponse(2, eps0), n).get_epsilon(TARGET)
    js = sorted({0, n // 2, n - 1, *range(0, n, 613)})
    vals = [class_delta_scipy(n, eps0, j, eps) for j in js]
    assert max(vals) <= TARGET
    low = eps / (1 + 3e-3)
    assert max(class_delta_scipy(n, eps0, j, low) for j in (0, n // 2, n - 1)) > TARGET


def test_upper_edge_equals_the_full_bisection():
    """upper_edge (bracket grown from the normal guess) returns chernoff_edges' upper edge exactly,
    and that edge is a valid Chernoff edge: m KL((k + 1)/m || pi) >= nats + 1 (checked in mpmath)."""
    import math
    import random

    import mpmath

    from sharpdp.shuffle.exact_krr.binomial import chernoff_edges

    rng = random.Random(5)
    for e0 in (1e-6, 0.3, 1.0, 4.0, 30.0):
        pi, pi_c = -math.expm1(-e0), math.exp(-e0)
        for nats in (40.0, 300.0):
            for m in [*range(0, 40), *(rng.randrange(1, 10**9) for _ in range(40))]:
                k = bb.upper_edge(m, pi, pi_c, nats)
                assert k == chernoff_edges(m, pi, pi_c, nats)[1]
                if k < m:
                    x = mpmath.mpf(k + 1) / m
                    kl = x * mpmath.log(x / pi) + ((1 - x) * mpmath.log((1 - x) / pi_c) if x < 1 else 0)
                    assert m * kl >= nats + 1 - 1e-9


def test_decision_levels_charge_at_most_1e_6_of_the_target():
    """The first level of a decision: 4 e^-L0 <= 1e-6 target (a <= 1) where L0 < 40; else 40."""
    import math

    for target in (0.5, 1e-3, 1e-6, 1e-9, 1.7e-11, 1e-12, 1e-30, 5e-324):
        levels = bb.decision_levels(target)
        assert levels[-4:] == bb.FAST_TAIL_LEVELS and 20.0 <= levels[0] <= 40.0
        if levels[0] < 40.0:
            assert 4 * math.exp(-levels[0]) <= 1e-6 * target or levels[0] == 20.0
        else:
            assert 4 * math.exp(-39.0) > 1e-6 * target
    assert bb.decision_levels(0.0) == bb.FAST_TAIL_LEVELS
