"""docs/calibration.md §17 (limits.CAL46_START_MAX, calibration/gauss_shape.shape_x): calibrate_gaussian's start on the
loose search at the larger sigma0 of the Jensen start (docs/calibration.md §13.1) and the shape model's root (§16.1).

References: the shape model's root recomputed here by bisection on ``walk_model.shape`` (not through ``shape_x``), the
switch-off calibration (main's start) for the answer's optimality, and a fresh accountant at the report's rel_tol for
its certification."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.walk_model import shape
from sharpdp.shuffle.calibration import gaussian as G
from sharpdp.shuffle.calibration.gauss_shape import shape_x
from sharpdp.shuffle.laws import laws_for

from _main_floats34 import SESSION45, switch

DELTA = 1e-6
TARGET = math.log(DELTA) - 0.5 * math.log1p(1e-2)  # (the search's target: calibrate_gaussian_report)


def _log_m(x: float, n: int, eps: float) -> float:
    return math.log(shape(laws_for(GaussianRandomizer(math.exp(x), 1), eps, "zero_out"), n))


def _root_ref(n: int, eps: float) -> float:
    """The shape model's root by plain bisection on [log 0.3, log 3] (log M decreases in sigma0)."""
    a, b = math.log(0.3), math.log(3.0)
    assert _log_m(a, n, eps) > TARGET > _log_m(b, n, eps)
    for _ in range(60):
        m = 0.5 * (a + b)
        a, b = (m, b) if _log_m(m, n, eps) > TARGET else (a, m)
    return 0.5 * (a + b)


def _jensen_x0(monkeypatch, n: int, eps: float) -> float:
    """The Jensen start calibrate_gaussian_report hands to shape_x (recorded; the calibration stopped there)."""
    seen: list[float] = []

    class Stop(Exception):
        pass

    def record(x0, *a):
        seen.append(x0)
        raise Stop

    monkeypatch.setattr(G, "shape_x", record)
    try:
        G.calibrate_gaussian_report(n, eps, DELTA)
    except Stop:
        pass
    monkeypatch.undo()
    return seen[0]


def test_switch_off_at_main_and_listed():
    assert limits.CAL46_START_MAX is False and SESSION45["CAL46_START_MAX"] is False


def test_start_is_the_larger_sigma0(monkeypatch):
    """(1e8, 0.001): the shape root lies above the Jensen start and is taken; (1e8, 0.01): the Jensen start is kept."""
    switch(monkeypatch, "CAL44_SHAPE_START", False)
    switch(monkeypatch, "CAL46_START_MAX", False)
    assert shape_x(0.15, 10**8, 0.001, TARGET, "zero_out") is None  # (both switches off: main's start)
    for eps, shape_wins in ((0.001, True), (0.01, False)):
        x0 = _jensen_x0(monkeypatch, 10**8, eps)
        switch(monkeypatch, "CAL44_SHAPE_START", False)
        switch(monkeypatch, "CAL46_START_MAX", True)
        ref = _root_ref(10**8, eps)
        x = shape_x(x0, 10**8, eps, TARGET, "zero_out")
        assert (ref > x0) is shape_wins
        assert abs(x - max(ref, x0)) <= 1e-4
        assert shape_x(x0, 10**8, eps, TARGET, "replace") is None  # (outside the loose search's zero-out case)
        assert shape_x(x0, 10**7, eps, TARGET, "zero_out") is None  # (below CAL44_SHAPE_N)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(eps=st.floats(0.001, 0.01), x0=st.floats(-0.4, 0.4), lg=st.sampled_from([8.0, 8.5, 9.0]))
def test_start_max_property(monkeypatch, eps, x0, lg):
    """For any given start x0: with the rule, the start is max(x0, the shape root), the root checked by bisection."""
    n = int(10**lg)
    switch(monkeypatch, "CAL46_START_MAX", True)
    x = shape_x(x0, n, eps, TARGET, "zero_out")
    ref = _root_ref(n, eps)
    if x is None:  # (no root bracketed within 20 steps of 0.05 from x0: the rule leaves the start)
        assert abs(ref - x0) > 0.9
        return
    assert x >= x0
    assert abs(x - max(ref, x0)) <= 1e-4


def test_calibration_certified_fewer_evaluations(monkeypatch):
    """calibrate_gaussian(1e8, 0.001, 1e-6) with the rule: certified by a fresh accountant at the report's rel_tol
    (the same bracket), within the optimality tolerance 1e-3 of the switch-off sigma0^2, with fewer evaluations
    (docs/calibration.md §17.3: 3 against 4)."""
    switch(monkeypatch, "CAL44_SHAPE_START", False)
    switch(monkeypatch, "CAL46_START_MAX", False)
    off = G.calibrate_gaussian_report(10**8, 0.001, DELTA)
    switch(monkeypatch, "CAL46_START_MAX", True)
    on = G.calibrate_gaussian_report(10**8, 0.001, DELTA)
    s_on, s_off = on.randomizer.sigma0, off.randomizer.sigma0
    assert on.evaluations < off.evaluations
    lo, up = (float(v) for v in ShuffleAccountant(GaussianRandomizer(s_on, 1), 10**8, rel_tol=on.rel_tol)
              .get_delta_bounds(0.001))
    assert up <= DELTA and (lo, up) == tuple(float(v) for v in on.delta_bounds)
    # above delta a little below the answer: the answer is near the smallest certified sigma0, not just any
    lo_b, _ = ShuffleAccountant(GaussianRandomizer(s_on * (1.0 - 2e-3), 1), 10**8).get_delta_bounds(0.001)
    assert lo_b > DELTA
    assert abs((s_on / s_off) ** 2 - 1.0) <= 1e-3
