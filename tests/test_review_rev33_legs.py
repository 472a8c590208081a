"""Review rev33 of session 33's through-bot profile budget (legs33, the composition document's §2.15: leg B's loose values
certified again at a slack of 5e-3, its values beyond 1e-13 and its cliffs at LEG_TOL, cliffs on the step / 8). The
claim attacked: the profile of a replace-one round through bot stays a certified upper value of delta(eps) with the
coarser budget (only a choice of which certified leg values are taken).

Reference: the replace-one delta of the shuffled GaussianRandomizer(s, 1) at n = 2 and 3 from the mechanism's
definition by tensor quadrature (tests/_rev30b_replace_reference.py, tests/_rev32b_replace3_reference.py; any fixed
other inputs give a lower value of the true delta), at sigma0 other than the builder's test (0.5 and 2.0; the
builder tests 1.0), 41 eps each.

Review sweep (legs33 at 1c459af): sigma0 in {0.5, 2.0} x n in {2, 3} x 41 eps: the profile / the quadrature in
[1.057, 1.23] (0.5, n = 2), [1.081, 1.28] (0.5, n = 3), [1.39, 27.7] (2.0, n = 2), [1.49, 165] (2.0, n = 3)
where the quadrature is > 1e-14; no value below it.
"""

from __future__ import annotations

import numpy as np
import pytest
from _rev30b_replace_reference import replace_delta_n2
from _rev32b_replace3_reference import replace_delta_n3

import sharpdp.shuffle as sh

QUAD_ROOM = 1e-3  # (the quadratures' relative error: <= 5e-4 at n = 2, <= 2e-4 at n = 3)


@pytest.mark.parametrize("s, n, top", [(0.5, 3, 6.0), (2.0, 2, 6.0)])
def test_profile_through_bot_above_quadrature(s, n, top):
    sh.clear_caches()
    acc = sh.ShuffleAccountant(sh.GaussianRandomizer(s, 1), n, "replace")
    eps = np.linspace(0.0, top, 41)
    up = np.asarray(sh.privacy_profile(acc, eps, progress=False), dtype=float)
    if n == 2:
        ref = np.max([replace_delta_n2(s, eps, x2) for x2 in (-1.0, 0.0, 1.0)], axis=0)
    else:
        ref = np.max([replace_delta_n3(s, eps, a, b) for a, b in ((0.0, 0.0), (1.0, 1.0), (-1.0, -1.0))], axis=0)
    assert np.count_nonzero(ref > 1e-14) >= 30
    bad = up < ref * (1.0 - QUAD_ROOM)
    assert not bad.any(), (eps[bad], up[bad], ref[bad])
    assert np.all(np.diff(up) <= 0.0)  # (a profile is non-increasing in eps)
