"""One build per round per process: the shared, bounded caches of profile values and dominating
pairs (docs/composition.md §2.3).

Builds are counted by wrapping ``sharpdp.shuffle.profile._build`` (the construction itself) and the
accountants' ``get_delta_bounds``; the reference for "values identical" is a pair built afresh
after ``clear_caches()``.
"""

from __future__ import annotations

import numpy as np
import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle import profile, round_cache

DX = 5e-3
OPTS = dict(max_evaluations=40, progress=False)


def rr(eps0: float = 1.0) -> sh.RandomizedResponse:
    return sh.RandomizedResponse(k=2, epsilon0=eps0)


@pytest.fixture
def builds(monkeypatch):
    """Clear the caches, count the pair constructions (list of round keys built)."""
    sh.clear_caches()
    seen: list = []
    real = profile._build

    def counting(accountant, *args, **kwargs):
        seen.append(profile.round_key(accountant))
        return real(accountant, *args, **kwargs)

    monkeypatch.setattr(profile, "_build", counting)
    yield seen
    sh.clear_caches()


def test_a_second_accountant_of_the_same_round_reuses_the_pair(builds):
    a = sh.ShuffleAccountant(rr(), 50)
    b = sh.ShuffleAccountant(rr(), 50)  # equal round, different objects (randomizer too)
    pa = sh.dominating_pair(a, DX, **OPTS)
    calls = []
    b.get_delta_bounds = lambda e: calls.append(e)  # b must not be asked for anything
    pb = sh.dominating_pair(b, DX, **OPTS)
    assert len(builds) == 1 and pb is pa and calls == []
    # ComposedAccountant (and to_pld below) go through the same cache
    comp = sh.ComposedAccountant([(sh.ShuffleAccountant(rr(), 50), 3)], DX, **OPTS)
    assert comp.pairs()[0] is pa and len(builds) == 1
    # the shared arrays cannot be changed by one caller under another's feet
    with pytest.raises(ValueError):
        pa.probs[0] = 0.0


def test_to_pld_and_shuffle_pld_accountant_reuse_the_pair(builds):
    pytest.importorskip("dp_accounting")
    from sharpdp.interop.dp_accounting import ShuffledRoundEvent, ShufflePLDAccountant, to_pld

    a = sh.ShuffleAccountant(rr(), 50)
    p = sh.dominating_pair(a, DX, **OPTS)
    pld = to_pld(sh.ShuffleAccountant(rr(), 50), DX, **OPTS)
    assert len(builds) == 1
    eps = 0.3
    assert pld.get_delta_for_epsilon(eps) == pytest.approx(p.get_delta(eps), rel=1e-9)
    # dp_accounting's calibration loops build a new accountant per candidate: one build per round
    for _ in range(3):
        acc = ShufflePLDAccountant(value_discretization_interval=DX, **OPTS)
        acc.compose(ShuffledRoundEvent(rr(), 50), 2)
    assert len(builds) == 1  # the same round (rel_tol 1e-2 both): built once


@pytest.mark.parametrize("other", [
    lambda: sh.ShuffleAccountant(rr(1.1), 50),  # randomizer parameter
    lambda: sh.ShuffleAccountant(rr(), 51),  # n
    lambda: sh.ShuffleAccountant(rr(), 50, "replace"),  # adjacency
    lambda: sh.ShuffleAccountant(rr(), 50, rel_tol=5e-3),  # accountant accuracy
])
def test_different_rounds_do_not_share(builds, other):
    base = sh.ShuffleAccountant(rr(), 50)
    b = other()
    assert profile.round_key(b) != profile.round_key(base)
    pa = sh.dominating_pair(base, DX, **OPTS)
    pb = sh.dominating_pair(b, DX, **OPTS)
    assert len(builds) == 2 and pb is not pa


def test_keys_see_sampler_charge_grid_and_pair_options(builds):
    g = sh.BlanketMixedGaussian(0.5, 2.0, 1)
    k = profile.round_key(sh.ShuffleAccountant(g, 100))
    assert k == profile.round_key(sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.5, 2.0, 1), 100))
    assert k != profile.round_key(sh.ShuffleAccountant(g, 100, sampler_charge=False))
    assert k != profile.round_key(sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.5, 2.0, 1, grid_bits=8), 100))
    assert k != profile.round_key(sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.5, 2.0, 2), 100))
    # pair options are part of the pair's key; progress is not
    a = sh.ShuffleAccountant(rr(), 50)
    p1 = sh.dominating_pair(a, DX, **OPTS)
    assert sh.dominating_pair(a, DX, max_evaluations=40, progress=None) is p1
    p2 = sh.dominating_pair(a, DX, max_evaluations=40, cover_upper=False, progress=False)
    p3 = sh.dominating_pair(a, 2 * DX, **OPTS)
    assert len(builds) == 3 and p2 is not p1 and p3 is not p1


def test_objects_outside_the_known_randomizers_are_keyed_by_identity(builds):
    class MyRR(sh.RandomizedResponse):  # a subclass may change the laws: never shared by value
        pass

    a, b = MyRR(2, 1.0), MyRR(2, 1.0)
    assert repr(a) == repr(b)
    ka, kb = (profile.round_key(sh.ShuffleAccountant(r, 50)) for r in (a, b))
    assert ka != kb
    assert ka == profile.round_key(sh.ShuffleAccountant(a, 50))  # the same object is shared


def test_clear_caches_rebuilds_the_same_values(builds):
    a = sh.ShuffleAccountant(rr(), 50)
    p1 = sh.dominating_pair(a, DX, **OPTS)
    sh.clear_caches()
    p2 = sh.dominating_pair(sh.ShuffleAccountant(rr(), 50), DX, **OPTS)
    assert len(builds) == 2 and p2 is not p1
    np.testing.assert_array_equal(p1.losses, p2.losses)
    np.testing.assert_array_equal(p1.probs, p2.probs)
    assert p1.infinity_mass == p2.infinity_mass
    # and the values agree with the accountant's certified ones (the pair is above get_delta)
    for e in (0.05, 0.2, 0.5):
        assert p2.get_delta(e) >= a.get_delta(e)


def test_the_caches_are_bounded(builds, monkeypatch):
    monkeypatch.setattr(round_cache, "MAX_PAIRS", 2)
    monkeypatch.setattr(round_cache, "MAX_ROUNDS", 2)
    accs = [sh.ShuffleAccountant(rr(e), 30) for e in (0.8, 0.9, 1.0)]
    for a in accs:
        sh.dominating_pair(a, DX, **OPTS)
    assert len(round_cache.PAIRS) == 2 and len(round_cache.VALUES) == 2
    sh.dominating_pair(accs[0], DX, **OPTS)  # the oldest was dropped: built again
    assert len(builds) == 4
    sh.dominating_pair(accs[2], DX, **OPTS)  # still cached
    assert len(builds) == 4
