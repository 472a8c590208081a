"""The reported split through bot certified to its bracket's budget (docs/accountant.md §9.12).

References independent of the rule: (1) main's floats with the rule's switch off (``limits.VIA_BOTTOM_BUDGET``);
(2) synthetic legs with known values and brackets whose width depends on the rel_tol asked (the exact chain at the
reported split must lie in the bracket, the bracket within the budget); (3) an independent zero-out accountant's
tight legs (rel_tol 1e-3) at the reported split bracket the same chain: the reported bracket must overlap theirs, its upper
value above their lower value; (4) the reviewers' n = 2 quadrature of the replace delta
(tests/_rev30b_replace_reference.py). Counts of leg certifications, no timings.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.via_bottom import ViaBottom
from _main_floats34 import switch  # noqa: E402


class _Loose:
    """A zero-out 'accountant' stand-in with exact legs A(e) = ca e^{-a e}, B(e) = cb e^{-b e} whose certified brackets
    are [v (1 - k_j rel_tol / 2), v (1 + k_j rel_tol / 2)] (a leg asked for rel_tol meets ~k_j rel_tol); ``asked`` lists the
    (leg, rel_tol) of every certification."""

    rel_tol = 1e-2
    sampler_tau = 0.0
    eps_tau = math.inf
    _closed_only = False

    def __init__(self, ca, a, cb, b, ka=0.5, kb=0.5):
        self.p = (ca, a, cb, b)
        self.k = (ka, kb)
        self.asked: list[tuple[int, float]] = []

    def value(self, j, e):
        ca, a, cb, b = self.p
        return ca * math.exp(-a * e) if j == 0 else cb * math.exp(-b * e)

    def _report(self, epsilon, rel_tol, only=None, negligible=0.0):
        j = only[0]
        self.asked.append((j, rel_tol))
        v, w = self.value(j, epsilon), min(0.5 * self.k[j] * rel_tol, 0.9)
        return AccountantReport(epsilon, v * (1 - w), v * (1 + w))

    def get_epsilon(self, delta, *, xtol=1e-3):  # (not used here)
        raise ValueError("not used")


def _run(legs, eps, on, monkeypatch, rel_tol=1e-2):
    switch(monkeypatch, "VIA_BOTTOM_BUDGET", on)
    vb = ViaBottom(legs, ((0,), (1,)))
    return vb.report(eps, rel_tol)


def _chain_at(legs, eps, r):
    e1 = float(r.terms["epsilon_split"])
    return legs.value(0, e1) + math.exp(e1) * legs.value(1, ViaBottom._second(eps, e1))


# (ca, a, cb, b, eps, ka, kb): leg B's share small or large, loose legs within or beyond the budget
CASES = [(0.4, 3.0, 0.3, 9.0, 1.0, 0.05, 0.05), (0.4, 3.0, 0.3, 9.0, 1.0, 0.5, 0.2),
         (1e-3, 6.0, 1e-2, 20.0, 1.5, 0.5, 0.5), (0.2, 1.5, 0.05, 4.0, 2.5, 0.5, 0.9),
         (1e-6, 9.0, 1e-4, 30.0, 0.7, 0.8, 0.1), (1e-6, 9.0, 1e-4, 30.0, 0.7, 0.3, 3.0)]


@pytest.mark.parametrize("ca, a, cb, b, eps, ka, kb", CASES)
def test_synthetic_legs_bracket_holds_the_chain_within_the_budget(ca, a, cb, b, eps, ka, kb, monkeypatch):
    """The rule on: the reported bracket contains the exact chain at the reported split, meets 0.9 rel_tol (the
    budget) or is the contract's of before, reports the split the search of before reports (the rule only changes the
    legs' targets there) and asks no leg at a tighter rel_tol than before; with ``kb`` large (leg B's loose brackets
    too wide for the budget) it falls back to the report of before, bit for bit."""
    legs, legs0 = _Loose(ca, a, cb, b, ka, kb), _Loose(ca, a, cb, b, ka, kb)
    r, r0 = _run(legs, eps, True, monkeypatch), _run(legs0, eps, False, monkeypatch)
    assert r.terms["epsilon_split"] == r0.terms["epsilon_split"]
    m = _chain_at(legs, eps, r)
    assert r.lower * (1 - 1e-12) <= m <= r.upper * (1 + 1e-12)
    assert r.upper - r.lower <= 0.9e-2 * r.lower or (r.lower, r.upper) == (r0.lower, r0.upper)
    assert sum(1 for _, t in legs.asked if t <= 1e-2) <= sum(1 for _, t in legs0.asked if t <= 1e-2)
    if (r.lower, r.upper) != (r0.lower, r0.upper):
        assert r0.upper - r0.lower <= r.upper - r.lower  # (another bracket of the same chain: the budget used)


def test_synthetic_loose_legs_within_budget_are_reported_without_a_tight_leg(monkeypatch):
    """Loose legs whose brackets already meet the budget (k rel_tol 0.1 = 0.3 %): no leg at rel_tol is certified."""
    legs = _Loose(0.4, 3.0, 0.3, 9.0, 0.03, 0.03)
    r = _run(legs, 1.0, True, monkeypatch)
    assert all(t > 1e-2 for _, t in legs.asked), legs.asked
    assert r.upper - r.lower <= 0.9e-2 * r.lower


def test_synthetic_leg_b_to_the_budget_left_by_leg_a(monkeypatch):
    """Leg A's loose bracket is too wide (5 %) and leg B's too (k 0.9 at 0.1): leg A at rel_tol (0.5 %), then leg B at
    a rel_tol of BUDGET_TOLS above the call's, never at rel_tol itself."""
    legs = _Loose(1e-3, 6.0, 1e-2, 20.0, 0.5, 0.9)
    r = _run(legs, 1.5, True, monkeypatch)
    tight_b = [t for j, t in legs.asked if j == 1 and t <= 1e-2]
    assert not tight_b, legs.asked
    assert any(j == 1 and 1e-2 < t < 0.1 for j, t in legs.asked), legs.asked
    assert r.upper - r.lower <= 0.9e-2 * r.lower


