"""Review rev47 (session 47): attack on docs/accountant.md §8.26 (``limits.EPS46_START_LOOK`` = 1e8, on since session
46's merge: get_epsilon's phase 1 skipped at 1e8 <= n < 1e9 for a look at the shape model's start). rev46 forced the rule
down to n = 1e4; here it runs where it is ON, n in [1e8, 1e9), at cells and deltas outside eps46's table (n = 2e8 to
8e8, delta 1e-6 to 1e-8), with a spy asserting the rule skipped phase 1. References: a fresh accountant at rel_tol 1e-4
(its certified lower value at the answer must be <= delta, else delta(answer) > delta: an under-report), a fresh
get_delta at the answer (<= delta), and the switch-off answer (main's search): within the search's xtol (1e-3
relative) of the answer."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch

pytestmark = pytest.mark.skipif(not hasattr(limits, "EPS46_START_LOOK"), reason="rule of session 46 absent")


def _answer(monkeypatch, g, s, n, delta, look):
    from sharpdp.shuffle.accountant import search

    used: list = []
    orig = search.start_look
    with monkeypatch.context() as m:
        switch(m, "EPS46_START_LOOK", look)
        m.setattr(search, "start_look", lambda *a, **k: used.append(orig(*a, **k)) or used[-1])  # (a spy)
        clear_caches()
        eps = float(ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n).get_epsilon(delta))
        clear_caches()
    return eps, any(used)


def _certified(g, s, n, eps, delta):
    up = ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n).get_delta(eps)
    lo, _ = ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n, rel_tol=1e-4).get_delta_bounds(eps)
    clear_caches()
    assert up <= delta, ("get_delta at the answer above the target", eps, up, delta)
    assert lo <= delta, ("delta(answer) above the target: an under-report", eps, lo, delta)


@pytest.mark.parametrize("g, s, n, delta", [(0.171, 0.781, 4 * 10**8, 1e-6), (0.1, 0.7, 2 * 10**8, 1e-8),
                                            (0.05, 0.5, 8 * 10**8, 1e-6)])
def test_answer_certified_and_within_xtol_of_main(monkeypatch, g, s, n, delta):
    eps, used = _answer(monkeypatch, g, s, n, delta, 10**8)
    assert used  # (phase 1 was skipped: the rule ran)
    _certified(g, s, n, eps, delta)
    off, used0 = _answer(monkeypatch, g, s, n, delta, 0)
    assert not used0
    assert abs(eps - off) <= 1e-3 * off, (eps, off)


@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(g=st.floats(0.03, 0.3), s=st.floats(0.45, 0.9), n=st.integers(10**8, 10**9 - 1), logd=st.integers(-9, -5))
def test_answer_certified_property(monkeypatch, g, s, n, logd):
    eps, _ = _answer(monkeypatch, g, s, n, 10.0**logd, 10**8)
    _certified(g, s, n, eps, 10.0**logd)
