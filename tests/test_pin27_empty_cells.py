"""The compiled lognormal cells give an empty V-interval exactly (0, 0, 0, 0) (docs/accountant_tail.md §29;
cpp/kernels/lognormal_cells.hpp, ``Law::local``).

A cell of the hat lattice below (or above) a lognormal law's range has both V-edges clipped to the same end of
(v_lo, v_hi): it is the empty event, with mass, moment and error exactly 0 (before: 0 within the ndtr allowances,
~1e-14 per cell, which summed over the lattice's cells below the Gaussian randomizer's support became the hat
window's TV bound n tau ~ 7e-3 at n = 1e8). Checked on the kernel's own cells (exact zeros where both clipped edges
coincide, a positive cell next to them) and on the accountant's bracket of GaussianRandomizer(1, 1), n = 1e8, against
an independent reference: a fresh bracket at a ten times tighter tolerance (rel_tol = 1e-3), which must intersect it.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

from _main_floats34 import session35_floats
import math

import numpy as np
import pytest

from sharpdp import _core
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.laws import LognormalLaw


@pytest.mark.parametrize("law, x0, below", [
    # increasing law exp(2Z - 2) on Z > -0.5: range (e^-3, inf); cells from x0 = -40 lie below it
    (LognormalLaw(0.0, 1.0, 2.0, z_lo=-0.5, weight=0.5), -40.0, True),
    # decreasing law -exp(2Z - 2) on Z > -0.5: range (-inf, -e^-3); the cells above -e^-3 (from x0 = -60) lie above it
    (LognormalLaw(0.0, -1.0, 2.0, z_lo=-0.5, weight=0.5), -60.0, False),
    # the replace-one shape a + G e^{rV - r^2/2} - S e^{-rV - r^2/2} (two terms), truncated: range (L(-1), inf)
    (LognormalLaw(-1.0, 3.0, 1.5, z_lo=-1.0, weight=2.0, b_minus=-0.25), -60.0, True),
])
def test_cells_outside_the_range_are_exact_zeros(monkeypatch, law, x0, below):
    """Every cell whose two clipped V-edges coincide (outside the law's range) is exactly (0, 0, 0, 0): mass, hat
    weight and both error bounds, through ``law.cells`` and the binding itself; the first cell that meets the range
    has positive mass (the grid does reach it). Mutation caught: the line ``if (hi <= lo) return {0.0, 0.0, 0.0,
    0.0};`` removed from ``Law::local`` (em, ew 9.3e-15 on the first law's empty cells, the ndtr allowances at the
    clipped edge v_lo = -0.5 or v_hi = 0.5)."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    h, K = 0.5, 200
    m, w, em, ew = law.cells(x0, h, K)
    G, S = law._G, law._S
    raw = _core.accountant.lognormal_cells(law.a, G, S, law.r, law._vlo, law._vhi, law.weight, x0, h, K)
    for a, b in zip((m, w, em, ew), raw):
        assert np.array_equal(a, b)
    x = x0 + h * np.arange(K + 1, dtype=float)
    lo, hi = law._vint(x[:-1], x[1:])
    empty = ~(hi > lo)
    assert empty.sum() >= 50 and (~empty).sum() >= 50  # (both kinds on the grid)
    for arr in (m, w, em, ew):
        assert np.all(arr[empty] == 0.0)
    # the empty cells are those outside the range: a run at the start (below) or at the end (above)
    k = int(np.argmin(empty)) if below else int(len(empty) - 1 - np.argmin(empty[::-1]))
    assert np.all(empty[:k]) if below else np.all(empty[k + 1:])
    assert m[k] > 0.0 and em[k] > 0.0  # the cell that meets the range: a mass, and its ndtr allowances
    v_end = law._vlo if below else law._vhi
    assert np.all(lo[empty] == v_end) and math.isfinite(v_end)


def test_gaussian_n1e8_bracket_meets_rel_tol_and_a_tighter_reference(monkeypatch):
    """GaussianRandomizer(1, 1), n = 1e8, eps = 0.001, zero-out (the accountant's default tolerance 1e-2): the
    bracket is certified against a fresh one at rel_tol = 1e-3 (they intersect; measured [2.76872e-5, 2.77063e-5]
    against [2.76959e-5, 2.77009e-5]) and within 0.2 % (0.069 %). Mutation caught: the empty-interval line removed
    from ``Law::local``: [2.75928e-5, 2.88115e-5] (4.4 %: the cells below the support carry the ndtr allowances, the
    hat window's TV bound n tau enters the jump term's upper value)."""
    eps, n = 0.001, 10**8
    rlo, rup = ShuffleAccountant(GaussianRandomizer(1.0, 1), n, "zero_out", rel_tol=1e-3).get_delta_bounds(eps)
    assert 0.0 < rlo <= rup and rup - rlo <= 1e-3 * rlo
    # with docs/accountant_tail.md §48.2's coarser first step (session 36) the bracket meets the default rel_tol
    lo, up = ShuffleAccountant(GaussianRandomizer(1.0, 1), n, "zero_out").get_delta_bounds(eps)
    assert 0.0 < lo <= up and max(lo, rlo) <= min(up, rup) and up - lo <= 1e-2 * lo
    session35_floats(monkeypatch)  # (**) session 36, lead: the 0.2 % pin is session 35's steps (§48 off)
    lo, up = ShuffleAccountant(GaussianRandomizer(1.0, 1), n, "zero_out").get_delta_bounds(eps)
    assert 0.0 < lo <= up
    assert max(lo, rlo) <= min(up, rup)
    assert up - lo <= 2e-3 * lo
