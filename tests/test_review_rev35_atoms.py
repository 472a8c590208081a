"""Review rev35 (session 35) of mid35's rules (docs/accountant_tail.md §46: lower-only passes once the upper value
settled, steps snapped to an atom law's spacing, the Gaussian sum law's end atom put just before a node).

References the builder did not use: the exact blanket divergence of k-RR and PrivUnit replace-one laws by binomial sums
(tests/test_krr29_settled_upper.py's ``_blanket_three_atoms``) at cells of other k, eps0, n and at eps near 0 (0 and
1e-5, where the negative atom sits nearest to -s); for the Gaussian randomizer's zero-out laws (END_ATOM_SNAP), main's
brackets (f69257b, /work/venv/main, hard-coded) which must overlap the new ones, and the second-order Edgeworth
estimate of tests/_review28_gauss_reference.py where its own indicator is small. The brackets must meet rel_tol 1e-2.
Every test also runs on main (its own floats)."""

from __future__ import annotations

import numpy as np
import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle.accountant import laws_for
from sharpdp.shuffle.round_cache import clear_caches
from tests.test_krr29_settled_upper import _blanket_three_atoms

ATOM_CELLS = [(sh.RandomizedResponse(10, 4.0), 10**4, [0.0, 1e-5, 2e-3, 7e-3]),
              (sh.RandomizedResponse(3, 1.0), 10**5, [0.0, 3e-4, 2e-3]),
              (sh.RandomizedResponse(50, 6.0), 10**5, [0.0, 0.007]),
              (sh.PrivUnit(0.75, 0.2, 10), 3 * 10**4, [0.0, 3e-4, 7e-3])]


@pytest.mark.parametrize("randomizer,n,eps", ATOM_CELLS, ids=lambda x: str(x)[:24])
def test_atom_law_brackets_hold_the_exact_blanket_divergence(randomizer, n, eps):
    clear_caches()
    lo, up = sh.ShuffleAccountant(randomizer, n, "replace").get_delta_bounds(np.array(eps))
    for e, l, u in zip(eps, lo, up):
        (g, law), = laws_for(randomizer, e, "replace")
        v, p = law.atoms()
        ex = _blanket_three_atoms(float(g), np.asarray(v), np.asarray(p), n)
        assert l <= ex * (1 + 1e-9) and ex <= u * (1 + 1e-9), (e, l, ex, u)
        assert u - l <= 1e-2 * l


# main f69257b's brackets (rel_tol 1e-2), GaussianRandomizer(s, 1), zero-out, and the Edgeworth estimate (its
# first-to-second-order change as indicator) at cells where END_ATOM_SNAP moves the bracket
GAUSS_MAIN = {
    (4.0, 100, 0.01): ((1.1010248e-02, 1.1035218e-02), 1.1031755e-02, 8.4e-4),
    (4.0, 1000, 0.01): ((1.4445129e-03, 1.4498822e-03), 1.4486762e-03, 2.7e-3),
    (4.0, 10**4, 0.01): ((6.1803124e-06, 6.2387558e-06), 6.2298757e-06, 1.6e-2),
    (4.0, 100, 1.0): ((3.7777223e-25, 3.7864355e-25), None, None),
    (4.0, 10**5, 0.01): ((3.0105578e-20, 3.0149586e-20), None, None),
}


@pytest.mark.parametrize("cell", sorted(GAUSS_MAIN))
def test_gaussian_end_atom_cells_overlap_main_and_the_estimate(cell):
    s, n, eps = cell
    (m_lo, m_up), est, ind = GAUSS_MAIN[cell]
    clear_caches()
    lo, up = sh.ShuffleAccountant(sh.GaussianRandomizer(s, 1.0), n).get_delta_bounds(eps)
    assert lo <= m_up * (1 + 1e-7) and m_lo * (1 - 1e-7) <= up, (lo, up, m_lo, m_up)  # (main's printed to 8 digits)
    assert 0 < lo and up - lo <= 1e-2 * lo
    if est is not None:
        assert lo <= est * (1 + 2 * ind) and est * (1 - 2 * ind) <= up, (lo, est, up)
