"""Replace-one through bot, session 49 (docs/accountant.md §9.26): a search's leg B at rel_tol 1 first inside the golden
section's window and the cliff searches (``via_bottom_loose_b.loose_b``, ``tight_b``; ``limits.REP49_LOOSE_B``) and the
cliff bisection's SHRINK_GAIN stop at every step (``shrink_done``; ``limits.REP49_SHRINK_STOP``).

References are independent of the rules: analytic legs (a stand-in ViaBottom whose brackets hold the exact values and
widen with the rel_tol asked) against the exact chain on a fine grid; the measured cells against the rules off (float.hex)
and an independent zero-out accountant's legs at the reported split."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.via_bottom_loose_b import LOOSE_B_TOL, loose_b, shrink_done, tight_b
from _main_floats34 import SESSION48, session48_floats, switch
from test_rep48_end_search import _Exact as _Exact48  # (one stand-in ViaBottom for both files)


def test_switch_old_values_are_session48():
    assert SESSION48["REP49_LOOSE_B"] is False and SESSION48["REP49_SHRINK_STOP"] is False
    assert limits.REP49_LOOSE_B is False and limits.REP49_SHRINK_STOP is False  # (shipped off: docs §9.26.5)


class _Exact(_Exact48):
    """rep48's stand-in ViaBottom (analytic legs A(e) = a e^{-k e}, B(e) = b e^{-m e}, brackets that hold the exact
    value and widen with the rel_tol asked), each certification logged with the negligible level it was asked at."""

    def _log(self, key: tuple, negligible: float) -> None:
        self.calls.append((key, negligible))


_LEGS = dict(a=st.floats(0.01, 0.9), k=st.floats(0.5, 8.0), b=st.floats(-6.0, -0.3).map(lambda x: 10.0 ** x),
             m=st.floats(0.5, 12.0), eps=st.floats(0.2, 6.0))


@settings(max_examples=400, deadline=None)
@given(**_LEGS, f0=st.floats(0.05, 0.9), d=st.floats(1e-4, 0.1), rt=st.sampled_from([0.1, 0.3]))
def test_shrink_stop_only_where_no_split_between_gains(a, k, b, m, eps, f0, d, rt):
    """Where shrink_done stops the bisection from the split at f0 toward f0 + d, no split between (a grid of 401) has an
    exact chain below (1 - SHRINK_GAIN) times the best split's lower value; with the switch off it never stops. (Caught:
    leg A read at the best split's e1 in place of the worse end's: ~30 % of random draws fail.)"""
    vb = _Exact(a, k, b, m)
    other = min(f0 + d, 1.0)
    best = vb.split(eps, f0, rt, absolute=False)
    vb.split(eps, other, rt, absolute=False)  # (the probe's legs at other, cached)
    with pytest.MonkeyPatch.context() as mp:
        switch(mp, "REP49_SHRINK_STOP", False)
        assert not shrink_done(vb, eps, best, other, rt)
        switch(mp, "REP49_SHRINK_STOP", True)
        stop = shrink_done(vb, eps, best, other, rt)
    if stop:
        grid = [f0 + (other - f0) * i / 400 for i in range(401)]
        assert min(vb.exact(eps, f) for f in grid) >= (1.0 - vb.SHRINK_GAIN) * best.lower * (1 - 1e-12)


def test_shrink_stop_fires_on_a_flat_stretch(monkeypatch):
    """The stop is not vacuous: legs whose chain is nearly flat over a short interval stop it."""
    switch(monkeypatch, "REP49_SHRINK_STOP", True)
    vb = _Exact(0.5, 0.01, 1e-6, 1.0)
    best = vb.split(1.0, 0.5, 0.1, absolute=False)
    vb.split(1.0, 0.501, 0.1, absolute=False)
    assert shrink_done(vb, 1.0, best, 0.501, 0.1)
    assert not shrink_done(vb, 1.0, best, 0.5 - 0.001, 0.1)  # (other below best: the check made before the bisection)


@settings(max_examples=400, deadline=None)
@given(**_LEGS, f=st.floats(0.0, 1.0), bar_x=st.floats(0.3, 3.0), rt=st.sampled_from([0.1, 0.3]))
def test_loose_leg_kept_only_where_the_chain_moves_little_or_the_split_is_worse(a, k, b, m, eps, f, bar_x, rt):
    """A leg B that loose_b keeps (at LOOSE_B_TOL) either widens the chain's bracket by at most rel_tol A_lo(e1) or gives
    a chain whose exact value is at least the comparison's bar (the split is worse than the kept one at any rel_tol); the
    leg is not kept outside _refine or with the switch off; tight_b then gives the leg at the search's rel_tol. (Caught:
    the bar compared with the chain's upper value, the width test without e^{e1}.)"""
    vb = _Exact(a, k, b, m)
    e1 = f * eps
    e2 = vb._second(eps, e1)
    ra = vb.leg(0, e1, rt)
    with pytest.MonkeyPatch.context() as mp:
        switch(mp, "REP49_LOOSE_B", True)
        assert loose_b(vb, e1, e2, rt, ra, 0.0) is None  # (outside _refine)
        vb._in_refine = True
        vb._bar = bar_x * vb.exact(eps, f)
        got = loose_b(vb, e1, e2, rt, ra, 0.0)
        w = math.exp(e1)
        if got is not None:
            assert got is vb._leg_cache[(1, e2, LOOSE_B_TOL)]
            widens = w * (got.upper - got.lower) <= rt * ra.lower
            assert widens or vb.exact(eps, f) >= vb._bar
            tight = tight_b(vb, e2)
            assert tight is vb._leg_cache[(1, e2, rt)] and tight.lower <= vb.value(1, e2) <= tight.upper
        else:
            assert w * (2 * LOOSE_B_TOL / 5) * vb.value(1, e2) > rt * ra.lower * (1 - 1e-9)
            assert tight_b(vb, e2) is None
        switch(mp, "REP49_LOOSE_B", False)
        assert loose_b(vb, e1, e2, rt, ra, 0.0) is None and tight_b(vb, e2) is None


