"""Review rev47 (session 47): attack on rep47's docs/accountant.md §9.24 (``limits.REP47_END_SPLITS``, off in its branch:
the cap stops that read one split report (1, 1) only where the end splits f = 0, 1 are certified at or above 1; an end
below 1 joins the candidates). The rule turns caps (1, 1) into values below 1: each must still be a certified upper
value of the TRUE replace-one delta. Skipped while the switch is absent (its branch not merged).

References from the mechanism's definition alone: at n = 1 the Gaussian mechanism of sensitivity 2 in closed form
(mpmath; the bound of §9 meets it to ~1e-12 at some cells: the sharpest check of the new values' rounding), at n = 2 the
brute-force quadrature of tests/_rev30b_replace_reference.py (a lower value of the truth, error <= 5e-4, allowed 2e-3).
Cells: those that reported (1, 1) on main and move with the rule (measured: GaussianRandomizer(0.46), n = 1, eps 4:
(1, 1) -> [0.84113786327829, 0.84113786328169] against the truth 0.84113786327999; (0.6), n = 2, eps 2: 0.8925 against
0.4717), and a hypothesis sweep of small sigma0 and eps where the caps live."""

from __future__ import annotations

import mpmath as mp
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch
from _rev30b_replace_reference import replace_delta_n2
from test_review_rev47_rep46 import gauss_mech

pytestmark = pytest.mark.skipif(not hasattr(limits, "REP47_END_SPLITS"), reason="rule of a branch not merged (rep47)")


def _bracket(monkeypatch, s, n, eps, on=True):
    with monkeypatch.context() as m:
        switch(m, "REP47_END_SPLITS", on)
        clear_caches()
        lo, up = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").get_delta_bounds(eps)
        clear_caches()
    assert 0 <= lo <= up <= 1
    return float(lo), float(up)


def _truth_below(s, n, eps, up):
    if n == 1:
        ref = gauss_mech(s, eps)
        assert mp.mpf(up) >= ref, (s, n, eps, up, float(ref))
    else:
        ref = float(replace_delta_n2(s, [eps])[0])
        assert up >= ref * (1 - 2e-3), (s, n, eps, up, ref)


@pytest.mark.parametrize("s, n, eps", [(0.46, 1, 4.0), (0.6, 1, 2.0), (0.46, 2, 4.0), (0.6, 2, 2.0)])
def test_moved_caps_hold_the_truth(monkeypatch, s, n, eps):
    assert _bracket(monkeypatch, s, n, eps, False) == (1.0, 1.0)  # (main's cap)
    lo, up = _bracket(monkeypatch, s, n, eps, True)
    assert up < 1.0  # (the rule moved it)
    _truth_below(s, n, eps, up)


@settings(max_examples=14, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(s=st.floats(0.25, 0.9), eps=st.floats(0.3, 7.0), n=st.sampled_from([1, 1, 2]))
def test_end_splits_upper_above_the_truth(monkeypatch, s, eps, n):
    _, up = _bracket(monkeypatch, s, n, eps, True)
    if up < 1.0:
        _truth_below(s, n, eps, up)


@pytest.mark.parametrize("s, delta", [(0.46, 0.9), (0.6, 0.8)])
def test_epsilon_with_end_splits_certified_n1(monkeypatch, s, delta):
    """get_epsilon with the rule on at n = 1, where main's caps sit: the closed form's delta at the answer <= the target."""
    with monkeypatch.context() as m:
        switch(m, "REP47_END_SPLITS", True)
        clear_caches()
        eps = float(ShuffleAccountant(GaussianRandomizer(s, 1), 1, "replace").get_epsilon(delta))
        clear_caches()
    assert gauss_mech(s, eps) <= delta, (s, eps, float(gauss_mech(s, eps)), delta)
