"""Replace-one through bot, session 48 (docs/accountant.md §9.25): the split search from an end split below 1
(``via_bottom_end_search``, ``limits.REP48_END_SEARCH``), read where §9.24's rule (``limits.REP47_END_SPLITS``) found one.

References are independent of the rule: analytic legs convex in e^e (a stand-in ViaBottom whose legs are exact values with
hand-made brackets) against a brute-force scan of the chain; the cells of §9.24.4 against §9.24's search (the rule off) and
an independent zero-out accountant's legs."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.via_bottom import ViaBottom
from sharpdp.shuffle.accountant.via_bottom_end_search import end_gain, end_search
from sharpdp.shuffle.accountant.via_bottom_ends import end_below
from _main_floats34 import SESSION47, switch


def test_switch_old_value_is_session47():
    assert SESSION47["REP48_END_SEARCH"] is False and SESSION47["REP48_END_PROBE"] is False
    # (both inert while REP47_END_SPLITS is off: docs/accountant.md §9.25.4)
    assert limits.REP48_END_SEARCH is True and limits.REP48_END_PROBE is True


class _Exact(ViaBottom):
    """A ViaBottom whose legs are A(e) = a e^{-k e} and B(e) = b e^{-m e} (convex in t = e^e, non-increasing), bracketed
    at rel_tol r by [v / (1 + r / 5), v (1 + r / 5)] (every bracket holds the exact value), each certification
    logged."""

    def __init__(self, a: float, k: float, b: float, m: float) -> None:
        super().__init__(SimpleNamespace(rel_tol=1e-2), (None, None))
        self.par, self.calls = (a, k, b, m), []

    def value(self, j: int, e: float) -> float:
        a, k, b, m = self.par
        return a * math.exp(-k * e) if j == 0 else b * math.exp(-m * e)

    def leg(self, j, e, rel_tol, negligible=0.0):
        key = (j, e, rel_tol)
        if key not in self._leg_cache:
            self._log(key, negligible)
            v = self.value(j, e)
            self._leg_cache[key] = AccountantReport(e, v / (1.0 + rel_tol / 5), v * (1.0 + rel_tol / 5))
        return self._leg_cache[key]

    def _log(self, key: tuple, negligible: float) -> None:
        self.calls.append(key)

    def exact(self, eps: float, f: float) -> float:
        e1 = f * eps
        return self.value(0, e1) + math.exp(e1) * self.value(1, self._second(eps, e1))


_LEGS = dict(a=st.floats(0.2, 0.9), k=st.floats(0.01, 2.0), b=st.floats(-4.0, -0.3).map(lambda x: 10.0 ** x),
             m=st.floats(0.01, 3.0),
             eps=st.floats(0.5, 6.0))


@settings(max_examples=300, deadline=None)
@given(**_LEGS, end=st.sampled_from([0.0, 1.0]), other=st.floats(0.001, 1.0))
def test_end_gain_is_below_the_chain_between(a, k, b, m, eps, end, other):
    """end_gain's value at most the exact chain at every split of a fine grid between the end and ``other`` (the legs
    at ``other`` certified first, as the search's probe leaves them). (Caught: e^{e1} at the wrong end of the interval,
    a leg at the wrong end, the end's leg in place of the known one.)"""
    vb = _Exact(a, k, b, m)
    o = other if end == 0.0 else 1.0 - other
    vb.split(eps, o, 0.1, absolute=False)
    e = vb.split(eps, end, 0.1, absolute=False)
    g = end_gain(vb, eps, e, o)
    lo, hi = min(end, o), max(end, o)
    grid = [lo + (hi - lo) * i / 200 for i in range(201)]
    assert g <= min(vb.exact(eps, f) for f in grid) * (1 + 1e-12)
    assert g > 0.0  # (both legs known: a value, not the trivial 0)


@settings(max_examples=300, deadline=None)
@given(**_LEGS)
def test_end_search_finds_the_least_split_near_an_end(a, k, b, m, eps):
    """Legs whose chain has its least split in [0, 0.35] (the end f = 0) or in [0.8, 1] (the end f = 1): end_search from
    that end reports a split whose bracket holds its exact chain and whose exact chain is within 3 % of the least of
    401 splits (the slides' steps and the shrink's gate; loose brackets of +-2 %), with few certifications. (Caught: the
    slide in the wrong direction, the window between the last two slides left out, a report that is not its split's
    chain.)"""
    vb = _Exact(a, k, b, m)
    grid = [i / 400 for i in range(401)]
    values = [vb.exact(eps, f) for f in grid]
    best_f = grid[values.index(min(values))]
    end = 0.0 if best_f <= 0.35 else 1.0 if best_f >= 0.8 else None
    if end is None:
        return
    e = vb.split(eps, end, 0.1, absolute=False)
    got = end_search(vb, eps, 1e-2, 0.1, e)
    v = vb.exact(eps, got.f)
    assert got.lower <= v * (1 + 1e-12) and v <= got.upper * (1 + 1e-12)
    assert v <= 1.03 * min(values)
    assert len(vb.calls) <= 60


