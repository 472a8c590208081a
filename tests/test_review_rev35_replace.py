"""Review rev35 (session 35) of rep35's rule (docs/accountant.md §9.12: the reported split of the loose search through
bot certified to its bracket's budget, and the search's legs B at rel_tol 0.3 or 1 where their share is small).

The rule reports another certified bracket of the same chain A(e1) + e^{e1} B(e2) at the same split: it must overlap
main's bracket of that chain (f69257b, /work/venv/main, hard-coded: the chain's true value lies in both), its width
must stay within rel_tol (0.9 rel_tol claimed) and its upper value must lie above the brute-force replace-one delta
of the shuffled GaussianRandomizer(1) at n = 3 (tests/_rev32b_replace3_reference.py, the largest over fixed datasets
(x2, x3) in {0, +-1, +-0.5}: a lower value of the true delta; computed once with that module, session 35, hard-coded)."""

from __future__ import annotations

import numpy as np
import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle.round_cache import clear_caches

# (sigma0, n) -> eps list, main's (lo, up) per eps (rel_tol 1e-2)
MAIN = {
    (2.0, 1000): ([0.3, 1.0], [(6.746611e-07, 6.794760e-07), (2.638244e-12, 2.640979e-12)]),
    (0.5, 10**4): ([0.2, 1.0], [(6.727294e-01, 6.734961e-01), (4.048671e-01, 4.054395e-01)]),
    (4.0, 100): ([0.5], [(9.325914e-13, 9.375282e-13)]),
    (1.0, 3): ([0.5, 1.0, 2.0], [(6.942227e-01, 6.966584e-01), (4.954236e-01, 4.979281e-01),
                                 (2.816290e-01, 2.836002e-01)]),
}
# brute force at n = 3, sigma0 = 1: max over (x2, x3) of delta between (1, x2, x3) and (-1, x2, x3) (x2 = x3 = -1)
N3_LOWER = {0.5: 0.4445045281692605, 1.0: 0.3445075040260256, 2.0: 0.18179849158696162}


@pytest.mark.parametrize("cell", sorted(MAIN))
def test_replace_brackets_overlap_main_and_meet_rel_tol(cell):
    s, n = cell
    eps, ref = MAIN[cell]
    clear_caches()
    lo, up = sh.ShuffleAccountant(sh.GaussianRandomizer(s, 1.0), n, "replace").get_delta_bounds(np.array(eps))
    for e, l, u, (ml, mu) in zip(eps, lo, up, ref):
        assert l <= mu * (1 + 1e-6) and ml * (1 - 1e-6) <= u, (e, l, u, ml, mu)  # (main's printed to 7 digits)
        assert 0 < l and u - l <= 1e-2 * l
        if n == 3:
            assert u >= N3_LOWER[e]