# the cells of §9.26.3 (GaussianRandomizer(σ0), n, ε) where the rules fire (measured: fewer or cheaper legs B)
CELLS = [(2.0, 1000, 2.0), (1.0, 100000, 2.0)]


def _engine(monkeypatch, s, n, eps):
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace", rel_tol=1e-2)
    calls = []
    orig = acc._bottom.bottom._report

    def counted(*args, **kw):
        calls.append((args[0], args[1], kw.get("only")))
        return orig(*args, **kw)
    monkeypatch.setattr(acc._bottom.bottom, "_report", counted)
    return acc.get_delta_bounds(eps), calls, acc


def _chain(s, n, e1, e2, rt):
    zo = ShuffleAccountant(GaussianRandomizer(s, 1), n, "zero_out", rel_tol=rt)
    a, b = zo._report(e1, rt, only=(0,)), zo._report(e2, rt, only=(1,))
    return a.lower + math.exp(e1) * b.lower, a.upper + math.exp(e1) * b.upper


@pytest.mark.parametrize("s,n,eps", CELLS)
def test_cells_same_bracket_fewer_dear_legs(monkeypatch, s, n, eps):
    """Both rules on: the bracket is the rules-off one float for float (measured on the 96 cells of family e, §9.26.3),
    with fewer legs B at the window's rel_tol 0.1 or fewer legs in all, and it overlaps the chain of an independent
    zero-out accountant's legs (rel_tol 1e-3) at its own split. (Caught: the rules not reached; a reported split whose
    leg B is the loose one over the budget.)"""
    session48_floats(monkeypatch)
    off, calls_off, _ = _engine(monkeypatch, s, n, eps)
    switch(monkeypatch, "REP49_LOOSE_B", True)
    switch(monkeypatch, "REP49_SHRINK_STOP", True)
    on, calls_on, acc = _engine(monkeypatch, s, n, eps)
    assert on[0].hex() == off[0].hex() and on[1].hex() == off[1].hex()
    b01 = [sum(1 for c in calls if c[1] == 0.1 and c[2] == acc._bottom.legs[1]) for calls in (calls_off, calls_on)]
    assert b01[1] < b01[0] or len(calls_on) < len(calls_off)
    last = acc._bottom._last
    lo, up = _chain(s, n, last.e1, last.leg_b.epsilon, 1e-3)
    assert on[0] <= up * (1 + 1e-9) and lo <= on[1] * (1 + 1e-9)
