"""Review rev36 (session 36) of tail36's far-tail rules at n >= 1e7 (docs/accountant_tail.md §48.1 the body passes on
steps snapped to the end atom's spacing with the clamp shift charged, §48.2 the coarse run at CAP_COARSE times the caps'
step).

Claim attacked: a moved bracket is another certified bracket of delta(eps): it overlaps main's (9d10058) rel_tol 1e-3
bracket (Up >= ref_lo: never under-reports; Lo <= ref_up) and meets rel_tol. Cells: those of a grid (GaussianRandomizer
sigma0 in {0.5, 1, 2}, n in {1e7, 1e8}, eps in {1e-3, 1e-2, 0.1, 0.5}; BMG(0.5, 1)) whose default bracket moved against
the switches off (BODY_END_SNAP False, CAP_COARSE 1.0) at tail36's HEAD e6303cc8 and that tail36's tests do not hold (n = 1e7: moved at e6303cc8, unmoved since
BODY_END_SNAP_N = 1e8 at b0f74e3d, kept as overlap checks), and sigma0 = 0.35, n = 1e8 (moved at 1f2f95e2).
References computed with /work/venv/main (main's code, rel_tol 1e-3, fresh processes).
"""

from __future__ import annotations

import pytest
from _rev36_cells import check_overlaps_main_tight
from _main_floats34 import switch

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches


@pytest.fixture(autouse=True)
def _body_end_snap_on(monkeypatch):
    """§48.1's rule on for every test here: it is off by default since docs/accountant_tail.md §48.4."""
    switch(monkeypatch, "BODY_END_SNAP", True)


MAIN_TIGHT = {
    (1.0, 10**7, 0.001): (0.0004947855912367924, 0.0004949162844907927),
    (1.0, 10**7, 0.01): (3.814472769170146e-07, 3.8155649797959163e-07),
    (2.0, 10**7, 0.001): (2.2113563104790825e-07, 2.2127892290989064e-07),
    (0.5, 10**8, 0.5): (0.0036063074618197127, 0.0036328529711363356),
    (0.35, 10**8, 0.03): (0.35588988346523787, 0.3566716489470871),
    (0.35, 3 * 10**8, 0.2): (0.2739959674958168, 0.2750057284467315),
}


@pytest.mark.parametrize("cell", sorted(MAIN_TIGHT), ids=str)
def test_moved_bracket_overlaps_main_tight(cell):
    check_overlaps_main_tight(cell, MAIN_TIGHT[cell])


@pytest.mark.parametrize("s, n, delta", [(0.5, 10**8, 0.02), (0.5, 10**8, 0.005), (1.0, 10**8, 1e-5),
                                         (0.35, 10**8, 0.3)], ids=str)
def test_get_epsilon_at_1e8_against_main_tight(s, n, delta, monkeypatch):
    """get_epsilon with §48's rules on: a rel_tol-1e-3 accountant with §48's switches off (main's code path) has its
    certified lower value at the answer <= delta (measured at 1f2f95e2: 0.019963 <= 0.02, 0.0049798 <= 0.005,
    9.9716e-6 <= 1e-5, 0.29937 <= 0.3; the same floats as /work/venv/main)."""
    clear_caches()
    e = float(ShuffleAccountant(GaussianRandomizer(s, 1), n).get_epsilon(delta))
    switch(monkeypatch, "BODY_END_SNAP", False)
    switch(monkeypatch, "CAP_COARSE", 1.0)
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(s, 1), n, rel_tol=1e-3).get_delta_bounds(e)
    assert lo <= delta, (s, n, delta, e, lo, up)