def _gauss(s, n, **kw):
    return ShuffleAccountant(GaussianRandomizer(s, 1), n, adjacency="replace", **kw)


# main's brackets at f69257b (session 34's final main)
MAIN = [(1.0, 1000, 1.0, (0.003987703098480109, 0.003994951130461365)),
        (1.0, 10, 1.0, (0.3792259627316745, 0.38082525608549495)),
        (2.0, 1000, 0.5, (3.908199999940878e-09, 3.913415070973785e-09))]


@pytest.mark.parametrize("s, n, eps, main", MAIN)
def test_switch_off_gives_main_floats(s, n, eps, main, monkeypatch):
    """``VIA_BOTTOM_BUDGET = VIA_BOTTOM_SEARCH_B = False``: main's brackets, bit for bit."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "VIA_BOTTOM_BUDGET", False)
    switch(monkeypatch, "VIA_BOTTOM_SEARCH_B", False)
    switch(monkeypatch, "HAT_PIECES", False)  # (**) session 38, lead: HAT_PIECES (§53) moves this pinned float
    assert _gauss(s, n).get_delta_bounds(eps) == main


def _tight_chain(s, n, e1, e2):
    """The bracket of the chain A(e1) + e^{e1} B(e2) from an independent zero-out accountant's legs at rel_tol 1e-3."""
    zo = ShuffleAccountant(GaussianRandomizer(s, 1), n, adjacency="zero_out", rel_tol=1e-3)
    legs = [zo._report(e, 1e-3, only=(j,)) for j, e in ((0, e1), (1, e2))]
    return tuple(getattr(legs[0], x) + math.exp(e1) * getattr(legs[1], x) for x in ("lower", "upper"))


