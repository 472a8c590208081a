"""The plain engine skipped where its clamp term already exceeds the few-user upper value (docs/composition.md §2.8).

References: the plain engine's own bracket (``plain.certify_law_mode``, run here at one eps), the few-user bracket
(``closed_forms.small_n_bracket``, docs/accountant.md §6.8) and the far-tail treatment's tight bracket where it applies."""

from __future__ import annotations

import math

import pytest
from _main_floats34 import switch

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import driver
from sharpdp.shuffle.accountant.closed_forms import small_n_bracket
from sharpdp.shuffle.accountant.limits import J_LO, K_MAX
from sharpdp.shuffle.accountant.plain import Bracket, certify_law_mode
from sharpdp.shuffle.laws import laws_for

N = 100


def _law(eps: float):
    gamma, law = laws_for(GaussianRandomizer(1.0, 1), eps, "zero_out")[0]
    return float(gamma), law


def test_skip_keeps_the_engine_path_upper_value():
    """eps = 11: the plain engine's bracket (run here) contains the returned one's upper end from above and its
    clamp term is at least the rule's predicted floor E[(L - T1)_+]; the returned bracket is the few-user one."""
    gamma, law = _law(11.0)
    jb = small_n_bracket(law, gamma, N, 1e-2)
    assert jb is not None
    plain = certify_law_mode(law, gamma, N, 1e-2, 1, Bracket())
    h0 = law.std() / 4.0
    floor = law.tail_upper(0.5 * K_MAX * h0 / J_LO + h0)
    assert plain.grid.h <= h0 * (1 + 1e-12)  # the rule's premise: the engine's steps stay at or below sd/4
    assert plain.terms["tail_T"] >= floor > jb[1]  # so min(engine upper, j_up) = j_up
    r = driver.certify(law, gamma, N, 1e-2, 1, Bracket())
    assert r.upper == min(plain.upper, jb[1], r.cap)
    assert r.lower == max(plain.lower, jb[0])  # the engine's lower value (0 here) never exceeded the few-user one
    assert r.lower <= r.upper and "§2.8" in r.terms["note"]


@pytest.mark.parametrize("eps, lo, up", [(10.0, 3.7125607299937256e-11, 5.235179294270194e-11),
                                         (12.0, 3.3298496840822504e-14, 3.9996615072678396e-14)])
def test_values_pinned_to_the_engine_path(eps, lo, up, monkeypatch):
    """get_delta_bounds at eps = 10, 12: the floats of the engine-and-intersection path (main, session 27), now
    without the engine's passes."""
    switch(monkeypatch, "FEW_MULTI_JUMP", False)  # (**) session 40, eps40: §8.19 lowers the few-user upper value (nested)
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), N, "zero_out")
    assert acc.get_delta_bounds(eps) == (lo, up)


def test_not_where_the_far_tail_treatment_certifies():
    """eps = 9.5: the far-tail treatment certifies the value (bracket 1e-4 wide, inside the few-user one, which is
    ~55 % wide): the rule is not reached and the value is the treatment's."""
    gamma, law = _law(9.5)
    jb = small_n_bracket(law, gamma, N, 1e-2)
    lo, up = ShuffleAccountant(GaussianRandomizer(1.0, 1), N, "zero_out").get_delta_bounds(9.5)
    assert jb[0] <= lo <= up <= jb[1]
    assert (up - lo) / lo < 1e-3 < (jb[1] - jb[0]) / jb[0]


def test_rule_refuses_light_laws_and_searches():
    """A light-tailed law (sigma0 = 6: its clamp term at T1 is far below any value) and a decision mode never skip."""
    gamma, law = laws_for(GaussianRandomizer(6.0, 1), 1.0, "zero_out")[0]
    assert not driver._plain_cannot_tighten(law, float(gamma), N, Bracket(), 1e-30)
    gamma, law = _law(11.0)
    assert driver._plain_cannot_tighten(law, gamma, N, Bracket(), 1e-11)
    assert not driver._plain_cannot_tighten(law, gamma, N, Bracket(decide=lambda lo, up: True), 1e-11)
    assert not driver._plain_cannot_tighten(law, gamma, N, Bracket(), math.inf)
