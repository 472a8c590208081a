"""docs/calibration.md §20 (limits.CAL48_SAFE_STEP, search.Search._safe_first): on the loose search, stage 3's first
certifying point after a single loose evaluation takes its step scaled towards the safe side (larger sigma0).

References: the step's arithmetic recomputed by hand on a search holding one recorded point; for the calibration at
(1e8, 0.001) with §17's start, a fresh accountant at the report's rel_tol (certification), a fresh accountant's lower
value a little below the answer (refutation: the answer is near the least certified sigma0) and the switch-off
calibration (the optimality tolerance 1e-3 in sigma0^2, docs/calibration.md §3.1)."""

from __future__ import annotations

import math

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.calibration import gaussian as G
from sharpdp.shuffle.calibration.search import Search

from _main_floats34 import SESSION47, switch

DELTA = 1e-6


def _search(pts):
    s = Search(lambda x, t: GaussianRandomizer(math.exp(x), 1), (lambda x, t: -30.0 * x,),
               lambda x, t: math.exp(2.0 * x), 10**8, 0.001, DELTA, "zero_out", False, "test")
    s.pts = list(pts)
    return s


def test_switch_off_at_main_and_listed():
    assert limits.CAL48_SAFE_STEP is False and SESSION47["CAL48_SAFE_STEP"] is False
    assert limits.CAL48_SAFE_STEP_K == 2.0


def test_safe_first_step(monkeypatch):
    """The step from the single loose point: times K up, divided by K down; nothing where the rule does not apply."""
    loose = (0.15, None, -13.8, False, 0.99e-6, 1.05e-6)
    s = _search([loose])
    coef = s.fit(0.15, None)
    switch(monkeypatch, "CAL48_SAFE_STEP", False)
    assert s._safe_first(0.1507, None, 0.15, coef) == 0.1507  # (off: the model's step)
    switch(monkeypatch, "CAL48_SAFE_STEP", True)
    assert s._safe_first(0.1507, None, 0.15, coef) == pytest.approx(0.15 + 2.0 * 7e-4, abs=1e-15)
    assert s._safe_first(0.1493, None, 0.15, coef) == pytest.approx(0.15 - 7e-4 / 2.0, abs=1e-15)
    assert s._safe_first(0.15, None, 0.15, coef) == 0.15
    switch(monkeypatch, "CAL48_SAFE_STEP_K", 1.5)
    assert s._safe_first(0.1507, None, 0.15, coef) == pytest.approx(0.15 + 1.5 * 7e-4, abs=1e-15)
    # at most the trust region from the point (1.5 / 30 in x here)
    assert s._safe_first(0.2, None, 0.15, coef) == pytest.approx(0.15 + s.trust(0.15, None, coef), abs=1e-15)
    # not one loose point: two points, a certifying point, a two-dimensional search
    assert _search([loose, (0.16, None, -14.1, False, 0.7e-6, 0.8e-6)])._safe_first(0.1507, None, 0.15, coef) == 0.1507
    assert _search([(0.15, None, -13.8, True, 0.99e-6, 1.05e-6)])._safe_first(0.1507, None, 0.15, coef) == 0.1507
    assert _search([(0.15, 0.0, -13.8, False, 0.99e-6, 1.05e-6)])._safe_first(0.1507, 0.0, 0.15, coef) == 0.1507
    for bad in (0.5, math.nan, math.inf):
        switch(monkeypatch, "CAL48_SAFE_STEP_K", bad)
        with pytest.raises(ValueError, match="CAL48_SAFE_STEP_K"):
            s._safe_first(0.1507, None, 0.15, coef)


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
