"""Review rev36 (session 36) of eps36's get_epsilon choices (docs/accountant.md §8.14: phase 1 follows one law where the
largest two tie within limits.EPS_TIE_LEAD; the loose look at the phase-1 root at rel_tol EPS_LOOK_REL_LARGE at
n >= 1e8).

Claim attacked: the returned eps is still returned only by its own certifying evaluation, i.e. delta(eps) <= target:
a fresh accountant's certified upper value at the answer is <= delta, and a fresh rel_tol-1e-3 accountant's certified
lower value there does not exceed delta (else the answer would provably under-report); and the answer lies within
xtol of the search with both switches off (main's rules). Cells other than eps36's tests (other delta, adjacencies,
randomizers, n = 1e6 and 1e8).
"""

from __future__ import annotations

import pytest
from _main_floats34 import switch

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant, clear_caches

XTOL = 1e-3

CELLS = [
    ("g46_1e6_d1e-9", lambda: GaussianRandomizer(4.6, 1), 10**6, "zero_out", 1e-9),
    ("bmg_1e8_d1e-6", lambda: BlanketMixedGaussian(0.5, 1.0, 1), 10**8, "zero_out", 1e-6),
    ("bmg_1e6_rep", lambda: BlanketMixedGaussian(0.95, 4.6, 1), 10**6, "replace", 1e-7),
    ("rr4_1e8_rep", lambda: RandomizedResponse(4, 2.0), 10**8, "replace", 1e-8),
]


@pytest.mark.parametrize("name, make, n, adj, delta", CELLS, ids=[c[0] for c in CELLS])
def test_answer_certified_by_fresh_accountants_and_near_main(name, make, n, adj, delta, monkeypatch):
    clear_caches()
    e = float(ShuffleAccountant(make(), n, adj).get_epsilon(delta))
    clear_caches()
    assert ShuffleAccountant(make(), n, adj).get_delta(e) <= delta, (name, e)
    clear_caches()
    lo, up = ShuffleAccountant(make(), n, adj, rel_tol=1e-3).get_delta_bounds(e)
    assert lo <= delta, (name, e, lo, up)
    switch(monkeypatch, "EPS_TIE_LEAD", 0.0)
    switch(monkeypatch, "EPS_LOOK_REL_LARGE", 0.1)
    clear_caches()
    e_off = float(ShuffleAccountant(make(), n, adj).get_epsilon(delta))
    assert abs(e - e_off) <= XTOL * max(e, e_off), (name, e, e_off)
