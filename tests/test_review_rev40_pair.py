"""Review rev40 (session 40) of exp40's docs/composition §2.22 (``PAIR_BRACKET_AHEAD``: the pair's last sampling
stage takes a point's bracket at once where its bracketed neighbours' gaps predict that capped_cover would re-bracket
it) and §2.23 (``PAIR_WARM_START``: the pair's sampling inside the warm sweep), at the cells §2.22 measures (10-RR
(eps0 = 4), n = 1e4, replace: 73 of 256 samples re-bracketed on main; PrivUnit(0.75, 0.2, 10), n = 1e4, replace), where
the builder's tests use k-RR at other n and the BMG at n = 2.

Claims attacked: the exported PLD never under-reports (its delta at every eps at or above the certified delta) and is
within 1 % above the default accountant's upper value where delta >= 1e-12. References: for 10-RR the exact
blanket divergence of the replace law by binomial sums (tests/test_krr29_settled_upper.py's ``_blanket_three_atoms``),
for PrivUnit a fresh accountant's rel_tol-1e-3 lower value. 13 (10-RR) and 24 (PrivUnit) eps on [0, 700 export interval]. Passes on main."""

from __future__ import annotations

import numpy as np
import pytest

import sharpdp.shuffle as sh
from _krr_export_check import check_krr_export

dp_interop = pytest.importorskip("sharpdp.interop.dp_accounting")


def test_krr10_replace_n1e4_export_dominates_the_exact_blanket_divergence():
    assert check_krr_export(dp_interop, 10, 4.0, 10**4, 700, 13) >= 6


def test_privunit_replace_n1e4_export_at_or_above_fresh_tight_lower_values():
    mk = lambda **kw: sh.ShuffleAccountant(sh.PrivUnit(0.75, 0.2, 10), 10**4, "replace", **kw)  # noqa: E731
    sh.clear_caches()
    acc = mk()
    dx = dp_interop.export_interval(acc)
    pld = dp_interop.to_pld(acc, progress=False)
    ref, ref3 = mk(), mk(rel_tol=1e-3)
    checked = 0
    for e in np.linspace(0.0, 700 * dx, 24):
        e = float(e)
        d = float(pld.get_delta_for_epsilon(e))
        lo3 = float(ref3.get_delta_bounds(e)[0])
        assert d >= lo3 * (1 - 1e-12), (e, d, lo3)
        up = float(ref.get_delta_bounds(e)[1])
        if up >= 1e-12:
            checked += 1
            assert d <= 1.01 * up, (e, d / up)
    assert checked >= 10
