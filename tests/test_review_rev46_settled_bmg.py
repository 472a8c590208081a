"""Review rev46 (session 46): attack on docs/composition.md §2.28.4 (``limits.PAIR45_SETTLED_BMG``, off in main: §2.26's
settled cover, every sample upper first covered by U (1 + m), no bracket, for zero-out BlanketMixedGaussian rounds,
GaussianRandomizer among them). Claim: with the switch on, the exported pair and ``to_pld`` stay at or above the TRUE
blanket divergence at every eps.

rev45 and pair45 checked it against the accountant's own certified lower values at n = 1e2-1e7. Here the references
are independent of the accountant: at n = 2 the mpmath quadrature of the mechanism's output densities
(tests/_bmg_reference.py, 30 digits), at n = 3 a nested quadrature of the same closed-form stop-loss
(tests/_rev46_bmg_nested.py, scipy, checked against the mpmath one at n = 2 and its own split); at moderate n (30,
1000) a fresh accountant's certified lower value at rel_tol 1e-4 (switch off). Rounds: BMG with gamma from 0.02 to 0.9
and sigma0 from 0.2 to 3, and gamma = 0 (GaussianRandomizer, whose blanket is not a Gaussian: its L has an atom).
Points: the pair's samples, the midpoints between them (the chord in e^eps is read there), eps just below samples,
and eps past the last sample. Measured before these tests (15:50-16:30 UTC, switch on): at n = 2, 8 rounds x 14 eps,
the pair's worst ratio to the quadrature 1.0000001 (below the cover's floor 1e-13, no margin) to 1.00102; at n = 3,
(0.9, 3) and (0.02, 0.2) x 8 eps, pair and to_pld 1.00100-1.00103 x the nested quadrature; nothing under. (The tests
keep a few points each: the quadratures cost ~1-10 s a point.)
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches, dominating_pair
from sharpdp.shuffle import pair_accuracy, pair_settled as ps
from sharpdp.shuffle.accountant import limits

from _bmg_reference import reference
from _main_floats34 import switch
from _rev44_spy import spy
from _rev46_bmg_nested import d_n

pytestmark = pytest.mark.skipif(not hasattr(limits, "PAIR45_SETTLED_BMG"), reason="rule of a branch not merged")


def _mk(g: float, s: float):
    return GaussianRandomizer(s, 1) if g == 0 else BlanketMixedGaussian(g, s, 1)


def _pair_on(monkeypatch, g: float, s: float, n: int):
    """The pair with the rule on (and the rule ran: samples covered by the margin), caches cleared after it."""
    switch(monkeypatch, "PAIR43_SETTLED_COVER", True)
    calls = spy(monkeypatch, "settled_values", ps, pair_accuracy)
    with monkeypatch.context() as mp_:
        switch(mp_, "PAIR45_SETTLED_BMG", True)
        acc = ShuffleAccountant(_mk(g, s), n)
        assert ps.settled_margin(acc) is not None
        pair = dominating_pair(acc, progress=False)
        clear_caches()
    assert sum(int(np.sum(out[1])) for _, out in calls) > 0
    return pair


def _points(pair, k: int, floor: float = 1e-10) -> np.ndarray:
    se = np.asarray(pair.sample_epsilons)
    sd = np.asarray(pair.sample_deltas)
    keep = se[sd > floor]
    pts = np.unique(np.concatenate([keep, 0.5 * (keep[1:] + keep[:-1]), np.nextafter(keep[1:], 0.0)]))
    return pts[np.unique(np.linspace(0, pts.size - 1, k).astype(int))]


N2 = [(0.02, 0.2), (0.0, 0.4), (0.7, 0.3)]


@pytest.mark.parametrize("g, s", N2)
def test_n2_pair_at_or_above_quadrature(monkeypatch, g, s):
    pair = _pair_on(monkeypatch, g, s, 2)
    pts = _points(pair, 6)
    with mp.workdps(30):
        ref = np.array([float(reference(g, s, float(e), "zero_out", 2)) for e in pts])
    d = np.asarray(pair.get_delta(pts))
    assert np.all(d >= ref * (1 - 1e-12)), (pts[np.argmin(d / ref)], float(np.min(d / ref)))


N3 = [(0.9, 3.0), (0.0, 1.0)]  # (the nested quadrature converges there: its split moves it < 1e-15)


@pytest.mark.parametrize("g, s", N3)
def test_n3_pair_and_pld_at_or_above_nested_quadrature(monkeypatch, g, s):
    from sharpdp.interop.dp_accounting import pld_from_pair

    pair = _pair_on(monkeypatch, g, s, 3)
    pld = pld_from_pair(pair)
    pts = _points(pair, 3, 1e-8)
    ref = np.array([d_n(g, s, float(e), 3) for e in pts])
    d = np.asarray(pair.get_delta(pts))
    dp = np.array([pld.get_delta_for_epsilon(float(e)) for e in pts])
    assert np.all(d >= ref * (1 - 1e-9)), (pts[np.argmin(d / ref)], float(np.min(d / ref)))
    assert np.all(dp >= ref * (1 - 1e-9)), (pts[np.argmin(dp / ref)], float(np.min(dp / ref)))


def test_n2_beyond_the_last_sample(monkeypatch):
    """Past the pair's last sample (where the rule's floor 1e-13 stops the margin and the lattice ends) the pair is
    still at or above the true divergence (a Gaussian tail: delta > 0 at every eps)."""
    g, s = 0.9, 3.0
    pair = _pair_on(monkeypatch, g, s, 2)
    se = np.asarray(pair.sample_epsilons)
    sd = np.asarray(pair.sample_deltas)
    last = float(se[np.flatnonzero(sd > 0)[-1]])
    pts = last * np.array([0.995, 1.0, 1.1])
    with mp.workdps(40):
        ref = np.array([float(reference(g, s, float(e), "zero_out", 2)) for e in pts])
    d = np.asarray(pair.get_delta(pts))
    assert np.all(d >= ref * (1 - 1e-12)), (pts, d, ref)


@pytest.mark.parametrize("g, s, n", [(0.05, 2.0, 1000)])
def test_moderate_n_pair_at_or_above_tight_lower_values(monkeypatch, g, s, n):
    """n = 1000: the pair at or above a fresh rel_tol = 1e-4 certified lower value (switch off)."""
    pair = _pair_on(monkeypatch, g, s, n)
    pts = _points(pair, 10, 1e-12)
    with monkeypatch.context() as mp_:
        switch(mp_, "PAIR45_SETTLED_BMG", False)
        lo = np.asarray(ShuffleAccountant(_mk(g, s), n, rel_tol=1e-4).get_delta_bounds(pts)[0])
        clear_caches()
    d = np.asarray(pair.get_delta(pts))
    assert np.all(d >= lo * (1 - 1e-12)), (pts[np.argmin(d / lo)], float(np.min(d / lo)))


@pytest.fixture(scope="module")
def pair_n2():
    old = (limits.PAIR45_SETTLED_BMG, limits.PAIR43_SETTLED_COVER)
    limits.PAIR45_SETTLED_BMG, limits.PAIR43_SETTLED_COVER = True, True
    clear_caches()
    try:
        pair = dominating_pair(ShuffleAccountant(BlanketMixedGaussian(0.02, 0.2, 1), 2), progress=False)
    finally:
        limits.PAIR45_SETTLED_BMG, limits.PAIR43_SETTLED_COVER = old
        clear_caches()
    return pair


@settings(max_examples=6, deadline=None, derandomize=True)
@given(st.floats(0.0, 1.0))
def test_n2_pair_above_quadrature_anywhere(pair_n2, frac):
    """At random eps of the pair's range (delta >= 1e-11 there): the pair at or above the mpmath quadrature."""
    se = np.asarray(pair_n2.sample_epsilons)
    sd = np.asarray(pair_n2.sample_deltas)
    e = float(frac * se[np.flatnonzero(sd > 1e-11)[-1]])
    with mp.workdps(30):
        ref = float(reference(0.02, 0.2, e, "zero_out", 2))
    assert pair_n2.get_delta(e) >= ref * (1 - 1e-12), (e, pair_n2.get_delta(e), ref)
