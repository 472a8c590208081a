"""Session 35 (exp35): a round's pair moved onto another lattice without new certified values, and
ShufflePLDAccountant's default lattice served by the round's one export pair (docs/composition.md §4.7).

References: the pair's own curve (its stored masses, evaluated both by sharpdp and by dp_accounting's PLD code), the
exact delta of one concrete neighbouring pair of datasets of shuffled binary randomized response (a lower value of
the mechanism's delta, by direct summation over the count of ones), and the accountant's certified lower values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _main_floats34 import switch
from scipy.stats import binom
from test_shuffle_composition_cache import builds  # noqa: F401  (the fixture counting the pair constructions)

import sharpdp.shuffle as sh
from sharpdp.shuffle.pair_relattice import relattice, relattice_points

dpa = pytest.importorskip("dp_accounting")
from sharpdp.interop.dp_accounting import (  # noqa: E402
    ShuffledRoundEvent,
    ShufflePLDAccountant,
    pld_from_pair,
    to_pld,
)

N, E0 = 50, 1.0


def _rr_acc():
    return sh.ShuffleAccountant(sh.RandomizedResponse(2, E0), N, "replace")


def _one_dataset_delta(eps: float) -> float:
    """Exact delta(eps) of shuffled binary RR (eps0 = E0, N users) between the datasets (0, 0, ..., 0) and
    (1, 0, ..., 0), both orders: the count of ones is Bin(N - 1, q) plus the first user's report."""
    p = math.exp(E0) / (1 + math.exp(E0))
    q = 1 - p
    base = binom.pmf(np.arange(N), N - 1, q)

    def law(p_one):
        out = np.zeros(N + 1)
        out[1:] += p_one * base
        out[:-1] += (1 - p_one) * base
        return out

    a, b = law(q), law(p)
    t = math.exp(eps)
    return max(float(np.sum(np.maximum(a - t * b, 0))), float(np.sum(np.maximum(b - t * a, 0))))


@pytest.fixture(scope="module")
def rr_pair():
    sh.clear_caches()
    acc = _rr_acc()
    pair = sh.dominating_pair(acc, 5e-3, max_evaluations=60, progress=False)
    yield acc, pair
    sh.clear_caches()


@pytest.mark.parametrize("step", [2e-2, 7.3e-3, 1e-3, 1.25e-3])
def test_relattice_lies_above_the_pair_and_the_mechanism(rr_pair, step):
    acc, pair = rr_pair
    moved = relattice(pair, step)
    assert moved.value_discretization_interval == step and moved.certified
    assert np.all(np.diff(moved.losses) > 0) and moved.probs.sum() + moved.infinity_mass >= 1 - 1e-12
    eps = np.concatenate([-np.linspace(2.5, 0, 41), np.linspace(0, 2.5, 121)])  # (ascending: dp_accounting asks)
    g = pair.get_delta(eps)
    d = moved.get_delta(eps)
    assert np.all(d >= g * (1 - 1e-12)), float(np.min(d / g))
    # dp_accounting's own hockey-stick sums (independent code) say the same
    ref = np.asarray(pld_from_pair(pair).get_delta_for_epsilon(eps))
    got = np.asarray(pld_from_pair(moved).get_delta_for_epsilon(eps))
    assert np.all(got >= ref * (1 - 1e-9) - 1e-15)
    for e in (0.0, 0.2, 0.5, 1.0, 1.5):
        assert float(moved.get_delta(e)) >= _one_dataset_delta(e)  # a concrete pair of datasets: below delta
        assert float(moved.get_delta(e)) >= float(acc.get_delta_bounds(e)[0])  # the certified lower value
    # at most one step of eps looser than the pair (the chords around the pair's losses)
    pos = np.linspace(0, 2.0, 81)
    assert np.all(moved.get_delta(pos) <= pair.get_delta(np.maximum(pos - step, -10.0)) * (1 + 1e-9))


def test_relattice_on_a_divisor_step_is_the_pair_itself(rr_pair):
    """Delta' = Delta / 4: every loss of the pair is a lattice point of Delta', so the new curve is the pair's own
    (linear in t between its losses): equal within the rounding margins where delta >= 1e-15 (below, the
    construction's own rounding of masses near the floats' resolution may drop a vertex: still above, never below)."""
    _, pair = rr_pair
    moved = relattice(pair, pair.value_discretization_interval / 4)
    eps = np.concatenate([-np.linspace(2.0, 0, 41), np.linspace(0, 2.0, 201)])
    g, d = pair.get_delta(eps), moved.get_delta(eps)
    sel = g >= 1e-15
    assert sel.sum() > 120
    np.testing.assert_allclose(d[sel], g[sel], rtol=1e-9)
    assert np.all(d >= g * (1 - 1e-12))
    assert relattice(pair, pair.value_discretization_interval) is pair


