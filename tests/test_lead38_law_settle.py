"""A law settled along a profile's sweep by its certified value at a smaller eps (docs/accountant.md §7.5)."""

import numpy as np
from hypothesis import given, settings, strategies as st

import sharpdp.shuffle.accountant as acc_mod
from sharpdp.shuffle import BlanketMixedGaussian, RandomizedResponse, ShuffleAccountant, privacy_profile
from sharpdp.shuffle.accountant.law_settle import LawSettle
from sharpdp.shuffle.accountant.plain_warm import warm_sweep

from _main_floats34 import switch


def _counting(monkeypatch):
    """Wrap the accountant's `certify` and count calls per law object's order (0: x vs bot, 1: bot vs x)."""
    calls = []
    real = acc_mod.certify

    def wrapped(law, *a, **k):
        calls.append(law)
        return real(law, *a, **k)

    monkeypatch.setattr(acc_mod, "certify", wrapped)
    return calls


def _profile(monkeypatch, on: bool, r, n, grid):
    switch(monkeypatch, "SWEEP_LAW_SETTLE", on)
    calls = _counting(monkeypatch)
    v = privacy_profile(ShuffleAccountant(r, n), grid, progress=False)
    monkeypatch.undo()
    return v, len(calls)


def test_sweep_skips_the_other_order_and_stays_certified(monkeypatch):
    # the heavy round of bench/bench_composition.py: its order bot vs x is ~1e-55 of x vs bot from eps ~0.7 on
    r, n = BlanketMixedGaussian(0.0409, 0.596, 1), 100_000
    grid = np.linspace(0.0, 5.0, 40)
    v_on, c_on = _profile(monkeypatch, True, r, n, grid)
    v_off, c_off = _profile(monkeypatch, False, r, n, grid)
    assert c_off == 2 * len(grid)  # both orders at every eps without the rule
    assert c_on <= len(grid) + 6  # the order bot vs x settled after its first few values (44 of 80 calls)
    # every value an upper value: at or above a tight fresh bracket's lower value (rel_tol 1e-3, rule off)
    ref = ShuffleAccountant(r, n, rel_tol=1e-3)
    for e, u in zip(grid[::6], v_on[::6]):
        lo, up = ref.get_delta_bounds(float(e))
        assert lo <= u * (1 + 1e-12)
        assert u <= up * 1.02  # and as accurate as the profile asks (rel_tol 1e-2)
    # law 0 attains the maximum at every eps here, so the reported values are main's
    np.testing.assert_array_equal(v_on, v_off)


def test_no_rule_outside_a_sweep_nor_for_randomizers_without_a_stable_law_order(monkeypatch):
    switch(monkeypatch, "SWEEP_LAW_SETTLE", True)
    a = ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10_000)
    for e in (1e-4, 2e-4, 3e-4):
        a.get_delta_bounds(e)
    assert a._settle._eps == {}  # nothing recorded outside privacy_profile's sweep
    assert not LawSettle(RandomizedResponse(10, 4.0)).on  # a FiniteRandomizer lists identical laws once
    assert LawSettle(BlanketMixedGaussian(0.5, 1.0, 1)).on
    with warm_sweep():
        assert LawSettle(BlanketMixedGaussian(0.5, 1.0, 1)).applies()
        switch(monkeypatch, "SWEEP_LAW_SETTLE", False)
        assert not LawSettle(BlanketMixedGaussian(0.5, 1.0, 1)).applies()


def test_negligible_is_not_the_maximum(monkeypatch):
    """A law is skipped against the largest *computed* upper value, never against `negligible` (the report's
    upper value is the largest computed one): with a huge negligible the second order is still certified where its
    recorded value exceeds law 0's."""
    s = LawSettle(BlanketMixedGaussian(0.5, 1.0, 1))
    s.put(1, 0.1, 0.3)
    assert s.settled(1, 0.2, 0.3) and not s.settled(1, 0.2, 0.29) and not s.settled(1, 0.05, 1.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 1)), min_size=0, max_size=12), st.floats(0, 10),
       st.floats(0, 1))
def test_settled_matches_brute_force(entries, eps, m):
    s = LawSettle(BlanketMixedGaussian(0.5, 1.0, 1))
    for e, u in entries:
        s.put(0, e, u)
    best: dict[float, float] = {}
    for e, u in entries:
        best[e] = min(best.get(e, np.inf), u)
    expect = any(e <= eps and u <= m for e, u in best.items())
    assert s.settled(0, eps, m) == expect
