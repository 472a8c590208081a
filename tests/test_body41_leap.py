"""docs/accountant_tail.md §59.2 (session 41, body41): a far-tail body pass whose gap exceeds BODY_LEAP_EIGHT_RATIO (16)
times its share divides the step by 8 (``far_tail_steps.divisor``; a step that does not fit the caps is replaced by
the next coarser one, ``far_tail_steps.refits``). A choice of which certified passes run, never a value: the round
keeps the largest lower and the least upper value of its passes (§7, §31.2).

Attacks: (1) the regime map's cell BMG n = 1e8, eps = 0.001 with the rule (passes h, h/8) and without it (h, h/4, h/8):
the same floats, and both hold an independent reference (the second-order Edgeworth estimate of
tests/_rev29_bmg_reference.py, from the mechanism's densities, with the tolerance of tests/test_review_rev29_body_leap.py)
and contain the switch-off run at rel_tol 1e-3; (2) the caps simulated below h/4: the eighth step falls back to the
quarter, the floats those of the switch-off run under the same caps; (3) the rule forced after every pass (ratio 0,
BODY_LEAP 0): other step sequences, which must stay certified: they hold the reference and meet the rel_tol 1e-3
bracket; (4) a cell where it fires at small n (GaussianRandomizer(2), n = 100, replace, eps = 3, through bot):
rule on / off / rel_tol 1e-3 brackets intersect.
"""

from __future__ import annotations

import math

import pytest

from _main_floats34 import switch
from _rev29_bmg_reference import d_up_edgeworth as bmg_edgeworth
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import far_tail, limits
from sharpdp.shuffle.accountant.far_tail_steps import divisor, refits
from sharpdp.shuffle.accountant.results import Coarsen
from sharpdp.shuffle.laws import laws_for

CELL = (0.17065402858238032, 0.7801917124578649, 10**8, 0.001)  # the regime map's BMG n = 1e8, eps = 0.001


def _run(g: float, s: float, n: int, eps: float, rel_tol: float = 1e-2):
    gamma, law = laws_for(BlanketMixedGaussian(g, s, 1), eps, "zero_out")[0]
    return far_tail.certify_bigjump(law.shifted(up=True), float(gamma), n, rel_tol, 1)


def _spy(monkeypatch, refuse_below: float = 0.0) -> list[float]:
    """The body passes' steps of the x-vs-bot law's runs; with ``refuse_below`` > 0 every step below that fraction of
    the first step is refused as the size caps would (Coarsen)."""
    steps: list[float] = []
    lp = far_tail.lattice_pass

    def spy(law, gamma, n, hb, *a, **k):
        steps.append(hb)
        if refuse_below and hb < refuse_below * steps[0]:
            return Coarsen(refuse_below * steps[0])
        return lp(law, gamma, n, hb, *a, **k)

    monkeypatch.setattr(far_tail, "lattice_pass", spy)
    return steps


def _holds(r, g: float, s: float, n: int, eps: float) -> bool:
    e2, e1, _ = bmg_edgeworth(g, s, eps, n)
    tol = 3.0 * abs(e2 - e1) / e2 + 2e-4
    return r.upper >= e2 * (1.0 - tol) and r.lower <= e2 * (1.0 + tol)


def test_divisor_and_refits(monkeypatch):
    """2 / 4 / 8 by the gap's ratio to the share (above BODY_LEAP = 4: 4; above 16: 8); off: main's 2 / 4; the
    eighth step refits to the quarter only with the switch, the quarter to the half always, the half never."""
    assert limits.BODY_LEAP_EIGHT and limits.BODY_LEAP_EIGHT_RATIO == 16.0
    assert divisor(1.0, 1.0 + 3.9, 1.0, 4.0) == 2.0
    assert divisor(1.0, 1.0 + 15.9, 1.0, 4.0) == 4.0
    assert divisor(1.0, 1.0 + 16.1, 1.0, 4.0) == 8.0
    assert divisor(0.0, 100.0, 1.0, 4.0) == 2.0  # (no lower value yet: the halving, as §31.2)
    assert divisor(1.0, 1.0 + 16.1, 1.0, math.inf) == 2.0
    p = 0.6640625
    assert refits(p / 8, p) and refits(p / 4, p) and not refits(p / 2, p)
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)
    assert divisor(1.0, 1.0 + 16.1, 1.0, 4.0) == 4.0
    assert not refits(p / 8, p) and refits(p / 4, p)


