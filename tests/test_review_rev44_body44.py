"""Review rev44 (session 44): attack on body44's docs/accountant_tail.md §66.1 (``limits.BODY44_FIRST_SKIP``: a
far-tail round's first body pass aimed at half the round's step where the hat window's body bracket misses its share
by 20-150 times; a choice of passes). Skipped while the switch is absent (branch body44).

Claim attacked: every bracket stays certified. References: the switch off (main's certified bracket) and a finer
accountant (rel_tol 1e-3, the switch off: a tight certified bracket of the same divergence); the rule's bracket must
meet both. The rule ran (``far_tail.aim`` returned a half step) on the cells of §66.1 (bench_kink42's cells 1 and 3).
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch
from _rev44_spy import spy

pytestmark = pytest.mark.skipif(not hasattr(limits, "BODY44_FIRST_SKIP"), reason="rule of a branch not merged")

CELLS = {"bmg1": (lambda: BlanketMixedGaussian(0.0389, 0.529, 1), 10**8, 0.01),
         "gauss3": (lambda: GaussianRandomizer(1.0, 1), 10**8, 0.001)}


@pytest.mark.parametrize("cell", list(CELLS))
def test_first_pass_at_half_step_meets_off_and_fine(monkeypatch, cell):
    from sharpdp.shuffle.accountant import far_tail

    mk, n, eps = CELLS[cell]
    with monkeypatch.context() as mp:
        switch(mp, "BODY44_FIRST_SKIP", False)
        off = ShuffleAccountant(mk(), n).get_delta_bounds(eps)
        fine = ShuffleAccountant(mk(), n, rel_tol=1e-3).get_delta_bounds(eps) if cell == "bmg1" else off
    calls = spy(monkeypatch, "aim", far_tail)
    switch(monkeypatch, "BODY44_FIRST_SKIP", True)
    on = ShuffleAccountant(mk(), n).get_delta_bounds(eps)
    clear_caches()
    assert any(out < a[0] for a, out in calls)  # (the rule aimed a first pass at the half step)
    for ref in (off, fine):
        assert max(on[0], ref[0]) <= min(on[1], ref[1]), (on, ref)
