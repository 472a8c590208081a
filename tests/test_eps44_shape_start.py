"""docs/accountant.md §8.24 (session 44, eps44): phase 1's start at the shape model's root (shape_start.py,
limits.EPS44_SHAPE_START / EPS44_SHAPE_ONE / EPS44_SHAPE_ACTIVE), the refit's stop (limits.EPS44_REFIT_STOP), the closed
form's reach (limits.CLOSED44_REACH) and docs/calibration.md §16 (calibration/gauss_shape.py, limits.CAL44_SHAPE_START).
Every rule chooses points or routes only: the tests check the models against independent recomputation and every
answer against a fresh certified accountant (the switches off as the reference where the claim is the same bracket)."""

from __future__ import annotations

import math
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import GaussianRandomizer, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant import concentrated, far_tail
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.shape_start import shape_start
from sharpdp.shuffle.accountant.walk_model import shape
from sharpdp.shuffle.calibration.gauss_shape import shape_x
from sharpdp.shuffle.laws import laws_for

from _main_floats34 import switch

DELTA = 1e-6


def _laws_at(r):
    return lambda e: laws_for(r, e, "zero_out")


def _count_upper(monkeypatch, acc, delta):
    """get_epsilon's answer and its number of phase-1 / refit upper-only passes (bench/geteps_ratio.py's count)."""
    with mock.patch.object(S, "upper_value", wraps=S.upper_value) as counted:
        return acc.get_epsilon(delta), counted.call_count


# -- §8.24.1: the model's root and slope, recomputed from walk_model.shape itself
def test_shape_start_root_and_slope(monkeypatch):
    r, n = GaussianRandomizer(0.5, 1), 10**5
    switch(monkeypatch, "EPS44_SHAPE_START", False)
    assert shape_start(_laws_at(r), n, DELTA, 0.0, 60.0, 1.0) is None  # (the switch off: main's start)
    switch(monkeypatch, "EPS44_SHAPE_START", True)
    x, k = shape_start(_laws_at(r), n, DELTA, 0.0, 60.0, 1.0)
    m = lambda e: shape(laws_for(r, e, "zero_out"), n)  # noqa: E731
    assert m(x * (1 - 1e-3)) > DELTA > m(x * (1 + 1e-3))  # (the root, to the model's resolution)
    h = 1e-3
    d = (math.log(m(x * math.exp(h))) - math.log(m(x * math.exp(-h)))) / (2 * h)
    assert k < 0 and math.isclose(k, d / -math.log(DELTA), rel_tol=1e-2)
    # outside the rule's domain: atom laws, few active users, no root inside the bracket
    assert shape_start(_laws_at(RandomizedResponse(4, 1.0)), 10**5, DELTA, 0.0, 60.0, 1.0) is None
    assert shape_start(_laws_at(GaussianRandomizer(4.6, 1)), 100, DELTA, 0.0, 60.0, 0.1) is None
    assert shape_start(_laws_at(r), n, DELTA, 0.0, 0.5 * x, 0.1) is None


def test_get_epsilon_shape_start_certified_and_fewer_passes(monkeypatch):
    """GaussianRandomizer(0.5), n = 1e5 (the regime map's 4.1x cell): phase 1 from the model's root; the answer is
    certified by a fresh accountant, within xtol of the rule-off answer, and phase 1 makes fewer upper-only passes."""
    r, n, xtol = GaussianRandomizer(0.5, 1), 10**5, 1e-3
    switch(monkeypatch, "EPS44_SHAPE_START", False)
    switch(monkeypatch, "EPS44_SHAPE_ONE", False)
    off, passes_off = _count_upper(monkeypatch, ShuffleAccountant(r, n), DELTA)
    switch(monkeypatch, "EPS44_SHAPE_START", True)
    switch(monkeypatch, "EPS44_SHAPE_ONE", True)
    on, passes_on = _count_upper(monkeypatch, ShuffleAccountant(r, n), DELTA)
    assert passes_on < passes_off
    assert ShuffleAccountant(r, n).get_delta(on) <= DELTA
    assert ShuffleAccountant(r, n).get_delta_bounds(on * (1 - 2 * xtol))[1] > DELTA
    assert abs(on / off - 1.0) <= xtol


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(s0=st.floats(0.45, 5.0), n=st.sampled_from([2000, 10**4, 10**5]), ld=st.floats(-16.0, -9.0))
def test_shape_start_property(monkeypatch, s0, n, ld):
    """Over the rule's domain: the model's root brackets the model, and get_epsilon's answer with the rules on is
    certified (a fresh get_delta <= delta there) and agrees with the rule-off answer (the certified reference) to a few
    xtol."""
    delta = math.exp(ld)
    r = GaussianRandomizer(s0, 1)
    switch(monkeypatch, "EPS44_SHAPE_START", False)
    switch(monkeypatch, "EPS44_SHAPE_ONE", False)
    off = ShuffleAccountant(r, n).get_epsilon(delta)
    switch(monkeypatch, "EPS44_SHAPE_START", True)
    switch(monkeypatch, "EPS44_SHAPE_ONE", True)
    got = shape_start(_laws_at(r), n, delta, 0.0, 60.0, 0.05)
    if got is not None:
        x, k = got
        m = lambda e: shape(laws_for(r, e, "zero_out"), n)  # noqa: E731
        assert m(x * (1 - 1e-3)) > delta > m(x * (1 + 1e-3)) and k < 0
    ans = ShuffleAccountant(r, n).get_epsilon(delta)
    assert ShuffleAccountant(r, n).get_delta(ans) <= delta
    assert abs(ans - off) <= 5e-3 * max(ans, off)  # (two searches' answers of one xtol contract, 1e-3 each)


