"""Replace-one through bot: legs between two certified neighbours from convexity in e^eps (docs/accountant.md §9.19,
``limits.VIA_BOTTOM_CHORD``, ``limits.VIA_BOTTOM_CHORD_SEARCH``, ``limits.VIA_BOTTOM_CHORD_B``).

References independent of the rule: (1) an independent zero-out accountant's tight legs (rel_tol 1e-3) at the chord's
points (the chord/secant bracket must overlap theirs), within and across the sampler charge's kink at eps_tau; (2) a
synthetic convex function with exact values (the bracket must contain it; a wrong weight or secant direction fails);
(3) the reported split's chain against the tight legs' chain there; (4) the switches off: main's floats at a cheap
cell. Counts of certifications, no timings.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import pytest
from _main_floats34 import switch

from sharpdp.shuffle.accountant.via_bottom import ViaBottom
from sharpdp.shuffle.accountant.via_bottom_chord import anchors, chord_bracket, chord_leg
from tests.test_rep36_settle import _gauss  # (one definition)
from tests.test_rep39_cover_target import _Count  # (the zero-out accountant's leg certifications, counted)

ALL = ("VIA_BOTTOM_CHORD", "VIA_BOTTOM_CHORD_SEARCH", "VIA_BOTTOM_CHORD_B")


def _off(monkeypatch):
    for name in ALL:
        switch(monkeypatch, name, False)


def four_anchors(vb, j, e0, h):
    """Leg j certified at rel_tol 0.1 at e0 + k h (k = 0..3); the four anchors around e0 + 1.5 h."""
    for k in range(4):
        vb.leg(j, e0 + k * h, 0.1)
    pts = anchors(vb, e0 + 1.5 * h, j)
    assert len(pts) == 4
    return pts


def _tight(s, n):
    zo = _gauss(s, n, 1e-3, "zero_out")
    return lambda j, e: zo._report(e, 1e-3, only=(j,))


def test_bracket_contains_a_convex_function():
    """Exact anchors of f(t) = 1 / t^3 + 0.2 / t (convex, decreasing in t = e^e): the bracket contains f, the upper
    value is below the left anchor and the lower value above the right one (the secants improve on monotonicity)."""
    def f(e):
        t = math.exp(e)
        return 1.0 / t**3 + 0.2 / t
    es = [1.0, 1.05, 1.1, 1.15, 1.2]
    pts = [(e, f(e), f(e)) for e in es]
    for e in (1.06, 1.075, 1.09, 1.1 + 1e-6, 1.149):
        lo, up = chord_bracket(pts, e)
        assert lo <= f(e) <= up
        k = max(i for i, x in enumerate(es) if x < e)
        assert up < f(es[k]) and lo > f(es[k + 1])
        assert (up - lo) / f(e) < 1e-2  # (tight: exact anchors 0.05 apart, the curvature alone)
    assert chord_bracket(pts, 0.9) is None and chord_bracket(pts, 1.3) is None
    # anchors with brackets: still containing f where every anchor's bracket contains it
    wide = [(e, f(e) * 0.99, f(e) * 1.01) for e in es]
    for e in (1.02, 1.125, 1.19):
        lo, up = chord_bracket(wide, e)
        assert lo <= f(e) <= up


# (sigma0, n, first leg e, spacing): legs A and B at the cliff cells and interior optima of the map
CELLS = [(1.0, 100000, 3.8, 0.02), (1.0, 100000, 0.4, 0.01), (2.0, 10, 1.7, 0.02), (1.0, 1000, 7.2, 0.03),
         (0.46, 1000, 2.0, 0.02)]


@pytest.mark.parametrize("s, n, e0, h", CELLS)
@pytest.mark.parametrize("j", (0, 1))
def test_chord_brackets_hold_against_tight_legs(s, n, e0, h, j):
    """Legs at rel_tol 0.1 at e0 + k h (k = 0..3), the bracket of §9.19 at points between them against an independent
    zero-out accountant's legs at rel_tol 1e-3 (the brackets overlap; the upper value at most 2 % above the tight one's
    where the leg's lower values are positive)."""
    vb = _gauss(s, n)._bottom
    tight = _tight(s, n)
    pts = four_anchors(vb, j, e0, h)
    for x in (0.3, 1.5, 2.7, 1.01, 1.99):
        e = e0 + x * h
        b = chord_bracket(pts, e)
        assert b is not None
        r = tight(j, e)
        assert b[0] <= r.upper and b[1] >= r.lower, (e, b, r.lower, r.upper)
        if min(p[1] for p in pts) > 0.0:
            assert b[1] <= 1.02 * r.upper


