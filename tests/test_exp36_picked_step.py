"""Session 36 (exp36): a ShufflePLDAccountant made without a lattice step moves its composition from dp_accounting's
1e-4 onto its very private rounds' export step where that step's shift matters at the query (docs/composition.md
§4.8).

References: sharpdp's certified native composition (``ComposedAccountant``, its own composition engine, on the round's
export pair) for k = 1-1000 rounds; the accountant's certified lower values of the round (k = 1); dp_accounting's own
accountant on an explicit step (the same events, another lattice). With the switch off: dp_accounting's 1e-4, main's
floats bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from _main_floats34 import switch
from test_shuffle_composition_cache import builds  # noqa: F401  (the fixture counting the pair constructions)

import sharpdp.shuffle as sh

dpa = pytest.importorskip("dp_accounting")
from sharpdp.interop.dp_accounting import (  # noqa: E402
    ShuffledRoundEvent,
    ShufflePLDAccountant,
    export_interval,
    pick_step,
)

PRIVATE = (0.95, 4.6, 1)  # eps ~ 3.4e-4 at delta = 1e-6 alone (n = 1e4): export step 1.02e-6
N = 10**4


def _private():
    return sh.BlanketMixedGaussian(*PRIVATE)


@pytest.fixture(scope="module")
def private_acc():
    sh.clear_caches()
    acc = sh.ShuffleAccountant(_private(), N)
    yield acc, export_interval(acc)
    sh.clear_caches()


@pytest.mark.parametrize("k", [1, 10, 100, 1000])
def test_very_private_rounds_within_1_percent_of_the_native_composition(private_acc, k):
    """Measured (session 36): delta at dp_accounting's eps within 0.15 % (k = 1) and 1e-9 (k >= 10) of
    ComposedAccountant's; on 1e-4 (the switch off) 1.36x - 2.03x above it."""
    acc, dx = private_acc
    spa = ShufflePLDAccountant(progress=False).compose(ShuffledRoundEvent(_private(), N), k)
    native = sh.ComposedAccountant([(acc, k)], progress=False)
    for target in (1e-6, 1e-10):
        e = spa.get_epsilon(target)
        assert spa.value_discretization_interval == dx  # the round's export step
        d_nat = float(native.get_delta(e))
        assert abs(spa.get_delta(e) / d_nat - 1) <= 1e-2, (k, target, spa.get_delta(e), d_nat)
    e_nat = native.get_epsilon(1e-6, xtol=1e-6)
    assert abs(spa.get_epsilon(1e-6) / e_nat - 1) <= 1e-2
    if k == 1:  # never below the round's certified lower value
        for eps in np.linspace(0.0, 8e-4, 9):
            lo = float(acc.get_delta_bounds(float(eps))[0])
            assert spa.get_delta(float(eps)) >= lo


def test_switch_off_keeps_dp_accountings_lattice(private_acc, monkeypatch):
    """EXPORT_PICKS_STEP False: 1e-4 and the export pair moved onto it (main's floats); there the lattice over-reports
    the very private round (the reason for the rule)."""
    acc, _ = private_acc
    new = ShufflePLDAccountant(progress=False).compose(ShuffledRoundEvent(_private(), N), 10)
    e_new = new.get_epsilon(1e-6)
    switch(monkeypatch, "EXPORT_PICKS_STEP", False)
    old = ShufflePLDAccountant(progress=False).compose(ShuffledRoundEvent(_private(), N), 10)
    e_old = old.get_epsilon(1e-6)
    assert old.value_discretization_interval == 1e-4
    native = sh.ComposedAccountant([(acc, 10)], progress=False)
    assert old.get_delta(e_new) > 1.2 * float(native.get_delta(e_new)) and e_old > 1.05 * e_new


