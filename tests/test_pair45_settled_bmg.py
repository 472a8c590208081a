"""Session 45 (pair45): ``limits.PAIR45_SETTLED_BMG`` (docs/composition.md §2.28.4), §2.26's settled cover for a
zero-out round of BlanketMixedGaussian: every sample upper first, covered by U (1 + m), no bracket.

References independent of the rule: the accountant's certified lower values at a tighter rel_tol (1e-3; the pair must
lie at or above them: every pair value is at or above a certified upper value, hence above the blanket divergence they
bound from below) and a fresh ``get_delta`` with the switch off (the export's accuracy goal: within 1 % above it where
it is >= 1e-12, at the pair's samples and between them).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches, dominating_pair
from sharpdp.shuffle import pair_accuracy, pair_settled as ps
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch
from _rev44_spy import spy

ROUNDS = [(0.224, 1.24, 100), (0.5, 1.0, 200)]


def _pair(g, s, n, monkeypatch, on: bool):
    with monkeypatch.context() as mp:
        switch(mp, "PAIR45_SETTLED_BMG", on)
        return dominating_pair(ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n), progress=False)


def test_gate():
    """The rule applies to zero-out BMG rounds only, and only with the switch (and §2.26's) on."""
    zo = ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), 100)
    rep = ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), 100, "replace")
    old = (limits.PAIR45_SETTLED_BMG, limits.PAIR43_SETTLED_COVER)
    try:
        limits.PAIR45_SETTLED_BMG = False
        assert ps.settled_margin(zo) is None and ps.settled_margin(rep) is None
        limits.PAIR45_SETTLED_BMG = True
        limits.PAIR43_SETTLED_COVER = True
        assert ps.settled_margin(zo) == limits.PAIR43_SETTLED_MARGIN and ps.settled_margin(rep) is None
        limits.PAIR43_SETTLED_COVER = False
        assert ps.settled_margin(zo) is None
    finally:
        limits.PAIR45_SETTLED_BMG, limits.PAIR43_SETTLED_COVER = old


@pytest.mark.parametrize("g, s, n", ROUNDS)
def test_pair_dominates_and_meets_the_goal(monkeypatch, g, s, n):
    """With the switch on: the rule ran (samples covered by the margin); every sample and every midpoint between
    samples is at or above a certified rel_tol = 1e-3 lower value, and within 1 % above a fresh get_delta (switch off)
    where that is >= 1e-12."""
    switch(monkeypatch, "PAIR43_SETTLED_COVER", True)
    calls = spy(monkeypatch, "settled_values", ps, pair_accuracy)
    pair = _pair(g, s, n, monkeypatch, True)
    assert sum(int(np.sum(out[1])) for _, out in calls) > 0
    se = np.asarray(pair.sample_epsilons)
    pts = np.unique(np.concatenate([se, 0.5 * (se[1:] + se[:-1])]))
    pts = pts[np.unique(np.linspace(0, pts.size - 1, 36).astype(int))]
    with monkeypatch.context() as mp:
        switch(mp, "PAIR45_SETTLED_BMG", False)
        fresh = ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n)
        tight = ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n, rel_tol=1e-3)
        ups = np.asarray([fresh.get_delta(float(e)) for e in pts])
        los = np.asarray(tight.get_delta_bounds(pts)[0])
    d = np.asarray(pair.get_delta(pts))
    assert np.all(d >= los * (1 - 1e-12)), float(np.min(d / np.maximum(los, 1e-300)))
    ok = ups >= 1e-12
    assert ok.sum() >= 10
    assert np.all(d[ok] <= 1.01 * ups[ok]), float(np.max(d[ok] / ups[ok]))
    clear_caches()


@pytest.fixture(scope="module")
def small_pair():
    old = limits.PAIR45_SETTLED_BMG
    limits.PAIR45_SETTLED_BMG = True
    try:
        pair = dominating_pair(ShuffleAccountant(BlanketMixedGaussian(0.224, 1.24, 1), 100), progress=False)
    finally:
        limits.PAIR45_SETTLED_BMG = old
    yield pair
    clear_caches()


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.floats(0.0, 1.0))
def test_pair_above_certified_lower_values_anywhere(small_pair, frac):
    """At random eps of the pair's range (the switch on): the pair at or above a certified lower value."""
    se = np.asarray(small_pair.sample_epsilons)
    e = float(frac * se[-1])
    lo, _ = ShuffleAccountant(BlanketMixedGaussian(0.224, 1.24, 1), 100, rel_tol=1e-3).get_delta_bounds(e)
    assert small_pair.get_delta(e) >= lo * (1 - 1e-12)
