"""Review rev45 (session 45): attack on eps45's docs/accountant.md §8.25 (``limits.EPS45_START_PROBE``: get_epsilon's
phase 1 skipped where its first point is the single-big-jump root and that model's spread there is small; phase 2
probes the model's root first; a choice of points only). Skipped while the switch is absent (branch eps45).

Claim attacked: the answer eps* is certified whatever the start: delta(eps*) <= delta. The rule at its measured gate
(0.02) and forced wherever the single-big-jump root is formed (the gate 1e300: phase 1 skipped however wide the
spread). References: a fresh get_delta at eps* (§8's contract); a fresh accountant at rel_tol 1e-3, whose lower value
at eps* must be <= delta; for k-RR the exact divergence of the round's atom law at eps* by binomial sums (rev44's
``_exact``, scipy, 1e-9 relative slack). Cells: §8.25.1's BMG and Gaussian cells, k-RR and PrivUnit (atom laws: the
single-big-jump root is formed there), and a hypothesis property over k-RR's (k, eps0, n, delta).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch

pytestmark = pytest.mark.skipif(not hasattr(limits, "EPS45_START_PROBE"), reason="rule of a branch not merged")


def _answer(monkeypatch, mk, n: int, delta: float, gate: float, adj: str = "zero_out") -> tuple[float, bool]:
    from sharpdp.shuffle.accountant import search

    got: list = []
    orig = search.start_probe

    def spy(*a, **k):
        got.append(orig(*a, **k))
        return got[-1]

    with monkeypatch.context() as mp:
        switch(mp, "EPS45_START_PROBE", gate)
        mp.setattr(search, "start_probe", spy)
        eps = float(ShuffleAccountant(mk(), n, adj).get_epsilon(delta))
        clear_caches()
    return eps, any(got)


def _certified(mk, n: int, eps: float, delta: float, adj: str = "zero_out") -> None:
    up = ShuffleAccountant(mk(), n, adj).get_delta(eps)
    clear_caches()
    lo, _ = ShuffleAccountant(mk(), n, adj, rel_tol=1e-3).get_delta_bounds(eps)
    clear_caches()
    assert up <= delta, ("a fresh get_delta at the answer above delta", eps, up, delta)
    assert lo <= delta, ("delta(answer) above the target", eps, lo, delta)


CELLS = {"bmg_1e8": (lambda: BlanketMixedGaussian(0.0133, 0.395, 1), 10**8),
         "bmg_1e9": (lambda: BlanketMixedGaussian(0.0111, 0.372, 1), 10**9),
         "gauss05_1e8": (lambda: GaussianRandomizer(0.5, 1), 10**8),
         "bmg_1e5": (lambda: BlanketMixedGaussian(0.394, 1.15, 1), 10**5),
         "krr": (lambda: RandomizedResponse(8, 3.0), 10**4)}


@pytest.mark.parametrize("gate", [0.02, 1e300])
@pytest.mark.parametrize("cell", list(CELLS))
def test_answer_certified_with_phase_1_skipped(monkeypatch, cell, gate):
    mk, n = CELLS[cell]
    eps, skipped = _answer(monkeypatch, mk, n, 1e-6, gate)
    if gate > 1.0 and cell not in ("bmg_1e5", "krr"):
        assert skipped  # (the rule skipped phase 1)
    _certified(mk, n, eps, 1e-6)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(k=st.integers(2, 40), eps0=st.floats(0.5, 6.0), logn=st.integers(2, 4), logd=st.integers(-10, -3),
       adj=st.sampled_from(["zero_out", "replace"]))
def test_krr_answer_below_the_exact_divergence(monkeypatch, k, eps0, logn, logd, adj):
    from test_review_rev44_pair44 import _exact

    mk = lambda: RandomizedResponse(k, eps0)  # noqa: E731
    n, delta = 10**logn, 10.0**logd
    eps, _ = _answer(monkeypatch, mk, n, delta, 1e300, adj)
    if adj == "replace" and eps > 0.0:
        ex = _exact(mk(), eps, n)
        assert ex <= delta * (1 + 1e-9), ("the exact divergence at the answer above delta", eps, ex, delta)
    up = ShuffleAccountant(mk(), n, adj).get_delta(eps)
    clear_caches()
    assert up <= delta


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(g=st.sampled_from([0.0, 0.01, 0.1]), s=st.floats(0.4, 4.0), logn=st.integers(4, 8), logd=st.integers(-10, -4))
def test_bmg_answer_certified_with_phase_1_skipped_property(monkeypatch, g, s, logn, logd):
    """The rule forced (gate 1e300) with the shape start on (eps45's later commit skips phase 1 at the shape start of
    docs/accountant.md §8.24.1 as well): BMG and Gaussian rounds, zero-out, n from 1e4 to 1e8."""
    switch(monkeypatch, "EPS44_SHAPE_START", True)
    mk = (lambda: GaussianRandomizer(s, 1)) if g == 0.0 else (lambda: BlanketMixedGaussian(g, s, 1))  # noqa: E731
    eps, _ = _answer(monkeypatch, mk, 10**logn, 10.0**logd, 1e300)
    _certified(mk, 10**logn, eps, 10.0**logd)