def test_chord_across_the_kink_at_eps_tau(monkeypatch):
    """Near eps_tau (GaussianRandomizer(0.46), n = 2: the sampler charge's kink, the leg above it its value at eps_tau):
    the chord of upper values through anchors on both sides is above the tight leg's value at points up to eps_tau;
    the rule itself uses no anchor above eps_tau and no point above it (chord_leg: None)."""
    acc = _gauss(0.46, 2)
    vb = acc._bottom
    et = vb.bottom.eps_tau
    es = (et - 0.6, et - 0.3, et + 0.3)
    raw = [(e, vb.leg(0, e, 0.1)) for e in es]
    pts = [(e, r.lower, r.upper) for e, r in raw]
    tight = _tight(0.46, 2)
    for e in (et - 0.2, et - 0.05, et):
        b = chord_bracket(pts, e)
        r = tight(0, e)
        assert b[1] >= r.lower and b[0] <= r.upper
    assert all(p[0] <= et for p in anchors(vb, et, 0))
    switch(monkeypatch, "VIA_BOTTOM_CHORD_N", 1)  # (the rule at n = 2 for this check)
    assert chord_leg(vb, et - 0.45, 10.0) is not None  # (between the two anchors below eps_tau)
    assert chord_leg(vb, et + 0.1, 10.0) is None and chord_leg(vb, et - 0.1, 10.0) is None  # (no anchor above)


@pytest.mark.parametrize("s, n, eps", [(2.0, 1000, 1.0), (1.0, 100000, 4.0), (0.46, 1000, 8.0), (0.46, 100000, 2.0)])
def test_report_above_the_tight_chain_and_fewer_certifications(s, n, eps, monkeypatch):
    """At cliff cells of the map: the report's upper value is at or above the chain of an independent zero-out
    accountant's tight legs at the reported split (a lower value of the quantity it bounds there), its bracket within
    rel_tol, and within rel_tol of the switches-off report; fewer engine legs than with the switches off."""
    out = {}
    for on in (True, False):
        if not on:
            _off(monkeypatch)
        acc = _gauss(s, n)
        acc._bottom.bottom = zo = _Count(acc._bottom.bottom)
        out[on] = acc.report(eps), zo.calls
        monkeypatch.undo()
    r, calls = out[True]
    e1 = float(r.terms["epsilon_split"])
    tight = _tight(s, n)
    a, b = tight(0, e1), tight(1, ViaBottom._second(eps, e1))
    assert r.upper >= (a.lower + math.exp(e1) * b.lower) * (1 - 1e-12)
    assert r.upper - r.lower <= 1e-2 * r.lower
    assert abs(r.upper / out[False][0].upper - 1.0) <= 1e-2
    assert calls < out[False][1]


def test_switches_off_give_mains_floats(monkeypatch):
    """GaussianRandomizer(2), n = 1000, eps = 2, replace: main 4eee1c4c's bracket bit for bit with the switches off (the
    rules move it)."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    lo, up = _gauss(2.0, 1000).get_delta_bounds(2.0)
    assert (float(lo), float(up)) != MAIN
    _off(monkeypatch)
    lo, up = _gauss(2.0, 1000).get_delta_bounds(2.0)
    assert (float(lo), float(up)) == MAIN


MAIN = (8.322393382835869e-17, 8.396281912510412e-17)  # (bench/bench_rep40_legs.py on main 4eee1c4c)
