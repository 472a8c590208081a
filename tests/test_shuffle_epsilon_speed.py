"""get_epsilon's search (docs/accountant.md §8): the closed-form lower value of §8.1 against brute
force, the root search's invariants, and answers against the previous search's (values only)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sharpdp.shuffle import (BlanketMixedGaussian, FiniteLaw, GaussianRandomizer, PrivUnit, RandomizedResponse,
                             ShuffleAccountant)
from sharpdp.shuffle.accountant import limits as L
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.laws import laws_for


def _exact_dup(values, probs, gamma: float, n: int) -> float:
    """D_up = E[(sum_i B_i L_i)_+]/(n gamma) by enumeration (B_i ~ Bern(gamma), L_i i.i.d.)."""
    total = 0.0
    atoms = [(0.0, 1.0 - gamma)] + [(v, gamma * p) for v, p in zip(values, probs)]
    for combo in itertools.product(atoms, repeat=n):
        s = math.fsum(v for v, _ in combo)
        if s > 0:
            total += s * math.prod(p for _, p in combo)
    return total / (n * gamma)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("gamma", [0.05, 0.3, 0.9])
def test_single_user_lower_below_brute_force(n, gamma):
    rng = np.random.default_rng(7 * n + int(100 * gamma))
    values = np.concatenate([rng.uniform(-3.0, -0.1, 3), rng.uniform(0.1, 2.0, 2)])
    probs = rng.dirichlet(np.ones(values.size))
    law = FiniteLaw(values, probs)
    exact = _exact_dup(law.values, law.probs, gamma, n)
    lower = S._single_user_lower(law, gamma, n)
    assert 0.0 < lower <= exact
    # the single-active-user term is exact at n = 1 and close when gamma n is small
    expected = (1.0 - gamma) ** (n - 1) * float(np.sum(law.probs * np.maximum(law.values, 0.0)))
    assert lower == pytest.approx(expected, rel=1e-10)
    if n == 1:
        assert lower == pytest.approx(exact, rel=1e-10)


@pytest.mark.parametrize("eps", [0.5, 1.5, 2.9])
def test_single_user_lower_below_certified_lower_of_krr(eps):
    """For the k-RR replace laws at n = 3 the bound is below the exact D_up (enumeration) and below
    the accountant's certified upper value."""
    R = RandomizedResponse(3, 3.0)
    acc = ShuffleAccountant(R, 3, "replace")
    up = acc.get_delta(eps)
    for gamma, law in laws_for(R, eps, "replace"):
        exact = _exact_dup(law.values, law.probs, float(gamma), 3)
        lo = S._single_user_lower(law, float(gamma), 3)
        assert lo <= exact <= up * (1 + 1e-12)
        assert lo > 0.5 * exact  # n gamma small: the single-user term carries most of D_up


def test_root_finds_a_gaussian_tail_root_in_few_steps():
    calls = []
    c = 3.0

    def fun(x):  # delta(eps) = exp(-c eps^2): the model of _root is exact
        calls.append(x)
        return math.exp(-c * x * x)

    delta = 1e-6
    root = math.sqrt(-math.log(delta) / c)
    lo, hi, r, k = S._root(fun, delta, 0.0, 50.0, 1e-3, x0=1.0)
    assert fun(hi) <= delta < fun(lo)
    assert hi - lo <= 1e-3 * hi and lo <= root <= hi
    assert r == pytest.approx(root, rel=1e-6) and k == pytest.approx(-2.0, rel=1e-6)
    assert len(calls) <= 6  # start, slope probe, then two model steps


def test_root_uses_a_certified_lower_value_without_evaluating():
    calls = []

    def fun(x):
        calls.append(x)
        return 0.0 if x >= 2.0 else 1e-3  # a jump to 0 at 2 (an eps0-LDP randomizer)

    lo, hi, _, _ = S._root(fun, 1e-6, 0.0, 2.0, 1e-3, lower=lambda x: 1e-3 if x < 2.0 else 0.0)
    assert hi == 2.0 and lo >= 2.0 * (1 - 1e-3) and calls == []


