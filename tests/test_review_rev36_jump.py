"""Review rev36 (session 36) of jump36's jump-term rules (docs/accountant_tail.md §49: the hat bracket alone where it is
within JUMP_HAT_SHARE rel_tol of its lower value or of the body's saddle-point estimate, §49.2 the stop-loss weights
on octave pieces).

Claim attacked: a moved bracket is another certified bracket of delta(eps): it must overlap main's (9d10058) rel_tol
1e-3 bracket, the tighter reference (Lo <= ref_up and Up >= ref_lo), and meet rel_tol. Cells: every cell of a grid
(GaussianRandomizer sigma0 in {1.5, 2, 3, 4.6}, n in {1e4, 1e5, 1e6}, eps in {1e-3, 1e-2, 0.1}; BMG(0.9, 3), sigma0 =
0.5) whose default bracket moved against the switches off (measured at jump36's HEAD e2b5a240), plus sigma0 = 2,
n = 1e6, eps = 3e-3. References computed with /work/venv/main (main's code, rel_tol 1e-3, fresh processes).
"""

from __future__ import annotations

import pytest
from _rev36_cells import check_overlaps_main_tight

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches

# (sigma0, n, eps): main's rel_tol-1e-3 bracket
MAIN_TIGHT = {
    (1.5, 10**5, 0.001): (0.002073800168838699, 0.002074131122491632),
    (1.5, 10**5, 0.01): (0.00016940952942631692, 0.00016944732420742567),
    (2.0, 10**4, 0.001): (0.003935905150297655, 0.003936847174191058),
    (2.0, 10**5, 0.001): (0.0009540522476150778, 0.000954359809649957),
    (2.0, 10**5, 0.01): (2.4015787083100973e-06, 2.402663278011372e-06),
    (2.0, 10**6, 0.001): (0.00011066085801866103, 0.00011072715293319962),
    (2.0, 10**6, 0.003): (1.160653762416873e-06, 1.1612571183370193e-06),
}


@pytest.mark.parametrize("cell", sorted(MAIN_TIGHT), ids=str)
def test_moved_bracket_overlaps_main_tight(cell):
    check_overlaps_main_tight(cell, MAIN_TIGHT[cell])


@pytest.mark.parametrize("cell", [(2.0, 10**5, 0.01), (2.0, 10**6, 0.003), (1.5, 10**5, 0.001)], ids=str)
def test_tight_bracket_with_the_rules_on_overlaps_main_tight(cell):
    """The branch's own rel_tol-1e-3 bracket (the rules on) overlaps main's."""
    s, n, eps = cell
    ref_lo, ref_up = MAIN_TIGHT[cell]
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(s, 1), n, rel_tol=1e-3).get_delta_bounds(eps)
    assert up >= ref_lo * (1 - 1e-12) and lo <= ref_up * (1 + 1e-12), (cell, lo, up, ref_lo, ref_up)
