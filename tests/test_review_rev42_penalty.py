"""Review rev42 (session 42): attack on rep42's docs/accountant.md §9.20 (``via_bottom_penalty.penalty_bound``,
``limits.VIA_BOTTOM_PENALTY_KEEP``: the reported split through bot keeps its search's leg B where the far tail's
lower-tail penalty holds that leg's lower value; a choice of which certified legs run). Skipped until merged.

Claim attacked: the report stays a certified bracket of the same quantity. Reference: the rule off at rel_tol 1e-3
(session 41's tighter legs B, another split search) must meet the rule's bracket, at the two cells of a small scan
(GaussianRandomizer(s), replace; s, n, eps in {(1, 1e3, 8), (1, 1e3, 6), (0.7, 1e3, 8), (1, 1e4, 4), (1.5, 1e3, 6)})
where the rule fired: (1, 1e3, 8) and (1.5, 1e3, 6); and the rule must have fired there (else the test is idle)."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch

vp = pytest.importorskip("sharpdp.shuffle.accountant.via_bottom_penalty")


@pytest.mark.parametrize("s, n, eps", [(1.0, 1000, 8.0), (1.5, 1000, 6.0)])
def test_kept_leg_bracket_meets_the_tight_rule_off_bracket(monkeypatch, s, n, eps):
    from sharpdp.shuffle.accountant import via_bottom, via_bottom_budget

    fired: list[bool] = []
    orig = vp.penalty_bound

    def spy(rb):
        fired.append(orig(rb))
        return fired[-1]

    monkeypatch.setattr(via_bottom, "penalty_bound", spy)
    monkeypatch.setattr(via_bottom_budget, "penalty_bound", spy)
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").get_delta_bounds(eps)
    assert any(fired) and limits.VIA_BOTTOM_PENALTY_KEEP
    switch(monkeypatch, "VIA_BOTTOM_PENALTY_KEEP", False)
    lo3, up3 = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace", rel_tol=1e-3).get_delta_bounds(eps)
    assert max(lo, lo3) <= min(up, up3), ((lo, up), (lo3, up3))
