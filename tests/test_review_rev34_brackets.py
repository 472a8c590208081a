"""Review rev34 of session 34's bracket-moving rules in the engines: the far-tail round's body passes stopped where the
whole bracket meets 0.8 rel_tol, the jump term's step skipped on its TV estimate, an atom law's slow gap aimed as h^0.8
(tail34, the far-tail document's §44 and the atoms document's §12), and the closed form's stage 6 at n >= 1e8 (body34,
the far-tail document's §43). The claims attacked (the lead's conditions (2)-(3) for a moved bracket): every default
bracket still contains the reference and meets rel_tol 1e-2 wherever delta >= 1e-15.

Reference: main 81992f2's certified brackets at rel_tol 1e-4 (/work/venv/main, a fresh accountant per call, caches
cleared; where main's rule stops at the same bracket the reference is main's default one): an independent certificate
on finer grids of each cell. Cells: the map's slow cells the rules target (BMG of calibrate_bmg at n = 1e8, 1e9;
GaussianRandomizer(1), (2) at n = 1e6, 1e8; 10-RR and PrivUnit at n = 1e8, 1e9) and five random cells (seed 34 of this
review's sweep) whose brackets tail34 at 401edb8 moved; GaussianRandomizer(0.5), n = 1e3, eps 6.65-6.75, where body34's
stage 6 (at 616b21d) accepts the closed form's bracket in place of the FFT treatment's.

Review sweep (tail34 at 401edb8): the 59 map cells over 70 ms on main and 70 random cells (Gaussian, BMG, k-RR,
PrivUnit; n = 1e2 ... 1e9; eps 1e-3 ... 8): no bracket misses its reference; 5 random brackets moved (all within
rel_tol); the only cells over rel_tol are main's own (GaussianRandomizer(0.5) at n = 1e8, 1e9; a body the closed forms do
not bound to 1 %, the far-tail document's §35.4). body34 at 616b21d: 15 cells of GaussianRandomizer(0.4-0.6), n = 1e3,
eps 5.5-9 (3 moved by stage 6, each nested in main's default bracket and containing the reference); at the level of
E phi(X_m), stage 6's upper value (§43.1's pieces) against a midpoint convolution at 6 BMG laws x T0 in {15, 40, 120} x
m in 60-400 (blocks of consecutive m included): never below it beyond the convolution's own noise (about 1e-5 relative
at values ~1e-17).
"""

from __future__ import annotations

import pytest

from test_review_rev33_tail import _make  # noqa: E402  (the same cell kinds as session 33's review)

from sharpdp.shuffle import ShuffleAccountant, clear_caches


def _adjacency(cell) -> str:
    return "replace" if cell[0] in ("krr", "privunit") else "zero_out"


# (cell, n, eps, main 81992f2's bracket at rel_tol 1e-4)
REFS = [
    (("bmg", 0.17072156412461156, 0.7801442377557667), 10**8, 0.001, (9.972088998033535e-07, 9.973816712386194e-07)),
    (("bmg", 0.039943127470521624, 0.5276147158804813), 10**8, 0.01, (9.94772539963226e-07, 9.952654816826497e-07)),
    (("bmg", 0.020184369008040444, 0.4564324504091077), 10**8, 0.1, (9.963347081058357e-07, 9.964639739014751e-07)),
    (("bmg", 0.014268009785030579, 0.40485052696623824), 10**9, 0.1, (9.945405557426065e-07, 9.959778512746285e-07)),
    (("gauss", 1.0), 10**6, 0.001, (0.0023673455518812567, 0.0023674044346459673)),
    (("gauss", 1.0), 10**6, 0.01, (0.00032460745541213257, 0.0003246294317285325)),
    (("gauss", 1.0), 10**6, 0.1, (2.4990414827868553e-07, 2.499079483808746e-07)),
    (("gauss", 2.0), 10**6, 0.001, (0.0001106921497401357, 0.00011069351766225611)),
    (("gauss", 2.0), 10**6, 0.01, (2.574939206136481e-19, 2.7755116396090016e-19)),
    (("gauss", 1.0), 10**8, 0.01, (4.3085159626639675e-10, 4.3112379820517666e-10)),
    (("gauss", 0.5), 1000, 6.65, (0.05489647165941542, 0.05489921059152549)),  # (stage 6 accepts these three)
    (("gauss", 0.5), 1000, 6.7, (0.053547004598642, 0.05354809825596543)),
    (("gauss", 0.5), 1000, 6.75, (0.05222242740998393, 0.052225436692401386)),
    (("krr", 10, 4.0), 10**8, 0.001, (7.167069023103954e-05, 7.167560266011095e-05)),
    (("krr", 10, 8.0), 10**9, 0.01, (1.1030262199573632e-08, 1.1032822889782493e-08)),
    (("privunit",), 10**8, 0.001, (3.102970785730496e-08, 3.103000916415225e-08)),
    (("bmg", 0.23606, 0.8945), 1000, 0.107, (0.003960196278135129, 0.003960242166851493)),
    (("bmg", 0.02104, 0.514), 10**6, 0.00324, (0.01520198614370387, 0.015202393903058423)),
    (("krr", 5, 6.0), 10**6, 0.18647, (9.791942031068527e-14, 9.792095395474644e-14)),
    (("gauss", 1.3338), 10**5, 0.02446, (1.0782922481641497e-05, 1.0783224037047538e-05)),
    (("bmg", 0.01579, 0.8928), 1000, 0.43333, (0.03044062220391417, 0.030441534913414)),
]


@pytest.mark.parametrize("cell, n, eps, ref", REFS)
def test_default_bracket_contains_the_fine_reference_and_meets_rel_tol(cell, n, eps, ref):
    clear_caches()
    lo, up = (float(x) for x in ShuffleAccountant(_make(cell), n, _adjacency(cell)).get_delta_bounds(eps))
    assert lo <= ref[1] and up >= ref[0], (lo, up, ref)
    if up >= 1e-15:
        assert up - lo <= 1e-2 * lo, ((up - lo) / lo, lo, up)