def test_end_search_off_returns_none(monkeypatch):
    switch(monkeypatch, "REP48_END_SEARCH", False)
    vb = _Exact(0.8, 0.1, 0.1, 0.5)
    e = vb.split(1.0, 0.0, 0.1, absolute=False)
    n = len(vb.calls)
    assert end_search(vb, 1.0, 1e-2, 0.1, e) is None and len(vb.calls) == n


# the cells of docs/accountant.md §9.24.4 where an end split is below 1 at the cap: (σ0, n, eps)
CELLS = [(0.46, 1000, 2.0), (0.46, 10, 4.0), (0.46, 50, 4.0)]


def _engine_legs(monkeypatch, s, n, eps):
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace", rel_tol=1e-2)
    calls = []
    orig = acc._bottom.bottom._report

    def counted(*args, **kw):
        calls.append(args)
        return orig(*args, **kw)
    monkeypatch.setattr(acc._bottom.bottom, "_report", counted)
    return acc.get_delta_bounds(eps), len(calls), acc


def _chain(s, n, e1, e2, rt):
    zo = ShuffleAccountant(GaussianRandomizer(s, 1), n, "zero_out", rel_tol=rt)
    a, b = zo._report(e1, rt, only=(0,)), zo._report(e2, rt, only=(1,))
    return a.lower + math.exp(e1) * b.lower, a.upper + math.exp(e1) * b.upper


@pytest.mark.parametrize("s,n,eps", CELLS)
def test_cells_same_bracket_as_section_9_24_with_fewer_legs(monkeypatch, s, n, eps):
    """With REP47_END_SPLITS on, the rule's bracket is §9.24's search's (the rule off) float for float at the three cells
    (measured: §9.25.3), with at most 2/3 of its engine legs; below 1, at most the end split f = 0's independent upper
    value and overlapping the independent chain at its own split. (Caught: the search from the end not reached, a looser
    reported split, a bracket that is not its split's chain.)"""
    switch(monkeypatch, "REP47_END_SPLITS", True)
    got, legs = {}, {}
    for on in (False, True):
        switch(monkeypatch, "REP48_END_SEARCH", on)
        got[on], legs[on], acc = _engine_legs(monkeypatch, s, n, eps)
    assert got[True] == got[False]
    assert legs[True] <= 2 * legs[False] / 3
    _, end_up = _chain(s, n, 0.0, eps, 1e-2)
    assert got[True][1] < 1.0 and got[True][1] <= end_up * (1 + 1e-9)
    last = acc._bottom._last
    lo, up = _chain(s, n, last.e1, last.leg_b.epsilon, 1e-2)
    assert last.e1 + last.leg_b.epsilon <= eps
    assert got[True][0] <= up * (1 + 1e-9) and lo <= got[True][1] * (1 + 1e-9)


def test_inert_without_the_end_splits(monkeypatch):
    """REP47_END_SPLITS off (session 47's default; on since session 48's merge): the cap cell reports session 47's
    (1, 1) with the rule on and off, the same legs."""
    switch(monkeypatch, "REP47_END_SPLITS", False)
    out = {}
    for on in (False, True):
        switch(monkeypatch, "REP48_END_SEARCH", on)
        got, legs, _ = _engine_legs(monkeypatch, 0.46, 1000, 2.0)
        out[on] = (got, legs)
    assert out[True] == out[False] and out[True][0] == (1.0, 1.0)


@settings(max_examples=300, deadline=None)
@given(a=st.floats(0.2, 1.5), k=st.floats(0.01, 2.0), b=st.floats(0.01, 1.5), m=st.floats(0.01, 3.0), eps=st.floats(0.001, 6.0))
def test_end_probe_same_end_as_without_it(a, k, b, m, eps):
    """REP47_END_SPLITS on: end_below returns the same end split (f and bracket) with REP48_END_PROBE on and off, and with
    it on no end split whose certified upper value is >= 1 is certified at the check's rel_tol where its probe's lower
    value is >= 1. (Caught: an end skipped whose chain is below 1, e.g. the probe's bar or the comparison reversed.)"""
    got = {}
    with pytest.MonkeyPatch.context() as mp:
        switch(mp, "REP47_END_SPLITS", True)
        for on in (False, True):
            switch(mp, "REP48_END_PROBE", on)
            vb = _Exact(a, k, b, m)
            s = end_below(vb, eps, 0.1)
            got[on] = None if s is None else (s.f, s.lower, s.upper)
            if on:
                at_rt = {f for (j, e, r) in vb.calls if r == 0.1 and j == 1 for f in (0.0, 1.0)
                         if e == vb._second(eps, f * eps)}
    assert got[True] == got[False]
    if got[True] is None:
        for f in (0.0, 1.0):
            e1 = f * eps
            lo = (vb.value(0, e1) / 1.02 + math.exp(e1) * vb.value(1, vb._second(eps, e1)) / 7.0) * (1 - 1e-12)
            if lo >= 1.0 * (1 + 1e-9):
                assert f not in at_rt
