"""Session 31 (exp31): the export within 1 % of get_delta (docs/composition.md §2.12): cover capped by the samples'
certified lower values, leg B's cliffs resolved on Delta / 64; privacy_profile's progress bar (the same floats)."""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.pair import Curve, cover, via_bottom_eval
from sharpdp.shuffle.pair_accuracy import cap_tau, capped_cover
from sharpdp.shuffle.pair_legs import CLIFF_SCALE, resolve_cliffs
from sharpdp.shuffle.profile import dominating_pair, privacy_profile, privacy_profile_bounds


def test_cap_tau():
    assert cap_tau(2e-3) == pytest.approx(7.5e-3)
    assert cap_tau(4e-3) == pytest.approx(5e-3)
    assert cap_tau(2e-2) is None  # a sampling too coarse for the goal: cover as it is


def test_capped_cover_against_its_definition():
    rng = np.random.default_rng(31)
    up = np.sort(rng.uniform(1e-14, 1e-1, 200))[::-1]
    gap = rng.uniform(0.0, 0.02, up.size)
    lo = up / (1 + gap)
    lo[::7] = np.nan  # taken upper first
    tau = 7.5e-3
    c0 = cover(lo, up)
    out = capped_cover(lo, up, tau)
    known = ~np.isnan(lo)
    cap = (1 + tau) * np.nan_to_num(lo)
    assert np.all(out >= up)  # never below the certified upper value (docs/composition.md §2.12)
    keep = ~known | (c0 <= cap) | (up < 1e-13)
    np.testing.assert_array_equal(out[keep], c0[keep])  # cover's floats wherever the cap does not bind
    bind = ~keep
    assert bind.sum() > 20
    np.testing.assert_allclose(out[bind], np.maximum(up[bind], cap[bind]), rtol=1e-15)
    np.testing.assert_array_equal(capped_cover(lo, up, None), c0)


def test_capped_cover_takes_a_bracket_for_upper_first_samples():
    up = np.array([0.5, 0.3, 0.2, 0.1])
    lo = np.array([0.5 / 1.01, np.nan, np.nan, 0.1 / 1.01])
    asked = []

    def bracket(idx):
        asked.extend(idx.tolist())
        return up[idx] / 1.001, up[idx] * 0.9999  # a tighter certified bracket: the smaller upper value is kept

    out = capped_cover(lo, up, 7.5e-3, bracket)
    assert asked == [1, 2]
    u2 = up[1:3] * 0.9999
    np.testing.assert_allclose(out[1:3], np.minimum(u2 * cover(lo, up)[1:3] / up[1:3], 1.0075 * up[1:3] / 1.001))
    assert np.all(out[1:3] >= u2)


def _cliff_leg():
    """A leg falling smoothly, then to 0 inside the lattice step (5, 6]: B(e) = 0.01 (1 - e / 0.0557)^2 on Delta = 0.01
    up to its end 0.0557 (between the lattice points 5 and 6)."""
    def b(e):
        return np.where(e < 0.0557, 0.01 * np.clip(1 - e / 0.0557, 0, 1) ** 2, 1e-40)
    kb = np.arange(0, 12)
    ub = b(kb * 0.01)
    return b, kb, ub / 1.001, ub


def test_resolve_cliffs_samples_the_steepest_part():
    b, kb, lb, ub = _cliff_leg()
    seen = []

    def fine(ks):
        seen.extend(ks.tolist())
        e = ks * (0.01 / CLIFF_SCALE)
        return b(e) / 1.001, b(e)

    ks, lo, up = resolve_cliffs(kb, lb, ub, 1e-15, fine)
    assert len(seen) == 14 and set(kb * CLIFF_SCALE) <= set(ks.tolist())
    # the last sample with a positive value and the first past the end are 1/64 of a step apart, around 0.0557
    last = ks[np.flatnonzero(up > 1e-30)[-1]]
    assert (last + 1) * 0.01 / CLIFF_SCALE >= 0.0557 > last * 0.01 / CLIFF_SCALE
    assert np.all(np.diff(up) <= 0) and np.all(lo <= up)
    assert resolve_cliffs(kb[:5], lb[:5], ub[:5], 1e-15, fine) is None  # no cliff: nothing to do


def test_via_bottom_eval_on_the_finer_lattice_is_the_same_bound():
    # curves with vertices on Delta: the scaled evaluation (indices times 64 on Delta / 64) gives the same values
    k = np.array([0, 3, 9, 20])
    h = np.array([0.6, 0.2, 0.03, 1e-4])
    dx = 0.05
    coarse = via_bottom_eval(Curve(k, h, dx), Curve(k, h * 0.5, dx))
    fine = via_bottom_eval(Curve(k * CLIFF_SCALE, h, dx / CLIFF_SCALE), Curve(k * CLIFF_SCALE, h * 0.5,
                                                                               dx / CLIFF_SCALE), CLIFF_SCALE)
    ks = np.arange(0, 45)
    np.testing.assert_allclose(fine(ks)[1], coarse(ks)[1], rtol=1e-11)


def test_replace_n2_pair_at_the_cliff():
    """n = 2, replace through bot: at eps 13.6 (the second leg at leg B's cliff, docs/composition.md §2.12) the pair is
    within 1 % of get_delta, above the brute-force replace delta (tests/_rev30b_replace_reference.py), and not below
    the legs' certified LOWER values at the best split of a grid of 1e-4 nats across the cliff by more than the
    grid's resolution (the first leg falls ~0.02 % per 1e-4 nats there): the finer lattice does not cut under the
    legs."""
    from _rev30b_replace_reference import replace_delta_n2

    from sharpdp.interop.dp_accounting import export_interval
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), 2, "replace")
    pair = dominating_pair(acc, export_interval(acc), progress=False)
    e = 13.616136312100489
    gd = float(acc.get_delta(e))
    d = float(pair.get_delta(e))
    assert d <= 1.01 * gd, d / gd
    truth = max(float(replace_delta_n2(1.0, np.array([e]), x)[0]) for x in (-1.0, 1.0))
    assert d >= truth
    bot = acc._bottom
    best = min(bot.leg(0, e - e2, 1e-2).lower + np.exp(e - e2) * bot.leg(1, e2, 1e-2).lower
               for e2 in np.linspace(1.14, 1.16, 201))
    assert d >= best * (1 - 5e-4), (d, best)
    clear_caches()


def test_privacy_profile_progress_bar_same_floats():
    eps = np.linspace(0.0, 3.0, 20)

    def acc():
        return ShuffleAccountant(BlanketMixedGaussian(0.3, 1.0, 1), 1000)

    clear_caches()
    a = privacy_profile(acc(), eps, progress=True)
    clear_caches()
    b = privacy_profile(acc(), eps, progress=False)
    clear_caches()
    c = privacy_profile_bounds(acc(), eps, progress=True)
    clear_caches()
    d = privacy_profile_bounds(acc(), eps, progress=False)
    clear_caches()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(c[0], d[0])
    np.testing.assert_array_equal(c[1], d[1])
    with pytest.raises(TypeError, match="progress"):
        privacy_profile(acc(), eps, progress="yes")
    clear_caches()
