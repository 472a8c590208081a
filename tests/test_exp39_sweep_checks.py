"""Session 39, exp39: a privacy profile's sweep skips the driver's shortcuts (few-user bracket, clamped Chernoff cap,
far-tail treatment) that the law family's last full check found idle (docs/composition.md §2.20,
``accountant/sweep_checks.py``; switches ``limits.SWEEP_CHECKS``, ``limits.SWEEP_CHECKS_EVERY``).

References: the exact two-user blanket divergence of the BMG (n = 2: an mpmath quadrature over the mechanism's output
densities, tests/_bmg_reference.py, independent of the accountant's laws); the same calls with the switch off (main's
path).
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from _bmg_reference import reference as bmg_reference
from _main_floats34 import switch

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches, privacy_profile
from sharpdp.shuffle.accountant import driver, far_tail, sweep_checks
from sharpdp.shuffle.accountant.driver import upper_first_sweep


class _Calls:
    """Counts the driver's three shortcuts (calls, and returns that are not idle) and the rule's skipping calls."""

    def __init__(self, monkeypatch):
        self.few = self.few_hit = self.cap = self.far = self.skipped = 0
        few, cap, far, skips = driver.small_n_bracket, driver.clamped_chernoff_cap, far_tail.try_certify, \
            sweep_checks.skips

        def w_few(*a, **k):
            out = few(*a, **k)
            self.few += 1
            self.few_hit += out is not None
            return out

        def w_cap(*a, **k):
            self.cap += 1
            return cap(*a, **k)

        def w_far(*a, **k):
            self.far += 1
            return far(*a, **k)

        def w_skips(*a, **k):
            out = skips(*a, **k)
            self.skipped += bool(out)
            return out

        monkeypatch.setattr(driver, "small_n_bracket", w_few)
        monkeypatch.setattr(driver, "clamped_chernoff_cap", w_cap)
        monkeypatch.setattr(far_tail, "try_certify", w_far)
        monkeypatch.setattr(sweep_checks, "skips", w_skips)


ROUNDS = [(BlanketMixedGaussian(0.95, 4.6, 1), 10**4, "zero_out", 1.024e-3),  # the private round: the plain engine
          (BlanketMixedGaussian(0.0653, 0.723, 1), 10**4, "zero_out", 4.24)]  # calibrated, heavy: the far-tail path


@pytest.mark.parametrize("rnd", range(len(ROUNDS)))
def test_profile_same_floats_fewer_checks(rnd, monkeypatch):
    """300-point profiles of the private round (every shortcut idle: the plain engine) and of a heavy calibrated BMG
    (the far-tail path taken, the few-user bracket and the cap idle): the floats are bit for bit those with the switch
    off, and the rule skipped the idle shortcuts on most values."""
    rz, n, adj, top = ROUNDS[rnd]
    eps = np.linspace(0.0, top, 300)
    on = _Calls(monkeypatch)
    clear_caches()
    v = privacy_profile(ShuffleAccountant(rz, n, adj), eps)
    on = dict(vars(on))  # (the counts of this run: the wrappers below nest inside these)
    switch(monkeypatch, "SWEEP_CHECKS", False)
    off = _Calls(monkeypatch)
    clear_caches()
    main = privacy_profile(ShuffleAccountant(rz, n, adj), eps)
    assert np.array_equal(v, main)
    assert off.skipped == 0 and off.few >= 300
    assert on["skipped"] >= 200, on
    assert on["few"] * 3 <= off.few and on["cap"] <= 0.6 * off.cap, (on, vars(off))  # (the cap: see CAP_MARGIN)
    if rnd == 0:  # (the plain engine's round: the far-tail test skipped too)
        assert on["far"] * 3 <= off.far, (on, vars(off))


@pytest.mark.parametrize("gamma,sigma0,adj,top", [(0.5, 1.0, "zero_out", 3.0), (0.3, 0.5, "replace", 6.0)])
def test_skipped_shortcuts_that_would_fire_against_quadrature(gamma, sigma0, adj, top, monkeypatch):
    """The worst case of the rule: every shortcut skipped on every value (also where it fires on main: at n = 2 the
    few-user bracket does), so every value is the plain engine's. Each lies at or above the exact two-user blanket
    divergence (mpmath quadrature over the output densities) and within the accountant's rel_tol of it."""
    eps = np.linspace(0.05, top, 12)
    main_calls = _Calls(monkeypatch)
    clear_caches()
    acc = ShuffleAccountant(BlanketMixedGaussian(gamma, sigma0, 1), 2, adj)
    main = privacy_profile(acc, eps)
    assert main_calls.few_hit >= 6  # (main's values mostly come from the few-user bracket)
    monkeypatch.setattr(sweep_checks, "skips", lambda k, t: frozenset({sweep_checks.FEW, sweep_checks.CAP,
                                                                       sweep_checks.FAR}) if k is not None
                        else frozenset())
    forced = _Calls(monkeypatch)
    clear_caches()
    v = privacy_profile(ShuffleAccountant(BlanketMixedGaussian(gamma, sigma0, 1), 2, adj), eps)
    assert forced.few == 0 and forced.cap == 0 and forced.far == 0
    with mp.workdps(30):
        ref = np.array([float(bmg_reference(gamma, sigma0, float(e), adj, 2)) for e in eps])
    assert np.all(v >= ref * (1 - 1e-9)), np.min(v / ref)
    assert np.all(v <= ref * (1 + acc.rel_tol)), np.max(v / ref)
    assert np.all(main >= ref * (1 - 1e-9))


def test_no_rule_outside_a_profile(monkeypatch):
    """get_delta_bounds (also upper values first inside upper_first_sweep, as a pair's sweep) and the switch off never
    skip a shortcut; check_sweep holds no state with the switch off or SWEEP_CHECKS_EVERY <= 1."""
    calls = _Calls(monkeypatch)
    acc = ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**4)
    eps = np.linspace(1e-4, 8e-4, 16)
    clear_caches()
    with upper_first_sweep():
        acc.get_delta_bounds(eps, lower=False)
    acc.get_delta_bounds(eps)
    assert calls.skipped == 0 and calls.few >= 32
    for name, value in (("SWEEP_CHECKS", False), ("SWEEP_CHECKS_EVERY", 1)):
        switch(monkeypatch, name, value)
        with sweep_checks.check_sweep():
            assert sweep_checks.key(("f",), 0.0) is None
        switch(monkeypatch, name, {"SWEEP_CHECKS": True, "SWEEP_CHECKS_EVERY": 8}[name])
    with sweep_checks.check_sweep():
        k = sweep_checks.key(("f",), 0.0)
        assert k is not None and sweep_checks.skips(k, 1e-24) == frozenset()
        sweep_checks.record(k, frozenset({sweep_checks.FEW, sweep_checks.CAP}))
        sweep_checks.note_upper(k, 1e-22)  # (below CAP_MARGIN times the threshold: the cap runs)
        assert sweep_checks.skips(k, 1e-24) == frozenset({sweep_checks.FEW})
        sweep_checks.note_upper(k, 1e-3)
        assert [sweep_checks.skips(k, 1e-24) for _ in range(6)] == [frozenset({sweep_checks.FEW, sweep_checks.CAP})] * 6
        assert sweep_checks.skips(k, 1e-24) == frozenset()  # (the 8th value: a full check)
    assert sweep_checks.key(("f",), 0.0) is None
