"""Review rev36 (session 36): tail36's far-tail rules (docs/accountant_tail.md §48) inside replace-one through bot at
n = 1e8 (docs/accountant.md §9: the legs are zero-out values on the far-tail path).

Claim attacked: the reported upper value is >= delta_replace's bound at its split: the chain of the lower values of
both legs from a fresh rel_tol-1e-3 zero-out accountant with §48's switches off (main's code path), each leg a
certified lower value of its own D_up. Measured at tail36's 1f2f95e2: sigma0 = 1, eps = 0.01: 1.6884e-9 >= 1.6804e-9;
sigma0 = 0.35, eps = 0.3: 0.5692 >= 0.3603 (a 58 % bracket there: rel_tol is missed, see the report).
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from _main_floats34 import switch

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant.via_bottom import ViaBottom


@pytest.fixture(autouse=True)
def _body_end_snap_on(monkeypatch):
    """§48.1's rule on for every test here: it is off by default since docs/accountant_tail.md §48.4."""
    switch(monkeypatch, "BODY_END_SNAP", True)



@pytest.mark.parametrize("s, n, eps", [(1.0, 10**8, 0.01), (0.35, 10**8, 0.3)], ids=str)
def test_replace_report_above_the_main_path_chain(s, n, eps, monkeypatch):
    clear_caches()
    r = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").report(eps)
    e1 = float(r.terms["epsilon_split"])
    e2 = ViaBottom._second(eps, e1)
    assert Fraction(e1) + Fraction(e2) <= Fraction(eps)
    switch(monkeypatch, "BODY_END_SNAP", False)
    switch(monkeypatch, "CAP_COARSE", 1.0)
    clear_caches()
    zo = ShuffleAccountant(GaussianRandomizer(s, 1), n, "zero_out", rel_tol=1e-3)
    a, b = zo._report(e1, 1e-3, only=(0,)), zo._report(e2, 1e-3, only=(1,))
    low = a.lower + math.exp(e1) * b.lower
    assert r.upper >= min(low, 1.0) * (1 - 1e-12), (s, n, eps, e1, e2, r.upper, low)
