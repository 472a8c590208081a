from _main_floats34 import session43_floats
"""Replace-one through bot (GaussianRandomizer, one dimension): get_delta_bounds floats pinned to the values of the
accountant before the faster get_epsilon search, and get_epsilon's answer checked at n = 2 against the true chain
A(e1) + e^{e1} B(e2) of the blanket legs (quadrature of tests/_blanket_pieces.py), minimised over the split by a
grid and bounded Brent: every split's chain bounds the true replace-one delta, and the accountant's certified value
at its split is at least that split's chain."""

import math

import pytest
from scipy.optimize import minimize_scalar

import sharpdp.shuffle as sh
from _blanket_pieces import dup_kind, gauss_pieces
from _main_floats34 import main_floats
from _main_floats34 import switch  # noqa: E402


def _fresh(s, n):
    sh.clear_caches()
    return sh.ShuffleAccountant(sh.GaussianRandomizer(s, 1), n, "replace", threads=1)


def _chain(s, e, e2, n=2):
    leg = lambda kind, x: dup_kind(gauss_pieces(s, max(x, 0.0), kind), s, n, 0.1)  # noqa: E731
    return leg("x_bot", e - e2) + math.exp(e - e2) * leg("bot_x", e2)


def _chain_min(s, e, n=2):
    """The least true chain found over splits (an upper value of the true replace-one delta at e)."""
    f = lambda e2: _chain(s, e, e2, n)  # noqa: E731
    v0, x0 = min((f(e * i / 60), e * i / 60) for i in range(1, 60))
    r = minimize_scalar(f, bounds=(max(x0 - e / 60, 1e-9), min(x0 + e / 60, e - 1e-9)), method="bounded",
                        options=dict(xatol=1e-7 * e))
    return min(v0, float(r.fun))


# (sigma0, n, eps list queried in this order on one accountant, the floats (lower, upper) before the change)
# (*) re-pinned, 1.2e-15 relative: the engine's tilt root found to 1e-10 relative by another iteration
# (docs/accountant_tail.md §25; any theta > 0 is valid, docs/accountant.md §3.4)
# (**) re-pinned after the compiled cells' exact empty intervals (docs/accountant_tail.md §29): nested in the old
# bracket, moved <= 1.6e-12 relative
PINNED = [
    (1.0, 2, [8.0, 4.0, 1.0], [("0x1.91fdc90f16ae7p-12", "0x1.935109e5db412p-12"),
                               ("0x1.286dd1c4c8b98p-4", "0x1.29185a7ddaa25p-4"),  # (*) (**)
                               ("0x1.0bdacd244e3a1p-1", "0x1.0ca3c04109a4cp-1")]),  # (**)
    (0.3, 2, [3.0, 1.0, 0.3, 0.1], [("0x1.0000000000000p+0", "0x1.0000000000000p+0")] * 4),  # the cap's proofs
]


@pytest.mark.parametrize("s,n,eps,hexes", PINNED)
def test_get_delta_bounds_floats_unchanged(s, n, eps, hexes, monkeypatch):
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "HAT_LOWER", False)  # (**) session 35, big35: pins main's floats; §45's values: test_big35_hat_lower.py
    main_floats(monkeypatch)  # (**) session 34, tail34: un-nested, pins an older rule's floats on purpose: docs/accountant_tail.md §44's switches off
    # (**) session 37, lead: §9.14's split at leg B's cliff edge moves the n = 2 floats (tests/test_rep37_closed_edge.py)
    switch(monkeypatch, "VIA_BOTTOM_CLOSED_EDGE", False)
    acc = _fresh(s, n)
    got = [tuple(float(v).hex() for v in acc.get_delta_bounds(e)) for e in eps]
    assert got == [tuple(float.fromhex(h).hex() for h in p) for p in hexes]


# (sigma0, delta, queries before, xtol, answer of the search before the change)
EPS_CELLS = [
    (2.0, 1e-6, [("d", 1.0), ("d", 3.0)], 1e-3, 4.695382680683855),
    (1.0, 1e-8, [("e", 1e-3), ("e", 1e-5), ("e", 1e-7)], 1e-3, 12.639489313181235),
    (4.6, 1e-3, [("e", 1e-10), ("e", 1e-6)], 1e-3, 0.9229907526073736),
    # (1.762930349181508 before the cliff edge of leg B was bisected to BEYOND_TOL (docs/accountant.md §9.5): the
    # answer moved down by 7.6e-5 relative, certified as the others)
    (4.6, 1e-6, [], 1e-6, 1.7627965703075625),
]


@pytest.mark.parametrize("s,delta,pre,xtol,before", EPS_CELLS)
def test_get_epsilon_certified_against_the_true_chain_at_n_2(s, delta, pre, xtol, before, monkeypatch):
    # (**) session 37, lead: pins the search's answer before §9.14 (the edge split gives 1.76276986 for 1.76279657 at
    # σ0 = 4.6, delta = 1e-6: lower, certified; §9.14's answers at n = 2: tests/test_rep37_closed_edge.py)
    switch(monkeypatch, "VIA_BOTTOM_CLOSED_EDGE", False)
    switch(monkeypatch, "REP49_SHRINK_STOP", False)  # (session 49, rep49: the bisection of before, stopped at its gain)
    acc = _fresh(s, 2)
    for kind, v in pre:
        acc.get_delta(v) if kind == "d" else acc.get_epsilon(v, xtol=xtol)
    e = float(acc.get_epsilon(delta, xtol=xtol))
    if not pre:
        _ANSWERS[(s, delta, xtol)] = e  # (a fresh accountant's answer: test_fresh_get_delta_at_the_answer_at_most_delta)
    up = float(acc.get_delta(e))
    assert up <= delta
    true = _chain_min(s, e)
    assert true <= up  # the certified value is not below the true chain's least value found
    assert true <= delta
    assert abs(e - before) <= xtol * before  # the answer stays within xtol of the search before the change


def test_fresh_get_delta_at_the_answer_at_most_delta():
    """A fresh accountant's get_delta at get_epsilon's answer (the full split search, not the searching accountant's
    walk) is <= delta: both bisect the cliff edge of leg B to BEYOND_TOL (docs/accountant.md §9.5). Before, the full
    search stopped a cliff step short (SHRINK_GAIN 3 %): 1.94 % above delta here. Catches a full search whose cliff
    refinement is coarser than the walk's."""
    key = (4.6, 1e-6, 1e-6)
    e = _ANSWERS[key] if key in _ANSWERS else float(_fresh(4.6, 2).get_epsilon(1e-6, xtol=1e-6))
    assert float(_fresh(4.6, 2).get_delta(e)) <= 1e-6


_ANSWERS: dict = {}  # get_epsilon's answers on fresh accountants, (sigma0, delta, xtol) -> eps (n = 2)
