"""ExactShuffleAccountant beyond the all-class tables (n > N_EXACT; docs/sharp_krr.md §2.2, §4.10-4.11).

References: the all-class tables (O(n w^2), docs/sharp_krr.md §4.8, kept as the independent slow
path) for the range bound (Proposition 2), the O(w) class evaluation and the branch and bound at
n <= 4000; full-support scipy pmfs (threshold form of §3) for single classes at n = 1e5; the blanket
ShuffleAccountant (sharp <= blanket) and the all-equal datasets (sharp >= their lower value) at
n = 1e5 and 1e6.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.exact_krr import N_EXACT, N_MAX, all_equal_delta_bounds
from sharpdp.shuffle.exact_krr.branch_bound import BranchAndBound as _BranchAndBound
from sharpdp.shuffle.exact_krr.tables import Classes as _Classes
from sharpdp.shuffle.exact_krr.branch_bound import OneClass as _OneClass


def _tables(e0: float, n: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-class (lower, upper) of delta_j(eps), every class tabulated (the slow reference path)."""
    return _Classes(e0, n, range(n)).row_brackets(eps)


def _overlap(lo1: float, up1: float, lo2: float, up2: float) -> bool:
    return lo1 <= up2 and lo2 <= up1


@pytest.mark.parametrize("e0,n,eps", [(1.0, 2000, 0.1), (0.3, 401, 0.225), (4.0, 61, 0.0), (2.0, 1000, 0.5),
                                      (1.0, 6, 0.25), (0.5, 1500, 0.02)])
def test_range_bound_above_every_class_in_the_range(e0, n, eps):
    """Proposition 2: class j1 of the population n - (j2 - j1) bounds delta_j for every j in [j1, j2]
    (each class's certified lower value from the tables is below the range's upper value)."""
    lo, up = _tables(e0, n, eps)
    bb = _BranchAndBound(e0, n)
    rng = np.random.default_rng(7)
    N = n - 1
    ranges = [(0, N), (0, 0), (N, N), (0, min(N, 5)), (max(0, N - 5), N)]
    for _ in range(12):
        j1, j2 = sorted(int(x) for x in rng.integers(0, N + 1, size=2))
        ranges.append((j1, j2))
    for j1, j2 in ranges:
        _, r_up = bb.range_bracket(eps, j1, j2)
        assert float(np.max(lo[j1:j2 + 1])) <= r_up, (j1, j2)
        if j2 - j1 >= 1 and j2 - j1 <= N // 4:  # a range loses users: its bound is not below its best class
            assert r_up >= float(np.max(up[j1:j2 + 1])) * (1 - 1e-6)


@pytest.mark.parametrize("e0,n,eps", [(1.0, 1000, 0.12), (2.0, 1000, 0.5), (1.0, 1000, 0.9), (0.3, 401, 0.225),
                                      (4.0, 61, 0.0), (1e-3, 200, 1e-4), (12.0, 300, 3.0)])
def test_one_class_equals_the_tables(e0, n, eps):
    """§4.10 (threshold form, certified signs, O(w)) against §4.8 (every term summed): brackets overlap
    for every class; uppers within 2e-6 wherever the tables' value is >= 1e-24."""
    lo, up = _tables(e0, n, eps)
    one = _OneClass(e0)
    for j in range(n):
        l2, u2 = one.bracket(eps, n, j)
        assert 0.0 <= l2 <= u2 <= 1.0
        assert _overlap(lo[j], up[j], l2, u2), (j, lo[j], up[j], l2, u2)
        if lo[j] >= 1e-24:
            assert u2 == pytest.approx(up[j], rel=2e-6) and (u2 - l2) <= 4e-6 * u2  # two charges of <= 1e-6 and rounding


@pytest.mark.parametrize("e0,n,eps", [(1.0, 2000, 0.1), (0.3, 401, 0.225), (4.0, 61, 0.0), (2.0, 80, 0.31),
                                      (1.0, 4000, 0.0589)])
