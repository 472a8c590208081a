"""Review rev33 of session 33's get_epsilon changes (eps33, the accountant document's §8.13: phase 1 from the single-big-jump
root at spreads up to 0.2 and 10 active others; no loose look at the phase-1 root at n < 1e7 where the others' spread
is small). Both are choices of points only; the claims attacked: every answer's certified delta is <= the target
(a fresh accountant's upper value at the answer, and a fresh rel_tol-1e-3 lower value, so that no tighter certificate
puts the truth above the target), and the answers stay within xtol of main 617886d's floats.

References: main 617886d's get_epsilon floats (computed with /work/venv/main, a fresh accountant per call, caches
cleared) and main's certified lower values at rel_tol 1e-3 at eps33's answers.

Review sweep (eps33 at 518efe8): 68 random (cell, n, delta) inputs (BMG with 0.003 <= g <= 0.5 and 0.3 <= s0 <= 3,
GaussianRandomizer(0.3 ... 4), k-RR of both adjacencies; n = 2 ... 1e6; delta 1e-2 ... 1e-12; 18 BMG inputs with
>= 10 active others at n < 1e7, the rules' ground) and the 80 BMG cells of the regime map's family (a) at n <= 1e6 with
delta 1e-6 and 1e-10: eps33's own fresh upper value at its answer <= delta everywhere (largest ratio 0.99998), main's
rel_tol-1e-3 lower value <= delta everywhere (largest 0.99988); the answers equal main's floats except where noted
below (within 7e-7 relative, inside xtol = 1e-3).
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import ShuffleAccountant, clear_caches

from test_review_rev33_tail import _make


# (cell, n, adjacency, delta, main 617886d's get_epsilon(delta))
PINS = [
    (("bmg", 0.01144002272145889, 1.1224214528225938), 1000, "zero_out", 1e-09, 3.512766489697359),  # eps33: 3.512767902344402
    (("gauss", 4.0), 30, "zero_out", 1e-09, 0.524252946123417),  # eps33: 0.5242533041167954
    (("bmg", 0.23189459091288636, 0.5111022460987888), 100, "zero_out", 0.01, 2.311864039551842),
    (("bmg", 0.4309559406717848, 1.8930550551913727), 10**6, "zero_out", 1e-06, 0.0012291108427340263),
    (("bmg", 0.01678376208120424, 2.76047802771), 1000, "zero_out", 1e-09, 0.7130590146437119),
    (("bmg", 0.003861061973802041, 2.896121992645707), 10**4, "zero_out", 1e-06, 0.23058492438328765),
    (("bmg", 0.04625755809037261, 0.6706385207180563), 1000, "zero_out", 1e-09, 5.79668939831716),
    (("bmg", 0.0036999959057792114, 1.1549001757361104), 30, "zero_out", 1e-12, 6.176358148164091),
    (("krr", 10, 0.5), 2, "zero_out", 0.001, 0.39454035984585434),
    (("krr", 5, 0.5), 300, "replace", 1e-09, 0.1116443842979173),
]


@pytest.mark.parametrize("cell, n, adj, delta, main_eps", PINS)
def test_answer_certified_and_within_xtol_of_main(cell, n, adj, delta, main_eps):
    clear_caches()
    got = ShuffleAccountant(_make(cell), n, adj).get_epsilon(delta)
    assert abs(got / main_eps - 1.0) <= 1e-3, (got, main_eps)
    clear_caches()
    up = float(ShuffleAccountant(_make(cell), n, adj).get_delta_bounds(got)[1])
    assert up <= delta, (got, up, delta)
    clear_caches()
    lo = float(ShuffleAccountant(_make(cell), n, adj, rel_tol=1e-3).get_delta_bounds(got)[0])
    assert lo <= delta, (got, lo, delta)
