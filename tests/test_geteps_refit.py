"""get_epsilon on continuous laws (docs/accountant.md §8, step 6: phase 2 refits its model on get_delta's
value at the phase-1 root): the answer against an independent reference made of certified get_delta values
of fresh accountants, the xtol contract, and independence from earlier queries (zero-out and replace)."""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant

DELTA = 1e-6
XTOL = 1e-3

# (randomizer factory, n, adjacency): cells where the phase-1 model (coarse upper-only values) is led by
# another law than get_delta's value (GaussianRandomizer sigma0 = 2: bot vs x) and a replace-one BMG
CELLS = [
    (lambda: GaussianRandomizer(2.0, 1), 1000, "zero_out"),
    (lambda: GaussianRandomizer(2.0, 1), 10000, "zero_out"),
    (lambda: BlanketMixedGaussian(0.4, 1.2, 1), 1000, "zero_out"),
    (lambda: BlanketMixedGaussian(0.5, 2.0, 1), 1000, "replace"),
]


def _fresh_delta(make, n: int, adjacency: str, eps: float) -> float:
    """get_delta of a fresh accountant (no running minimum from earlier queries)."""
    return float(ShuffleAccountant(make(), n, adjacency).get_delta(eps))


@pytest.mark.parametrize("cell", range(len(CELLS)))
def test_answer_against_certified_grid(cell):
    make, n, adj = CELLS[cell]
    e = ShuffleAccountant(make(), n, adj).get_epsilon(DELTA, xtol=XTOL)
    assert 0.0 < e < 700.0
    # the safe end: a fresh accountant certifies delta at the answer
    assert _fresh_delta(make, n, adj, e) <= DELTA
    # not more than xtol above the crossing: get_delta exceeds delta at e (1 - xtol)
    assert _fresh_delta(make, n, adj, e * (1.0 - XTOL)) > DELTA
    # an independent grid of certified values: the smallest grid eps with get_delta <= delta bounds the
    # answer from above, and the answer is not below the grid points where get_delta exceeds delta
    grid = e * np.array([0.9, 0.97, 0.995, 1.003, 1.02, 1.1])
    vals = [_fresh_delta(make, n, adj, float(g)) for g in grid]
    below = [g for g, v in zip(grid, vals) if v <= DELTA]
    above = [g for g, v in zip(grid, vals) if v > DELTA]
    assert below and above
    assert e <= min(below)
    assert e >= max(above)


@pytest.mark.parametrize("cell", [0, 3])
def test_answer_independent_of_earlier_queries(cell):
    make, n, adj = CELLS[cell]
    e_fresh = ShuffleAccountant(make(), n, adj).get_epsilon(DELTA, xtol=XTOL)
    acc = ShuffleAccountant(make(), n, adj)
    acc.get_delta(0.5 * e_fresh)
    acc.get_delta(1.05 * e_fresh)
    e_big = acc.get_epsilon(1e-5, xtol=XTOL)
    e_after = acc.get_epsilon(DELTA, xtol=XTOL)
    assert e_big < e_after  # a larger delta needs a smaller epsilon
    assert abs(e_after - e_fresh) <= XTOL * e_fresh
    assert float(acc.get_delta(e_after)) <= DELTA


def test_monotone_in_delta():
    make, n, adj = CELLS[0]
    acc = ShuffleAccountant(make(), n, adj)
    es = [acc.get_epsilon(d, xtol=XTOL) for d in (1e-7, 1e-6, 1e-5)]
    assert es[0] > es[1] > es[2] > 0.0
    for d, e in zip((1e-7, 1e-6, 1e-5), es):
        assert _fresh_delta(make, n, adj, e) <= d
