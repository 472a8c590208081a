"""far_tail's jump-term share (docs/accountant_tail.md §81): the switch is off by default (session 48's steps), and
where it is on at GaussianRandomizer(1), n = 1e8, eps = 0.001 the coarser run stops the jump term's refinement at
h = 1.09375 (the window at the caps' step 0.546875 is not computed), its bracket stays within rel_tol = 1 %, and its
values stay on their sides of the rule-off computation's finer bracket."""

from __future__ import annotations

from _main_floats34 import SESSION48, switch

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import far_tail, limits


def test_switch_default_is_session48s() -> None:
    assert limits.JGAP49 is False and SESSION48["JGAP49"] is False
    assert 0.05 < limits.JGAP49_SHARE <= 0.5  # (a share of rel_tol larger than §27 (b)'s, at most half of it)


def _bracket(monkeypatch, on: bool) -> tuple[float, float, list[float]]:
    switch(monkeypatch, "JGAP49", on)
    steps: list[float] = []
    jt0 = far_tail.jump_term

    def traced(law, gamma, n, lat, h, *args, **kwargs):
        steps.append(h)
        return jt0(law, gamma, n, lat, h, *args, **kwargs)

    monkeypatch.setattr(far_tail, "jump_term", traced)
    lo, up = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**8).get_delta_bounds(0.001)
    monkeypatch.setattr(far_tail, "jump_term", jt0)
    return lo, up, steps


def test_share_keeps_the_bracket_and_its_sides(monkeypatch) -> None:
    lo_off, up_off, steps_off = _bracket(monkeypatch, False)
    lo_on, up_on, steps_on = _bracket(monkeypatch, True)
    # the rule ran: rule off, the coarser run's jump term misses and the run at the caps' step refines it to 0.546875;
    # rule on, the coarser run halves once and keeps the jump term at 1.09375
    assert 0.546875 in steps_off and 1.09375 not in steps_off
    assert 1.09375 in steps_on and 0.546875 not in steps_on
    assert 0.0 < lo_on <= up_on and (up_on - lo_on) / lo_on <= 1e-2
    # both brackets are certified: each lower value is under the other's upper value (the rule-off bracket is ~2x finer)
    assert (up_off - lo_off) < (up_on - lo_on)
    assert lo_off <= up_on and lo_on <= up_off
