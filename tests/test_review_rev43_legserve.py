"""Review rev43 (session 43): attack on rep43's docs/accountant.md §9.21 (``via_bottom_serve``,
``limits.VIA_BOTTOM_LEG_SERVE``, off: a leg through bot served by the same leg certified at another rel_tol). Skipped
while the module is absent (branch rep43).

Claims attacked, with the switch on, against references without the via-bottom code (``tests/_rev43_legs.py``: one-law
zero-out accountants): the reported bracket holds the split value at its split (lower value <= an upper value of
A(e1) + e^{e1} B(e2)) and its upper value is >= a certified lower value of the bound's minimum over splits; get_epsilon's
answer e through bot has that lower value of the bound at e at most delta (else no certified value at e could be <=
delta: an under-report); and the rule served legs (not idle).
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches

from _main_floats34 import switch
from _rev43_legs import Legs, f_upper, q_lower

vs = pytest.importorskip("sharpdp.shuffle.accountant.via_bottom_serve")


def _spy(monkeypatch) -> list:
    from sharpdp.shuffle.accountant import via_bottom

    got: list = []
    orig = vs.served
    monkeypatch.setattr(via_bottom, "served", lambda *a: got.append(orig(*a)) or got[-1])
    return got


@pytest.mark.parametrize("s, n, eps", [(1.0, 1000, 8.0), (1.5, 1000, 6.0)])
def test_served_report_holds_the_split_value(monkeypatch, s, n, eps):
    switch(monkeypatch, "VIA_BOTTOM_LEG_SERVE", True)
    got = _spy(monkeypatch)
    r = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").report(eps)
    clear_caches()
    legs = Legs(GaussianRandomizer(s, 1), n)
    e1 = float(r.terms["epsilon_split"])
    assert r.lower <= f_upper(legs, eps, e1), (r.lower, f_upper(legs, eps, e1))
    assert r.upper >= q_lower(legs, eps, 8, 8)
    assert any(g is not None for g in got)
    clear_caches()


@pytest.mark.parametrize("s, n, delta", [(1.5, 1000, 1e-12)])
def test_served_get_epsilon_certified(monkeypatch, s, n, delta):
    switch(monkeypatch, "VIA_BOTTOM_LEG_SERVE", True)
    got = _spy(monkeypatch)
    e = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").get_epsilon(delta)
    clear_caches()
    assert any(g is not None for g in got)
    legs = Legs(GaussianRandomizer(s, 1), n)
    assert q_lower(legs, e, 8, 8) <= delta, (e, delta)
    clear_caches()