def test_relattice_points():
    losses = np.array([-0.02, 0.0, 0.013, 0.05])
    np.testing.assert_array_equal(relattice_points(losses, 1e-2), [-3, -2, 0, 2, 5, 6])
    np.testing.assert_array_equal(relattice_points(np.array([3 * 0.1]), 0.1), [0, 2, 3, 4])  # (0.30000000000000004)
    with pytest.raises(TypeError):
        relattice(np.zeros(3), 1e-3)
    with pytest.raises(ValueError):
        relattice(sh.dominating_pair(_rr_acc(), 5e-3, max_evaluations=60, progress=False), 1e-13)


def test_one_build_per_round_across_every_consumer(builds):  # noqa: F811  (the imported fixture)
    """Every consumer with its defaults, new objects each time: dominating_pair, to_pld, ComposedAccountant,
    ShuffledRoundEvent in ShufflePLDAccountant (three accountants) and dp_accounting's calibration loop (a new
    ShufflePLDAccountant per candidate) build the round's pair once."""
    from dp_accounting import mechanism_calibration as mc

    rel = dpa.NeighboringRelation.REPLACE_ONE
    rr = sh.RandomizedResponse(2, E0)
    pair = sh.dominating_pair(_rr_acc(), progress=False)
    to_pld(_rr_acc(), progress=False)
    ca = sh.ComposedAccountant([(_rr_acc(), 3)], progress=False)
    assert ca.pairs()[0] is pair and len(builds) == 1
    for _ in range(3):
        ShufflePLDAccountant(rel, progress=False).compose(ShuffledRoundEvent(sh.RandomizedResponse(2, E0), N,
                                                                             "replace"), 2)
    assert len(builds) == 1

    def event(sigma):
        return dpa.ComposedDpEvent([ShuffledRoundEvent(rr, N, "replace"), dpa.GaussianDpEvent(sigma)])

    sigma = mc.calibrate_dp_mechanism(lambda: ShufflePLDAccountant(rel, progress=False), event, 3.0, 1e-5,
                                      mc.LowerEndpointAndGuess(0.5, 2.0), tol=0.05)
    assert len(builds) == 1  # one build for the whole loop
    check = ShufflePLDAccountant(rel, progress=False).compose(event(sigma))
    assert check.get_epsilon(1e-5) <= 3.0 + 1e-9


def test_default_lattice_close_to_a_pair_built_there(monkeypatch):
    """ShufflePLDAccountant() (the export pair moved onto 1e-4) against the switch off (a pair built on 1e-4 from the
    certified profile, main's construction): both above the certified lower values; within 2 % of each other where
    delta >= 1e-12 (two certified constructions, neither nested in the other)."""
    rel = dpa.NeighboringRelation.REPLACE_ONE
    eps = np.linspace(0.0, 2.2, 45)
    sh.clear_caches()
    moved = ShufflePLDAccountant(rel, progress=False).compose(ShuffledRoundEvent(sh.RandomizedResponse(2, E0), N,
                                                                                 "replace"))
    d_new = np.array([moved.get_delta(float(e)) for e in eps])
    switch(monkeypatch, "EXPORT_RELATTICE", False)
    built = ShufflePLDAccountant(rel, progress=False).compose(ShuffledRoundEvent(sh.RandomizedResponse(2, E0), N,
                                                                                 "replace"))
    d_old = np.array([built.get_delta(float(e)) for e in eps])
    # the switch off is main's construction bit for bit: the pair built on dp_accounting's 1e-4
    explicit = ShufflePLDAccountant(rel, 1e-4, progress=False).compose(ShuffledRoundEvent(sh.RandomizedResponse(2, E0),
                                                                                          N, "replace"))
    assert [explicit.get_delta(float(e)) for e in eps] == d_old.tolist()
    acc = _rr_acc()
    lo = np.array([float(acc.get_delta_bounds(float(e))[0]) for e in eps])
    assert np.all(d_new >= lo) and np.all(d_old >= lo)
    sel = d_old >= 1e-12
    assert sel.sum() >= 15
    r = d_new[sel] / d_old[sel]
    assert np.all(np.abs(r - 1) <= 0.02), (r.min(), r.max())
