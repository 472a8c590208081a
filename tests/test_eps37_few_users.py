"""Session 37 (eps37): get_epsilon at n <= 500 on the few-user bracket (docs/accountant.md §8.15, ``few_users``,
``limits.EPS_FEW_USERS``): phase 1's model value is the few-user lower value where that bracket is within
``limits.EPS_FEW_WIDTH``; phase 2 then starts just above the model's root and settles its expected lower ends on that
certified lower value.

References independent of the rule: fresh accountants' certified values (the contract of docs/accountant.md §8:
get_delta at the answer <= delta, and above delta at answer (1 - xtol)), a fresh rel_tol-1e-4 accountant's upper value
against the few-user lower value (a certified lower value lies below every certified upper value), and main's answer
floats with the switch off (the search of session 36, measured on /work/main 4267d7f).
"""

from __future__ import annotations

import pytest
from _main_floats34 import switch
from _rev44_spy import spy
from sharpdp.shuffle import (
    BlanketMixedGaussian,
    GaussianRandomizer,
    RandomizedResponse,
    ShuffleAccountant,
    clear_caches,
)
from sharpdp.shuffle import accountant as A
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.few_users import few_user_bracket, few_user_lower, few_user_model
from sharpdp.shuffle.laws import laws_for

DELTA, XTOL = 1e-6, 1e-3
#: calibrate_bmg(100, 8, 1e-6, 1)'s BMG: the regime map's get_epsilon cell at 5x (docs/accountant.md §8.15)
BMG8 = (0.051057210686144563, 0.5666966712607993)
#: main's answers (4267d7f, the switch's off value restores them): the BMG above at n = 100, GaussianRandomizer(1) at
#: n = 10, GaussianRandomizer(0.5) at n = 100
MAIN = {"bmg8": 7.957221114479659, "g1_10": 8.832262160538912, "g05_100": 21.76352090590665}


def _counted(r, n, delta=DELTA, adjacency="zero_out"):
    """A fresh get_epsilon(delta), its upper-only passes and phase 2's probes."""
    passes, probes = [0], [0]
    orig_uv, orig_probe = S.upper_value, S.probe

    def uv(*a, **kw):
        passes[0] += 1
        return orig_uv(*a, **kw)

    def pr(*a, **kw):
        probes[0] += 1
        return orig_probe(*a, **kw)

    S.upper_value, S.probe = uv, pr
    clear_caches()
    try:
        e = ShuffleAccountant(r, n, adjacency).get_epsilon(delta)
    finally:
        S.upper_value, S.probe = orig_uv, orig_probe
    return e, passes[0], probes[0]


def _contract(r, n, e, delta=DELTA, adjacency="zero_out"):
    """docs/accountant.md §8's contract with fresh accountants (independent of the search)."""
    clear_caches()
    assert ShuffleAccountant(r, n, adjacency).get_delta(e) <= delta
    clear_caches()
    assert ShuffleAccountant(r, n, adjacency).get_delta(e * (1.0 - XTOL)) > delta
    clear_caches()


def test_switch_values():
    assert limits.EPS_FEW_USERS is True and limits.EPS_FEW_WIDTH == 0.25
    assert S.FEW_ABOVE == 0.3


@pytest.mark.parametrize("n, e", [(2, 4.65), (20, 13.86), (100, 7.95), (100, 8.35), (500, 20.15)])
def test_few_user_lower_below_a_fresh_tight_upper_value(n, e):
    """The few-user lower value is certified: below a fresh rel_tol-1e-4 accountant's upper value (and the model
    value, where formed, is that lower value)."""
    r = {2: BlanketMixedGaussian(0.0519, 1.03, 1), 20: BlanketMixedGaussian(0.1386, 0.461, 1),
         100: BlanketMixedGaussian(*BMG8, 1), 500: GaussianRandomizer(0.5, 1)}[n]
    pairs = laws_for(r, e, "zero_out")
    jb = few_user_bracket(pairs, n)
    assert jb is not None and 0.0 < jb[0] <= jb[1]
    assert few_user_lower(pairs, n) == jb[0]
    clear_caches()
    lo, up = ShuffleAccountant(r, n, "zero_out", rel_tol=1e-4).get_delta_bounds(e)
    assert jb[0] <= up and lo <= jb[1]  # (two certified brackets of D_up intersect)
    m = few_user_model(pairs, n)
    assert m is None or m == jb[0]


def test_few_user_bracket_not_formed(monkeypatch):
    r = BlanketMixedGaussian(*BMG8, 1)
    switch(monkeypatch, "FEW_WIDE", False)  # (**) session 38, eps38 (beyond 500: tests/test_eps38_few_wide.py)
    assert few_user_bracket(laws_for(r, 7.95, "zero_out"), 501) is None  # (n > JUMP_N_MAX)
    assert few_user_bracket(laws_for(r, 7.95, "zero_out"), 1) is None
    assert few_user_bracket(laws_for(RandomizedResponse(4, 2.0), 1.0, "replace"), 100) is None  # (atom laws)
    assert few_user_lower(laws_for(r, 7.95, "zero_out"), 501) == 0.0
    # a wide bracket (BMG(0.0761, 0.86), n = 100, eps = 3.97: [9.7e-7, 4.6e-6]): no model value
    assert few_user_model(laws_for(BlanketMixedGaussian(0.0761, 0.86, 1), 3.97, "zero_out"), 100) is None
    switch(monkeypatch, "EPS_FEW_USERS", False)
    assert few_user_bracket(laws_for(r, 7.95, "zero_out"), 100) is None


