"""Session 37 (exp37): a dominating pair's sample taken upper first gets its bracket where its covered value exceeds
(1 + tau) times the curve through its bracketed neighbours (docs/composition.md §4.10).

References: the Gaussian mechanism's closed-form privacy profile (Balle & Wang, "Improving the Gaussian Mechanism for
Differential Privacy", Theorem 8) for the check on synthetic samples whose looseness is known; for the shuffled rounds
a second accountant's certified brackets at eps where the pair took no sample, the PLD's delta evaluated by
dp_accounting's own code (as tests/test_exp35_export_matrix.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from _main_floats34 import switch
from scipy.stats import norm

import sharpdp.shuffle as sh
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.pair import chord_estimate, cover
from sharpdp.shuffle.pair_accuracy import cap_tau, capped_cover, upper_first_loose

HEAVY = (0.0462579752243591, 0.7578495751181393)  # calibrate_bmg(1e4, 1, 1e-6, 1)
TAU = cap_tau(2e-3)  # the default pair's cap margin, 7.5e-3


def _gauss_delta(mu: float, eps):
    """The Gaussian mechanism's delta(eps) at sensitivity / sigma = mu (Balle & Wang, Theorem 8)."""
    eps = np.asarray(eps, dtype=float)
    return norm.cdf(mu / 2 - eps / mu) - np.exp(eps) * norm.cdf(-mu / 2 - eps / mu)


def _synthetic(loose_at=(9, 22, 23, 30), excess=0.012, base=0.002, gap=5e-4):
    """Samples of the Gaussian mechanism's profile (mu = 0.75) on eps 1.5 .. 5.9 (delta 1.3e-2 .. 2.2e-14, 1.07e-12 at
    index 38, 1.6e-13 at 40): every fourth bracketed (lower / upper at -/+ ``gap`` of the truth), the others taken upper
    first, ``base`` above the truth except those in ``loose_at``, ``excess`` above it."""
    at = np.linspace(1.5, 5.9, 45)
    truth = _gauss_delta(0.75, at)
    lo = np.full(at.size, np.nan)
    up = truth * (1 + base)
    br = np.arange(0, at.size, 4)
    lo[br], up[br] = truth[br] * (1 - gap), truth[br] * (1 + gap)
    up[list(loose_at)] = truth[list(loose_at)] * (1 + excess)
    return at, truth, lo, up


def test_check_finds_the_loose_upper_first_samples():
    """On a smooth profile (a cubic in eps through the logarithms of four bracketed neighbours' upper values) the
    check flags exactly the upper-first samples 1.2 % above the truth and none 0.2 % above it, nor a bracketed one."""
    at, truth, lo, up = _synthetic()
    flags = upper_first_loose(at, lo, up, cover(lo, up), TAU)
    assert sorted(np.flatnonzero(flags).tolist()) == [9, 22, 23, 30]


def test_check_needs_a_neighbour_on_each_side():
    """An upper-first sample beyond the last bracketed one has no estimate: not flagged."""
    at, truth, lo, up = _synthetic(loose_at=(1, 37, 39))
    assert upper_first_loose(at, lo, up, cover(lo, up), TAU)[[1, 37, 39]].all()
    lo[40] = lo[44] = np.nan  # (the last bracketed sample is then 36)
    flags = upper_first_loose(at, lo, up, cover(lo, up), TAU)
    assert flags[1] and not flags[37] and not flags[39]
    assert not upper_first_loose(at, np.full(at.size, np.nan), up, cover(lo, up), TAU).any()


def test_check_stops_past_the_goal_range():
    """A sample whose left neighbour is below 1e-12 (no chord next to it passes where delta >= 1e-12, the goal's range)
    is not checked; the first sample below 1e-12 is (index 39: 4.2e-13, its left neighbour 1.07e-12)."""
    at, truth, lo, up = _synthetic(loose_at=(39, 41, 42, 43))
    flags = upper_first_loose(at, lo, up, cover(lo, up), TAU)
    assert flags[39] and not flags[41:44].any()


def test_room_left_by_accurate_chords(monkeypatch):
    """On a fine grid (eps 3.0 .. 3.4 by 0.01: the chords' estimate ~4.4e-4 on the truth) a sample's covered value may
    take r = 0.9 % - 1.25 e of the goal: 0.8 % above the truth is not flagged, 1.05 % is; with the share 0 (r = tau,
    the chords' room ignored) both are. The estimate is made on the curve without the sample's own excess (its bump
    would make the chords' estimate 0)."""
    at = np.linspace(3.0, 3.4, 41)
    truth = _gauss_delta(0.75, at)
    assert 4e-4 < chord_estimate(np.exp(at), truth, 9) < 5e-4
    lo = np.full(at.size, np.nan)
    up = truth * 1.002
    br = np.arange(0, at.size, 4)
    lo[br], up[br] = truth[br] * (1 - 5e-4), truth[br] * (1 + 5e-4)
    up[[9, 22]] = truth[[9, 22]] * 1.007
    up[[13, 30]] = truth[[13, 30]] * 1.0095
    c0 = cover(lo, up)
    assert np.all(c0[[9, 22]] > (1 + TAU) * truth[[9, 22]])  # (above tau: flagged without the room)
    assert np.flatnonzero(upper_first_loose(at, lo, up, c0, TAU)).tolist() == [13, 30]
    switch(monkeypatch, "EXPORT_UPPER_FIRST_SHARE", 0.0)
    assert np.flatnonzero(upper_first_loose(at, lo, up, c0, TAU)).tolist() == [9, 13, 22, 30]


