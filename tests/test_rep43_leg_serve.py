"""Replace-one through bot: a leg asked at one rel_tol served by the same leg certified at another rel_tol
(docs/accountant.md §9.21, ``via_bottom_serve.served``, switch ``limits.VIA_BOTTOM_LEG_SERVE``, off by default).

References are independent of the rule: the predicate's cases written out by hand, a brute-force choice over a
synthetic cache, an independent zero-out accountant's legs at the reported split combined by the test's own chain
(Lemma 9.1 of docs/accountant.md §9, rounded outwards as §9), and the split search with the switch off (main's floats,
recorded from main's run of the family-e map)."""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.via_bottom_serve import SEARCH_TOL, served, serves
from _main_floats34 import machine_same, switch
from test_rep24_via_bottom_speed import _acc, _second
from test_rep24b_idle_target import _calls

# GaussianRandomizer(2), n = 10, eps = 4: the rule serves ~8 legs there; main's report (lower, upper)
CELL = (2.0, 10, 4.0)
MAIN = (3.588494433443134e-08, 3.599493886614158e-08)


def _r(lower: float, upper: float, refused: bool = False) -> AccountantReport:
    return AccountantReport(0.5, lower, upper, terms={"refused": "x"} if refused else {})


def test_serves_cases_by_hand():
    """Each clause of §9.21.1 alone, and what must not serve. (Caught: a looser leg serving a tighter request by its
    rel_tol alone; a refused leg's [0, 1] serving; a reported split's leg served by a looser bracket.)"""
    wide = _r(1.0, 1.5)  # 50 % wide
    assert serves(wide, 0.01, 0.0, 0.1, 0.0)  # asked tighter, no target
    assert serves(wide, 0.01, 1e-3, 0.1, 1e-3)  # asked tighter, the same target
    assert not serves(wide, 0.01, 1e-2, 0.1, 1e-3)  # asked tighter but to a larger target, above the request's
    assert not serves(wide, 1.0, 0.0, 0.1, 0.0)  # asked looser, bracket wider than 0.1
    assert serves(_r(1.0, 1.05), 1.0, 0.0, 0.1, 0.0)  # asked looser, bracket within 0.1
    assert not serves(_r(1.0, 1.05), 1.0, 0.0, 0.01, 0.0)  # ... but not for a reported split's leg (rel_tol < 0.1)
    assert serves(_r(0.0, 1e-20), 30.0, 0.0, 0.1, 1e-18)  # below the request's absolute target
    assert not serves(_r(0.0, 1e-20), 30.0, 0.0, 0.01, 1e-18)  # ... not for a reported split's leg
    assert not serves(_r(0.0, 1.0, refused=True), 0.01, 0.0, 0.1, 0.0)
    assert not serves(_r(0.0, 0.5), 1.0, 0.0, 0.1, 0.0)  # lower value 0: no relative width


class _Cache:
    def __init__(self, items):
        self._leg_cache = {k: r for k, r, _ in items}
        self._leg_neg = {k: neg for k, _, neg in items}


@settings(max_examples=300, deadline=None)
@given(data=st.data(), on=st.booleans())
def test_served_is_the_least_serving_cached_leg(data, on):
    """``served`` returns None with the switch off; with it on, a cached report of the same order and epsilon at
    another rel_tol that serves, of least upper value, or None exactly where none serves (brute force over the synthetic
    cache). (Caught: a leg of the other order or another epsilon served; the switch not read.)"""
    tols = (0.01, 0.05, 0.1, 0.3, 1.0, 30.0)
    items = []
    for _ in range(data.draw(st.integers(0, 8))):
        j, e, t = data.draw(st.sampled_from((0, 1))), data.draw(st.sampled_from((0.25, 0.5))), data.draw(st.sampled_from(tols))
        up = data.draw(st.floats(1e-30, 1.0))
        lo = up * data.draw(st.sampled_from((0.0, 0.5, 0.95, 0.999)))
        items.append(((j, e, t), _r(lo, up, data.draw(st.booleans())), data.draw(st.sampled_from((0.0, 1e-20, 1e-5)))))
    vb = _Cache(items)
    rel_tol = data.draw(st.sampled_from(tols))
    neg = data.draw(st.sampled_from((0.0, 1e-20, 1e-5)))
    old = limits.VIA_BOTTOM_LEG_SERVE
    limits.VIA_BOTTOM_LEG_SERVE = on
    try:
        got = served(vb, 1, 0.5, rel_tol, neg)
    finally:
        limits.VIA_BOTTOM_LEG_SERVE = old
    ok = [r for (j, e, t), r in vb._leg_cache.items() if j == 1 and e == 0.5 and t != rel_tol
          and serves(r, t, vb._leg_neg[(j, e, t)], rel_tol, neg)]
    if not on or not ok:
        assert got is None
        return
    assert got is not None and any(got is r for r in ok)
    assert got.upper == min(r.upper for r in ok)
    # every serving report is one of the engine's (the cache) and meets the request: by hand
    t = next(t for (j, e, t), r in vb._leg_cache.items() if r is got and j == 1 and e == 0.5)
    assert (t <= rel_tol and (vb._leg_neg[(1, 0.5, t)] <= neg or got.upper < neg)) or (rel_tol >= SEARCH_TOL and (
        (got.lower > 0 and got.upper - got.lower <= rel_tol * got.lower) or got.upper < neg))


def test_real_cell_certified_tight_and_off_gives_mains_floats(monkeypatch):
    """At GaussianRandomizer(2), n = 10, eps = 4 with the rule on: (a) fewer legs certified by the engine than with it off,
    (b) the report's upper value is above the chain's lower value from an independent zero-out accountant's tight legs
    (leg A and leg B at 1e-4) at the reported split and its lower value below their upper value (both bracket the same
    chain), (c) its upper value within 1 % (the call's rel_tol) of that tight chain's; (d) the switch off gives main's
    floats. (Caught: a served leg of the other order, its chain then far from the tight one; the switch not read.)"""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    s, n, eps = CELL
    switch(monkeypatch, "VIA_BOTTOM_LEG_SERVE", True)
    acc = _acc(s, n)
    seen_on = _calls(acc)
    r = acc.report(eps)
    e1 = float(r.terms["epsilon_split"])
    e2 = _second(eps, e1)
    zo = _acc(s, n, "zero_out")
    w = math.exp(e1)
    at, bt = zo._report(e1, 1e-4, only=(0,)), zo._report(e2, 1e-4, only=(1,))
    lo_t, up_t = (at.lower + w * bt.lower) * (1 - 8 * U), (at.upper + w * bt.upper) * (1 + 8 * U)
    assert r.upper >= lo_t and r.lower <= up_t
    assert r.upper <= up_t * 1.01
    switch(monkeypatch, "VIA_BOTTOM_LEG_SERVE", False)
    acc = _acc(s, n)
    seen_off = _calls(acc)
    off = acc.report(eps)
    assert machine_same((off.lower, off.upper), MAIN)
    assert len(seen_on) < len(seen_off)