def test_regime_cell_same_floats_one_pass_fewer(monkeypatch):
    """BMG n = 1e8, eps = 0.001: passes h, h/8 against h, h/4, h/8 (switch off), the same bracket bit for bit (the
    eighth step's pass gives both ends in either run); it holds the Edgeworth reference and contains the switch-off
    run at rel_tol 1e-3 (measured [9.6607670e-7, 9.7079773e-7] in both; reference 9.68e-7)."""
    g, s, n, eps = CELL
    steps = _spy(monkeypatch)
    on = _run(g, s, n, eps)
    on_steps = list(steps)
    steps.clear()
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)
    off = _run(g, s, n, eps)
    off_steps = list(steps)
    h0 = on_steps[0]
    assert on_steps[:2] == [h0, h0 / 8] and off_steps[:3] == [h0, h0 / 4, h0 / 8], (on_steps, off_steps)
    assert len(on_steps) == len(off_steps) - 1
    assert (on.lower, on.upper) == (off.lower, off.upper)
    assert 0.0 < on.upper - on.lower <= 1e-2 * on.lower
    assert _holds(on, g, s, n, eps)
    fine = _run(g, s, n, eps, 1e-3)
    assert on.lower <= fine.lower <= fine.upper <= on.upper


def test_eighth_step_refused_falls_back_to_the_quarter(monkeypatch):
    """The caps simulated below h/4: the eighth step is refused, the quarter runs, then the halving's h/8 is refused
    and the passes end there, as without the rule (whose quarter step runs first): the same floats."""
    g, s, n, eps = CELL
    steps = _spy(monkeypatch, refuse_below=0.25)
    on = _run(g, s, n, eps)
    h0 = steps[0]
    assert steps[:3] == [h0, h0 / 8, h0 / 4], steps
    steps.clear()
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)
    off = _run(g, s, n, eps)
    assert steps[:2] == [h0, h0 / 4], steps
    assert (on.lower, on.upper) == (off.lower, off.upper)


@pytest.mark.parametrize("g, s, n, eps", [(0.584, 1.49, 10**6, 0.001), (0.3, 1.0, 10**7, 0.001)])
def test_forced_eighth_steps_stay_certified(monkeypatch, g, s, n, eps):
    """The rule forced after every pass with Body_lo > 0 (BODY_LEAP = 0, ratio 0): other step sequences, so other
    certified brackets: each holds the Edgeworth reference and meets the switch-off rel_tol 1e-3 bracket."""
    monkeypatch.setattr(far_tail, "BODY_LEAP", 0.0)
    switch(monkeypatch, "BODY_LEAP_EIGHT_RATIO", 0.0)
    steps = _spy(monkeypatch)
    forced = _run(g, s, n, eps)
    assert any(a == 8.0 * b for a, b in zip(steps, steps[1:])), steps
    assert _holds(forced, g, s, n, eps), (forced.lower, forced.upper)
    monkeypatch.setattr(far_tail, "BODY_LEAP", 4.0)
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)
    fine = _run(g, s, n, eps, 1e-3)
    assert max(forced.lower, fine.lower) <= min(forced.upper, fine.upper)


def test_replace_cell_through_bot_on_off_and_finer_intersect(monkeypatch):
    """GaussianRandomizer(2), n = 100, replace, eps = 3 (the legs through bot run many far-tail rounds; gaps of 17.8 and
    37.8 times the share occur, so the eighth step runs): rule on, off and off at rel_tol 1e-3 intersect."""
    calls: list[float] = []
    orig = far_tail.divisor

    def spy(*a):
        calls.append(orig(*a))
        return calls[-1]

    monkeypatch.setattr(far_tail, "divisor", spy)
    on = ShuffleAccountant(GaussianRandomizer(2.0, 1), 100, "replace").get_delta_bounds(3.0)
    assert 8.0 in calls
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)
    off = ShuffleAccountant(GaussianRandomizer(2.0, 1), 100, "replace").get_delta_bounds(3.0)
    fine = ShuffleAccountant(GaussianRandomizer(2.0, 1), 100, "replace", rel_tol=1e-3).get_delta_bounds(3.0)
    assert max(on[0], off[0], fine[0]) <= min(on[1], off[1], fine[1]), (on, off, fine)


def test_replace_cell_where_the_rule_tightens_the_bracket(monkeypatch):
    """GaussianRandomizer(1), n = 1e3, replace, eps = 2: measured [3.7496989e-4, 3.7578027e-4] with the rule, nested in
    [3.7457299e-4, 3.7578052e-4] without it; the switch-off run at rel_tol 1e-3, [3.7528562e-4, 3.7533738e-4], lies in
    both."""
    on = ShuffleAccountant(GaussianRandomizer(1.0, 1), 1000, "replace").get_delta_bounds(2.0)
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)
    off = ShuffleAccountant(GaussianRandomizer(1.0, 1), 1000, "replace").get_delta_bounds(2.0)
    fine = ShuffleAccountant(GaussianRandomizer(1.0, 1), 1000, "replace", rel_tol=1e-3).get_delta_bounds(2.0)
    assert off[0] <= on[0] <= fine[0] <= fine[1] <= on[1] <= off[1], (on, off, fine)
    assert on != off