def test_coarse_rounds_keep_1e_4_bit_for_bit(monkeypatch):
    """A round whose export step is at least 1e-4 (binary RR, n = 50: 1e-3) keeps dp_accounting's lattice: the same
    floats as with the switch off."""
    rel = dpa.NeighboringRelation.REPLACE_ONE
    sh.clear_caches()
    eps = [0.0, 0.3, 1.0, 2.0]

    def run():
        a = ShufflePLDAccountant(rel, progress=False).compose(ShuffledRoundEvent(sh.RandomizedResponse(2, 1.0), 50,
                                                                                 "replace"), 3)
        return [a.get_epsilon(1e-6)] + [a.get_delta(e) for e in eps], a.value_discretization_interval

    got, step = run()
    assert step == 1e-4
    switch(monkeypatch, "EXPORT_PICKS_STEP", False)
    assert run() == (got, 1e-4)


@pytest.mark.parametrize("sigma", [1.0, 300.0])
def test_with_a_gaussian_release(private_acc, sigma):
    """Ten very private rounds and a Gaussian release, composed in either order: with noise multiplier 1 (eps ~ 4.9)
    the rounds' shift on 1e-4 is negligible and the lattice stays (dp_accounting's Gaussian PLD on a 1e-6 lattice
    costs ~20 s); with 300 (eps ~ 0.01) it moves, and the value agrees with dp_accounting on the export step."""
    _, dx = private_acc
    gauss = dpa.GaussianDpEvent(sigma)
    a = ShufflePLDAccountant(progress=False).compose(ShuffledRoundEvent(_private(), N), 10).compose(gauss)
    b = ShufflePLDAccountant(progress=False).compose(gauss).compose(ShuffledRoundEvent(_private(), N), 10)
    ref = ShufflePLDAccountant(value_discretization_interval=dx, progress=False)
    ref.compose(ShuffledRoundEvent(_private(), N), 10).compose(gauss)
    e_a, e_b, e_ref = a.get_epsilon(1e-6), b.get_epsilon(1e-6), ref.get_epsilon(1e-6)
    assert a.value_discretization_interval == b.value_discretization_interval
    assert abs(e_a / e_b - 1) <= 1e-9
    if sigma == 1.0:
        assert a.value_discretization_interval == 1e-4
        assert abs(e_a / e_ref - 1) <= 1e-6
    else:
        assert dx <= a.value_discretization_interval < 1e-4
        assert 0.0 <= e_a / e_ref - 1 <= 1e-3  # (the coarser lattice: above, within the rule's shift)


def test_calibration_loop_builds_the_round_once(builds):  # noqa: F811  (the imported fixture)
    """dp_accounting's calibration over a Gaussian's noise with a very private round, a fresh accountant per candidate:
    one build of the round, each candidate's lattice picked at its query."""
    from dp_accounting import mechanism_calibration as mc

    def event(sigma):
        return dpa.ComposedDpEvent([ShuffledRoundEvent(_private(), N), dpa.GaussianDpEvent(sigma)])

    sigma = mc.calibrate_dp_mechanism(lambda: ShufflePLDAccountant(progress=False), event, 0.05, 1e-6,
                                      mc.LowerEndpointAndGuess(0.5, 2.0), tol=0.01)
    assert len(builds) == 1
    check = ShufflePLDAccountant(progress=False).compose(event(sigma))
    assert check.get_epsilon(1e-6) <= 0.05 + 1e-9


def test_pick_step():
    f = 1.024e-6
    assert pick_step(1e-4, 1e-3, 5, 0.1, 100) is None  # the rounds' export step is coarser
    assert pick_step(1e-4, f, 0, 0.1, 100) is None  # no shuffled round
    assert pick_step(1e-4, f, 1, 0.2, 100) is None  # shift 1e-4 <= 1e-3 x 0.2
    assert pick_step(1e-4, f, 1, 3e-4, 100) == f  # the export step itself
    assert pick_step(1e-4, f, 10, 0.1, 100) == f * 8  # 1e-3 x 0.1 / 10 = 1e-5: 8.2e-6
    assert pick_step(1e-4, f, 1000, 0.01, 2**17) == f * 64  # the points' budget: 1e-4 / 2 = 5e-5: 6.6e-5
    assert pick_step(1e-4, f, 1000, 0.01, 2**19) is None  # (the budget allows no finer step)