# -- §8.24.2: the refit's stop
def test_refit_stop_answer_certified(monkeypatch):
    r, n = GaussianRandomizer(2.0, 1), 10**4
    switch(monkeypatch, "EPS44_REFIT_STOP", 0.05)
    off, passes_off = _count_upper(monkeypatch, ShuffleAccountant(r, n), DELTA)
    switch(monkeypatch, "EPS44_REFIT_STOP", 0.3)
    on, passes_on = _count_upper(monkeypatch, ShuffleAccountant(r, n), DELTA)
    assert passes_on < passes_off
    assert ShuffleAccountant(r, n).get_delta(on) <= DELTA
    assert ShuffleAccountant(r, n).get_delta_bounds(on * (1 - 2e-3))[1] > DELTA
    assert abs(on / off - 1.0) <= 1e-3


# -- §8.24.3: the closed form's reach: the same bracket where stage 3's gap is within reach, a refusal beyond it
def test_closed_reach_same_or_refused(monkeypatch):
    """GaussianRandomizer(2)'s x vs bot law at n = 1000, eps = 0.5, rel_tol 0.3: the closed form accepts only after
    stage 6, from a gap 2.3 times the acceptance at stage 4's entry (docs/accountant.md §8.24.3's scan)."""
    (g, law), = [(float(g), law.shifted(up=True)) for g, law in laws_for(GaussianRandomizer(2.0, 1), 0.5, "zero_out")
                 if concentrated.eligible(law.shifted(up=True), float(g), 1000)]
    switch(monkeypatch, "CLOSED44_REACH", 0.0)
    ref = concentrated.certify(law, g, 1000, 0.3, far_tail.choose_T0)
    assert ref is not None and ref.lower <= ref.upper
    switch(monkeypatch, "CLOSED44_REACH", 3.0)
    got = concentrated.certify(law, g, 1000, 0.3, far_tail.choose_T0)
    assert got is not None and (got.lower, got.upper) == (ref.lower, ref.upper)
    switch(monkeypatch, "CLOSED44_REACH", 2.0)
    assert concentrated.certify(law, g, 1000, 0.3, far_tail.choose_T0) is None
    # the report stays certified either way: the far-tail treatment's bracket meets the closed form's
    acc = ShuffleAccountant(GaussianRandomizer(2.0, 1), 1000, rel_tol=0.3)
    lo, up = (float(v) for v in acc.get_delta_bounds(0.5))
    assert max(lo, ref.lower) <= min(up, ref.upper) * (1 + 1e-12)


# -- docs/calibration.md §16.1: calibrate_gaussian's shape start
def test_calibration_shape_x(monkeypatch):
    n, eps = 10**8, 0.001
    target = math.log(DELTA) - 0.5 * math.log1p(1e-2)
    switch(monkeypatch, "CAL44_SHAPE_START", False)
    assert shape_x(0.15, n, eps, target, "zero_out") is None  # (the switch off)
    switch(monkeypatch, "CAL44_SHAPE_START", True)
    assert shape_x(0.15, n, eps, target, "replace") is None and shape_x(0.15, 10**7, eps, target, "zero_out") is None
    x = shape_x(0.15, n, eps, target, "zero_out")
    m = lambda x_: math.log(shape(laws_for(GaussianRandomizer(math.exp(x_), 1), eps, "zero_out"), n))  # noqa: E731
    assert m(x - 1e-3) > target > m(x + 1e-3)


def test_calibration_shape_start_certified(monkeypatch):
    """calibrate_gaussian(1e8, 0.001, 1e-6) with the shape start (docs/calibration.md §16.1): the answer is certified by
    a fresh accountant at the report's rel_tol, within the optimality tolerance of the switch-off answer's sigma0^2."""
    from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian_report

    switch(monkeypatch, "CAL44_SHAPE_START", False)
    off = calibrate_gaussian_report(10**8, 0.001, DELTA)
    switch(monkeypatch, "CAL44_SHAPE_START", True)
    on = calibrate_gaussian_report(10**8, 0.001, DELTA)
    s_on, s_off = on.randomizer.sigma0, off.randomizer.sigma0
    assert on.evaluations <= off.evaluations
    lo, up = (float(v) for v in ShuffleAccountant(GaussianRandomizer(s_on, 1), 10**8, rel_tol=on.rel_tol)
              .get_delta_bounds(0.001))
    assert up <= DELTA and (lo, up) == tuple(float(v) for v in on.delta_bounds)
    assert abs((s_on / s_off) ** 2 - 1.0) <= 1e-3
