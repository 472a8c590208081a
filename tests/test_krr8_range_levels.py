"""docs/sharp_krr.md §4.15: the ranges of a decision start at a shallower tail level (range_levels), stop
deeper levels that cannot bring them below the target, and are sized to 99 % of the predicted margin.
Only the cost may change; every value stays certified. Checked against independent references:
mpmath enumeration of every class (n = 80, 97), float64 scipy pmfs of every class of ranges at n = 1e4,
and the certified all-equal lower bound at n = 1e7 and 1e9."""

from __future__ import annotations

import functools
import json
import math
import pathlib

import mpmath as mp
import pytest

from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse
from sharpdp.shuffle.exact_krr import all_equal_delta_bounds
from sharpdp.shuffle.exact_krr import branch_bound as bb

from _krr_reference import class_delta_scipy

TARGETS = (0.5, 1e-3, 1e-6, 1e-9, 1.7e-11, 1e-12, 1e-30, 5e-324)


def test_range_levels_charge_at_most_range_charge_of_the_target():
    """First level L0: 4 e^-L0 <= RANGE_CHARGE xtol target (a <= 1) unless clamped at 20, 40 or at
    decision_levels' first level (never deeper); then the levels of an evaluation without a target."""
    assert bb.RANGE_CHARGE == 0.1
    for xtol in (0.5, 1e-2, 1e-3, 1e-4, 1e-6, 1e-9):
        for target in TARGETS:
            levels = bb.range_levels(target, xtol)
            first_d = bb.decision_levels(target)[0]
            assert levels[-4:] == bb.FAST_TAIL_LEVELS and 20.0 <= levels[0] <= 40.0
            assert levels[0] <= first_d
            charge = bb.RANGE_CHARGE * xtol * target
            if levels[0] < min(40.0, first_d):
                assert 4 * math.exp(-levels[0]) <= charge or levels[0] == 20.0
                assert levels[0] == 20.0 or 4 * math.exp(-(levels[0] - 1)) > charge  # the smallest such
            elif levels[0] == first_d < 40.0:
                assert 4 * math.exp(-levels[0]) <= 1e-6 * target or levels[0] == 20.0  # decision_levels' own
            else:
                assert 4 * math.exp(-39.0) > charge
    assert bb.range_levels(1e-6)[0] == bb.range_levels(1e-6, 1e-3)[0] == 25.0
    assert bb.range_levels(1e-6, 1e-6) == bb.decision_levels(1e-6)  # small xtol: the decision's levels
    assert bb.range_levels(0.0) == bb.FAST_TAIL_LEVELS


#: The references over every class of the fixed ranges at n = 1e4 + 1 (scipy, 0.1-25 M multiply-adds per class) and
#: over every class at n = 80, 97 (40-digit mpmath) at the points this file's tests ask for, stored by
#: tests/data/make_krr8_range_levels_reference.py from this module's own reference functions; the tests use them
#: where the answer get_epsilon gives is the stored one (else they compute every class live, as before) and
#: recompute the deciding classes live (a stale store or a changed reference function fails).
_STORE = json.loads((pathlib.Path(__file__).resolve().parent / "data" / "krr8_range_levels_reference.json").read_text())
RANGES_N = 10**4 + 1


