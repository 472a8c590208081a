"""Review rev32b of session 32's privacy profile of a round through bot from its legs' profiles (pair32,
docs/composition.md §2.13, ``shuffle.profile_bottom``: ``privacy_profile`` / ``privacy_profile_bounds`` at >= 32 eps).

Claims attacked: the values are certified upper values of the round's replace-one delta, the lower values are at most
the upper values (and at most the accountant's own per-eps upper values). References: the mechanism's replace-one
delta by quadrature at n = 2 (tests/_rev30b_replace_reference.py) and n = 3 (tests/_rev32b_replace3_reference.py), at
fixed neighbouring datasets, so LOWER values of the true delta, at eps of both signs.

What held (measured at the review, GaussianRandomizer(s, 1), replace, 81 eps in [-3, 3]): the upper values are >= the
quadrature reference everywhere, min ratio 1.0041 / 1.0054 (s = 0.5, n = 2 / 3), 1.0026 / 1.0034 (s = 1), >= 0.99995
at s = 2 and 4.6 (eps = -3, where delta ~ 0.95 and both sides are ~1 - e^-3); privacy_profile equals
privacy_profile_bounds' upper values bit for bit.

What broke (pair32's final commit 10a47a8; fixed on main by 4b85479 after this review reported it): the lower values
were not capped at 1 where the split bound is (V = min(1, bound)): at s = 0.5 the lower value of every split bound
exceeded 1 (up to 1.653 at eps = 0, n = 2; 1.63 at n = 10; 1.46 at n = 100) while the upper value is 1, so
privacy_profile_bounds returned lower > upper at 24-36 of 41 eps in [0, 3] (main 15710f7: lower <= 1 = upper there).
Upper values were unaffected (certified). ``test_lower_never_above_upper_where_the_bound_is_capped`` pins the fix.

Observed, not a defect: the claim "upper >= the base's per-eps lower value at rel_tol 1e-3" does not hold literally
(s = 1, n = 2: V is 0.9787 x main's lower value at eps = 1.3077, below it at eps 1.15-1.46): the base's per-eps lower
value is that of the split its search chose (docs/accountant.md §9: "its lower value is not a lower bound on delta"),
and V minimises over every split; V stays >= 1.22 x the quadrature reference there.
"""

from __future__ import annotations

import numpy as np
import pytest

import sharpdp.shuffle as sh

from _rev30b_replace_reference import replace_delta_n2
from _rev32b_replace3_reference import replace_delta_n3

PB = pytest.importorskip("sharpdp.shuffle.profile_bottom")  # (pair32's module: skip before its merge)

EPS = np.linspace(-3.0, 3.0, 81)
QUAD_ROOM = 1e-3  # (the quadratures' relative error: <= 5e-4 at n = 2, <= 2e-4 at n = 3)


def _round(s: float, n: int):
    sh.clear_caches()
    acc = sh.ShuffleAccountant(sh.GaussianRandomizer(s, 1), n, "replace")
    assert acc.via_bottom
    return acc


@pytest.mark.parametrize("s", (0.5, 1.0, 2.0, 4.6))
def test_upper_values_above_the_n2_quadrature(s):
    acc = _round(s, 2)
    lo, up = sh.privacy_profile_bounds(acc, EPS, progress=False)
    assert np.array_equal(sh.privacy_profile(acc, EPS, progress=False), up)
    ref = np.max([replace_delta_n2(s, EPS, x2) for x2 in (-1.0, 0.0, 1.0)], axis=0)
    bad = up < ref * (1.0 - QUAD_ROOM)
    assert not bad.any(), (EPS[bad], up[bad], ref[bad])
    assert np.all(np.diff(up[EPS >= 0]) <= 0.0)


@pytest.mark.parametrize("s", (0.5, 1.0))
def test_upper_values_above_the_n3_quadrature(s):
    acc = _round(s, 3)
    up = sh.privacy_profile(acc, EPS, progress=False)
    ref = replace_delta_n3(s, EPS, 0.0, 0.0)
    bad = up < ref * (1.0 - QUAD_ROOM)
    assert not bad.any(), (EPS[bad], up[bad], ref[bad])


def test_lower_at_most_the_accountants_upper_where_below_one():
    """Where the upper value is below 1 the lower value (of every split bound) is at most the accountant's own
    per-eps upper value (one split's), at n = 2, s = 1."""
    acc = _round(1.0, 2)
    eps = np.linspace(0.0, 3.0, 40)
    lo, up = sh.privacy_profile_bounds(acc, eps, progress=False)
    base_up = np.array([acc.get_delta_bounds(float(e))[1] for e in eps])
    assert np.all(lo <= base_up * (1 + 1e-12)), (eps[lo > base_up], lo[lo > base_up])
    assert np.all(lo <= up)


def test_lower_never_above_upper_where_the_bound_is_capped():
    """The break this review found in pair32's final commit 10a47a8 (lower up to 1.653 > upper = 1 at eps = 0); fixed
    on main by 4b85479 (the lower value capped at 1, as the value is). A regression test now."""
    acc = _round(0.5, 2)
    eps = np.linspace(0.0, 3.0, 41)
    lo, up = sh.privacy_profile_bounds(acc, eps, progress=False)
    assert np.all(lo <= up), (eps[lo > up], lo[lo > up], up[lo > up])
    assert np.all(lo <= 1.0)
