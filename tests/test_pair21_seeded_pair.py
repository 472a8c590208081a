"""A round's pair on a finer lattice step seeded by the certified values of its pair on another step
(docs/composition.md §2.4): the seed rule against its definition, and the seeded pair against a fresh build
(fewer new accountant values, the same domination, accuracy within the sampling target)."""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant, clear_caches
from sharpdp.shuffle.pair import seed_points
from sharpdp.shuffle.profile import dominating_pair
from sharpdp.shuffle.round_cache import value_cache


def test_seed_points_rule():
    # delta = e^{-10 eps} sampled at a few points: slope 10, so a shift s costs expm1(10 s)
    pts = [0.0, 0.1, 0.2, 0.30001, 0.5]
    cache = {e: (0.5 * math.exp(-10 * e), math.exp(-10 * e)) for e in pts}
    cache[0.7] = (math.nan, 1e-20, 1e-18)  # a coarse value below a negligible level (and below the floor)
    seeds = seed_points(cache, pts + [0.7], 1e-5, 10**6, 2e-3, floor=1e-18)
    for k, (lo, up) in seeds.items():
        e = next(x for x in pts + [0.7] if cache[x][1] == up)
        assert k == 0 if e == 0 else float(np.nextafter(k * 1e-5, 0.0)) >= e > float(np.nextafter((k - 1) * 1e-5, 0.0))
        assert (lo, up) == cache[e][:2] or (e == 0.7 and up == 1e-20)
    # a value at e stands for the first k with nextafter(k dx, 0) >= e (0.1 -> 10001: 10000 dx is a hair below it);
    # 0.5 is left out: its right neighbour's slope (205) makes its shift cost 2e-3 > rel_tol / 4; the floor point stays
    assert sorted(seeds) == [0, 10001, 20001, 30002, 70000]
    # step 1e-3: 0.1, 0.2 and 0.30001 move by ~1e-3 (cost >= 1e-2): only 0 and 0.7 (700 dx is a hair above it) stay
    assert sorted(seed_points(cache, pts + [0.7], 1e-3, 10**6, 2e-3, floor=1e-18)) == [0, 700]


def test_seeded_pair_reuses_values_and_dominates():
    clear_caches()
    rr, n = RandomizedResponse(2, 1.0), 300
    acc = ShuffleAccountant(rr, n)
    dominating_pair(acc, 6.5536e-4, progress=False)
    before = len(value_cache(acc))
    seeded = dominating_pair(ShuffleAccountant(rr, n), 1e-5, progress=False)
    new_values = len(value_cache(acc)) - before
    clear_caches()
    fresh = dominating_pair(ShuffleAccountant(rr, n), 1e-5, progress=False)
    fresh_values = len(value_cache(acc))
    clear_caches()
    assert new_values <= 0.6 * fresh_values  # the first pair's values stand in for about half of them
    e = np.linspace(0.0, 0.6, 121)
    a = np.array([seeded.get_delta(x) for x in e])
    b = np.array([fresh.get_delta(x) for x in e])
    g = ShuffleAccountant(rr, n).get_delta(e)
    assert np.all(a >= g)  # the seeded pair dominates the accountant's certified values (cover_upper)
    ok = b > 1e-12
    assert np.all(np.abs(a[ok] / b[ok] - 1) <= 5e-3)  # and is as accurate as a fresh build (2e-3 target each)
