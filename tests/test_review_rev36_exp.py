"""Review rev36 (session 36) of exp36's export step (docs/composition.md §4.9: eps_d / 1000 halved where one lattice
step's chord is estimated above EXPORT_STEP_CHORD; the probes' brackets seed the round's cache) and of
ShufflePLDAccountant's picked step (§4.8).

Claim attacked: every exported / composed delta is >= the certified delta (never under-reports). Cells other than
exp36's tests where the step moves (measured at exp36's HEAD a31d78b0: GaussianRandomizer(1), n = 1e7, zero-out, 8x
finer; the BMG of calibrate_bmg(1e6) under replace-one, 2x finer). References: fresh accountants' certified lower
values (independent of the export: a certified lower value of delta lies below the true delta, so an export below
it under-reports), at the default rel_tol on a dense grid (on and between lattice points) and at rel_tol 1e-3 where
the export is nearest to it; the native certified composition (ComposedAccountant.get_delta_bounds) for k rounds.
"""

from __future__ import annotations

import numpy as np
import pytest

import sharpdp.shuffle as sh

pytest.importorskip("dp_accounting")
from sharpdp.interop.dp_accounting import ShufflePLDAccountant, ShuffledRoundEvent, export_interval, to_pld  # noqa: E402

BMG6 = (0.027018718327855053, 0.5082412099806768, 1)
CELLS = {"g1-1e7": (lambda: sh.GaussianRandomizer(1, 1), 10**7, "zero_out", 8.0),
         "bmg6-replace": (lambda: sh.BlanketMixedGaussian(*BMG6), 10**6, "replace", 2.0)}


@pytest.mark.slow  # (g1-1e7 ~2 min, bmg6-replace ~4 min under load 16: over the 60 s goal)
@pytest.mark.parametrize("name", sorted(CELLS))
def test_export_never_below_certified_lower_values(name, monkeypatch):
    make, n, adj, ratio = CELLS[name]
    sh.clear_caches()
    acc = sh.ShuffleAccountant(make(), n, adj)
    dx = export_interval(acc)
    from sharpdp.shuffle.accountant import limits

    monkeypatch.setattr(limits, "EXPORT_STEP_CURVATURE", False)
    sh.clear_caches()
    dx0 = export_interval(sh.ShuffleAccountant(make(), n, adj))
    monkeypatch.setattr(limits, "EXPORT_STEP_CURVATURE", True)
    assert dx0 / dx == ratio  # (the rule moves this cell)
    sh.clear_caches()
    acc = sh.ShuffleAccountant(make(), n, adj)
    pld = to_pld(acc, progress=False)
    sh.clear_caches()
    ref = sh.ShuffleAccountant(make(), n, adj)
    grid = np.unique(np.concatenate([(np.arange(0, 12) + 0.5) * dx, np.arange(0, 12, 3) * dx,
                                     np.linspace(0.0, 60 * dx0, 7)]))
    worst = (np.inf, None)
    for e in grid:
        lo, up = (float(v) for v in ref.get_delta_bounds(float(e)))
        d = float(pld.get_delta_for_epsilon(float(e)))
        assert d >= lo, (name, e, d, lo, up)
        if lo > 0 and d / lo < worst[0]:
            worst = (d / lo, float(e))
    sh.clear_caches()
    lo, up = sh.ShuffleAccountant(make(), n, adj, rel_tol=1e-3).get_delta_bounds(worst[1])
    d = float(pld.get_delta_for_epsilon(worst[1]))
    assert d >= lo, (name, worst[1], d, lo, up)


@pytest.mark.slow  # (~2 min under load 16)
def test_picked_step_composition_above_the_native_lower_value():
    """ShufflePLDAccountant without a step, k = 1 and 3 rounds of GaussianRandomizer(1), n = 1e7 (its step moved by
    §4.9 too): delta at a few eps >= ComposedAccountant's certified lower value."""
    make, n, adj, _ = CELLS["g1-1e7"]
    sh.clear_caches()
    acc = sh.ShuffleAccountant(make(), n, adj)
    for k in (1, 3):
        spa = ShufflePLDAccountant(progress=False).compose(ShuffledRoundEvent(make(), n), k)
        native = sh.ComposedAccountant([(acc, k)], progress=False)
        for e in (0.0, 0.002 * k, 0.01 * k):
            lo = float(native.get_delta_bounds(e)[0])
            assert spa.get_delta(e) >= lo, (k, e, spa.get_delta(e), lo)


def test_picked_step_two_private_rounds_above_the_native_lower_value():
    """Two very private rounds (BMG(0.95, 4.6), n = 1e4, x3 and BMG(0.97, 5), n = 3e4, x4): ShufflePLDAccountant picks
    their export step (measured 2.56e-7, not 1e-4) and its delta stays >= ComposedAccountant's certified lower value
    (measured: at or above its upper value at eps <= 1e-3)."""
    def p():
        return sh.BlanketMixedGaussian(0.95, 4.6, 1)

    def q():
        return sh.BlanketMixedGaussian(0.97, 5.0, 1)

    sh.clear_caches()
    spa = ShufflePLDAccountant(progress=False).compose(ShuffledRoundEvent(p(), 10**4), 3)
    spa = spa.compose(ShuffledRoundEvent(q(), 3 * 10**4), 4)
    native = sh.ComposedAccountant([(sh.ShuffleAccountant(p(), 10**4), 3), (sh.ShuffleAccountant(q(), 3 * 10**4), 4)],
                                   progress=False)
    for e in (0.0, 0.0005, 0.001, 0.002):
        lo = float(native.get_delta_bounds(e)[0])
        assert spa.get_delta(e) >= lo, (e, spa.get_delta(e), lo)
    assert spa.value_discretization_interval < 1e-4
