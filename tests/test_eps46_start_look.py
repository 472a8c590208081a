"""docs/accountant.md §8.26.3 (limits.EPS46_START_LOOK, accountant/start_probe.start_look): get_epsilon's phase 1
skipped at n >= 1e8 where the search starts at the shape model's root with a single-big-jump share; the look of §8.4 at
that root instead.

References: the gate against the shape model's parts recomputed here (``far_tail_grid.normal_value`` per law,
``jump_guess.jump_value``); the answer against a fresh accountant (get_delta <= delta at the answer, above delta
2 xtol below it) and against the switch-off search (within xtol: both are certified points of the same contract)."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.far_tail_grid import normal_value
from sharpdp.shuffle.accountant.jump_guess import jump_value
from sharpdp.shuffle.accountant.looks import memoised
from sharpdp.shuffle.accountant.shape_start import shape_start
from sharpdp.shuffle.accountant.start_probe import start_look
from sharpdp.shuffle.laws import laws_for

from _main_floats34 import SESSION45, switch

DELTA, XTOL = 1e-6, 1e-3


def _start(rnd, n):
    laws_at = memoised(lambda e: laws_for(rnd, e, "zero_out"), 64)
    return laws_at, shape_start(laws_at, n, DELTA, 0.0, 60.0, 1e-3)


def _share(pairs, n):
    """The single big jump's share of the shape model, from its two parts (normal body max + jump)."""
    body = max(normal_value(law, float(g), n) for g, law in pairs if law.top_bound() > 0)
    j = jump_value(pairs, n)[0]
    return j / (body + j)


def test_switch_on_since_the_merge_and_listed():
    """On (1e8) since session 46's merge (a full suite run with it on); SESSION45 holds main's value before (0)."""
    assert limits.EPS46_START_LOOK == 10**8 and SESSION45["EPS46_START_LOOK"] == 0
    assert SESSION45["EPS46_START_LOOK_SHARE"] == limits.EPS46_START_LOOK_SHARE


def test_gate(monkeypatch):
    n = 10**8
    laws_at, (x0, k0) = _start(BlanketMixedGaussian(0.0389, 0.529, 1), n)
    led = [-1]
    switch(monkeypatch, "EPS46_START_LOOK", 0)
    assert not start_look(laws_at, n, x0, k0, 0.0, 60.0, led) and led == [-1]  # (off)
    switch(monkeypatch, "EPS46_START_LOOK", 10**8)
    assert start_look(laws_at, n, x0, k0, 0.0, 60.0, led)
    pairs = laws_at(x0)
    vals = [normal_value(law, float(g), n) for g, law in pairs]
    assert led[0] == max(range(len(vals)), key=lambda i: (vals[i], i))
    assert _share(pairs, n) >= 1e-12  # (0.49 at this start)
    for args in ((10**7, x0, k0, 0.0, 60.0), (n, x0, None, 0.0, 60.0), (n, x0, k0, x0, 60.0), (n, x0, k0, 0.0, x0)):
        assert not start_look(laws_at, *args, [-1])  # (below the switch's n, no slope, at the frame's ends)
    # the model all body (GaussianRandomizer(2), n = 1e8: share ~1e-16): shut
    laws2, (x2, k2) = _start(GaussianRandomizer(2.0, 1), n)
    assert _share(laws2(x2), n) < 1e-12 and not start_look(laws2, n, x2, k2, 0.0, 60.0, [-1])
    # atom laws: shut
    rr = memoised(lambda e: laws_for(RandomizedResponse(2, 4.0), e, "zero_out"), 8)
    assert not start_look(rr, n, 0.003, -1.0, 0.0, 60.0, [-1])


def _checked(rnd, n, e):
    assert ShuffleAccountant(rnd, n).get_delta(e) <= DELTA
    assert ShuffleAccountant(rnd, n).get_delta(e * (1.0 - 2.0 * XTOL)) > DELTA


def test_get_epsilon_no_phase1_certified(monkeypatch):
    """BMG(0.0389, 0.529), n = 1e8 (the map's 3.22x cell): with the rule no upper-only pass, fewer reports, the answer
    certified by fresh accountants and within xtol of the switch-off answer."""
    rnd, n = BlanketMixedGaussian(0.0389, 0.529, 1), 10**8
    calls = {"up": 0}
    orig = S.upper_value

    def counted(*a, **k):
        calls["up"] += 1
        return orig(*a, **k)

    monkeypatch.setattr(S, "upper_value", counted)
    switch(monkeypatch, "EPS46_START_LOOK", 0)
    off = ShuffleAccountant(rnd, n).get_epsilon(DELTA)
    up_off, calls["up"] = calls["up"], 0
    switch(monkeypatch, "EPS46_START_LOOK", 10**8)
    on = ShuffleAccountant(rnd, n).get_epsilon(DELTA)
    assert up_off >= 3 and calls["up"] == 0
    _checked(rnd, n, on)
    assert abs(on / off - 1.0) <= XTOL


def test_gaussian_body_only_same_float(monkeypatch):
    """GaussianRandomizer(2), n = 1e8: the gate is shut (a model all body), the same float as the switch off."""
    rnd, n = GaussianRandomizer(2.0, 1), 10**8
    switch(monkeypatch, "EPS46_START_LOOK", 0)
    off = ShuffleAccountant(rnd, n).get_epsilon(DELTA)
    switch(monkeypatch, "EPS46_START_LOOK", 10**8)
    assert ShuffleAccountant(rnd, n).get_epsilon(DELTA) == off


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gamma=st.floats(0.03, 0.2), s0=st.floats(0.5, 0.8))
def test_get_epsilon_property(monkeypatch, gamma, s0):
    """BMGs at n = 1e8 with the rule on: the answer certified by fresh accountants and within xtol of the switch-off
    search's answer (both certified points of the same contract, docs/accountant.md §8)."""
    rnd, n = BlanketMixedGaussian(gamma, s0, 1), 10**8
    switch(monkeypatch, "EPS46_START_LOOK", 10**8)
    on = ShuffleAccountant(rnd, n).get_epsilon(DELTA)
    switch(monkeypatch, "EPS46_START_LOOK", 0)
    off = ShuffleAccountant(rnd, n).get_epsilon(DELTA)
    assert math.isfinite(on) and on > 0.0
    _checked(rnd, n, on)
    assert abs(on / off - 1.0) <= 2.0 * XTOL
