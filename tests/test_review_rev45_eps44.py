"""Review rev45 (session 45): attack on docs/accountant.md §8.24.1 (``limits.EPS44_SHAPE_START``: get_epsilon's phase 1
from the root of the shape model "normal body plus one big jump" where the laws are not all atom laws and
(n - 1) gamma >= EPS44_SHAPE_ACTIVE; a choice of points only).

rev44 checked three GaussianRandomizer cells. Here a hypothesis property over the randomizers the rule serves
(GaussianRandomizer and BlanketMixedGaussian, zero-out and replace-one), n from 1e4 to 1e7 and delta from 1e-9 to
1e-4, with the start moved (``EPS44_SHAPE_ACTIVE`` lowered to 1: the model's root as the start wherever the laws are
not atom laws, however poor the model there; the claim is "certified whatever the start"). Reference: a fresh
accountant at rel_tol 1e-3: its lower value at the answer must be <= delta (else delta(answer) > delta: an
under-report), and a fresh get_delta at the answer <= delta (§8's contract). The rule ran (``search.shape_start``
returned a root) on two of the fixed cells, asserted.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch
from _rev44_spy import spy

pytestmark = pytest.mark.skipif(not hasattr(limits, "EPS44_SHAPE_START"), reason="rule of a branch not merged")


def _answer(monkeypatch, mk, n: int, adj: str, delta: float, active: float) -> tuple[float, bool]:
    from sharpdp.shuffle.accountant import search

    with monkeypatch.context() as mp:
        switch(mp, "EPS44_SHAPE_START", True)
        switch(mp, "EPS44_SHAPE_ACTIVE", active)
        calls = spy(mp, "shape_start", search)
        acc = ShuffleAccountant(mk(), n, adj)
        eps = float(acc.get_epsilon(delta))
        own = acc.get_delta(eps)
        clear_caches()
    assert own <= delta, ("the searching accountant's get_delta at its answer above delta", eps, own, delta)
    return eps, any(out is not None for _, out in calls)


def _certified(mk, n: int, adj: str, eps: float, delta: float) -> None:
    """A fresh get_delta at the answer <= delta; through bot (replace) within the budget docs/accountant.md §9.14
    allows a fresh report (VIA_BOTTOM_BUDGET_SHARE rel_tol above delta: the same split's chain certified to its
    bracket's budget; found by this property at GaussianRandomizer(2.83), n = 1e4, delta = 1e-4: +2.1e-5 relative, a
    rel_tol-1e-3 report at the same split 9.9885e-5 <= delta). A fresh rel_tol-1e-3 lower value <= delta (zero-out: a
    lower value of delta itself; through bot: of the chain at the fresh report's split, which is >= the bound)."""
    acc = ShuffleAccountant(mk(), n, adj)
    up = acc.get_delta(eps)
    clear_caches()
    lo, _ = ShuffleAccountant(mk(), n, adj, rel_tol=1e-3).get_delta_bounds(eps)
    clear_caches()
    slack = limits.VIA_BOTTOM_BUDGET_SHARE * acc.rel_tol if adj == "replace" else 0.0
    assert up <= delta * (1 + slack), ("a fresh get_delta at the answer above delta", eps, up, delta)
    assert lo <= delta, ("delta(answer) above the target", eps, lo, delta)


@pytest.mark.parametrize("g, s, n, adj, delta, starts", [(0.1, 2.0, 10**7, "zero_out", 1e-8, True),
                                                         (0.2, 1.0, 10**5, "zero_out", 1e-6, True),
                                                         (0.0389, 0.529, 10**7, "zero_out", 1e-9, False),
                                                         (0.0, 2.0, 10**4, "replace", 1e-6, None),
                                                         (0.0, 2.8307631959780246, 10**4, "replace", 1e-4, None)])
def test_answer_certified_on_cells_where_the_rule_starts(monkeypatch, g, s, n, adj, delta, starts):
    mk = (lambda: GaussianRandomizer(s, 1)) if g == 0.0 else (lambda: BlanketMixedGaussian(g, s, 1))  # noqa: E731
    eps, started = _answer(monkeypatch, mk, n, adj, delta, 1000.0)
    if starts is not None:
        assert started == starts  # (whether the rule's start was formed)
    _certified(mk, n, adj, eps, delta)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(g=st.sampled_from([0.0, 0.01, 0.1, 0.4]), s=st.floats(0.4, 5.0), logn=st.integers(4, 7),
       logd=st.integers(-9, -4), adj=st.sampled_from(["zero_out", "zero_out", "replace"]),
       active=st.sampled_from([1.0, 1000.0]))
def test_answer_certified_property(monkeypatch, g, s, logn, logd, adj, active):
    if adj == "replace":
        g = 0.0  # (replace-one through bot: GaussianRandomizer; keeps the property's cost in bounds)
        logn = min(logn, 5)
    mk = (lambda: GaussianRandomizer(s, 1)) if g == 0.0 else (lambda: BlanketMixedGaussian(g, s, 1))  # noqa: E731
    delta = 10.0**logd
    eps, _ = _answer(monkeypatch, mk, 10**logn, adj, delta, active)
    _certified(mk, 10**logn, adj, eps, delta)
