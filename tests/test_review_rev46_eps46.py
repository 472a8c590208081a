"""Review rev46 (session 46): attack on eps46's docs/accountant.md §8.26.3 (``limits.EPS46_START_LOOK``: get_epsilon's
phase 1 skipped at n >= 1e8 where the search starts at the shape model's root, the look of §8.4 at that root instead)
and docs/calibration.md §17 (``limits.CAL46_START_MAX``: calibrate_gaussian's loose search started at the larger of
two start sigma0). Both are choices of points; claim: the answers stay certified. Skipped while the switches are absent.

The look-start is forced far outside its measured gate (``EPS46_START_LOOK`` = 1e4: from n = 1e4 on, where the rule
does not run in the branch, and the jump-share gate at 0: every shape start), so phase 2 starts wherever the loose look
at an unvetted start puts it. References: a fresh ``get_delta`` at the answer (<= delta) and a fresh accountant at
rel_tol 1e-3 (its certified lower value at the answer <= delta); for the calibration, a fresh accountant's
``get_delta`` at the calibrated sigma0 (<= delta) and the answer not below the switch-off answer by more than the
search's tolerance (a smaller sigma0 than main's certified one would be a tighter calibration, allowed, but far below
it would be suspicious: checked at 5 %).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch
from test_review_rev46_eps_start import _check as _certified

LOOK = pytest.mark.skipif(not hasattr(limits, "EPS46_START_LOOK"), reason="rule of a branch not merged")
CAL = pytest.mark.skipif(not hasattr(limits, "CAL46_START_MAX"), reason="rule of a branch not merged")


@LOOK
@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(g=st.sampled_from([0.0, 0.01, 0.1, 0.5]), s=st.floats(0.4, 4.0), logn=st.integers(4, 6),
       logd=st.integers(-10, -4))
def test_look_start_forced_answer_certified(monkeypatch, g, s, logn, logd):
    from sharpdp.shuffle.accountant import search

    used = []
    orig = search.start_look

    def spy(*a, **k):
        used.append(orig(*a, **k))
        return used[-1]

    mk = (lambda: GaussianRandomizer(s, 1)) if g == 0.0 else (lambda: BlanketMixedGaussian(g, s, 1))  # noqa: E731
    with monkeypatch.context() as mp:
        switch(mp, "EPS46_START_LOOK", 10**4)
        switch(mp, "EPS46_START_LOOK_SHARE", 0.0)
        mp.setattr(search, "start_look", spy)
        eps = float(ShuffleAccountant(mk(), 10**logn).get_epsilon(10.0**logd))
        clear_caches()
    _certified(mk, 10**logn, eps, 10.0**logd)
    FORCED.append(any(used))


FORCED: list = []


@LOOK
def test_look_start_was_forced_somewhere():
    """(The property above is not vacuous: the forced rule skipped phase 1 in some of its examples; run after it.)"""
    if not FORCED:
        pytest.skip("run with the property above")
    assert sum(FORCED) >= 2, FORCED


@CAL
@pytest.mark.parametrize("n, eps, delta", [(10**5, 1.0, 1e-6), (10**6, 0.3, 1e-8), (10**4, 3.0, 1e-5)])
def test_calibration_start_max_certified(monkeypatch, n, eps, delta):
    from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian

    with monkeypatch.context() as mp:
        switch(mp, "CAL46_START_MAX", True)
        switch(mp, "CAL44_SHAPE_N", 10**4)  # (the rule's start from n = 1e4 on, not 1e8: forced where it is cheap)
        on = calibrate_gaussian(n, eps, delta)
        clear_caches()
    s_on = float(on.sigma0)
    up = ShuffleAccountant(GaussianRandomizer(s_on, 1), n).get_delta(eps)
    clear_caches()
    assert up <= delta, (s_on, up, delta)
    with monkeypatch.context() as mp:
        switch(mp, "CAL46_START_MAX", False)
        s_off = float(calibrate_gaussian(n, eps, delta).sigma0)
        clear_caches()
    assert s_on >= 0.95 * s_off, (s_on, s_off)
