"""Leg B's lower value from the mirror of §9.15 inside the budget step of §9.12 (docs/accountant.md §9.17,
``limits.VIA_BOTTOM_MIRROR_BUDGET``).

At n = 1e8, where leg B's own lower value is 0 (the lattice caps), a call takes 12-25 s: these tests make leg B's
lower value 0 at moderate n instead (a zero-out accountant whose leg-B reports keep their upper values and lose their
lower values, which is what the caps do), and check the reports against references independent of the rule:
(1) an independent zero-out accountant's tight legs (rel_tol 1e-3) at the reported split: the reported upper value
above their chain's lower value, the reported lower value below their chain's upper value; (2) the rule's switch off;
(3) the mirror's lower value below leg B's own tight upper value (the identity itself is checked against quadrature in
tests/test_rep38_mirror.py). Counts of certifications, no timings.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from _main_floats34 import switch

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant.via_bottom import ViaBottom
from sharpdp.shuffle.accountant.via_bottom_mirror import mirror_b
from tests.test_rep36_settle import _gauss  # (one definition)


class _NoLowerB:
    """The zero-out accountant of a ViaBottom with leg B's lower values 0 (as the lattice caps make them at n = 1e8),
    counting leg B's certifications at a rel_tol below 0.1."""

    def __init__(self, zo):
        self.zo, self.tight_b = zo, 0

    def __getattr__(self, name):
        return getattr(self.zo, name)

    def _report(self, eps, rel_tol, *args, **kw):
        r = self.zo._report(eps, rel_tol, *args, **kw)
        if kw.get("only") == (1,):
            self.tight_b += rel_tol < 0.1
            return replace(r, lower=0.0)
        return r


def _capped(s, n, eps, on, monkeypatch):
    if not on:
        switch(monkeypatch, "VIA_BOTTOM_MIRROR_BUDGET", False)
    acc = _gauss(s, n)
    acc._bottom.bottom = zo = _NoLowerB(acc._bottom.bottom)
    r = acc.report(eps)
    monkeypatch.undo()
    return r, zo.tight_b


def _tight_chain(s, n, eps, r):
    """(lower, upper) of the chain at the report's split from an independent zero-out accountant's legs at 1e-3."""
    e1 = float(r.terms["epsilon_split"])
    e2 = ViaBottom._second(eps, e1)
    zo = _gauss(s, n, 1e-3, "zero_out")
    a, b = zo._report(e1, 1e-3, only=(0,)), zo._report(e2, 1e-3, only=(1,))
    return a.lower + math.exp(e1) * b.lower, a.upper + math.exp(e1) * b.upper


CELLS = [(0.5, 10**4, 0.1), (0.5, 10**4, 1.0), (0.5, 10**5, 0.1), (0.5, 1000, 0.5)]


@pytest.mark.parametrize("s, n, eps", CELLS)
def test_capped_leg_b_reported_within_budget_and_certified(s, n, eps, monkeypatch):
    """Leg B without lower values: the rule reports within 0.9 rel_tol, its upper value above and its lower value
    below the independent tight chain at its split, with no more leg-B certifications below rel_tol 0.1 than the budget
    step of before (which certifies leg B at a tighter rel_tol for a lower value it cannot give)."""
    r, tight_on = _capped(s, n, eps, True, monkeypatch)
    off, tight_off = _capped(s, n, eps, False, monkeypatch)
    lo, up = _tight_chain(s, n, eps, r)
    assert r.upper - r.lower <= 0.9 * 1e-2 * r.lower * (1 + 1e-12)
    assert r.upper >= lo * (1 - 1e-12) and r.lower <= up * (1 + 1e-12)
    assert tight_on <= tight_off
    lo_off, up_off = _tight_chain(s, n, eps, off)
    assert off.upper >= lo_off * (1 - 1e-12) and off.lower <= up_off * (1 + 1e-12)


def test_capped_leg_b_fewer_certifications_where_the_rule_fires(monkeypatch):
    """GaussianRandomizer(0.5), n = 1e4, ε = 0.1 with leg B's lower values 0: the report of before certifies leg B at
    a tighter rel_tol (and gets lower value 0 there too); the rule does not."""
    _, tight_on = _capped(0.5, 10**4, 0.1, True, monkeypatch)
    _, tight_off = _capped(0.5, 10**4, 0.1, False, monkeypatch)
    assert tight_on < tight_off


def test_mirror_b_raises_below_leg_b_and_gates(monkeypatch):
    """The raised lower value lies below leg B's own tight upper value (rel_tol 1e-3) and above 0; None with the switch
    off, where leg B's bracket is already narrow against the width, and for another randomizer's legs."""
    acc = _gauss(0.5, 10**4)
    vb = acc._bottom
    e1, e2 = 0.05, 0.05
    rb = vb.bottom._report(e2, 0.1, only=(1,))
    tight = _gauss(0.5, 10**4, 1e-3, "zero_out")._report(e2, 1e-3, only=(1,))
    out = mirror_b(vb, e1, e2, replace(rb, lower=0.0), 1e-2, 1e-3 * rb.upper)
    assert out is not None and 0.0 < out.lower <= tight.upper and out.upper == rb.upper
    assert mirror_b(vb, e1, e2, rb, 1e-2, 100.0 * rb.upper) is None  # (leg B's bracket not the width's larger part)
    switch(monkeypatch, "VIA_BOTTOM_MIRROR_BUDGET", False)
    assert mirror_b(vb, e1, e2, replace(rb, lower=0.0), 1e-2, 1e-3 * rb.upper) is None
    monkeypatch.undo()
    other = ShuffleAccountant(GaussianRandomizer(0.5, 1), 10**4, "replace")._bottom
    other.legs = ((0, 1), (0, 1))
    assert mirror_b(other, e1, e2, replace(rb, lower=0.0), 1e-2, 1e-3 * rb.upper) is None
