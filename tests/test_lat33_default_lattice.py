"""Session 33 (lat33): one default lattice per round (docs/composition.md §4.6).

``dominating_pair(acc)``, ``to_pld(acc)`` and ``ComposedAccountant([(acc, k)])`` all default to the round's export
step (``export_interval``), so one pair per round and process serves the three, and the native composition and
dp_accounting's composition of the exported PLD, each on its default, agree within 1 % in delta at k = 1-1000.

The references: dp_accounting's own PLD arithmetic (its FFT self-composition, hockey-stick sums and epsilon search,
code independent of sharpdp's certified engine) on the exported pair, and, at k = 1, the accountant's own certified
``get_delta`` (basic composition of one round is that value: §4.3).
"""

from __future__ import annotations

import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle.composition import auto_interval

pytest.importorskip("dp_accounting")
from sharpdp.interop.dp_accounting import export_interval, to_pld  # noqa: E402
from test_comp32_native_vs_export import KS, _heavy, _krr  # noqa: E402  (the same rounds as session 32's comparison)


def _private():
    return sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.95, 4.6, 1), 10**4)


def test_one_default_step_one_pair():
    """The three consumers of a round meet on one step and one pair object (built once: docs/composition.md §2.3);
    an explicit step still wins; a composition of two round types takes the smaller export step."""
    sh.clear_caches()
    acc = _krr()
    dx = export_interval(acc)
    assert dx == pytest.approx(1.31072e-4, rel=1e-12)  # 1e-6 2^17 / 1000: the doubling point at 1e-12
    assert auto_interval(acc) > dx  # the old default, coarser (eps_10 / 400)
    pair = sh.dominating_pair(acc, progress=False)
    assert pair.value_discretization_interval == dx
    ca = sh.ComposedAccountant([(acc, 10)], progress=False)
    assert ca.value_discretization_interval == dx
    assert ca.pairs()[0] is pair
    assert to_pld(acc, progress=False)._pmf_remove._discretization == dx
    assert sh.dominating_pair(_krr(), dx, progress=False) is pair  # another accountant object of the same round
    assert sh.dominating_pair(acc, 1e-3, progress=False).value_discretization_interval == 1e-3
    other = sh.ShuffleAccountant(sh.RandomizedResponse(10, 2.0), 10**5)
    two = sh.ComposedAccountant([(acc, 2), (other, 3)], progress=False)
    assert two.value_discretization_interval == min(dx, export_interval(other))
    with pytest.raises(ValueError, match="value_discretization_interval"):
        sh.dominating_pair(acc, 1e-13)
    sh.clear_caches()


@pytest.mark.parametrize("make", [_private, _heavy], ids=["private", "heavy"])
def test_default_routes_within_1_percent(make):
    """As a user meets them: ComposedAccountant([(acc, k)]) and to_pld(acc).self_compose(k), every default. At
    dp_accounting's eps for delta = 1e-6 and 1e-10 the certified composed delta is within 1 % of dp_accounting's at
    k = 1, 10, 100, 1000 (one pair: at k >= 2 within 1e-3, sharpdp's error terms and dp_accounting's truncation; at
    k = 1 basic composition, the round's own get_delta, up to ~0.9 % below the export: §4.3, §2.12), and the epsilon
    at delta = 1e-6 within 1 % (the native default xtol 1e-3 included)."""
    sh.clear_caches()
    acc = make()
    pld = to_pld(acc, progress=False)
    for k in KS:
        ca = sh.ComposedAccountant([(acc, k)], progress=False)
        comp = pld.self_compose(k)
        for target in (1e-6, 1e-10):
            e = float(comp.get_epsilon_for_delta(target))
            d_ref = float(comp.get_delta_for_epsilon(e))
            d = float(ca.get_delta(e))
            assert abs(d / d_ref - 1) <= (1e-2 if k == 1 else 1e-3), (k, target, d, d_ref)
            if k == 1:  # basic composition of one round: the accountant's own certified value
                assert d == pytest.approx(float(acc.get_delta(e)), rel=1e-12)
        e_ref = float(comp.get_epsilon_for_delta(1e-6))
        e_nat = float(ca.get_epsilon(1e-6))
        assert abs(e_nat / e_ref - 1) <= 1e-2, (k, e_nat, e_ref)
        assert float(ca.get_delta(e_nat)) <= 1e-6
    sh.clear_caches()
