"""Review rev34 of session 34's replace-one changes through bot: the split search (rep34, the accountant document's §9.11)
and the through-bot export and its legs (legs34, the composition document's §2.16). The claims attacked: the reported
upper value of a replace-one round through bot stays above the true replace-one delta, and the exported PLD
(``to_pld``) is pessimistic (above the true delta at every eps), whatever split or leg values the new rules pick.

Reference: the replace-one delta of the shuffled GaussianRandomizer(s, 1) at n = 2 and 3 from the mechanism's
definition by tensor quadrature (tests/_rev30b_replace_reference.py, tests/_rev32b_replace3_reference.py; the value at
fixed other inputs is a lower value of the true delta), at sigma0 = 0.7 and 3.0 (no earlier review used them), 7 eps
each from 0.02 to 6 (x 0.4 at sigma0 = 3).

Measured on main 81992f2: upper / quadrature in [1.16, 1.51] (0.7, n = 2), [1.27, 1.69] (0.7, n = 3), [1.37, 15.2]
(3.0, n = 2), [1.43, 73.5] (3.0, n = 3); PLD / quadrature in [1.06, 1.39], [1.11, 1.69], [1.24, 15.2], [1.34, 73.6].
This file passes on rep34 (f866853) and legs34 (f13e063). Review sweep of rep34's split search (0f13a26-e7c751a): 64
replace-one cells (GaussianRandomizer(s) through bot, s in {0.46, 1, 2, 4.6} x n in {10, 1e3, 1e5} x eps in {0.01, 0.1,
1, 4}; 16 random BMG cells): upper value / main's in [0.99719, 1.00018].
"""

from __future__ import annotations

import numpy as np
import pytest
from _rev30b_replace_reference import replace_delta_n2
from _rev32b_replace3_reference import replace_delta_n3

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches

QUAD_ROOM = 1e-3  # (the quadratures' relative error: <= 5e-4 at n = 2, <= 2e-4 at n = 3)


def _reference(s: float, n: int, eps: np.ndarray) -> np.ndarray:
    if n == 2:
        return np.max([replace_delta_n2(s, eps, x2) for x2 in (-1.0, -0.5, 0.0, 0.5, 1.0)], axis=0)
    return np.max([replace_delta_n3(s, eps, a, b) for a, b in ((0.0, 0.0), (1.0, 1.0), (-1.0, -1.0), (1.0, -1.0))],
                  axis=0)


@pytest.mark.parametrize("s, n", [(0.7, 2), (3.0, 2), (0.7, 3), (3.0, 3)])
def test_replace_through_bot_upper_and_export_above_quadrature(s, n):
    eps = np.array([0.02, 0.2, 0.6, 1.2, 2.5, 4.0, 6.0]) * (1.0 if s < 1.0 else 0.4)
    ref = _reference(s, n, eps)
    assert np.all(ref > 1e-8)
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace")
    assert acc.via_bottom
    up = np.array([float(acc.get_delta_bounds(float(e))[1]) for e in eps])
    bad = up < ref * (1.0 - QUAD_ROOM)
    assert not bad.any(), (eps[bad], up[bad], ref[bad])
    pytest.importorskip("dp_accounting")
    from sharpdp.interop.dp_accounting import to_pld

    pld = to_pld(acc, progress=False)
    pv = np.array([float(pld.get_delta_for_epsilon(float(e))) for e in eps])
    bad = pv < ref * (1.0 - QUAD_ROOM)
    assert not bad.any(), (eps[bad], pv[bad], ref[bad])