def test_capped_cover_brackets_flagged_samples_and_stays_certified(monkeypatch):
    """With the samples' eps, the flagged samples get their bracket (the reference's truth -/+ 5e-4 here), and every
    value stays at or above a certified upper value (the sample's own or its bracket's, the smaller: both are
    upper values) and within (1 + tau) of the truth where the loose ones were; without ``at`` or with the switch off
    the values are §2.12's, bit for bit."""
    at, truth, lo, up = _synthetic()
    asked = []

    def bracket(idx):
        asked.extend(np.asarray(idx).tolist())
        return truth[idx] * (1 - 5e-4), truth[idx] * (1 + 5e-4)

    new = capped_cover(lo, up, TAU, bracket, at=at)
    assert sorted(asked) == [9, 22, 23, 30]
    certified_up = up.copy()
    certified_up[asked] = np.minimum(up[asked], truth[asked] * (1 + 5e-4))
    assert np.all(new >= certified_up)
    assert np.all(new[asked] <= (1 + TAU) * truth[asked])
    assert np.all(new >= truth)  # (dominating: the truth is below every certified upper value)
    old = capped_cover(lo, up, TAU, bracket)
    assert not np.array_equal(new, old) and np.all(old[asked] > 1.01 * truth[asked])
    switch(monkeypatch, "EXPORT_UPPER_FIRST_CHECK", False)
    assert np.array_equal(capped_cover(lo, up, TAU, bracket, at=at), old)


def test_no_cap_no_check():
    """tau None (a sampling too coarse for the goal): ``cover``'s values, the check not run."""
    at, truth, lo, up = _synthetic()
    assert np.array_equal(capped_cover(lo, up, None, lambda idx: pytest.fail("no bracket"), at=at), cover(lo, up))


def test_unflagged_round_keeps_its_pair_bit_for_bit(monkeypatch):
    """A round whose upper-first samples are all within the cap of their neighbours' curve keeps its pair (the
    private round of the export matrix, replace-one)."""
    make = lambda: sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.5, 1.5, 1), 1000, "replace")  # noqa: E731
    sh.clear_caches()
    on = sh.dominating_pair(make(), progress=False)
    switch(monkeypatch, "EXPORT_UPPER_FIRST_CHECK", False)
    off = sh.dominating_pair(make(), progress=False)
    assert np.array_equal(on.sample_deltas, off.sample_deltas)
    assert np.array_equal(on.probs, off.probs) and np.array_equal(on.losses, off.losses)


def test_pure_ldp_round_not_checked(monkeypatch):
    """A pure-LDP randomizer's round (profile piecewise linear in t, kinks at its loss atoms) is not checked: binary
    RR's exact accountant, n = 200, replace, whose kinks the neighbours' polynomial would flag at 34 samples, keeps
    its pair bit for bit."""
    make = lambda: sh.ExactShuffleAccountant(sh.RandomizedResponse(2, 1.0), 200, "replace")  # noqa: E731
    sh.clear_caches()
    on = sh.dominating_pair(make(), progress=False)
    switch(monkeypatch, "EXPORT_UPPER_FIRST_CHECK", False)
    off = sh.dominating_pair(make(), progress=False)
    assert np.array_equal(on.sample_deltas, off.sample_deltas) and np.array_equal(on.probs, off.probs)


def _export_ratios(make, extra):
    """(min, max) of the default PLD's delta over a second accountant's certified upper value where that is
    >= 1e-12, on 61 eps of [0, 1000 Delta] plus ``extra``; asserts the PLD is never below the certified lower
    value (it dominates)."""
    from sharpdp.interop.dp_accounting import export_interval, to_pld

    sh.clear_caches()
    acc = make()
    dx = export_interval(acc)
    pld = to_pld(acc, progress=False)
    ref = make()
    ratios = []
    for e in np.concatenate([np.linspace(0.0, 1000 * dx, 61), extra]).tolist():
        lo, up = (float(v) for v in ref.get_delta_bounds(e))
        d = float(pld.get_delta_for_epsilon(e))
        assert d >= lo, (e, d, lo)
        if up >= 1e-12:
            ratios.append(d / up)
    sh.clear_caches()
    return min(ratios), max(ratios)


@pytest.mark.slow
@pytest.mark.parametrize("params,extra", [(HEAVY, np.linspace(3.35, 3.65, 13)),
                                          ((0.0653, 0.723), np.linspace(3.6, 3.85, 11))])
def test_replace_export_within_1_percent(params, extra):
    """The two replace-one rounds at n = 1e4 that missed the goal near delta 1e-12 - 1e-11 (1.0137 and 1.0117 on
    main): measured 1.0089 and 1.0077 over 201 eps with the check."""
    pytest.importorskip("dp_accounting")
    lo, hi = _export_ratios(lambda: sh.ShuffleAccountant(sh.BlanketMixedGaussian(*params, 1), 10**4, "replace"),
                            extra)
    assert hi <= 1.01, hi
    assert lo >= 0.99, lo


def test_switch_is_on():
    assert limits.EXPORT_UPPER_FIRST_CHECK is True
