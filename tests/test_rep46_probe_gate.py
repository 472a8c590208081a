"""Replace-one through bot, session 46 (docs/accountant.md §9.23): the golden section's probe of a new split gated by the
legs cached beside it (``via_bottom_gate.probe_first``, ``limits.REP46_PROBE_GATE``).

References are independent of the rule: exponentials (the log-linear interpolation is exact on them), the gate's
inequality computed by hand on a hand-made leg cache, the golden section on synthetic brackets (the section of
tests/test_rep44_edge_first.py), the same split certified at the section's rel_tol after the probe called it worse, and
the searches with the switch off (its old value, main's legs and floats)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import via_bottom_cliff
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.via_bottom_gate import log_between, probe_first
from _main_floats34 import SESSION45, machine_same, switch
from test_rep44_edge_first import _engine_legs  # (the engine legs of a replace accountant through bot, counted)


@settings(max_examples=200, deadline=None)
@given(c=st.floats(1e-30, 1.0), k=st.floats(0.0, 200.0), e0=st.floats(0.0, 3.0), d1=st.floats(1e-4, 1.0),
       d2=st.floats(1e-4, 1.0), x=st.floats(0.01, 0.99), w=st.floats(0.0, 0.5))
def test_log_between_is_exact_on_exponentials(c, k, e0, d1, d2, x, w):
    """A leg C e^{-k e} bracketed symmetrically about its value at two points: the estimate between them is the
    exponential's value (relative 1e-9), whatever point lies farther out. (Caught: linear interpolation in e or in e^e;
    the nearest brackets not taken; the upper value used where the lower one is positive.)"""
    g = lambda e: c * math.exp(-k * e)  # noqa: E731
    ea, eb = e0, e0 + d1
    far = eb + d2
    pts = [(ea, g(ea) * (1 - w), g(ea) * (1 + w)), (eb, g(eb) * (1 - w), g(eb) * (1 + w)),
           (far, 0.5 * g(far), 2.0 * g(far))]
    e = ea + x * (eb - ea)
    if not (ea < e < eb) or not g(eb) > 0.0:
        return
    got = log_between(pts, e)
    assert got == pytest.approx(g(e), rel=1e-9)


def test_log_between_needs_both_sides_and_positive_estimates():
    """None without a bracket below and above e, or where the nearest one's estimate is 0; the upper value serves where
    the lower one is 0 (a leg below its absolute target)."""
    assert log_between([(0.1, 1.0, 1.0)], 0.2) is None
    assert log_between([(0.3, 1.0, 1.0)], 0.2) is None
    assert log_between([(0.1, 0.0, 0.0), (0.3, 1.0, 1.0)], 0.2) is None
    # lower 0 at 0.3: its upper value 1e-4, the geometric mean with 1e-2 at the midpoint
    assert log_between([(0.1, 1e-2, 1e-2), (0.3, 0.0, 1e-4)], 0.2) == pytest.approx(1e-3, rel=1e-12)


def _fake(legs, eps_tau=math.inf):
    """A stand-in of ViaBottom for probe_first: a leg cache {(j, e, rel_tol): report} and the exact split rule."""
    cache = {(j, e, t): AccountantReport(e, lo, up) for (j, e, t, lo, up) in legs}
    return SimpleNamespace(_leg_cache=cache, bottom=SimpleNamespace(eps_tau=eps_tau), _second=lambda eps, e1: eps - e1)


@pytest.mark.parametrize("b_mid, want", [(1e-12, False), (4e-11, True)])
def test_probe_first_is_the_gate_inequality(b_mid, want, monkeypatch):
    """At eps = 1, f = 0.5 (e1 = e2 = 0.5): legs A at 0.4 and 0.6, legs B at 0.4 and 0.6 exact; the gate probes where
    e^{e1} B >= g (bar - A), here A = 1e-10 (geometric mean of 2e-10 and 5e-11), bar = 1.2e-10, g = 2: the level
    2 x 2e-11 / e^{0.5} = 2.43e-11 for B. (Caught: the factor applied to the bar instead of the room; leg B read at e1.)"""
    switch(monkeypatch, "REP46_PROBE_GATE", 2.0)
    vb = _fake([(0, 0.4, 0.1, 2e-10, 2e-10), (0, 0.6, 0.1, 5e-11, 5e-11),
                (1, 0.4, 0.1, b_mid * 3.0, b_mid * 3.0), (1, 0.6, 0.1, b_mid / 3.0, b_mid / 3.0)])
    assert probe_first(vb, 1.0, 0.5, 1.2e-10) is want
    # A alone at or above the bar: always probed (leg A decides without leg B)
    assert probe_first(vb, 1.0, 0.5, 0.9e-10) is True
    switch(monkeypatch, "REP46_PROBE_GATE", 0.0)
    assert probe_first(vb, 1.0, 0.5, 0.9e-10) is False
    # no leg B above e2: no estimate, main's section
    switch(monkeypatch, "REP46_PROBE_GATE", 2.0)
    vb = _fake([(0, 0.4, 0.1, 2e-10, 2e-10), (0, 0.6, 0.1, 5e-11, 5e-11), (1, 0.4, 0.1, 1e-9, 1e-9)])
    assert probe_first(vb, 1.0, 0.5, 1.2e-10) is False


def test_switch_old_value_is_main():
    """The switch's old value (main's section) is recorded for the pins of later sessions."""
    assert SESSION45["REP46_PROBE_GATE"] == 0.0


def _acc(s, n):
    return ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace", rel_tol=1e-2)


# cells of the family-e map where the gate fires in the golden section (docs/accountant.md §9.23.2)
GATE_CELLS = [(2.0, 1000, 1.0), (2.0, 1000, 2.0)]


@pytest.mark.parametrize("s, n, eps", GATE_CELLS)
def test_gate_fires_decides_soundly_and_keeps_the_bracket(s, n, eps, monkeypatch):
    """With the gate on, the probe runs at these cells; every split it calls worse, certified afterwards at the section's
    rel_tol on the same accountant, has an upper value at least the bar (the lemma of §9.22.2: a lower value of the chain
    >= bar); and the reported bracket is the switch-off one (machine_same). (Caught: a probe whose leg B target is too
    high, deciding a better split worse; the gate changing the section's comparisons.)"""
    got = {}
    for gate in (0.0, 2.0):
        switch(monkeypatch, "REP46_PROBE_GATE", gate)
        acc = _acc(s, n)
        fired: list[tuple[float, float, float]] = []
        orig = via_bottom_cliff.probe_first

        def spy(vb, eps_, f, bar, orig=orig, fired=fired):
            ok = orig(vb, eps_, f, bar)
            if ok:
                fired.append((eps_, f, bar))
            return ok

        monkeypatch.setattr(via_bottom_cliff, "probe_first", spy)
        got[gate] = acc.get_delta_bounds(eps)
        if gate > 0.0:
            vb = acc._bottom
            assert fired, "the gate does not fire at this cell"
            decided = 0
            for e, f, bar in fired:
                if vb._worse(e, f, 0.1, bar):
                    decided += 1
                    assert vb.split(e, f, 0.1).upper >= bar
            assert decided >= 1
        else:
            assert not fired
    assert machine_same(got[2.0][0], got[0.0][0]) and machine_same(got[2.0][1], got[0.0][1])
    assert 0.0 < got[2.0][0] <= got[2.0][1] < 1.0


def test_loose_cap_same_cap_with_fewer_legs(monkeypatch):
    """§9.23.7 at GaussianRandomizer(0.46), n = 1e3, eps = 2 (a cap cell): with the switch the bracket is (1, 1) as without
    it, from fewer engine legs; and the reported split's bound is at the cap: an independent zero-out accountant's legs at
    rel_tol 0.1 give its chain A(e1) + e^{e1} B(eps - e1) a lower value >= 1 (so min(1, bound there) = 1, §9's early stop
    (a)). (Caught: a cap reported from a split whose certified chain is below 1; the switch not reaching the search.)"""
    switch(monkeypatch, "REP47_END_SPLITS", False)  # (**) session 47, rep47: docs/accountant.md §9.24
    got, legs, split = {}, {}, {}
    for on in (False, True):
        switch(monkeypatch, "REP46_LOOSE_CAP", on)
        acc = _acc(0.46, 1000)
        calls = _engine_legs(acc)
        got[on] = acc.get_delta_bounds(2.0)
        legs[on], split[on] = calls[0], acc._bottom._last
    assert got[True] == got[False] == (1.0, 1.0)
    assert legs[True] < legs[False]
    e1 = split[True].e1
    zo = ShuffleAccountant(GaussianRandomizer(0.46, 1), 1000, "zero_out", rel_tol=0.1)
    a = zo._report(e1, 0.1, only=(0,)).lower
    b = zo._report(split[True].leg_b.epsilon, 0.1, only=(1,)).lower
    assert e1 + split[True].leg_b.epsilon <= 2.0
    assert a + math.exp(e1) * b >= 1.0


@pytest.mark.parametrize("eps", [4.0, 8.0])
def test_loose_cap_below_the_cap_keeps_the_bracket(eps, monkeypatch):
    """Below the cap (GaussianRandomizer(0.46), n = 1e3, eps = 4 and 8: brackets near 0.56 and 0.24) the rule reports
    nothing of its own: the bracket with the switch is the switch-off one (machine_same)."""
    got = {}
    for on in (False, True):
        switch(monkeypatch, "REP46_LOOSE_CAP", on)
        got[on] = _acc(0.46, 1000).get_delta_bounds(eps)
    assert machine_same(got[True], got[False])
    assert got[True][1] < 1.0


def test_loose_cap_old_value_is_main():
    assert SESSION45["REP46_LOOSE_CAP"] is False
