"""The far-tail lower value without the second run on the lowered law (docs/composition.md §2.7).

Reference: the second run itself (``far_tail.certify_bigjump`` on the law lowered by its value error, whose values
are dominated user by user by the true law's, docs/accountant_tail.md §12) and the first run on the raised law: the
returned lower value must lie below the raised law's lower value by at least the documented shift bound
min(d, d P(L_1 + S_{n-1} > 0)) (d = moved_by + value_error), below the lowered law's upper value, and within
1e-3 rel_tol of the lowered law's lower value; the upper value is the raised law's, unchanged.
"""

from __future__ import annotations

import math

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.laws import laws_for

# calibrate_bmg(100, 8, 1e-6, 1)'s pick (a regime-map cell, bench/README.md)
BMG = BlanketMixedGaussian(0.051057210686144563, 0.5666966712607993, 1)
N, EPS = 100, 8.0


def test_lower_value_from_the_raised_run():
    acc = ShuffleAccountant(BMG, N)
    lo, up = acc.get_delta_bounds(EPS)
    gamma, law = laws_for(BMG, EPS, "zero_out")[0]
    raised, lowered = law.shifted(up=True), law.shifted(up=False)
    r_up = far_tail.certify_bigjump(raised, float(gamma), N, acc.rel_tol, -1, lower=True)
    r_dn = far_tail.certify_bigjump(lowered, float(gamma), N, acc.rel_tol, -1, lower=True)
    d = math.nextafter(raised.moved_by + law.value_error, math.inf)
    dq = d * far_tail.positive_prob_up(raised, float(gamma), N, r_up) * (1 + 1e-9)
    assert d > 1e-6 * r_up.lower  # (the cell needs the new branch: the earlier rules ran the second run)
    assert r_up.upper <= up <= r_up.upper * (1 + 1e-12)  # (the upper value: the raised run's, unchanged)
    assert lo <= r_up.lower - min(d, dq) * (1 - 1e-9)  # the shift is charged
    assert lo <= r_dn.upper  # (the true value is at most the raised law's upper value and at least the lowered law's lower one)
    assert r_up.lower >= r_dn.lower  # (the raised law's values dominate the lowered law's)
    assert lo >= r_dn.lower * (1 - 1e-3 * acc.rel_tol)  # loses at most 1e-3 rel_tol against the second run
