"""Upper values first (docs/accountant_tail.md §15, docs/embedding.md §3.2): a heavy-tailed round's upper
values without the lower value, against the full bracket; the caches' keys; cover_upper's gaps."""

from __future__ import annotations

from _main_floats34 import switch

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches, dominating_pair
from sharpdp.shuffle.pair import cover
from sharpdp.shuffle.profile import privacy_profile, privacy_profile_bounds

HEAVY = (0.04089409561900239, 0.5960134902126553), 10**5  # bench/bench_composition.py "heavy"


def _acc():
    (g, s), n = HEAVY
    return ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n)


def test_upper_first_equals_the_brackets_upper_where_its_first_round_settles_it():
    eps = np.array([1.0, 2.0, 3.5])
    lo, up = _acc().get_delta_bounds(eps)
    lo1, up1 = _acc().get_delta_bounds(eps, lower=False)
    assert np.all(lo > 0) and np.all(lo1 == 0.0)  # the lower values skipped (0: none computed)
    np.testing.assert_array_equal(up1, up)  # the same terms on the same grid: bit for bit


def test_upper_first_near_the_switch_is_certified_and_within_the_gap():
    # near eps ~ 0.5 the bracket refines beyond its first round: the upper-first value is the first round's
    eps = np.array([0.0, 0.3, 0.4865392639999999, 0.55])
    lo, up = _acc().get_delta_bounds(eps)
    _, up1 = _acc().get_delta_bounds(eps, lower=False)
    assert np.all(up1 >= lo)  # an upper value of a quantity the bracket's lower value bounds from below
    assert np.all(up1 <= up + (up - lo))  # within the bracket's gap (docs/accountant_tail.md §15)


def test_a_bracket_serves_an_upper_first_request_never_the_reverse():
    acc = _acc()
    _, u1 = acc.get_delta_bounds(2.0, lower=False)
    lo, up = acc.get_delta_bounds(2.0)
    assert lo > 0 and up == u1  # the bracket was computed (not the upper-first report reused)
    acc2 = _acc()
    lo2, up2 = acc2.get_delta_bounds(2.5)
    lo3, up3 = acc2.get_delta_bounds(2.5, lower=False)
    assert (lo3, up3) == (lo2, up2) and lo3 > 0  # the cached bracket answers


def test_lower_must_be_a_bool():
    with pytest.raises(TypeError, match="lower"):
        _acc().get_delta_bounds(1.0, lower=1)


def test_profile_upper_first_and_its_value_cache(monkeypatch):
    # (**) session 43, lead: docs/accountant_tail.md §63.5: inside a sweep the warm clamp gives its own certified
    # value, equal to a fresh one with it off (before §63.5 the closed form's memo handed the sweep's to the fresh call)
    switch(monkeypatch, "FT42_T0_WARM", False)
    clear_caches()
    eps = np.array([1.5, 2.5])
    up = privacy_profile(_acc(), eps)
    _, ref = _acc().get_delta_bounds(eps)
    np.testing.assert_array_equal(up, ref)
    lo, up2 = privacy_profile_bounds(_acc(), eps)  # lower values asked for: computed now, not NaN
    assert np.all(np.isfinite(lo)) and np.all(lo > 0) and np.all(lo <= up2)
    clear_caches()


def test_cover_fills_missing_gaps_from_the_nearest_brackets():
    up = np.array([0.5, 0.25, 0.125, 0.0625, 0.03125])
    lo = np.array([0.5 / 1.01, np.nan, np.nan, 0.0625 / 1.004, np.nan])
    out = cover(lo, up)
    g0, g3 = 0.01, 0.004
    # each sample: the largest gap of itself and its neighbours, a NaN gap taken from the nearest known ones
    gaps = np.array([g0, max(g0, g3), max(g0, g3), g3, g3])
    expect = np.array([max(gaps[max(i - 1, 0):i + 2]) for i in range(5)])
    np.testing.assert_allclose(out / up - 1.0, expect, rtol=1e-9)
    np.testing.assert_array_equal(cover(np.array([0.5, 0.25]), np.array([0.5, 0.25])), cover([0.5, 0.25], [0.5, 0.25]))


def test_pair_from_upper_first_samples_dominates_the_accountant():
    clear_caches()
    acc = _acc()
    pair = dominating_pair(acc, 0.05, delta_floor=1e-9, rel_tol=2e-2, progress=False)
    eps = np.linspace(0.0, 2.0, 23)
    lo, up = _acc().get_delta_bounds(eps)
    got = pair.get_delta(eps)
    assert np.all(got >= up)  # above the accountant's own upper value (cover_upper), hence above delta
    assert np.all(got[eps >= 0.5] <= 1.1 * up[eps >= 0.5])  # (coarse lattice: chords of 0.05 nats)
    clear_caches()
