"""Review rev40 (session 40) of far40's docs/accountant_tail §58 (``FLOOR_TARGET``: a body-dominated far-tail law at
n >= 1e7 whose clamped Chernoff cap at 1e-15 is below it ends with min(that cap, ``fine_cap``), its lower value the
closed forms'), at n = 3e7 - 1e8 (the builder's fine_cap tests are at n = 2, 3, 300).

Reference (independent of the library: the mechanism's densities in mpmath, 40 digits, written here): the best
continuous Chernoff bound X* = min over T, lambda of (1 - gamma + gamma E e^{lambda min(L, T)})^n / (e lambda n gamma)
+ E[(L - T)_+], an upper bound of D_up. Each certified cap of §58.3 is this bound on a law that dominates clamp(L, -B, T)
in the increasing convex order (the raised law's hat lattice), at one T and one lambda, so it is >= X*: an upper value
below X* would be a broken cap. A lower bound of X* is hard-coded: the Chernoff term is non-decreasing in T (min(L, T)
is) and E[(L - T)_+] non-increasing, so X* >= min(Chernoff term at T0, E[(L - T0)_+]) for any T0 (computed offline
by rev40, golden-section search on log lambda, the T0 below). And main's certified lower value (its far-tail rounds,
tests/test_far40_floor.py's MAIN_G2 / MAIN_BMG) must lie below the new upper value.
Measured on far40 ddb27807 (FLOOR_NODES 2^15): upper / X*'s bound 5749 (GaussianRandomizer(2), n = 1e8, eps = 0.001;
5c80cfe0 at 2^16 nodes: 10.4), 72 (BMG(0.394, 1.15), n = 1e8, eps = 0.001), 3.9e14 (BMG(0.6, 1.5), n = 3e7,
eps = 0.001), 1.55 (GaussianRandomizer(3), n = 3e7, eps = 0.001), 2.9 (BMG(0.394, 1.15), n = 1e7, eps = 0.003)."""

from __future__ import annotations

import pytest

floor = pytest.importorskip("sharpdp.shuffle.accountant.far_tail_floor")

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer  # noqa: E402
from sharpdp.shuffle.laws import laws_for  # noqa: E402

# (kind, params, n, eps): (lower bound of X*, main's certified lower value of the law or 0)
CELLS = {("g", (2.0,), 10**8, 0.001): (8.9097e-24, 9.949338522402655e-25),  # T0 = 1e3: tau 3.4e-13
         ("b", (0.394, 1.15), 10**8, 0.001): (9.9374e-27, 6.033577778378318e-50),  # T0 = 300: tau 6.9e-13
         ("b", (0.6, 1.5), 3 * 10**7, 0.001): (4.9682e-50, 0.0),  # T0 = 1e3: tau 4.4e-32
         ("g", (3.0,), 3 * 10**7, 0.001): (6.1219e-26, 0.0),  # T0 = 3e3: tau 1.9e-35
         ("b", (0.394, 1.15), 10**7, 0.003): (4.2541e-24, 0.0)}  # T0 = 3e3: tau 2.2e-22


@pytest.mark.parametrize("cell", sorted(CELLS), ids=str)
def test_floor_bracket_upper_at_or_above_the_continuous_chernoff_bound(cell):
    kind, p, n, eps = cell
    x_lb, main_lo = CELLS[cell]
    r = GaussianRandomizer(p[0], 1) if kind == "g" else BlanketMixedGaussian(p[0], p[1], 1)
    gamma, law = laws_for(r, eps, "zero_out")[0]
    fb = floor.floor_bracket(law, float(gamma), n)
    if fb is None:
        pytest.skip("the floor declines (FLOOR_TARGET off or the gate)")
    assert fb.upper >= x_lb, (cell, fb.lower, fb.upper, x_lb)
    assert fb.upper >= main_lo and fb.lower <= fb.upper, (cell, fb.lower, fb.upper, main_lo)
    assert fb.lower <= x_lb