def test_root_is_bounded_on_a_pathological_function():
    calls = []

    def noisy(x):  # non-monotone: the search must still stop with a verified upper end
        calls.append(x)
        return 1e-3 if (int(x * 1e9) % 2) else 1e-9

    lo, hi, _, _ = S._root(noisy, 1e-6, 0.0, 1.0, 1e-6)
    assert len(calls) <= L.SHRINK_ITERS
    assert hi == 1.0 or noisy(hi) <= 1e-6


# answers of the previous search (three phases; session-6 main), delta = 1e-6, xtol = 1e-3
PREVIOUS = [
    (lambda: BlanketMixedGaussian(0.0911, 0.8226, 1), 100, "zero_out", 3.998462604567034),
    (lambda: BlanketMixedGaussian(0.04626, 0.7578, 1), 10000, "zero_out", 0.9954207227867806),
    (lambda: RandomizedResponse(10, 2.0), 10000, "replace", 0.07984385130072161),
    (lambda: PrivUnit(0.75, 0.2, 10), 1000, "replace", 0.376627930167588),
    (lambda: GaussianRandomizer(4.6, 1), 1000, "zero_out", 0.035613837428479955),
    (lambda: RandomizedResponse(2, 8.0), 100, "replace", 8.0),
]


@pytest.mark.parametrize("make,n,adj,old", PREVIOUS)
def test_answer_matches_previous_search_and_is_the_safe_end(make, n, adj, old):
    xtol = 1e-3
    R = make()
    e = ShuffleAccountant(R, n, adj).get_epsilon(1e-6, xtol=xtol)
    # both searches return the safe end of a bracket of relative width xtol around the same root
    assert abs(e - old) <= 2 * xtol * old
    fresh = ShuffleAccountant(R, n, adj)
    assert fresh.get_delta(e) <= 1e-6
    assert ShuffleAccountant(R, n, adj).get_delta(e * (1 - xtol)) > 1e-6


def test_eps0_answer_without_get_delta_below_it():
    """2-RR, eps0 = 8, n = 100: the answer is eps0 (delta = 0 there) and the lower end of its
    bracket is certified by the single-active-user value, not by get_delta."""
    R = RandomizedResponse(2, 8.0)
    acc = ShuffleAccountant(R, 100, "replace")
    assert acc.get_epsilon(1e-6) == 8.0
    assert acc._memo_e == []  # no get_delta evaluated below eps0
    assert ShuffleAccountant(R, 100, "replace").get_delta(8.0 * (1 - 1e-3)) > 1e-6


def test_repeated_get_epsilon_is_bit_identical():
    R = BlanketMixedGaussian(0.3, 1.5, 1)
    acc = ShuffleAccountant(R, 1000)
    a = acc.get_epsilon(1e-6)
    b = acc.get_epsilon(1e-6)
    c = ShuffleAccountant(R, 1000).get_epsilon(1e-6)
    assert a == b == c
    assert acc.get_delta(a) <= 1e-6


def test_report_cache_hits_are_bit_identical_and_isolated():
    R = BlanketMixedGaussian(0.3, 1.5, 1)
    acc = ShuffleAccountant(R, 1000)
    e = acc.get_epsilon(1e-6)
    first = acc.report(e)
    again = acc.report(e)  # from the cache
    fresh = ShuffleAccountant(R, 1000).report(e)  # recomputed
    for r in (again, fresh):
        assert (r.lower, r.upper, r.h, r.N, r.law_index) == (first.lower, first.upper, first.h, first.N,
                                                             first.law_index)
    assert first.upper <= 1e-6 < ShuffleAccountant(R, 1000).get_delta(e * (1 - 1e-3))
    first.terms["edited"] = 1.0  # a caller's copy: the cached report is unchanged
    assert "edited" not in acc.report(e).terms
