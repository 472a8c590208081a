"""Shared check of review tests rev37 and rev40: a replace-one k-RR round's exported PLD dominates the exact blanket
divergence of its replace law (binomial sums, tests/test_krr29_settled_upper.py's ``_blanket_three_atoms``) and is
within 1 % above the default accountant's certified upper value wherever that is >= 1e-12."""

from __future__ import annotations

import numpy as np

import sharpdp.shuffle as sh
from sharpdp.shuffle.laws import laws_for
from test_krr29_settled_upper import _blanket_three_atoms


def check_krr_export(dp_interop, k: int, eps0: float, n: int, intervals: float, points: int) -> int:
    """Run the check at ``points`` eps of [0, intervals x export interval]; return how many had delta >= 1e-12."""
    R = sh.RandomizedResponse(k, eps0)
    sh.clear_caches()
    acc = sh.ShuffleAccountant(R, n, "replace")
    dx = dp_interop.export_interval(acc)
    pld = dp_interop.to_pld(acc, progress=False)
    ref = sh.ShuffleAccountant(R, n, "replace")
    checked = 0
    for e in np.linspace(0.0, intervals * dx, points):
        e = float(e)
        d = float(pld.get_delta_for_epsilon(e))
        (g, law), = laws_for(R, e, "replace")
        v, p = law.atoms()
        ex = _blanket_three_atoms(float(g), np.asarray(v), np.asarray(p), n)
        assert d >= ex * (1 - 1e-9), (e, d, ex)
        up = float(ref.get_delta_bounds(e)[1])
        if up >= 1e-12:
            checked += 1
            assert d <= 1.01 * up, (e, d / up)
    return checked
