"""docs/accountant.md §8.28 (limits.EPS48_BODY_START, accountant/start_probe.body_start): get_epsilon's phase 1 skipped
at n >= 1e8 where the search starts at the shape model's root and that model is all body (the single big jump's share
below §8.26.3's gate); phase 2 probes a point EPS48_BODY_START xtol above the root first, with the model's slope.

References: the gate against the shape model's parts recomputed here (``far_tail_grid.normal_value`` per law,
``jump_guess.jump_value``); the answer against fresh accountants (get_delta <= delta at the answer, above delta one
xtol below it: the bracket contract of docs/accountant.md §8) and against the switch-off search (within xtol: both are
certified points of that contract); the calls counted (no upper-only pass, no loose look, two probes)."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle import accountant as A
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.looks import memoised
from sharpdp.shuffle.accountant.start_probe import body_start
from sharpdp.shuffle.laws import laws_for

from _main_floats34 import SESSION47, switch
from test_eps46_start_look import _share, _start  # (one shape-start helper for both files)

DELTA, XTOL, ON = 1e-6, 1e-3, 0.9


def test_switch_on_and_listed():
    """On (0.9) by default (§8.28.5: the test files that reach it run with it on); SESSION47 holds session 47's value
    (0: off)."""
    assert limits.EPS48_BODY_START == ON and SESSION47["EPS48_BODY_START"] == 0.0
    assert limits.EPS48_BODY_N == 10**8


def test_gate(monkeypatch):
    n = 10**8
    laws_at, (x0, k0) = _start(GaussianRandomizer(2.0, 1), n)
    assert _share(laws_at(x0), n) < 1e-12  # (~1e-16: the model all body)
    switch(monkeypatch, "EPS48_BODY_START", 0.0)
    assert body_start(laws_at, n, x0, k0, 0.0, 60.0, XTOL) == (x0, False)  # (off)
    switch(monkeypatch, "EPS48_BODY_START", ON)
    x, on = body_start(laws_at, n, x0, k0, 0.0, 60.0, XTOL)
    assert on and x == x0 * (1.0 + ON * XTOL)
    for args in ((10**7, x0, k0, 0.0, 60.0), (n, x0, None, 0.0, 60.0), (n, x0, 0.1, 0.0, 60.0),
                 (n, x0, k0, x * (1.0 + 1e-9), 60.0), (n, x0, k0, 0.0, x)):
        assert body_start(laws_at, *args, XTOL) == (x0, False)  # (below its n, no slope, the point at the frame's ends)
    # a single-big-jump share (BMG(0.0389, 0.529), n = 1e8: §8.26.3's look instead): shut
    laws2, (x2, k2) = _start(BlanketMixedGaussian(0.0389, 0.529, 1), n)
    assert _share(laws2(x2), n) >= 1e-12 and body_start(laws2, n, x2, k2, 0.0, 60.0, XTOL) == (x2, False)
    # atom laws: shut
    rr = memoised(lambda e: laws_for(RandomizedResponse(2, 4.0), e, "zero_out"), 8)
    assert body_start(rr, n, 0.003, -1.0, 0.0, 60.0, XTOL) == (0.003, False)


def _checked(rnd, n, e):
    """Certified: get_delta <= delta at the answer (a fresh accountant), and above delta one xtol below it."""
    assert ShuffleAccountant(rnd, n).get_delta(e) <= DELTA
    assert ShuffleAccountant(rnd, n).get_delta(e * (1.0 - XTOL)) > DELTA


def _counted(monkeypatch):
    calls = {"up": 0, "loose": 0, "probe": 0}
    orig_up, orig_rep, orig_probe = S.upper_value, A.ShuffleAccountant._report, S.probe

    def up(*a, **k):
        calls["up"] += 1
        return orig_up(*a, **k)

    def rep(self, eps, rel_tol, *a, **k):
        calls["loose"] += rel_tol != self.rel_tol
        return orig_rep(self, eps, rel_tol, *a, **k)

    def prb(*a, **k):
        calls["probe"] += 1
        return orig_probe(*a, **k)
    monkeypatch.setattr(S, "upper_value", up)
    monkeypatch.setattr(A.ShuffleAccountant, "_report", rep)
    monkeypatch.setattr(S, "probe", prb)
    return calls


def test_get_epsilon_two_probes_certified(monkeypatch):
    """GaussianRandomizer(4.6), n = 1e8 (the map's 3.17x cell): with the rule no upper-only pass, no look, two probes;
    the answer certified by fresh accountants and within xtol of the switch-off answer."""
    rnd, n = GaussianRandomizer(4.6, 1), 10**8
    calls = _counted(monkeypatch)
    switch(monkeypatch, "EPS48_BODY_START", 0.0)
    off = ShuffleAccountant(rnd, n).get_epsilon(DELTA)
    off_calls = dict(calls)
    calls.update(up=0, loose=0, probe=0)
    switch(monkeypatch, "EPS48_BODY_START", ON)
    on = ShuffleAccountant(rnd, n).get_epsilon(DELTA)
    assert off_calls["up"] >= 1 and calls == {"up": 0, "loose": 0, "probe": 2}
    _checked(rnd, n, on)
    assert abs(on / off - 1.0) <= XTOL


def test_bmg_same_float(monkeypatch):
    """BMG(0.0389, 0.529), n = 1e8 (a single-big-jump share: §8.26.3's look): the gate is shut, the same float."""
    rnd, n = BlanketMixedGaussian(0.0389, 0.529, 1), 10**8
    switch(monkeypatch, "EPS48_BODY_START", 0.0)
    off = ShuffleAccountant(rnd, n).get_epsilon(DELTA)
    switch(monkeypatch, "EPS48_BODY_START", ON)
    assert ShuffleAccountant(rnd, n).get_epsilon(DELTA) == off


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(s0=st.floats(2.0, 8.0), ld=st.floats(-10.0, -5.0))
def test_get_epsilon_property(monkeypatch, s0, ld):
    """GaussianRandomizer(s0), n = 1e8, delta 1e-10..1e-5 with the rule on: the answer certified by fresh accountants
    and within xtol of the switch-off search's answer (both certified points of the same contract)."""
    rnd, n, delta = GaussianRandomizer(s0, 1), 10**8, 10.0 ** ld
    switch(monkeypatch, "EPS48_BODY_START", ON)
    on = ShuffleAccountant(rnd, n).get_epsilon(delta)
    switch(monkeypatch, "EPS48_BODY_START", 0.0)
    off = ShuffleAccountant(rnd, n).get_epsilon(delta)
    assert math.isfinite(on) and on > 0.0
    assert ShuffleAccountant(rnd, n).get_delta(on) <= delta
    assert ShuffleAccountant(rnd, n).get_delta(on * (1.0 - XTOL)) > delta
    assert abs(on / off - 1.0) <= XTOL