CELLS = [(1.0, 1000, 1.0), (1.0, 10, 1.0), (2.0, 1000, 0.5), (1.0, 10**5, 0.1), (0.46, 10**5, 0.1), (4.6, 10, 0.5),
         (2.0, 50, 2.0), (1.0, 1000, 0.01)]


@pytest.mark.parametrize("s, n, eps", CELLS)
def test_gaussian_bracket_within_rel_tol_and_an_independent_chain(s, n, eps, monkeypatch):
    """The rule on: the bracket meets rel_tol; at the reported split an independent zero-out accountant's tight legs
    (rel_tol 1e-3) bracket the same chain, so the two brackets overlap and the reported upper value is above that
    chain's lower value; the reported split is the one the rule's switch off reports (only the legs' targets move; the
    search's legs B of §9.12 on in both)."""
    r = _gauss(s, n).report(eps)
    assert r.upper - r.lower <= 1e-2 * r.lower
    e1 = float(r.terms["epsilon_split"])
    lo, up = _tight_chain(s, n, e1, ViaBottom._second(eps, e1))
    assert lo * (1 - 1e-12) <= r.upper and r.lower <= up * (1 + 1e-12)
    switch(monkeypatch, "VIA_BOTTOM_BUDGET", False)
    assert float(_gauss(s, n).report(eps).terms["epsilon_split"]) == e1


@pytest.mark.parametrize("s, eps", [(1.0, 1.0), (2.0, 0.5), (2.0, 2.0), (4.6, 0.3), (1.0, 0.1)])
def test_gaussian_n2_above_the_quadrature_reference(s, eps):
    """n = 2, the rule on: every reported upper value lies above the brute-force replace delta (quadrature error below
    5e-4 relative: a margin of 1e-3)."""
    from tests._rev30b_replace_reference import replace_delta_n2

    ref = float(replace_delta_n2(s, eps)[0])
    up = _gauss(s, 2).get_delta_bounds(eps)[1]
    assert up >= ref * (1 - 1e-3), (up, ref)


class _Cached(ViaBottom):
    """A ViaBottom whose leg cache is set by hand (the guess of :meth:`_search_b_tol` reads it alone)."""

    def __init__(self, legs):
        super().__init__(None, ((0,), (1,)))
        self._leg_cache = {(1, e, t): AccountantReport(e, 0.0, up) for e, t, up in legs}


@pytest.mark.parametrize("legs, e2, want", [
    ([], 0.05, 0.1),                                   # no cached leg B near e2: rt
    ([(0.05, 0.1, 1e-3)], 0.05, 1.0),                  # B <= rt A_share / 1: rel_tol 1
    ([(0.05, 0.1, 2e-2)], 0.05, 0.3),                  # 0.3 B <= rt A_share < B: 0.3
    ([(0.05, 0.1, 0.05)], 0.05, 0.1),                  # B's share too large: rt
    ([(0.046, 0.1, 0.05), (0.05, 0.1, 1e-3)], 0.05, 1.0),  # the least upper value in [0.9 e2, e2] (each >= B(e2))
    ([(0.04, 0.1, 1e-4)], 0.05, 0.1),                  # below 0.9 e2: not read
    ([(0.06, 0.1, 1e-4)], 0.05, 0.1),                  # above e2 (B(e2) may be larger): not read
])
def test_search_b_tol_reads_a_cached_upper_value_at_or_below_e2(legs, e2, want, monkeypatch):
    """The rel_tol of a search's leg B (docs/accountant.md §9.12): the loosest t of (1, 0.3) with t B_guess <= rt A_share
    (A_share = 0.1 here, rt = 0.1), B_guess the least cached upper value of leg B in [0.9 e2, e2]; rt otherwise, and
    always with the switch off or at rel_tol < 0.1."""
    vb = _Cached(legs)
    assert vb._search_b_tol(e2, 0.1, 0.1) == want
    assert vb._search_b_tol(e2, 1e-2, 0.1) == 1e-2
    switch(monkeypatch, "VIA_BOTTOM_SEARCH_B", False)
    assert vb._search_b_tol(e2, 0.1, 0.1) == 0.1
