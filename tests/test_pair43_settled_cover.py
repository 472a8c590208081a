"""Session 43 (pair43): a pure-LDP round's pair samples all taken upper first, covered by U (1 + m), no bracket
(``limits.PAIR43_SETTLED_COVER``, docs/composition.md §2.26). Every covered value at or above a certified upper value
(Claim A of docs/composition.md §2), checked against the exact blanket divergence of k-RR (binomial sums) and against
fresh certified lower values; the export within 1 % above a fresh ``get_delta``; fewer brackets than the switch off."""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sharpdp.shuffle as sh
import sharpdp.shuffle.profile as P
from _krr_export_check import check_krr_export
from _main_floats34 import machine_same, switch
from sharpdp.shuffle import pair_accuracy, pair_settled
from sharpdp.shuffle.accountant import limits

dp_interop = pytest.importorskip("sharpdp.interop.dp_accounting")

U = 2.0 ** -53
#: 10-RR (eps0 = 4), n = 3000, replace: the default pair's number of samples and sum of i x delta_i (main 5ea6bf05)
MAIN_3000 = [269, "0x1.4fe64c0440b3ep+3"]


@settings(max_examples=200, deadline=None)
@given(data=st.data(), size=st.integers(1, 30), margin=st.floats(0.0, 0.05), floor=st.floats(1e-16, 1e-2))
def test_settled_values_property(data, size, margin, floor):
    up = np.array(data.draw(st.lists(st.floats(1e-20, 1.0), min_size=size, max_size=size)))
    fac = np.array(data.draw(st.lists(st.floats(1.0, 1.05), min_size=size, max_size=size)))
    known = np.array(data.draw(st.lists(st.booleans(), min_size=size, max_size=size)))
    lo = np.where(known, up / 1.01, math.nan)
    covered = up * fac
    out, taken = pair_settled.settled_values(lo, up, covered, margin, floor)
    assert np.array_equal(taken, ~known & (up >= floor))
    assert np.all(out >= up)  # never below the certified upper value (the pair dominates)
    assert np.array_equal(out[~taken], covered[~taken])  # the others as cover gives them
    assert np.all(out[taken] <= up[taken] * (1.0 + margin) * (1.0 + 3.0 * U))  # the margin and one rounding
    want = np.minimum(up * (1.0 + margin) * (1.0 + 2.0 * U), 1.0)
    assert np.array_equal(out[taken], np.maximum(up, want)[taken])


def test_capped_cover_takes_no_bracket_for_settled_samples():
    up = np.array([0.5, 0.4, 0.3, 0.2, 0.1])
    lo = np.array([0.5 / 1.02, math.nan, math.nan, 0.2 / 1.02, math.nan])
    asked = []

    def bracket(idx):
        asked.append(list(idx))
        return lo[idx], up[idx]

    main = pair_accuracy.capped_cover(lo, up, 7.5e-3, lambda idx: (up[idx] / 1.001, up[idx]))
    got = pair_accuracy.capped_cover(lo, up, 7.5e-3, bracket, settled=2.5e-3)
    assert asked == []  # no sample re-bracketed
    assert np.all(got >= up) and np.all(main >= up)
    nan = np.isnan(lo)
    assert np.allclose(got[nan], up[nan] * 1.0025, rtol=1e-15)  # U (1 + m), not the neighbours' 2 % gap
    assert np.array_equal(got[~nan], main[~nan])  # the bracketed samples capped as on main


def test_gate(monkeypatch):
    krr = sh.ShuffleAccountant(sh.RandomizedResponse(10, 4.0), 300, "replace")
    bmg = sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.95, 4.6, 1), 300, "zero_out")
    assert limits.PAIR43_SETTLED_COVER is True  # on since session 44 (§2.26.6)
    switch(monkeypatch, "PAIR43_SETTLED_COVER", False)
    assert pair_settled.settled_margin(krr) is None
    assert pair_settled.ahead_tau(krr, 7.5e-3) == 7.5e-3
    switch(monkeypatch, "PAIR43_SETTLED_COVER", True)
    assert pair_settled.settled_margin(krr) == limits.PAIR43_SETTLED_MARGIN
    assert pair_settled.ahead_tau(krr, 7.5e-3) is None
    assert pair_settled.settled_margin(bmg) is None  # not a pure-LDP randomizer: main's re-bracketing


def _pair_counting(monkeypatch, acc):
    calls = {True: 0, False: 0}
    orig = P._grid_eval

    def counted(accountant, ks, dx, need_lower=True, negligible=0.0):
        calls[bool(need_lower)] += len(ks)
        return orig(accountant, ks, dx, need_lower, negligible)

    monkeypatch.setattr(P, "_grid_eval", counted)
    sh.clear_caches()
    pair = sh.dominating_pair(acc, dp_interop.export_interval(acc), progress=False)
    return pair, calls


def test_krr_pair_fewer_brackets_values_above_fresh_lower_values(monkeypatch):
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    R = sh.RandomizedResponse(10, 4.0)
    n = 3000
    off_pair, off = _pair_counting(monkeypatch, sh.ShuffleAccountant(R, n, "replace"))
    # the switch at its session-42 value: main's pair (recorded from main's floats, this machine)
    sd = off_pair.sample_deltas
    assert machine_same([sd.size, float(np.sum(sd * np.arange(1, sd.size + 1)))], MAIN_3000)
    switch(monkeypatch, "PAIR43_SETTLED_COVER", True)
    pair, on = _pair_counting(monkeypatch, sh.ShuffleAccountant(R, n, "replace"))
    assert on[True] < 0.5 * off[True], (on, off)  # the brackets of the last stage and the cap are gone
    ref = sh.ShuffleAccountant(R, n, "replace", rel_tol=1e-3)
    se, sd = pair.sample_epsilons, pair.sample_deltas
    pick = np.unique(np.linspace(0, se.size - 1, 12).astype(int))
    for i in pick:
        lo, up = ref.get_delta_bounds(float(se[i]))
        assert sd[i] >= lo  # a sample below a certified lower value would be an under-report
        if up >= 1e-12:
            assert sd[i] <= 1.0125 * up, (se[i], sd[i] / up)  # U (1 + m) of an upper value near the tight one


def test_krr_export_dominates_exact_blanket_divergence(monkeypatch):
    switch(monkeypatch, "PAIR43_SETTLED_COVER", True)
    # the exported PLD at or above the exact blanket divergence (binomial sums) and within 1 % above a fresh get_delta
    assert check_krr_export(dp_interop, 10, 4.0, 3000, 700, 11) >= 5