@pytest.mark.parametrize("rel_tol", [1e-2, 1e-4])
def test_branch_and_bound_equals_the_all_class_maximum(e0, n, eps, rel_tol):
    """§4.11: the branch-and-bound bracket contains the maximum over the tabulated classes, and is
    within rel_tol; the class it names has a lower value at the bracket's lower end."""
    lo, up = _tables(e0, n, eps)
    bb = _BranchAndBound(e0, n)
    b_lo, b_up, j = bb.max_bracket(eps, rel_tol)
    assert _overlap(b_lo, b_up, float(np.max(lo)), float(np.max(up)))
    assert b_up >= float(np.max(lo)) and b_lo <= float(np.max(up))
    assert b_up - b_lo <= rel_tol * b_lo * (1 + 1e-9) + 1e-6 * b_up
    assert lo[j] <= b_lo <= up[j] * (1 + 1e-9)


@pytest.mark.parametrize("e0,n,j", [(1.0, 10**5, 0), (1.0, 10**5, 99_999), (1.0, 10**5, 50_000),
                                    (4.0, 10**5, 99_990), (0.3, 10**5, 12_345)])
def test_one_class_against_scipy_at_n_1e5(e0, n, j):
    """One class at n = 1e5 against full-support scipy pmfs and the threshold form of §3 (double
    precision, an estimate accurate to ~1e-10 relative at these values)."""
    from scipy.stats import binom

    p = 1.0 / (1.0 + math.exp(-e0))
    q = 1.0 - p
    N = n - 1

    def window(m: int, pi: float) -> tuple[int, np.ndarray]:  # +-16 sd: the left-out mass is < 1e-50
        sd = math.sqrt(m * pi * (1 - pi))
        k0, k1 = max(0, int(m * pi - 16 * sd) - 1), min(m, int(m * pi + 16 * sd) + 1)
        return k0, binom.pmf(np.arange(k0, k1 + 1), m, pi)

    (_, A), (_, B) = window(j, p), window(N - j, q)  # the sum is shift-invariant: offsets unused
    U = np.convolve(A, B)  # direct sums of positive terms (an FFT's absolute noise would cost ~1e-6 here)
    one = _OneClass(e0)
    for eps in (0.3 * e0 / math.sqrt(n) * 10, 0.5 * e0 / math.sqrt(n) * 10):
        a = p - math.exp(eps) * q
        b = math.exp(eps) * p - q
        terms = a * np.concatenate([[0.0], U]) - b * np.concatenate([U, [0.0]])
        ref = float(np.sum(np.maximum(terms, 0.0)))
        lo, up = one.bracket(eps, n, j)
        assert ref > 1e-12
        assert lo <= ref * (1 + 1e-8) and ref <= up * (1 + 1e-8) and (up - lo) <= 1e-6 * up


@pytest.mark.parametrize("e0,n", [(1.0, 10**5), (4.0, 10**5), (1.0, 10**6), (4.0, 10**6), (4.0, N_MAX)])
def test_sharp_between_all_equal_and_blanket_large_n(e0, n):
    """n = 1e5, 1e6, 1e9 = N_MAX, delta = 1e-6: the sharp epsilon is below the blanket's and at or above the
    all-equal datasets' (a certified lower bound: delta(eps) of those datasets is <= the sharp upper
    value); get_delta at the answer is <= 1e-6 and the lower value a little below it is > 1e-6."""
    rr = RandomizedResponse(2, e0)
    acc = ExactShuffleAccountant(rr, n)
    e = acc.get_epsilon(1e-6)
    blanket = ShuffleAccountant(rr, n, adjacency="replace")
    assert 0.0 < e < blanket.get_epsilon(1e-6)
    lo, up = acc.get_delta_bounds(e)
    assert up <= 1e-6
    assert all_equal_delta_bounds(e0, n, e)[0] <= up
    assert acc.report(e * (1 - 2e-3)).lower > 1e-6  # the answer is not loose by more than xtol
    eps2 = 0.7 * e
    lo2, up2 = acc.get_delta_bounds(eps2)
    assert all_equal_delta_bounds(e0, n, eps2)[0] <= up2 <= blanket.get_delta(eps2)
    assert up2 - lo2 <= 1e-2 * lo2 * (1 + 1e-9)


