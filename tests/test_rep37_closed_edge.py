"""The edge of a cliff of leg B from the laws' closed-form tops (docs/accountant.md §9.14, ``limits.VIA_BOTTOM_CLOSED_EDGE``).

References independent of the rule: (1) the edge in closed form, -ln(2 Phi(-1/σ0)) (the bot vs x law's largest value
1 - e^{e2} g at y < 0, g = 2 Phi(-1/σ0): tests/test_shuffle_accountant_replace_gaussian.py's quadrature integrand),
by 50-digit mpmath; (2) at n = 1 the exact delta of the Gaussian mechanism with sensitivity 2 by 50-digit mpmath
(rounded down: a lower value of the true delta), which the bound through bot can never go below; (3) the reviewers'
n = 2 quadrature (tests/_rev30b_replace_reference.py); (4) an independent zero-out accountant's tight legs (rel_tol
1e-3) at the reported split; (5) main's brackets with the switch off. Counts of leg certifications, no timings.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import mpmath as mp
import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant.via_bottom import ViaBottom
from sharpdp.shuffle.accountant.via_bottom_edge import edge_fraction, leg_edge
from sharpdp.shuffle.laws import laws_for
from _main_floats34 import switch  # noqa: E402
from tests.test_rep36_settle import _chain_lower, _gauss  # (independent legs at the reported split, one definition)


def _edge_mp(s: float) -> float:
    with mp.workdps(50):
        return float(-mp.log(2 * mp.ncdf(-1 / mp.mpf(s))))


@pytest.mark.parametrize("s", [0.46, 1.0, 2.0, 4.6])
def test_leg_edge_is_the_closed_form_edge(s):
    """The bisection on the laws' tops lands on -ln(2 Phi(-1/σ0)) (within the law's rounding bound), every law of leg B
    has top <= 0 there, and a law's top is > 0 a hair below it; leg A's law has no finite top (no edge)."""
    r = GaussianRandomizer(s, 1)
    e = leg_edge(r, (1,))
    assert e is not None
    assert e == pytest.approx(_edge_mp(s), rel=1e-9, abs=1e-12)
    assert all(law.top_bound() <= 0.0 for i, (_, law) in enumerate(laws_for(r, e, "zero_out")) if i == 1)
    below = e * (1 - 1e-9)
    assert any(law.top_bound() > 0.0 for i, (_, law) in enumerate(laws_for(r, below, "zero_out")) if i == 1)
    assert leg_edge(r, (0,)) is None and leg_edge(r, None) is None and leg_edge(None, (1,)) is None


@pytest.mark.parametrize("s, n", [(1.0, 10), (2.0, 10), (0.46, 10)])
def test_engine_certifies_zero_at_the_edge_and_not_before(s, n):
    """The engine's leg B (an independent zero-out accountant) is the charge alone (lower 0, "L <= 0 almost surely")
    at the edge, and has a positive lower value 1e-3 before it (a real cliff)."""
    r = GaussianRandomizer(s, 1)
    e = leg_edge(r, (1,))
    zo = ShuffleAccountant(r, n, rel_tol=1e-2)
    at = zo._report(e, 1e-2, only=(1,))
    assert at.lower == 0.0 and at.upper < 1e-25
    before = zo._report(e - 1e-3, 1e-2, only=(1,))
    assert before.lower > 0.0


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0, 27.0])
def test_edge_fraction_rounds_to_a_split_past_the_edge(eps):
    e2s = _edge_mp(1.0)
    f = edge_fraction(eps, e2s, ViaBottom._second)
    if eps <= e2s:
        assert f is None
        return
    from fractions import Fraction

    e1 = f * eps
    e2 = ViaBottom._second(eps, e1)
    assert Fraction(e2) >= Fraction(e2s) and Fraction(e1) + Fraction(e2) <= Fraction(eps)
    assert e2 - e2s <= 1e-12 * eps  # (as large an f as the rounding allows, within a few ulps)


def _exact_gaussian(s: float, eps: float) -> float:
    """The Gaussian mechanism's delta, sensitivity 2, 50 digits, rounded down (a lower value of the true delta)."""
    with mp.workdps(50):
        sm, e = mp.mpf(s), mp.mpf(eps)
        v = mp.ncdf(1 / sm - e * sm / 2) - mp.e ** e * mp.ncdf(-1 / sm - e * sm / 2)
        return float(v) * (1 - 1e-15)


# (σ0, eps, tight): at the tight cells the split at the edge, whose chain equals the exact delta (to the roundings);
# at the others a split of the search near it, within 0.2 % above the exact delta (a bound through bot)
N1 = [(1.0, 2.0, False), (1.0, 4.0, True), (2.0, 1.0, False), (2.0, 2.0, True), (2.0, 4.0, True), (4.6, 1.0, True),
      (4.6, 2.0, True), (4.6, 4.0, True)]


