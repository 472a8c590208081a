"""get_epsilon of a pure-LDP randomizer under replace-one does not stop at eps0 when the upper value at
eps0 exceeds delta (docs/accountant.md §8, step 3): the upper values are not monotone next to eps0 (the
atoms' rounding charge keeps the law's top positive there), so a smaller certified epsilon may exist.
The search used to return eps0 in these cells (1400x too large at n = 1e8, delta = 1e-15)."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant


@pytest.mark.parametrize(("k", "eps0", "n", "delta", "known"), [
    (2, 0.5, 10**8, 1e-15, 4e-4),     # get_delta(4e-4) = 4.9e-18 <= 1e-15, while Up(0.5) ~ 2.6e-15
    (2, 1e-3, 100, 1e-20, 0.9e-3),    # exact blanket eps* ~ 0.75 eps0 (trinomial sums, tests/data/review_rev9)
    (2, 0.1, 100, 1e-20, 0.09),
])
def test_answer_below_eps0_where_a_smaller_epsilon_is_certified(k, eps0, n, delta, known):
    rr = RandomizedResponse(k, eps0)
    assert ShuffleAccountant(rr, n, adjacency="replace").get_delta(known) <= delta  # the premise
    e = ShuffleAccountant(rr, n, adjacency="replace").get_epsilon(delta)
    assert e <= known * (1 + 1e-3), e  # no larger than a point certified by get_delta itself (xtol 1e-3)
    assert ShuffleAccountant(rr, n, adjacency="replace").get_delta(e) <= delta  # and certified


@pytest.mark.parametrize(("eps0", "n", "delta"), [(0.5, 1, 1e-6), (0.5, 2, 1e-12), (8.0, 1000, 1e-6)])
def test_answer_is_eps0_where_nothing_smaller_is_certified(eps0, n, delta):
    rr = RandomizedResponse(2, eps0)
    acc = ShuffleAccountant(rr, n, adjacency="replace")
    assert acc.get_epsilon(delta) == eps0
    assert ShuffleAccountant(rr, n, adjacency="replace").get_delta(eps0 * (1 - 2e-3)) > delta