def test_bmg_n100_eps8_one_probe_no_pass():
    """The regime map's cell (main: three upper-only passes, 0.3 s for the first, and two probes): no engine pass,
    one probe; the answer within xtol of main's, the contract with fresh accountants."""
    r = BlanketMixedGaussian(*BMG8, 1)
    e, passes, probes = _counted(r, 100)
    assert passes == 0 and probes == 1
    assert abs(e / MAIN["bmg8"] - 1.0) <= XTOL
    _contract(r, 100, e)


@pytest.mark.parametrize("key, r, n", [("bmg8", BlanketMixedGaussian(*BMG8, 1), 100),
                                       ("g1_10", GaussianRandomizer(1.0, 1), 10),
                                       ("g05_100", GaussianRandomizer(0.5, 1), 100)])
def test_switch_off_restores_main(monkeypatch, key, r, n):
    switch(monkeypatch, "EPS_FEW_USERS", False)
    switch(monkeypatch, "FEW_MULTI_JUMP", False)  # (**) session 40, eps40: §8.19's upper values move g05_100 (-3e-7)
    e, _, _ = _counted(r, n)
    assert e == MAIN[key]


@pytest.mark.parametrize("spec, n, adjacency, delta", [
    (("g", 1.0), 10, "zero_out", 1e-6),
    (("g", 0.5), 2, "zero_out", 1e-6),
    (("g", 0.5), 500, "zero_out", 1e-6),
    (("g", 0.5), 100, "zero_out", 1e-10),
    (("b", 0.2953, 0.722), 2, "replace", 1e-4),
    (("b", 0.0222, 0.582), 5, "replace", 1e-9),
    (("b", 0.0718, 0.875), 2, "replace", 1e-6),
    (("b", 0.1386, 0.461), 20, "zero_out", 1e-9),
    (("b", 0.0404, 0.901), 20, "zero_out", 1e-9),
])
def test_contract_and_main_within_xtol(monkeypatch, spec, n, adjacency, delta):
    """Cells where the rule runs (the few-user bracket within 25 %): the contract at the answer with fresh accountants,
    and the answer within xtol of the switch-off search's (main's rule)."""
    r = GaussianRandomizer(spec[1], 1) if spec[0] == "g" else BlanketMixedGaussian(spec[1], spec[2], 1)
    e, passes, _ = _counted(r, n, delta, adjacency)
    assert passes == 0  # (the rule ran: no upper-only pass in phase 1)
    _contract(r, n, e, delta, adjacency)
    switch(monkeypatch, "EPS_FEW_USERS", False)
    e_off, _, _ = _counted(r, n, delta, adjacency)
    assert abs(e / e_off - 1.0) <= XTOL


def test_wide_bracket_keeps_main_search():
    """BMG(0.0761, 0.86), n = 100 (the map's eps = 4 cell): the few-user bracket is 4.7x wide, phase 1 makes its
    upper-only passes as before and the answer is main's rule's."""
    r = BlanketMixedGaussian(0.0761, 0.86, 1)
    e, passes, _ = _counted(r, 100)
    assert passes >= 1
    _contract(r, 100, e)


def test_lower_end_settled_without_probe(monkeypatch):
    """Phase 2's lower end at the BMG cell is a point whose few-user lower value exceeds delta (no probe there): a fresh
    accountant's certified lower value there exceeds delta as well (docs/accountant.md §8.15)."""
    calls = spy(monkeypatch, "few_user_lower", S)
    r = BlanketMixedGaussian(*BMG8, 1)
    e, _, probes = _counted(r, 100)
    assert probes == 1 and any(v > DELTA for _, v in calls)
    clear_caches()
    assert A.ShuffleAccountant(r, 100).get_delta_bounds(e * (1.0 - XTOL))[0] > DELTA


# n = 2 against the exact D_2 by mpmath quadrature (tests/test_review_rev24a.py's kink-split reference, converged to
# 1e-12 there): the cells where main's search took the look of docs/accountant.md §8.4, which the rule now skips
@pytest.mark.parametrize("sigma0, delta", [(0.7, 1e-3), (1.2, 1e-4), (1.5, 1e-6), (2.0, 1e-5)])
def test_n2_answer_against_quadrature(sigma0, delta):
    from test_review_rev24a import _d2_gauss

    r = GaussianRandomizer(sigma0, 1)
    e, passes, _ = _counted(r, 2, delta)
    assert passes == 0  # (the rule ran)
    assert _d2_gauss(sigma0, e) <= delta  # (the exact value at the answer)
    _contract(r, 2, e, delta)
    # the few-user lower value at the answer (1 - xtol) is below the exact value there (a certified lower value)
    lo = few_user_lower(laws_for(r, e * (1.0 - XTOL), "zero_out"), 2)
    assert lo <= _d2_gauss(sigma0, e * (1.0 - XTOL)) * (1.0 + 1e-9)


def test_through_bottom_first_guess_moves_within_xtol():
    """GaussianRandomizer(0.8), n = 10, replace-one (through ⊥, docs/accountant.md §9): the search's first guess is the
    zero-out answer, now the rule's; main's answer 7.385086305505525 (tests/test_review_rev24b.py, switch off): the
    new answer is certified by fresh accountants and within xtol of main's."""
    r = GaussianRandomizer(0.8, 1)
    clear_caches()
    e = ShuffleAccountant(r, 10, "replace").get_epsilon(1e-2)
    assert abs(e / 7.385086305505525 - 1.0) <= XTOL
    _contract(r, 10, e, 1e-2, "replace")