@pytest.mark.parametrize("s, eps, tight", N1)
def test_n1_at_the_edge_above_the_exact_gaussian_delta(s, eps, tight):
    """n = 1 (the shuffled output is the randomizer's): never below the exact delta of the Gaussian mechanism with
    sensitivity 2 (50 digits, rounded down), within 1e-10 of it at the tight cells (the split reported is the edge's)
    and 0.2 % at the others."""
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), 1, "replace")
    r = acc.report(eps)
    ex = _exact_gaussian(s, eps)
    assert r.upper >= ex
    assert r.upper <= ex * (1 + (1e-10 if tight else 2e-3)), r.upper / ex - 1
    if tight:
        e2 = eps - float(r.terms["epsilon_split"])
        assert e2 == pytest.approx(_edge_mp(s), rel=1e-9)


@pytest.mark.parametrize("s, eps", [(1.0, 2.0), (1.0, 4.0), (2.0, 1.0), (2.0, 2.0)])
def test_n2_above_the_quadrature_reference(s, eps):
    """n = 2: the reported upper value lies above the brute-force replace delta (quadrature error below 5e-4
    relative: a margin of 1e-3)."""
    from tests._rev30b_replace_reference import replace_delta_n2

    ref = float(replace_delta_n2(s, eps)[0])
    up = ShuffleAccountant(GaussianRandomizer(s, 1), 2, "replace").get_delta_bounds(eps)[1]
    assert up >= ref * (1 - 1e-3), (up, ref)


# main's brackets (4267d7f, `python bench/bench_regimes.py --full --families e`) at cells the rule moves
MAIN = [(1.0, 10, 2.0, (0.18737662771509736, 0.1885486827859238)),
        (1.0, 10, 4.0, (0.027311420413871867, 0.0274350392220022))]


class _Count:
    """Counts the leg certifications of one accountant (ViaBottom.leg cache misses)."""

    def __init__(self, monkeypatch):
        self.n = 0
        orig = ViaBottom.leg

        def leg(vb, j, e, rel_tol, negligible=0.0):
            if (j, e, rel_tol) not in vb._leg_cache:
                self.n += 1
            return orig(vb, j, e, rel_tol, negligible)

        monkeypatch.setattr(ViaBottom, "leg", leg)


@pytest.mark.parametrize("s, n, eps, main", MAIN)
def test_switch_off_gives_main_floats(s, n, eps, main, monkeypatch):
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "VIA_BOTTOM_CLOSED_EDGE", False)
    switch(monkeypatch, "HAT_PIECES", False)  # (**) session 38, lead: HAT_PIECES (§53) moves this pinned float
    assert _gauss(s, n).get_delta_bounds(eps) == main


@pytest.mark.parametrize("s, n, eps, main", MAIN)
def test_moved_cells_certified_within_rel_tol_near_main_fewer_legs(s, n, eps, main, monkeypatch):
    """The rule on: the bracket meets rel_tol, its upper value lies above the chain of an independent zero-out
    accountant's tight legs at the reported split, within 1e-4 of main's upper value (the edge is the bisection's
    limit), with fewer leg certifications than the bisection of before."""
    c = _Count(monkeypatch)
    acc = _gauss(s, n)
    r = acc.report(eps)
    on = c.n
    assert r.upper - r.lower <= acc.rel_tol * r.lower
    assert r.upper >= _chain_lower(s, n, eps, r) * (1 - 1e-12)
    assert abs(r.upper / main[1] - 1) <= 1e-4, r.upper / main[1] - 1
    switch(monkeypatch, "VIA_BOTTOM_CLOSED_EDGE", False)
    switch(monkeypatch, "REP49_SHRINK_STOP", False)  # (session 49, rep49: the bisection of before, stopped at its gain)
    c.n = 0
    assert _gauss(s, n).report(eps).upper == main[1]
    assert on < c.n, (on, c.n)


def test_fresh_get_delta_at_get_epsilon_answer_within_the_budget():
    """docs/accountant.md §9.14 (a fresh get_delta above delta at get_epsilon's answer): the fresh report's split is the
    searching accountant's (its hint), its upper value within VIA_BOTTOM_BUDGET_SHARE rel_tol of delta, and the
    searching accountant's own get_delta at the answer <= delta; both above an independent chain at that split."""
    from sharpdp.shuffle.accountant import limits

    delta = 1e-10
    acc = _gauss(2.0, 1000)
    e = acc.get_epsilon(delta)
    assert acc.get_delta(e) <= delta
    r = _gauss(2.0, 1000).report(e)
    assert eps_split_e2(e, r) == pytest.approx(acc._bottom._hint, rel=1e-12)
    assert r.upper <= delta * (1 + limits.VIA_BOTTOM_BUDGET_SHARE * acc.rel_tol)
    assert r.upper >= _chain_lower(2.0, 1000, e, r) * (1 - 1e-12)


def eps_split_e2(eps, r):
    return eps - float(r.terms["epsilon_split"])
