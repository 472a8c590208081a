"""Session 36 (eps36): get_epsilon's choices of docs/accountant.md §8.14 (``search_choices``): phase 1 follows one law
where the largest two tie within ``limits.EPS_TIE_LEAD`` (§8.14.2), and the loose look at the phase-1 root asks rel_tol
``limits.EPS_LOOK_REL_LARGE`` at n >= ``limits.EPS_LOOK_REL_N`` (§8.14.1).

References independent of the rules: fresh accountants' certified values at the answer and at answer (1 - xtol) (the
contract of docs/accountant.md §8: get_delta(answer) <= delta, and a point within xtol below it above delta), the
look's bracket against a fresh accountant's at rel_tol 1e-3 (both certified brackets of D_up: they must intersect), and
the answers and pass counts of the search with both switches off (main's rules).
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import pytest
from _main_floats34 import switch

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle import accountant as A
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.search_choices import LOOK_REL, look_rel, tie_lead

DELTA, XTOL = 1e-6, 1e-3


def test_tie_lead_picks_the_larger_of_two_within_the_tie():
    assert limits.EPS_TIE_LEAD == 0.02
    assert tie_lead({0: 4.5555e-07, 1: 4.5506e-07}) == 0  # (GaussianRandomizer(4.6), n = 1e9: 0.1 % apart)
    assert tie_lead({0: 1.0, 1: 1.019}) == 1
    assert tie_lead({0: 1.0, 1: 1.021}) is None  # (beyond 2 %: the 10 % rule decides, or every law is evaluated)
    assert tie_lead({0: 1.0, 1: 0.0}) is None
    assert tie_lead({0: 1.0}) is None and tie_lead({}) is None
    assert tie_lead({0: 0.2, 1: 1.0, 2: 1.01}) == 2  # (the largest two decide)


def test_tie_lead_off(monkeypatch):
    switch(monkeypatch, "EPS_TIE_LEAD", 0.0)
    assert tie_lead({0: 1.0, 1: 1.0}) is None


def test_look_rel_by_n(monkeypatch):
    assert LOOK_REL == S._LOOK_REL == 0.1
    assert look_rel(10**7) == 0.1 and look_rel(10**8 - 1) == 0.1
    assert look_rel(10**8) == 0.3 and look_rel(10**9) == 0.3
    switch(monkeypatch, "EPS_LOOK_REL_LARGE", 0.1)
    assert look_rel(10**9) == 0.1


def _counted_epsilon(monkeypatch, r, n):
    """A fresh get_epsilon(1e-6) and its upper-only passes and loose looks (rel_tol, eps)."""
    passes, looks = [0], []
    orig_uv, orig_rep = S.upper_value, A.ShuffleAccountant._report

    def uv(*a, **kw):
        passes[0] += 1
        return orig_uv(*a, **kw)

    def rep(self, eps, rel_tol, *a, **kw):
        if rel_tol != self.rel_tol:
            looks.append((rel_tol, float(eps)))
        return orig_rep(self, eps, rel_tol, *a, **kw)

    monkeypatch.setattr(S, "upper_value", uv)
    monkeypatch.setattr(A.ShuffleAccountant, "_report", rep)
    clear_caches()
    try:
        e = ShuffleAccountant(r, n).get_epsilon(DELTA)
    finally:
        monkeypatch.setattr(S, "upper_value", orig_uv)
        monkeypatch.setattr(A.ShuffleAccountant, "_report", orig_rep)
    return e, passes[0], looks


def _contract(r, n, e):
    """docs/accountant.md §8's contract checked with fresh accountants (independent of the search)."""
    clear_caches()
    assert ShuffleAccountant(r, n).get_delta(e) <= DELTA
    clear_caches()
    assert ShuffleAccountant(r, n).get_delta(e * (1.0 - XTOL)) > DELTA
    clear_caches()


def test_tie_rule_saves_a_pass_with_the_same_answer(monkeypatch):
    """GaussianRandomizer(4.6), n = 1e6: its two laws (x vs bot, bot vs x) tie within 0.1 % at phase 1's first point;
    following one saves a pass (5 -> 4, bench/geteps_ratio.py's counts), and the answer is the float of main's rule."""
    r = GaussianRandomizer(4.6, 1)
    e, passes, _ = _counted_epsilon(monkeypatch, r, 10**6)
    switch(monkeypatch, "EPS_TIE_LEAD", 0.0)
    e_off, passes_off, _ = _counted_epsilon(monkeypatch, r, 10**6)
    assert passes == passes_off - 1 == 4
    assert e == e_off
    _contract(r, 10**6, e)


def test_look_at_1e8_is_loose_certified_and_the_answer_within_xtol(monkeypatch):
    """The BMG of calibrate_bmg at n = 1e8, eps = 0.01: the look at the phase-1 root asks rel_tol 0.3 (the walk's later
    looks 0.1); its bracket intersects a fresh rel_tol-1e-3 accountant's (both certify D_up there); the answer meets
    the contract, and lies within xtol of the answer with the rule off (main's look at 0.1)."""
    r = BlanketMixedGaussian(0.03889474223781417, 0.5292277660847615, 1)
    n = 10**8
    e, _, looks = _counted_epsilon(monkeypatch, r, n)
    assert looks and looks[0][0] == 0.3 and all(rel == 0.1 for rel, _ in looks[1:])
    x = looks[0][1]
    clear_caches()
    loose = ShuffleAccountant(r, n)._report(x, 0.3)
    clear_caches()
    fine = ShuffleAccountant(r, n, rel_tol=1e-3).get_delta_bounds(x)
    assert loose.lower <= fine[1] and fine[0] <= loose.upper
    _contract(r, n, e)
    switch(monkeypatch, "EPS_LOOK_REL_LARGE", 0.1)
    e_off, _, looks_off = _counted_epsilon(monkeypatch, r, n)
    assert looks_off[0][0] == 0.1
    assert abs(e - e_off) <= XTOL * max(e, e_off)


@pytest.mark.parametrize("n, saved", [(10**4, 0), (10**6, 3)])
def test_tie_rule_below_1e8_same_answer_no_more_passes(n, saved, monkeypatch):
    """BlanketMixedGaussian(0.95, 4.6): at n = 1e4 nothing moves; at n = 1e6 its two laws tie within 2 % and phase 1
    follows one (9 -> 6 passes), with the same answer float (measured; the contract checked with fresh accountants)."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    r = BlanketMixedGaussian(0.95, 4.6, 1)
    e, passes, looks = _counted_epsilon(monkeypatch, r, n)
    switch(monkeypatch, "EPS_TIE_LEAD", 0.0)
    switch(monkeypatch, "EPS_LOOK_REL_LARGE", 0.1)
    e_off, passes_off, looks_off = _counted_epsilon(monkeypatch, r, n)
    assert (e, looks) == (e_off, looks_off)
    assert passes == passes_off - saved
    _contract(r, n, e)
