"""Replace-one through bot: the loose split search started from the end split at small eps, the cap proofs refuted
by closed-form upper values and the search ended at its first split below the value floor (docs/accountant.md §9.18,
``limits.VIA_BOTTOM_END_FIRST``, ``limits.VIA_BOTTOM_CAP_REFUTE``, ``limits.VIA_BOTTOM_FLOOR_FIRST``).

References independent of the rules: (1) an independent zero-out accountant's tight legs (rel_tol 1e-3) at the reported
split (the reported bracket against their chain); (2) a brute force of the least split's value over 41 splits
f = k / 40 from tight legs (the reported split's chain may exceed it only by the search's resolution: its lower value
at most 0.2 % above, its upper value within rel_tol); (3) the three cap proofs of §9.3 run to their end wherever the refutation fires (none may report);
(4) the switches off; (5) below the value floor, the first split's own tight chain. Counts of certifications, no
timings.
"""

from __future__ import annotations

import math

import pytest
from _main_floats34 import switch

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.via_bottom import ViaBottom
from sharpdp.shuffle.accountant.via_bottom_cover import cap_refuted
from tests.test_rep36_settle import _gauss  # (one definition)
from tests.test_rep39_cover_target import _Count  # (the zero-out accountant's leg certifications, counted)

RT = 1e-2


def _run(s, n, eps, monkeypatch, on=True):
    if not on:
        switch(monkeypatch, "VIA_BOTTOM_END_FIRST", 0.0)
        switch(monkeypatch, "VIA_BOTTOM_CAP_REFUTE", False)
        switch(monkeypatch, "VIA_BOTTOM_FLOOR_FIRST", False)
    acc = _gauss(s, n)
    acc._bottom.bottom = zo = _Count(acc._bottom.bottom)
    r = acc.report(eps)
    monkeypatch.undo()
    return r, zo.calls


def _legs(s, n):
    zo = _gauss(s, n, 1e-3, "zero_out")
    return (lambda e: zo._report(e, 1e-3, only=(0,))), (lambda e: zo._report(e, 1e-3, only=(1,)))


def _tight_chain(s, n, eps, e1):
    """(lower, upper) of the chain at the split e1 from an independent zero-out accountant's legs at rel_tol 1e-3."""
    a_leg, b_leg = _legs(s, n)
    a, b = a_leg(e1), b_leg(ViaBottom._second(eps, e1))
    w = math.exp(e1)
    return a.lower + w * b.lower, a.upper + w * b.upper


def _brute_least(s, n, eps, k=40):
    """The least upper value of the chain over the splits f = j / k (tight legs): an upper value of the least split's
    value, which no search can beat by more than the legs' widths."""
    a_leg, b_leg = _legs(s, n)
    best = math.inf
    for j in range(k + 1):
        e1 = eps * j / k
        best = min(best, a_leg(e1).upper + math.exp(e1) * b_leg(ViaBottom._second(eps, e1)).upper)
    return best


# (sigma0, n, eps) of the family-e map where the rule starts from the end: the least split at f = 0 (the first five) or
# inside (the last two)
CELLS = [(1.0, 10, 1e-3), (1.0, 1000, 1e-2), (2.0, 10, 0.1), (4.6, 10, 1e-2), (1.0, 1000, 1e-3), (4.6, 1000, 1e-3),
         (2.0, 1000, 1e-2)]


def test_start_splits():
    """The start of §9.18 at 0 < eps <= VIA_BOTTOM_END_FIRST, main's (f = 0.5, 0.65) elsewhere."""
    assert ViaBottom._start(limits.VIA_BOTTOM_END_FIRST) == (0.0, 0.5)
    assert ViaBottom._start(1e-3) == (0.0, 0.5)
    assert ViaBottom._start(0.5) == (0.5, 0.65)
    assert ViaBottom._start(0.0) == (0.5, 0.65)


@pytest.mark.parametrize("s, n, eps", CELLS)
def test_end_first_certified_within_rel_tol_and_near_the_least_split(s, n, eps, monkeypatch):
    """The rule's report: within rel_tol, its upper value above the independent tight chain's lower value at its split
    (and its lower value below that chain's upper value), the chain at its split (its lower value) at most 0.2 % above
    the brute force's least split and its upper value within rel_tol of it; the same with the switches off (main's
    search)."""
    least = _brute_least(s, n, eps)
    for on in (True, False):
        r, _ = _run(s, n, eps, monkeypatch, on)
        lo, up = _tight_chain(s, n, eps, float(r.terms["epsilon_split"]))
        assert r.upper - r.lower <= RT * r.lower * (1 + 1e-12)
        assert r.upper >= lo * (1 - 1e-12) and r.lower <= up * (1 + 1e-12)
        assert r.lower <= least * (1 + 2e-3) and r.upper <= least * (1 + RT)


