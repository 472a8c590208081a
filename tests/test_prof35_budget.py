"""Session 35, prof35: the pair's last sampling stage aimed at the export's budget left by the gaps
(docs/composition.md §2.17, ``pair_budget.segment_targets``, switch ``limits.PAIR_GAP_BUDGET``).

References: the targets against their definition; the n = 2 mpmath quadratures of the output densities and the
stratified conditional Monte Carlo of the blanket divergence at n = 1e5 (tests/data/review_rev_pair20/, made by the
scripts there, independent of the accountant); the accountant's own ``get_delta`` on a fresh object (the export's
goal is stated against it); the same pair with the switch off (main's sampling).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from _main_floats34 import switch

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches, dominating_pair
from sharpdp.shuffle.pair import cover, refine_points
from sharpdp.shuffle.pair_accuracy import GOAL, cap_tau
from sharpdp.shuffle.pair_budget import ESTIMATE_MARGIN, segment_targets

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "review_rev_pair20")
G, S = 0.04089409561900239, 0.5960134902126553  # the heavy round of bench/bench_composition.py


def _load(name):
    with open(os.path.join(DATA, name)) as f:
        return json.load(f)


def test_segment_targets_against_their_definition():
    rng = np.random.default_rng(35)
    up = np.sort(10.0 ** rng.uniform(-14, -1, 300))[::-1]
    gap = rng.uniform(0.0, 0.01, up.size)
    lo = up / (1 + gap)
    lo[::3] = np.nan  # taken upper first: cover takes the neighbours' gaps
    rt = 2e-3
    got = segment_targets(lo, up, rt)
    g = cover(lo, up) / up - 1.0
    gs = np.maximum(g[:-1], g[1:])
    want = np.clip((GOAL - np.minimum((1 + gs) ** 2 - 1, cap_tau(rt))) / ESTIMATE_MARGIN, rt, 3 * rt)
    want[up[:-1] < 1e-10] = rt  # (the larger end below PAIR_BUDGET_LEVEL: main's target)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.all(got >= rt) and np.all(got <= 3 * rt)
    # where cover's values may take the whole cap (main's worst case), the target is main's rel_tol
    wide = np.full(5, 0.5)
    assert np.allclose(segment_targets(wide / 1.01, wide, rt), rt, rtol=1e-12)
    # exact values (no gap): the chord may take the budget, up to PAIR_BUDGET_MAX rel_tol
    assert np.all(segment_targets(wide, wide, rt) == 3 * rt)
    assert segment_targets(lo, up, 2e-2) is None  # no cap (a sampling too coarse for the goal): no rule


def test_segment_targets_switch_off(monkeypatch):
    switch(monkeypatch, "PAIR_GAP_BUDGET", False)
    assert segment_targets(np.full(4, 0.1), np.full(4, 0.1), 2e-3) is None


def test_refine_points_targets():
    ks = np.arange(0, 2001, 100, dtype=np.int64)
    dx = 1e-3
    H = np.exp(-8.0 * ks * dx)  # log delta linear in eps: every segment has the same estimate
    base = refine_points(ks, H, dx, 2e-3, 1e-13)
    same = refine_points(ks, H, dx, 2e-3, 1e-13, targets=np.full(ks.size - 1, 2e-3))
    assert base == same and len(base) == ks.size - 1

    def by_segment(lists):
        return {pts[0] // 100: pts for pts in lists}

    looser = refine_points(ks, H, dx, 2e-3, 1e-13, targets=np.full(ks.size - 1, 6e-3))
    assert sum(map(len, looser)) < sum(map(len, base))
    # a segment's own target: only the middle one looser
    tg = np.full(ks.size - 1, 2e-3)
    tg[10] = 6e-3
    mixed = refine_points(ks, H, dx, 2e-3, 1e-13, targets=tg)
    want = by_segment(base)
    want[10] = by_segment(looser)[10]
    assert by_segment(mixed) == want and len(want[10]) < len(by_segment(base)[10])


def _ratio_check(pair, acc_fresh, eps):
    lo, up = acc_fresh.get_delta_bounds(eps)
    big = up >= 1e-12
    r = pair.get_delta(eps[big]) / up[big]
    return r


@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
def test_pair_at_n2_against_quadrature(adjacency, monkeypatch):
    """n = 2: the pair (rule on) lies above the mpmath quadrature of the output densities, within the export's 1 %
    of get_delta on 120 eps, and takes no more values than with the switch off."""
    refs = [r for r in _load("quad_reference.json") if r["adjacency"] == adjacency]
    clear_caches()
    pair = dominating_pair(ShuffleAccountant(BlanketMixedGaussian(G, S, 1), 2, adjacency), progress=False)
    for r in refs:
        assert pair.get_delta(r["eps"]) >= r["value"], r
    clear_caches()
    acc = ShuffleAccountant(BlanketMixedGaussian(G, S, 1), 2, adjacency)
    e_top = float(pair.sample_epsilons[np.flatnonzero(pair.sample_deltas >= 1e-12)[-1]])
    r = _ratio_check(pair, acc, np.linspace(0.0, e_top, 120))
    assert np.all(r >= 1.0 - 1e-12) and np.all(r <= 1.0 + GOAL), (r.min(), r.max())
    switch(monkeypatch, "PAIR_GAP_BUDGET", False)
    main = dominating_pair(ShuffleAccountant(BlanketMixedGaussian(G, S, 1), 2, adjacency), progress=False)
    assert pair.sample_epsilons.size <= main.sample_epsilons.size


@pytest.mark.slow
def test_heavy_round_pair_against_monte_carlo(monkeypatch):
    """The heavy round at n = 1e5 (the pair of bench/bench_composition.py): the pair with the rule lies above the
    Monte Carlo's lower ends (4.5 sigma) and within 1 % of a fresh get_delta where delta >= 1e-12 (300 eps), and takes
    at least 15 % fewer certified values than with the switch off (258 -> 197 when measured)."""
    clear_caches()
    acc = ShuffleAccountant(BlanketMixedGaussian(G, S, 1), 10**5)
    pair = dominating_pair(acc, progress=False)
    for r in _load("mc_reference.json"):
        if r["n"] == 10**5:
            assert pair.get_delta(r["eps"]) >= r["lo"], r
            assert pair.get_delta(r["eps"]) <= r["hi"] * (1 + 2 * GOAL), r
    clear_caches()
    e12 = float(pair.sample_epsilons[np.flatnonzero(pair.sample_deltas < 1e-12)[0]])
    r = _ratio_check(pair, ShuffleAccountant(BlanketMixedGaussian(G, S, 1), 10**5), np.linspace(0.0, e12, 300))
    assert np.all(r >= 1.0 - 1e-12) and np.all(r <= 1.0 + GOAL), (r.min(), r.max())
    switch(monkeypatch, "PAIR_GAP_BUDGET", False)
    main = dominating_pair(ShuffleAccountant(BlanketMixedGaussian(G, S, 1), 10**5), progress=False)
    assert pair.sample_epsilons.size <= 0.85 * main.sample_epsilons.size
    # main's samples are certified upper values too: the new pair is within the goal above them where >= 1e-12
    big = main.sample_deltas >= 1e-12
    q = pair.get_delta(main.sample_epsilons[big]) / main.sample_deltas[big]
    assert np.all(q <= 1.0 + GOAL), q.max()


def test_applies_only_to_rounds_without_atoms():
    """Pure-LDP randomizers (atoms in the privacy loss: kinks the chord estimate misses) keep main's sampling, as do
    rounds through bot, pairs without cover_upper and the lower reference (docs/composition.md §2.17)."""
    from sharpdp.shuffle import GaussianRandomizer, PrivUnit, RandomizedResponse
    from sharpdp.shuffle.pair_budget import applies

    bmg = ShuffleAccountant(BlanketMixedGaussian(G, S, 1), 100)
    assert applies(bmg, True, False)
    assert not applies(bmg, False, False) and not applies(bmg, True, True)
    assert not applies(ShuffleAccountant(RandomizedResponse(2, 1.0), 50, "replace"), True, False)
    assert not applies(ShuffleAccountant(PrivUnit(0.75, 0.2, 10), 100, "replace"), True, False)
    assert not applies(ShuffleAccountant(GaussianRandomizer(1.0, 1), 100, "replace"), True, False)  # through bot
    assert applies(ShuffleAccountant(GaussianRandomizer(1.0, 1), 100), True, False)
