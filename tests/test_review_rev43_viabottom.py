"""Review rev43 (session 43): attack on rep42's docs/accountant.md §9.20 (``via_bottom_penalty.penalty_bound``,
``limits.VIA_BOTTOM_PENALTY_KEEP``: a reported split through bot keeps its search's leg B) against references built
without the via-bottom code (rev42 compared the rule with the rule off; here the references are independent):

* the bound's definition (§9, Lemma 9.1): Q(eps) = min over splits of min(1, A(e1) + e^{e1} B(e2)), the legs
  certified by plain zero-out accountants of one law each (``tests/_rev43_legs.py``): the reported upper value is at
  least a certified lower value of Q (a grid of splits, the legs' monotonicity), and the reported lower value is at
  most an upper value of the split value at the reported split (``terms["epsilon_split"]``), at the cells where the
  rule fires (GaussianRandomizer(s), n = 1e3: (1, 8), (1.5, 6)) and one where it does not;
* n = 1 and n = 2: the split value at the reported split by scipy quadrature of the mechanism's own laws
  (``tests/_rev42_zero_ref.py``, written from the mechanism) lies inside the reported bracket (1e-7 relative margin for
  quad), and a hypothesis property of it at n = 1 over (s, eps).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches

import _rev42_zero_ref as ref
from _main_floats34 import switch
from _rev43_legs import Legs, f_upper, q_lower, spy_on


@pytest.mark.parametrize("s, n, eps, fires", [(1.0, 1000, 8.0, True), (1.5, 1000, 6.0, True),
                                              (1.0, 10**4, 4.0, False)])
def test_report_against_independent_legs(monkeypatch, s, n, eps, fires):
    from sharpdp.shuffle.accountant import via_bottom, via_bottom_budget, via_bottom_penalty as vp

    fired = spy_on(monkeypatch, vp.penalty_bound, via_bottom, via_bottom_budget)
    switch(monkeypatch, "VIA_BOTTOM_PENALTY_KEEP", True)  # (the rule attacked, whatever its default)
    clear_caches()
    r = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").report(eps)
    clear_caches()
    assert r.terms["via_bottom"]
    if fires:
        assert any(fired)  # (the rule kept a leg B here: the test is not idle)
    legs = Legs(GaussianRandomizer(s, 1), n)
    e1 = float(r.terms["epsilon_split"])
    assert 0.0 <= e1 <= eps
    ql, fu = q_lower(legs, eps, 8, 8), f_upper(legs, eps, e1)
    clear_caches()
    assert r.upper >= ql, (r.upper, ql)
    assert r.lower <= fu, (r.lower, fu)
    assert ql > 0.5 * r.upper  # (the reference is not vacuous)


def _quad_split(s: float, n: int, eps: float, e1: float) -> float:
    """A(e1) + e^{e1} B(eps - e1) by quadrature of the mechanism's laws (n = 1 or 2)."""
    def leg(j, e):
        g, laws = ref.gauss_laws(s, e)
        return ref.dup0_quad(laws[j], g, n)

    return leg(0, e1) + math.exp(e1) * leg(1, eps - e1)


def _inside(r, v: float) -> None:
    v = min(v, 1.0)
    assert r.lower <= v * (1 + 1e-7) and r.upper >= v * (1 - 1e-7), (r.lower, v, r.upper)


@pytest.mark.parametrize("s, n, eps", [(1.0, 2, 1.0), (2.0, 2, 2.0), (1.0, 1, 3.0)])
def test_split_value_by_quadrature_inside_the_bracket(s, n, eps):
    clear_caches()
    r = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").report(eps)
    clear_caches()
    _inside(r, _quad_split(s, n, eps, float(r.terms["epsilon_split"])))


@settings(max_examples=12, deadline=None)
@given(s=st.floats(0.6, 3.0), eps=st.floats(0.2, 5.0))
def test_split_value_n1_property(s, eps):
    clear_caches()
    r = ShuffleAccountant(GaussianRandomizer(s, 1), 1, "replace").report(eps)
    clear_caches()
    _inside(r, _quad_split(s, 1, eps, float(r.terms["epsilon_split"])))


def test_get_epsilon_zero_through_bottom_at_1e6(monkeypatch):
    """get_epsilon through bot at n = 1e6 (docs/accountant.md §8.22's get_delta(0) first and the mirror at n >=
    MIRROR_N, both on): delta 1 % above the bound's upper value at 0 gives the answer 0, and the independent legs'
    lower value of the bound at 0 (A(0) + B(0), the one split) is at most delta."""
    switch(monkeypatch, "EPS42_MIRROR", True)
    switch(monkeypatch, "EPS42_ZERO_FIRST", True)
    s, n = 1.0, 10**6
    _, up0 = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").get_delta_bounds(0.0)
    clear_caches()
    d = 1.01 * up0
    e = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").get_epsilon(d)
    clear_caches()
    assert e == 0.0
    assert q_lower(Legs(GaussianRandomizer(s, 1), n), e) <= d
    clear_caches()
