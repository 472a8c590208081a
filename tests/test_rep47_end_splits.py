"""Replace-one through bot, session 47 (docs/accountant.md §9.24): the early stops at the cap that read one split report
(1, 1) only where the end splits f = 0 and f = 1 are at or above 1 (``via_bottom_ends``, ``limits.REP47_END_SPLITS``).

References are independent of the rule: a zero-out accountant of the same randomizer and n, built apart, whose legs A
(x vs bot, law 0) and B (bot vs x, law 1) give the chain A(e1) + e^{e1} B(eps - e1) at the end splits and at the reported
split; stand-ins of ViaBottom with hand-made splits; and the searches with the switch off (main's floats)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.via_bottom_ends import end_below, end_found
from _main_floats34 import SESSION46, machine_same, switch


def _acc(s, n):
    return ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace", rel_tol=1e-2)


def _chain(s, n, e1, e2, rt):
    """(lower, upper) of A(e1) + e^{e1} B(e2) from an independent zero-out accountant's legs at rel_tol rt (rounding
    ignored: the comparisons below leave room of 1e-9 relative)."""
    zo = ShuffleAccountant(GaussianRandomizer(s, 1), n, "zero_out", rel_tol=rt)
    a, b = zo._report(e1, rt, only=(0,)), zo._report(e2, rt, only=(1,))
    return a.lower + math.exp(e1) * b.lower, a.upper + math.exp(e1) * b.upper


def test_switch_old_value_is_main():
    assert SESSION46["REP47_END_SPLITS"] is False
    assert limits.REP47_END_SPLITS is True  # (on since session 48's merge: docs/accountant.md §9.24.5)


def _fake(values):
    """A stand-in of ViaBottom: split(eps, f, rel_tol) with the given upper value at each end f (and a log of calls)."""
    calls = []

    def split(eps, f, rel_tol):
        calls.append(f)
        return SimpleNamespace(f=f, upper=values[f], lower=0.9 * values[f])
    return SimpleNamespace(split=split), calls


@settings(max_examples=200, deadline=None)
@given(u0=st.floats(0.0, 3.0), u1=st.floats(0.0, 3.0), on=st.booleans())
def test_end_below_is_the_first_end_under_1(u0, u1, on):
    """Off: None and no split certified. On: f = 0 where its upper value is below 1 (f = 1 not certified), else f = 1 where
    below 1, else None; end_found appends exactly that split to the candidates. (Caught: the switch not read; an end
    at or above 1 returned; the f = 1 end skipped; a split appended where none is below 1.)"""
    vb, calls = _fake({0.0: u0, 1.0: u1})
    with pytest.MonkeyPatch.context() as mp:
        switch(mp, "REP47_END_SPLITS", on)
        got = end_below(vb, 1.0, 0.1)
        cands = ["x"]
        found = end_found(vb, 1.0, 0.1, cands)
    if not on:
        assert got is None and calls == [] and found is False and cands == ["x"]
        return
    want = 0.0 if u0 < 1.0 else 1.0 if u1 < 1.0 else None
    assert (got.f if got is not None else None) == want
    assert calls == ([0.0] if u0 < 1.0 else [0.0, 1.0]) * 2
    assert found is (want is not None)
    assert cands[1:] == ([] if want is None else [cands[-1]]) and (want is None or cands[-1].f == want)


# the cap cells where an end split is below 1 (docs/accountant.md §9.23.8, §9.24.4): (σ0, n, eps, the end split's f)
CAP_CELLS = [(0.46, 1000, 2.0, 0.0), (0.46, 10, 4.0, 0.0), (0.46, 50, 4.0, 0.0)]


def test_cap_cells_report_below_1_with_the_switch(monkeypatch):
    """At each cell main reports (1, 1); with the switch the bracket is below 1, at most the end split's upper value from
    the independent legs (rel_tol 1e-2; the search's minimum can only be below it up to the legs' rel_tols), and it
    overlaps the independent chain's bracket at the reported split. (Caught: the stop at the cap firing with an end split
    below 1; the end split not reaching the candidates; a reported bracket that is not its split's chain.)"""
    for s, n, eps, f_end in CAP_CELLS:
        got = {}
        for on in (False, True):
            switch(monkeypatch, "REP47_END_SPLITS", on)
            acc = _acc(s, n)
            got[on] = acc.get_delta_bounds(eps)
        assert got[False] == (1.0, 1.0)
        end_lo, end_up = _chain(s, n, f_end * eps, eps - f_end * eps, 1e-2)
        assert end_up < 1.0
        assert 0.0 < got[True][0] <= got[True][1] <= end_up * (1 + 1e-9)
        last = acc._bottom._last
        lo, up = _chain(s, n, last.e1, last.leg_b.epsilon, 1e-2)
        assert last.e1 + last.leg_b.epsilon <= eps
        assert got[True][0] <= up * (1 + 1e-9) and lo <= got[True][1] * (1 + 1e-9)


@settings(max_examples=8, deadline=None)
@given(eps=st.floats(1.0, 6.0))
def test_no_end_split_certifies_far_below_the_report(eps):
    """GaussianRandomizer(0.46), n = 10 (a cap regime on main at eps <= 4): with the switch, neither end split's chain
    from the independent legs is below the reported upper value by more than the legs' rel_tols allow (factor 1.15: a
    loose candidate at 0.1 recertified at 1e-2), and the report is a split's chain (brackets overlap). (Caught: a cap
    report (1, 1) where an end certifies ~0.85, §9.23.8.)"""
    with pytest.MonkeyPatch.context() as mp:
        switch(mp, "REP47_END_SPLITS", True)
        acc = _acc(0.46, 10)
        lo_r, up_r = acc.get_delta_bounds(eps)
    for f in (0.0, 1.0):
        _, up = _chain(0.46, 10, f * eps, eps - f * eps, 1e-2)
        assert up_r <= 1.15 * up
        assert up_r <= 1.0
    last = acc._bottom._last
    if up_r < 1.0:
        lo, up = _chain(0.46, 10, last.e1, last.leg_b.epsilon, 1e-2)
        assert lo_r <= up * (1 + 1e-9) and lo <= up_r * (1 + 1e-9)


def test_below_the_cap_the_bracket_is_main(monkeypatch):
    """GaussianRandomizer(0.46), n = 1e3, eps = 4 (a bracket near 0.556: no stop at the cap fires): the switch changes
    nothing (machine_same with the switch off)."""
    got = {}
    for on in (False, True):
        switch(monkeypatch, "REP47_END_SPLITS", on)
        got[on] = _acc(0.46, 1000).get_delta_bounds(4.0)
    assert machine_same(got[True], got[False])
    assert got[True][1] < 1.0
