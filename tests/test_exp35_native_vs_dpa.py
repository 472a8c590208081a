"""Session 35 (exp35): the native ComposedAccountant and dp_accounting's composition of the exported PLD, both on their
defaults, within 1 % of each other at k = 1, 10, 100, 1000 on replace-one rounds (the zero-out rounds are pinned by
tests/test_comp32_native_vs_export.py and tests/test_lat33_default_lattice.py; where and why they may differ:
docs/composition.md §4.5-§4.6, docs/embedding.md §4).

The reference is dp_accounting's own arithmetic (its FFT self-composition, hockey-stick sums and epsilon search) on the
exported PLD; the native value is sharpdp's certified composition engine on the same pair (one build per round).
"""

from __future__ import annotations

import pytest

import sharpdp.shuffle as sh

pytest.importorskip("dp_accounting")
from sharpdp.interop.dp_accounting import to_pld  # noqa: E402

KS = (1, 10, 100, 1000)
ROUNDS = {
    "krr-replace": lambda: sh.ShuffleAccountant(sh.RandomizedResponse(10, 2.0), 1000, "replace"),
    "rr2-sharp": lambda: sh.ExactShuffleAccountant(sh.RandomizedResponse(2, 1.0), 200, "replace"),
    "privunit-replace": lambda: sh.ShuffleAccountant(sh.PrivUnit(0.7, 0.2, 3), 1000, "replace"),
}


@pytest.mark.parametrize("name", list(ROUNDS))
def test_native_and_dp_accounting_within_1_percent_on_defaults(name):
    sh.clear_caches()
    acc = ROUNDS[name]()
    pld = to_pld(acc, progress=False)
    for k in KS:
        ca = sh.ComposedAccountant([(ROUNDS[name](), k)], progress=False)
        assert ca.pairs()[0] is sh.dominating_pair(acc, progress=False)  # one pair, both routes
        comp = pld.self_compose(k)
        for target in (1e-6, 1e-10):
            e = float(comp.get_epsilon_for_delta(target))
            d_ref = float(comp.get_delta_for_epsilon(e))
            d = float(ca.get_delta(e))
            assert abs(d / d_ref - 1) <= 1e-2, (name, k, target, d, d_ref)
        e_ref = float(comp.get_epsilon_for_delta(1e-6))
        e_nat = float(ca.get_epsilon(1e-6))
        assert abs(e_nat / e_ref - 1) <= 1e-2, (name, k, e_nat, e_ref)
    sh.clear_caches()
