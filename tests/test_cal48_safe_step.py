"""docs/calibration.md §20 (limits.CAL48_SAFE_STEP, search.Search._safe_first): on the loose search, stage 3's first
certifying point after a single loose evaluation takes the model's step lengthened towards the safe side (larger
sigma0) where the shape model's slope is flatter than the model's.

References: the step's arithmetic recomputed by hand on a search holding one recorded point; the shape model's slope
against a wide chord of the model itself; for the calibration at
(1e8, 0.001) with §17's start, a fresh accountant at the report's rel_tol (certification), a fresh accountant's lower
value a little below the answer (refutation: the answer is near the least certified sigma0) and the switch-off
calibration (the optimality tolerance 1e-3 in sigma0^2, docs/calibration.md §3.1)."""

from __future__ import annotations

import math

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.calibration import gaussian as G
from sharpdp.shuffle.accountant.walk_model import shape
from sharpdp.shuffle.calibration.gauss_shape import shape_slope
from sharpdp.shuffle.calibration.search import Search
from sharpdp.shuffle.laws import laws_for

from _main_floats34 import SESSION47, switch

DELTA = 1e-6


def _search(pts, safe=-20.0):
    """A search whose base has slope -30 in x, one slope model of slope ``safe`` (None: none set) and points pts."""
    s = Search(lambda x, t: GaussianRandomizer(math.exp(x), 1), (lambda x, t: -30.0 * x,),
               lambda x, t: math.exp(2.0 * x), 10**8, 0.001, DELTA, "zero_out", False, "test")
    s.pts = list(pts)
    s.safe_slope = None if safe is None else (lambda x: safe)
    return s


def test_switch_off_at_main_and_listed():
    assert limits.CAL48_SAFE_STEP is False and SESSION47["CAL48_SAFE_STEP"] is False
    assert limits.CAL48_SAFE_STEP_K == 2.0


def test_safe_first_step(monkeypatch):
    """The model's step from the single loose point times 1 + K max(s_model / s_safe - 1, 0) up, divided by it down;
    nothing
    where the rule does not apply (s_model = -30 here: the base's slope, the fit through one point adding ~0)."""
    loose = (0.15, None, -13.8, False, 0.99e-6, 1.05e-6)
    s = _search([loose])
    coef = s.fit(0.15, None)
    s_model = s.slope(0.15, None, coef)
    assert abs(s_model + 30.0) < 1e-6
    switch(monkeypatch, "CAL48_SAFE_STEP", False)
    assert s._safe_first(0.1507, None, 0.15, coef) == 0.1507  # (off: the model's step)
    switch(monkeypatch, "CAL48_SAFE_STEP", True)
    f = 1.0 + 2.0 * (s_model / -20.0 - 1.0)  # (2.0)
    assert s._safe_first(0.1507, None, 0.15, coef) == pytest.approx(0.15 + f * 7e-4, abs=1e-15)
    assert s._safe_first(0.1493, None, 0.15, coef) == pytest.approx(0.15 - 7e-4 / f, abs=1e-15)
    assert s._safe_first(0.15, None, 0.15, coef) == 0.15
    switch(monkeypatch, "CAL48_SAFE_STEP_K", 1.0)
    assert s._safe_first(0.1507, None, 0.15, coef) == pytest.approx(0.15 + 1.5 * 7e-4, abs=1e-15)
    # the two slopes agreeing: the model's step
    assert _search([loose], safe=s_model)._safe_first(0.1507, None, 0.15, coef) == pytest.approx(0.1507, abs=1e-15)
    # a slope model steeper than the model's: never a shorter step up (the factor is at least 1)
    assert _search([loose], safe=-60.0)._safe_first(0.1507, None, 0.15, coef) == 0.1507
    # at most the trust region from the point (1.5 / 30 in x here)
    assert s._safe_first(0.2, None, 0.15, coef) == pytest.approx(0.15 + s.trust(0.15, None, coef), abs=1e-15)
    # not one loose point, a two-dimensional search, no slope model, or one that gives no negative slope
    assert _search([loose, (0.16, None, -14.1, False, 0.7e-6, 0.8e-6)])._safe_first(0.1507, None, 0.15, coef) == 0.1507
    assert _search([(0.15, None, -13.8, True, 0.99e-6, 1.05e-6)])._safe_first(0.1507, None, 0.15, coef) == 0.1507
    assert _search([(0.15, 0.0, -13.8, False, 0.99e-6, 1.05e-6)])._safe_first(0.1507, 0.0, 0.15, coef) == 0.1507
    assert _search([loose], safe=None)._safe_first(0.1507, None, 0.15, coef) == 0.1507
    for bad_slope in (0.0, 3.0, math.nan):
        assert _search([loose], safe=bad_slope)._safe_first(0.1507, None, 0.15, coef) == 0.1507
    for bad in (0.5, math.nan, math.inf):
        switch(monkeypatch, "CAL48_SAFE_STEP_K", bad)
        with pytest.raises(ValueError, match="CAL48_SAFE_STEP_K"):  # (K < 1 is refused too)
            s._safe_first(0.1507, None, 0.15, coef)


def test_shape_slope_against_a_wide_difference():
    """shape_slope (step 1e-4) against the shape model's chord over +-1e-2 (a smooth model: within 2 %), and None
    outside the loose search's zero-out case at n >= 1e8."""
    for eps, s0 in ((0.001, 1.16), (0.01, 0.83)):
        x = math.log(s0)
        lm = [math.log(shape(laws_for(GaussianRandomizer(math.exp(y), 1), eps, "zero_out"), 10**8))
              for y in (x - 1e-2, x + 1e-2)]
        ref = (lm[1] - lm[0]) / 2e-2
        got = shape_slope(x, 10**8, eps, "zero_out")
        assert ref < 0.0 and abs(got / ref - 1.0) <= 0.02
    assert shape_slope(0.15, 10**8, 0.001, "replace") is None
    assert shape_slope(0.15, 10**7, 0.001, "zero_out") is None


def test_calibration_two_evaluations_certified(monkeypatch):
    """calibrate_gaussian(1e8, 0.001, 1e-6) with §17's start and the rule: one loose and one certifying evaluation
    (docs/calibration.md §20: 4 with both off, 3 with §17's start alone), certified by a fresh accountant at the
    report's rel_tol (the same bracket), a sigma0 2e-3 below refuted, within 1e-3 of the switch-off sigma0^2."""
    switch(monkeypatch, "CAL44_SHAPE_START", False)
    switch(monkeypatch, "CAL46_START_MAX", False)
    switch(monkeypatch, "CAL48_SAFE_STEP", False)
    off = G.calibrate_gaussian_report(10**8, 0.001, DELTA)
    switch(monkeypatch, "CAL46_START_MAX", True)
    switch(monkeypatch, "CAL48_SAFE_STEP", True)
    on = G.calibrate_gaussian_report(10**8, 0.001, DELTA)
    s_on, s_off = on.randomizer.sigma0, off.randomizer.sigma0
    assert on.evaluations == 2 < off.evaluations
    lo, up = (float(v) for v in ShuffleAccountant(GaussianRandomizer(s_on, 1), 10**8, rel_tol=on.rel_tol)
              .get_delta_bounds(0.001))
    assert up <= DELTA and (lo, up) == tuple(float(v) for v in on.delta_bounds)
    lo_b, _ = ShuffleAccountant(GaussianRandomizer(s_on * (1.0 - 2e-3), 1), 10**8).get_delta_bounds(0.001)
    assert lo_b > DELTA
    assert 0.0 <= (s_on / s_off) ** 2 - 1.0 <= 1e-3