def range_list(n: int) -> tuple[tuple[int, int], ...]:
    return ((0, 249), (n // 2 - 30, n // 2 + 30), (n - 120, n - 1))


@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_range_upper_at_the_range_level_above_every_class_n_1e4(eps0):
    """The upper value of a range evaluated as in a decision (target given: the first level is
    range_levels') lies above every class of the range by float64 scipy pmfs (n = 1e4 + 1, three ranges
    of 60-250 classes: the start, the middle and the end), and the first level is the one evaluated."""
    n = 10**4 + 1
    eps = ExactShuffleAccountant(RandomizedResponse(2, eps0), n).get_epsilon(1e-6)
    one = bb.OneClass(eps0)
    seen: list[float] = []
    real = one._at

    def spy(e, npop, j, nats):
        seen.append(nats)
        return real(e, npop, j, nats)

    one._at = spy  # type: ignore[method-assign]
    for j1, j2 in range_list(n):
        seen.clear()
        up = one.bracket(eps, n, j1, target=1e-6, mix=j2 - j1)[1]
        assert seen[0] == bb.range_levels(1e-6)[0]
        key = f"{eps0!r} {j1} {j2}"
        st = _STORE["ranges"].get(key)
        if st is not None and st["eps"] == eps:  # stored at this eps: the maximum's class recomputed live
            worst = st["max"]
            assert class_delta_scipy(n, eps0, st["argmax"], eps) == pytest.approx(worst, rel=1e-12)
        else:
            worst = max(class_delta_scipy(n, eps0, j, eps) for j in range(j1, j2 + 1))
        assert worst <= up * (1 + 1e-9), (j1, j2, worst, up)
        assert up <= 1.5 * worst  # and not vacuous (the ranges drop up to 1.6 % of the users here)


@functools.lru_cache(maxsize=4)
def _exact_class_laws(n: int, eps0: float) -> tuple:
    """(p, q, [U_j for every class j]) of _exact_max_delta at 40 digits: independent of eps, so computed once
    for the two eps of a test (a pure function of its arguments; mpf values are immutable)."""
    with mp.workdps(40):
        e0 = mp.mpf(eps0)
        p = mp.e**e0 / (1 + mp.e**e0)
        q = 1 - p
        N = n - 1
        pp = [[mp.binomial(m, k) * p**k * q**(m - k) for k in range(m + 1)] for m in range(N + 1)]
        qq = [[mp.binomial(m, k) * q**k * p**(m - k) for k in range(m + 1)] for m in range(N + 1)]
        laws = []
        for j in range(N + 1):
            A, B = pp[j], qq[N - j]
            laws.append(tuple(mp.fsum(A[i] * B[c - i] for i in range(max(0, c - (N - j)), min(j, c) + 1))
                              for c in range(N + 1)))
        return p, q, tuple(laws)


def _exact_max_delta(n: int, eps0: float, eps: float) -> mp.mpf:
    """max over every class of delta_j(eps) (Proposition 1), 40-digit mpmath sums of exact pmfs."""
    p, q, laws = _exact_class_laws(n, eps0)
    with mp.workdps(40):
        a = p - mp.e**mp.mpf(eps) * q
        b = mp.e**mp.mpf(eps) * p - q
        N = n - 1
        best = mp.mpf(0)
        for U in laws:
            d = mp.fsum(max(a * (U[c - 1] if c >= 1 else 0) - b * (U[c] if c <= N else 0), 0) for c in range(N + 2))
            best = max(best, d)
        return best


def _exact_class_delta(n: int, eps0: float, j: int, eps: float) -> mp.mpf:
    """delta_j(eps) of one class as _exact_max_delta sums it (40 digits): the live spot check of the store."""
    with mp.workdps(40):
        e0 = mp.mpf(eps0)
        p = mp.e**e0 / (1 + mp.e**e0)
        q = 1 - p
        N = n - 1
        A = [mp.binomial(j, k) * p**k * q**(j - k) for k in range(j + 1)]
        B = [mp.binomial(N - j, k) * q**k * p**(N - j - k) for k in range(N - j + 1)]
        U = [mp.fsum(A[i] * B[c - i] for i in range(max(0, c - (N - j)), min(j, c) + 1)) for c in range(N + 1)]
        a = p - mp.e**mp.mpf(eps) * q
        b = mp.e**mp.mpf(eps) * p - q
        return mp.fsum(max(a * (U[c - 1] if c >= 1 else 0) - b * (U[c] if c <= N else 0), 0) for c in range(N + 2))


SMALL_N_CASES = [(80, 1.0, 1e-3), (97, 2.0, 1e-2), (97, 0.5, 1e-4)]


@pytest.mark.parametrize("n, eps0, target", SMALL_N_CASES)
def test_get_epsilon_against_exact_enumeration_small_n(n, eps0, target):
    """n > N_EPSILON_TABLES: get_epsilon is the branch and bound with the range levels of §4.15. The answer
    meets the target over every class (40-digit sums) and is within xtol of the exact epsilon.
    The maximum over every class is stored on a grid of eps around the answer (_STORE; every delta_j is
    non-increasing in eps): a stored point p <= answer with max <= target certifies the answer, a stored point
    q >= answer / (1 + xtol) (1 - 1e-9) with max > target shows the bracket tight; the deciding classes are
    recomputed live there and at the answer. An answer off the grid falls back to the live maximum."""
    eps = ExactShuffleAccountant(RandomizedResponse(2, eps0), n).get_epsilon(target)
    assert 0 < eps < eps0
    low = eps / (1 + 1e-3) * (1 - 1e-9)
    with mp.workdps(40):
        pts = [(x["eps"], mp.mpf(x["max"]), x["argmax"]) for x in _STORE["small_n"][f"{n} {eps0!r} {target!r}"]]
    below = [x for x in pts if x[0] <= eps and x[1] <= target]
    above = [x for x in pts if low <= x[0] and x[1] > target]
    if not below or not above:  # an answer the grid does not cover: every class live
        assert _exact_max_delta(n, eps0, eps) <= target
        assert _exact_max_delta(n, eps0, low) > target
        return
    p, q = max(below), min(above)
    with mp.workdps(40):
        assert abs(_exact_class_delta(n, eps0, p[2], p[0]) - p[1]) <= mp.mpf(10) ** -30 * p[1]
        assert abs(_exact_class_delta(n, eps0, q[2], q[0]) - q[1]) <= mp.mpf(10) ** -30 * q[1]
        assert _exact_class_delta(n, eps0, p[2], eps) <= target
        assert _exact_class_delta(n, eps0, q[2], low) > target


@pytest.mark.parametrize("n, eps0", [(10**7, 1.0), (10**9, 2.0)])
def test_get_epsilon_large_n_against_the_all_equal_lower_bound(n, eps0):
    """At the answer the certified all-equal lower delta (a lower bound on the mechanism's delta) does
    not exceed the target (else the answer would be uncertified); a factor 1 + 2 xtol lower it does (the
    classes' delta are flat at large n: the answer is tight; within xtol of the true epsilon, which can
    lie above the all-equal classes' own)."""
    eps = ExactShuffleAccountant(RandomizedResponse(2, eps0), n).get_epsilon(1e-6)
    assert all_equal_delta_bounds(eps0, n, eps)[0] <= 1e-6
    assert all_equal_delta_bounds(eps0, n, eps / (1 + 2e-3))[0] > 1e-6


@pytest.mark.parametrize("xtol, first", [(1e-3, 25.0), (1e-6, 30.0)])
def test_get_epsilon_ranges_start_at_the_level_of_its_xtol(monkeypatch, xtol, first):
    """get_epsilon passes its xtol to the ranges' first level (at xtol 1e-6 the charge of 1e-4 of the
    target would exceed the decision's margin, ~3e-6: the ranges then start at decision_levels')."""
    firsts: set[float] = set()
    real = bb.OneClass.bracket

    def spy(self, eps, npop, j, target=None, mix=0):
        if mix and target is not None:
            firsts.add((bb.range_levels(target, self.xtol))[0])
        return real(self, eps, npop, j, target, mix)

    monkeypatch.setattr(bb.OneClass, "bracket", spy)
    ExactShuffleAccountant(RandomizedResponse(2, 1.0), 5001).get_epsilon(1e-6, xtol=xtol)
    assert firsts == {first}