@pytest.mark.parametrize("s, n, eps", CELLS[:5])
def test_end_first_fewer_legs_where_the_end_is_least(s, n, eps, monkeypatch):
    """Where the least split is at f = 0 the rule reports it with two certifications fewer than main's search (which
    reaches the end after its splits at f = 0.5 and 0.65), at the same upper value within 1e-3."""
    on, legs_on = _run(s, n, eps, monkeypatch, True)
    off, legs_off = _run(s, n, eps, monkeypatch, False)
    assert float(on.terms["epsilon_split"]) == 0.0
    assert legs_on <= legs_off - 2
    assert abs(on.upper / off.upper - 1.0) <= 1e-3


# (sigma0, n, eps, whether the refutation fires): below the cap where the closed forms are tight enough (True), at the
# cap (0.46, 10) and below it where the closed upper values are too loose to refute (0.46 at n >= 1e3: False)
REFUTE = [(0.46, 10, 1.0, False), (0.46, 10, 8.0, True), (0.46, 1000, 2.0, False), (0.46, 1000, 4.0, False),
          (0.46, 10**5, 0.01, False), (1.0, 10, 0.01, True), (1.0, 10, 2.0, True), (2.0, 1000, 1.0, True),
          (4.6, 1000, 1.0, True), (1.0, 1000, 0.1, True)]


@pytest.mark.parametrize("s, n, eps, fires", REFUTE)
def test_cap_refuted_only_where_no_cap_proof_reports(s, n, eps, fires):
    """Wherever ``cap_refuted`` fires, each of the three cap proofs of §9.3, run to its end on a fresh object, reports
    nothing, and the chain of the closed-form upper values is above the independent tight chain's lower value (the
    closed forms are upper values of D_up at that split); it fires at the cells expected."""
    vb = _gauss(s, n)._bottom
    refuted = cap_refuted(vb, eps, RT)
    assert refuted == fires
    if refuted:
        assert vb._cap_at_one_split(eps, RT, (max(RT, 0.1), vb.PROBE_TOL)) is None
        assert vb._cap_closed(eps, RT) is None
        assert vb._cap_at_one_split(eps, RT, (RT, RT)) is None
        e1 = vb.SPLITS[0] * eps
        lo, _ = _tight_chain(s, n, eps, e1)
        up = vb._closed_leg(0, e1, RT)[1] + math.exp(e1) * vb._closed_leg(1, vb._second(eps, e1), RT)[1]
        assert up >= lo * (1 - 1e-12)


def test_cap_refuted_not_at_the_cap_and_switch(monkeypatch):
    """At a cap cell (every split >= 1) no refutation, the report (1, 1) as before; with the switch off none at all."""
    vb = _gauss(0.46, 10)._bottom
    assert not cap_refuted(vb, 1.0, RT)
    assert _gauss(0.46, 10).get_delta_bounds(1.0) == (1.0, 1.0)
    vb = _gauss(4.6, 1000)._bottom
    assert cap_refuted(vb, 1.0, RT)
    switch(monkeypatch, "VIA_BOTTOM_CAP_REFUTE", False)
    assert not cap_refuted(vb, 1.0, RT)


@pytest.mark.parametrize("s, n, eps", [(1.0, 1000, 1.0), (2.0, 10, 0.5), (4.6, 1000, 2.0)])
def test_cap_refute_keeps_the_brackets(s, n, eps, monkeypatch):
    """Outside the end-first range the refutation only skips proofs that cannot report: the brackets are those of the
    switch off at these cells (measured: no bracket of the 96 family-e cells moved by it)."""
    on = _gauss(s, n).get_delta_bounds(eps)
    switch(monkeypatch, "VIA_BOTTOM_CAP_REFUTE", False)
    off = _gauss(s, n).get_delta_bounds(eps)
    assert on == off


@pytest.mark.parametrize("s, n, eps", [(4.6, 1000, 1.0), (4.6, 10**5, 0.5), (2.0, 10**5, 2.0), (4.6, 10, 8.0)])
def test_floor_first_reports_the_first_split_below_the_floor(s, n, eps, monkeypatch):
    """Below VALUE_FLOOR the model search ends at its first split (f = 0.5 here): the report is that split's certified
    chain (its upper value above the independent tight chain's lower value there, its lower value below that chain's
    upper value), below the floor, with fewer certifications than main's search; main's report is below the floor too."""
    r, legs_on = _run(s, n, eps, monkeypatch, True)
    off, legs_off = _run(s, n, eps, monkeypatch, False)
    assert float(r.terms["epsilon_split"]) == 0.5 * eps
    lo, up = _tight_chain(s, n, eps, 0.5 * eps)
    assert r.upper >= lo * (1 - 1e-12) and r.lower <= up * (1 + 1e-12)
    assert r.upper < limits.VALUE_FLOOR and off.upper < limits.VALUE_FLOOR
    assert legs_on < legs_off