def test_n_max_and_refusal():
    rr = RandomizedResponse(2, 1.0)
    assert N_MAX == 10**9 and N_EXACT == 4000
    with pytest.raises(ValueError, match=r"n must be <= 1000000000 "):
        ExactShuffleAccountant(rr, N_MAX + 1)
    acc = ExactShuffleAccountant(rr, N_EXACT + 1)
    lo, up = acc.delta_at_class(0.05, 0)
    assert 0 < lo <= up
    zlo, zup = acc.get_delta_bounds([1.0, 2.0])  # eps >= eps0: exactly 0
    assert np.all(zlo == 0.0) and np.all(zup == 0.0)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(e0=st.floats(0.1, 6.0), n=st.integers(2, 300), f=st.floats(0.0, 0.95))
def test_property_branch_and_bound_contains_the_maximum(e0, n, f):
    """Hypothesis on (eps0, n, eps): the branch-and-bound bracket (n small, so the tables are the
    reference) contains the all-class maximum and is within rel_tol."""
    eps = f * e0
    lo, up = _tables(e0, n, eps)
    b_lo, b_up, _ = _BranchAndBound(e0, n).max_bracket(eps, 1e-2)
    assert b_lo <= float(np.max(up)) * (1 + 1e-12) and b_up >= float(np.max(lo))
    if b_up > 1e-290:
        assert b_up - b_lo <= 1e-2 * b_lo * (1 + 1e-9) + 1e-6 * b_up


@settings(max_examples=15, deadline=None, derandomize=True)
@given(e0=st.floats(0.3, 5.0), n=st.integers(2, 200), log_d=st.floats(math.log(1e-12), math.log(0.3)))
def test_property_get_epsilon_by_branch_and_bound(e0, n, log_d):
    """get_epsilon's branch-and-bound route (forced at small n): every class has upper delta <= d at
    the answer (the tables), and some class has certified lower delta > d a relative xtol below it."""
    d = math.exp(log_d)
    acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    acc._bb = _BranchAndBound(e0, n)
    e = acc._get_epsilon_bb(d, 1e-3)
    assert 0.0 <= e <= e0
    if e < e0:
        assert float(np.max(_tables(e0, n, e)[1])) <= d
    if e > 0:
        below = e / (1 + 1e-3) * (1 - 1e-9)
        assert float(np.max(_tables(e0, n, below)[0])) > d


def test_delta_below_the_double_range_terminates_and_is_certified():
    """eps0 = 1e-6, n = 1e5, eps = eps0 / 2: delta is far below 1e-300 (the normal approximation gives
    exp(-(eps sqrt(n) / eps0)^2 / 2)-like values); the bracket is (0, <= 1e-290) after a few
    evaluations, not one per class; at eps = 0 it is the local closed-form scale."""
    acc = ExactShuffleAccountant(RandomizedResponse(2, 1e-6), 10**5)
    lo, up = acc.get_delta_bounds(5e-7)
    assert lo == 0.0 and 0.0 < up <= 1e-290
    assert acc._bb.one.evaluations < 40
    lo0, up0 = acc.get_delta_bounds(0.0)
    assert all_equal_delta_bounds(1e-6, 10**5, 0.0)[0] <= up0 and up0 - lo0 <= 1e-2 * lo0
    assert acc.get_epsilon(1e-12) > 0.0 and acc.get_epsilon(1e-6) == 0.0  # delta(0) ~ 1.3e-9


def test_epsilon0_300_closed_form_large_n():
    """eps0 = 300 (p = 1 in double, q = e^-300): every other user's report is fixed up to mass
    n e^-300, so delta(eps) = p - e^eps q = -expm1(eps - 300) up to ~1e-120 relative."""
    acc = ExactShuffleAccountant(RandomizedResponse(2, 300.0), 10**5)
    for eps in (0.0, 150.0, 299.9997):
        lo, up = acc.get_delta_bounds(eps)
        ref = -math.expm1(eps - 300.0)
        assert lo <= ref * (1 + 1e-12) and ref <= up * (1 + 1e-12) and up - lo <= 1e-6 * up


def test_get_epsilon_targets_below_what_can_be_certified():
    """delta = 1e-310 (below the 1e-290 floor of relative brackets): the answer is eps0 (delta = 0
    exactly there), returned after a few decisions; 1e-30 is certified below eps0."""
    acc = ExactShuffleAccountant(RandomizedResponse(2, 8.0), 10**6)
    assert acc.get_epsilon(1e-310) == 8.0
    e = acc.get_epsilon(1e-30)
    assert 0.0 < e < 8.0 and acc.get_delta(e) <= 1e-30 < acc.report(e * (1 - 2e-3)).lower


