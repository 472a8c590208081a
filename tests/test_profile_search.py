"""profile.doubling_epsilon: the first doubling point start 2^j with certified delta <= target is the
one the plain doubling search finds (docs/composition.md §5.1), and the costly points far below the
target are not certified. References: the plain loop on the same profile, and a synthetic
accountant whose profile is a closed form (so every evaluation can be counted)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sharpdp.shuffle as sh
from sharpdp.shuffle.composition import auto_interval
from sharpdp.shuffle.profile import clear_caches, doubling_epsilon, privacy_profile


class _Closed:
    """A duck-typed round whose certified profile is delta(eps) = d0 exp(-c eps - a eps^2) (convex and
    non-increasing in eps; lower = upper), recording every eps it is asked for."""

    adjacency = "zero_out"
    n = 1

    def __init__(self, d0: float, c: float, a: float):
        self.d0, self.c, self.a = d0, c, a
        self.randomizer = object()  # keyed by identity: no sharing between instances
        self.asked: list[float] = []

    def get_delta_bounds(self, eps):
        e = np.asarray(eps, dtype=float)
        self.asked.extend(np.atleast_1d(e).tolist())
        v = self.d0 * np.exp(-self.c * e - self.a * e * e)
        return v, v


def _plain(acc, delta, start=1e-6):
    """The plain doubling search (the reference definition)."""
    e = start
    while e < 60.0 and privacy_profile(acc, e) > delta:
        e *= 2.0
    return min(e, 60.0)


@settings(max_examples=60, deadline=None)
@given(d0=st.floats(1e-8, 0.9), c=st.floats(0.0, 1e4), a=st.floats(0.0, 1e6),
       log_delta=st.floats(-40.0, -1.0))
def test_same_point_as_the_plain_doubling_search(d0, c, a, log_delta):
    delta = math.exp(log_delta)
    if c == 0.0 and a == 0.0:
        a = 1.0
    ref = _plain(_Closed(d0, c, a), delta)
    acc = _Closed(d0, c, a)
    assert doubling_epsilon(acc, delta) == ref
    # few costly points: at most two evaluations below delta / 1e6 (the first probe at start 2^13
    # and the answer itself; the plain search certifies every doubling point up to the answer)
    assert sum(1 for e in acc.asked if acc.d0 * math.exp(-acc.c * e - acc.a * e * e) < delta * 1e-6) <= 2


def test_costly_points_are_skipped_on_a_steep_tail():
    # delta falls from 1e-11 to ~1e-40 within one doubling step: the plain search certifies that
    # point, the new one a nearer one ~10x below the target
    acc = _Closed(0.5, 0.0, 1.5)
    ref_acc = _Closed(0.5, 0.0, 1.5)
    assert doubling_epsilon(acc, 1e-12) == _plain(ref_acc, 1e-12) == 8.388608
    lowest = min(acc.d0 * math.exp(-acc.a * e * e) for e in acc.asked)
    assert min(ref_acc.d0 * math.exp(-ref_acc.a * e * e) for e in ref_acc.asked) < 1e-40
    assert 1e-15 < lowest <= 1e-12
    assert len(acc.asked) < len(ref_acc.asked)


@pytest.mark.parametrize("make, n, adjacency", [
    (lambda: sh.BlanketMixedGaussian(0.95, 4.6, 1), 10**4, "zero_out"),
    (lambda: sh.RandomizedResponse(2, 1.0), 50, "replace"),
    (lambda: sh.BlanketMixedGaussian(0.2, 2.0, 1), 1000, "replace"),
])
def test_real_rounds_match_the_plain_search(make, n, adjacency):
    for delta in (1e-10, 1e-12):
        clear_caches()
        a = doubling_epsilon(sh.ShuffleAccountant(make(), n, adjacency), delta)
        clear_caches()
        # the plain doubling search of ComposedAccountant's default step (capped at the local epsilon)
        assert a == auto_interval(sh.ShuffleAccountant(make(), n, adjacency), delta, 1)


def test_arguments_are_checked():
    acc = sh.ShuffleAccountant(sh.RandomizedResponse(2, 1.0), 50)
    with pytest.raises(ValueError, match="delta"):
        doubling_epsilon(acc, 0.0)
    with pytest.raises(ValueError, match="start"):
        doubling_epsilon(acc, 1e-6, start=-1.0)
    with pytest.raises(TypeError, match="accountant"):
        doubling_epsilon(object(), 1e-6)


class _Gauss(_Closed):
    """A duck-typed round whose certified profile is the Gaussian mechanism's, sensitivity / sigma =
    mu: delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) (convex in e^eps, a valid
    profile; log_ndtr keeps the tail's relative accuracy)."""

    def __init__(self, mu: float):
        super().__init__(0.0, 0.0, 0.0)
        self.mu = mu

    def delta(self, e):
        from scipy.special import log_ndtr

        e = np.asarray(e, dtype=float)
        a = log_ndtr(0.5 * self.mu - e / self.mu)
        b = e + log_ndtr(-0.5 * self.mu - e / self.mu)
        return np.exp(a) * -np.expm1(b - a)

    def get_delta_bounds(self, eps):
        e = np.asarray(eps, dtype=float)
        self.asked.extend(np.atleast_1d(e).tolist())
        v = self.delta(e)
        return v, v


def test_pair_doubling_skips_costly_points_and_still_dominates():
    # delta ~ exp(-2 eps^2) at mu = 0.5: the plain doubling of the pair's sampling (eps = 2^j dx)
    # would certify eps = 8.192 (delta ~ 1e-60) as its first point below the floor 1e-18
    from sharpdp.shuffle.profile import dominating_pair

    acc = _Gauss(0.5)
    pair = dominating_pair(acc, 1e-3, progress=False)
    vals = acc.delta(np.array(acc.asked))
    assert acc.delta(8.192) < 1e-55
    assert vals.min() > 1e-40
    assert vals.min() <= 1e-18  # the search still ends below the floor
    eps = np.linspace(0.0, 6.0, 121)
    true = acc.delta(eps)
    assert np.all(pair.get_delta(eps) >= true * (1 - 1e-9))
    sel = true >= 1e-12
    assert np.max(pair.get_delta(eps[sel]) / true[sel]) < 1.01
