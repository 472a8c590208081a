"""Replace-one through bot: the reported split keeps its search's leg B where the far tail's lower-tail penalty holds
that leg's lower value (docs/accountant.md §9.20, ``via_bottom_penalty.penalty_bound``, switch
``limits.VIA_BOTTOM_PENALTY_KEEP``).

References are independent of the rule: a zero-out accountant's legs at the reported split (leg A tight, leg B as the
search certified it) combined by the test's own chain formula (Lemma 9.1 of docs/accountant.md §9, rounded outwards
as §9), and the split search with the switch off (session 41's floats, pinned by their hex)."""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.via_bottom import ViaBottom
from sharpdp.shuffle.accountant.via_bottom_budget import chain
from sharpdp.shuffle.accountant.via_bottom_penalty import penalty_bound
from _main_floats34 import switch
from test_rep24_via_bottom_speed import _acc, _second
from test_rep24b_idle_target import _calls

CELL = (1.0, 1000, 8.0)  # GaussianRandomizer(1), n = 1e3, eps = 8: the reported split's leg B is penalty-held
# session 41's report there (the switch off; bench/README.md's family-e map): lower, upper
MAIN = (float.fromhex("0x1.4c15acb121643p-33"), float.fromhex("0x1.58c704bc329e9p-33"))


def _leg(lower: float, upper: float, pen: float | None) -> AccountantReport:
    terms = {} if pen is None else {"lower_tail_penalty": pen, "body_upper": upper}
    return AccountantReport(0.5, lower, upper, terms=terms)


def _report(s: float, n: int, eps: float) -> tuple[AccountantReport, list]:
    """The replace accountant's report at eps and every leg (e, rel_tol, only, negligible) it asked for."""
    acc = _acc(s, n)
    return (lambda seen: (acc.report(eps), seen))(_calls(acc))


def test_rule_keeps_the_searchs_leg_b_and_the_chain_stays_certified(monkeypatch):
    """At the cell, (a) no leg B at the reported split is certified below rel_tol 0.1 (the budget step's 0.05 and the
    contract's 0.01 of before are not run), (b) the report is the chain of the search's leg B (an independent zero-out
    accountant's leg B at rel_tol 0.1, to the float) and leg A at rel_tol, (c) its upper value is above the chain's
    lower value from independent tight legs (leg A at 1e-4, leg B at 1e-2) and its lower value below their upper value
    (both are brackets of the same chain), (d) the switch off reproduces session 41's floats and certifies leg B
    below 0.1, its upper value within 2e-4 of the rule's. (Caught: the rule keeping leg B at rel_tol 1 (upper 1 %
    above); the rule before the mirror of §9.17; the chain without e^{e1} on leg B.)"""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    s, n, eps = CELL
    r, seen = _report(s, n, eps)
    e1 = float(r.terms["epsilon_split"])
    e2 = _second(eps, e1)
    assert [c for c in seen if c[0] == e2 and c[1] < 0.1] == []
    zo = _acc(s, n, "zero_out")
    w = math.exp(e1)
    a, b = zo._report(e1, 1e-2, only=(0,)), zo._report(e2, 0.1, only=(1,))
    assert penalty_bound(b)  # (the rule's case: penalty >= upper, lower < upper / 2)
    assert (r.upper, r.lower) == (min((a.upper + w * b.upper) * (1 + 8 * U), 1.0),
                                  min((a.lower + w * b.lower) * (1 - 8 * U), 1.0))
    at, bt = zo._report(e1, 1e-4, only=(0,)), zo._report(e2, 1e-2, only=(1,))
    assert r.upper >= (at.lower + w * bt.lower) * (1 - 8 * U)
    assert r.lower <= (at.upper + w * bt.upper) * (1 + 8 * U)
    switch(monkeypatch, "VIA_BOTTOM_PENALTY_KEEP", False)
    off, off_seen = _report(s, n, eps)
    assert (off.lower, off.upper) == MAIN
    assert off.terms["epsilon_split"] == e1
    assert any(c[0] == e2 and c[1] < 0.1 for c in off_seen)
    assert off.upper <= r.upper <= off.upper * (1 + 2e-4)


class _NoEngine:
    """A zero-out accountant the unit test never asks."""

    randomizer = None
    eps_tau = math.inf

    def _report(self, *a, **k):  # pragma: no cover - a kept leg must not be certified again
        raise AssertionError("a leg was certified")


@settings(max_examples=200, deadline=None)
@given(up=st.floats(1e-30, 0.5), lo_share=st.floats(0.0, 1.0), pen_share=st.floats(0.0, 1e3),
       has_pen=st.booleans(), on=st.booleans())
def test_contract_keeps_exactly_the_penalty_held_leg(up, lo_share, pen_share, has_pen, on):
    """``penalty_bound`` is the predicate of §9.20 (switch on, penalty >= RATIO upper, lower < LOWER upper, upper in
    (0, 1)) and ``_contract`` returns a wide split unchanged exactly where its leg B satisfies it, else asks for leg B
    again (recorded, not certified). (Caught: the comparison with the lower value instead of the upper value; the
    switch not read.)"""
    old = limits.VIA_BOTTOM_PENALTY_KEEP
    limits.VIA_BOTTOM_PENALTY_KEEP = on
    try:
        rb = _leg(lo_share * up, up, pen_share * up if has_pen else None)
        expect = on and has_pen and pen_share * up >= limits.VIA_BOTTOM_PENALTY_RATIO * up \
            and lo_share * up < limits.VIA_BOTTOM_PENALTY_LOWER * up
        assert penalty_bound(rb) == expect
        vb = ViaBottom(_NoEngine(), (None, None))
        asked = []
        vb.split = lambda eps, f, rel_tol, absolute=True, **k: asked.append((f, rel_tol, absolute)) or "again"
        ra = AccountantReport(0.25, 1e-12, 1e-12 * (1 + 1e-9))
        s = chain(0.5, 0.25, ra, rb)
        wide = not s.upper - s.lower <= 1e-2 * s.lower and limits.VALUE_FLOOR <= s.upper < 1.0 \
            and not rb.upper - rb.lower <= 1e-2 * rb.lower
        out = vb._contract(0.5, s, 1e-2)
        if wide and not expect:
            assert out == "again" and asked == [(0.5, 1e-2, False)]
        else:
            assert out is s and asked == []
    finally:
        limits.VIA_BOTTOM_PENALTY_KEEP = old