@settings(max_examples=8, deadline=None, derandomize=True)
@given(e0=st.floats(0.2, 6.0), n=st.integers(N_EXACT + 1, 200_000), f=st.floats(0.0, 0.2))
def test_property_large_n_between_all_equal_and_blanket(e0, n, f):
    """Hypothesis on (eps0, n > N_EXACT, eps): the branch-and-bound bracket lies above the all-equal
    datasets' certified lower value and below the blanket accountant's certified upper value, and is
    within rel_tol."""
    eps = f * e0
    acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    lo, up = acc.get_delta_bounds(eps)
    assert all_equal_delta_bounds(e0, n, eps)[0] <= up
    assert lo <= ShuffleAccountant(RandomizedResponse(2, e0), n, adjacency="replace").get_delta(eps) * (1 + 1e-9)
    if up > 1e-290:
        assert up - lo <= 1e-2 * lo * (1 + 1e-9) + 1e-6 * up


def test_usable_as_accountant_in_profile_and_pair_large_n():
    """n = 1e5: privacy_profile and dominating_pair accept the branch-and-bound accountant; the
    profile is the accountant's upper value, non-increasing, exactly 0 at eps0."""
    from sharpdp.shuffle import dominating_pair, privacy_profile

    acc = ExactShuffleAccountant(RandomizedResponse(2, 1.0), 10**5)
    prof = privacy_profile(acc, [-0.01, 0.0, 0.005, 0.01, 1.0])
    assert prof[3] == pytest.approx(acc.get_delta(0.01), rel=1e-12) and prof[4] == 0.0
    assert np.all(np.diff(prof) <= 0) and prof[0] >= 1 - math.exp(-0.01)
    assert dominating_pair(acc, 1e-2) is not None


def test_get_epsilon_budget_falls_back_to_the_certified_blanket_answer(monkeypatch):
    """docs/sharp_krr.md §4.11: on reaching MAX_EPSILON_EVALS the answer is the blanket accountant's
    epsilon (sharp delta <= blanket delta: certified, looser). Forced here by a tiny budget at a target
    inside the band of the classes' delta(0) (n = 4001, eps0 = 1); the answer's certified upper delta
    (get_delta, which keeps the certificate) and the scipy-free tables' max are <= the target."""
    import sharpdp.shuffle.exact_krr as ek

    monkeypatch.setattr(ek, "MAX_EPSILON_EVALS", 50)
    n, e0, d = N_EXACT + 1, 1.0, 0.0065735
    acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    eps = acc.get_epsilon(d)
    blanket = ShuffleAccountant(RandomizedResponse(2, e0), n, adjacency="replace")
    assert eps == pytest.approx(min(float(blanket.get_epsilon(d)), e0), rel=0, abs=0)
    assert float(blanket.get_delta(eps)) <= d
    assert acc.get_delta(eps) <= d
    # independent: the all-class tables at n = 4001 (every class) at the answer
    _, up = _Classes(e0, n, range(n)).row_brackets(eps)
    assert float(np.max(up)) <= d


def test_all_equal_flag_certified_at_small_n():
    """all_equal_is_worst is True / False only when the per-class brackets prove it (n <= N_EXACT):
    n = 6, eps0 = 1, eps = 0.25: class 4 (0.1023) beats the all-equal classes (0.0889) (docs/sharp_krr.md
    §2.1): False; the same on the branch-and-bound path (tiny n, every range refined)."""
    acc = ExactShuffleAccountant(RandomizedResponse(2, 1.0), 6)
    lo, up = _tables(1.0, 6, 0.25)
    assert lo[4] > max(up[0], up[5])
    assert acc.report(0.25).terms["all_equal_is_worst"] is False
    assert _BranchAndBound(1.0, 6).max_report(0.25, 1e-9)[3] is False
    # eps0 = 4, n = 50, eps = 3.9: the tables prove the all-equal classes the worst: True
    lo, up = _tables(4.0, 50, 3.9)
    assert up[1:-1].max() <= max(lo[0], lo[-1])
    assert ExactShuffleAccountant(RandomizedResponse(2, 4.0), 50).report(3.9).terms["all_equal_is_worst"] is True
