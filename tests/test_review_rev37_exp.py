"""Review rev37 (session 37) of exp37's rule (docs/composition.md §4.10, ``limits.EXPORT_UPPER_FIRST_CHECK``): a
dominating pair's sample taken upper first gets its certified bracket where its covered value exceeds (1 + r) times
the curve through its bracketed neighbours. The claims attacked: the exported PLD never under-reports (its delta at
every eps at or above the certified delta), and is within 1 % above ``get_delta`` wherever delta >= 1e-12.

References the builder did not use: a fresh accountant at rel_tol 1e-3 (its lower value, higher than the default's),
and for replace-one k-RR the exact blanket divergence by binomial sums (tests/test_krr29_settled_upper.py's
``_blanket_three_atoms``), which the PLD's delta must dominate. Measured (rev37, exp37 eade2908, 46 eps per cell,
/tmp scan): heavy BMG(0.0463, 0.758) n = 1e4 replace min d / Lo_1e-3 1.0012, d / Up in [1.0008, 1.0091] (main's
1.0137); BMG(0.0653, 0.723) n = 1e4 replace 1.0012, [1.0006, 1.0092]; GaussianRandomizer(2) n = 1e3 zero-out 1.0013,
[1.0007, 1.0063]; 5-RR(3) n = 3000 replace 1.0016, [1.0000, 1.0054]. The tests also run on main, except the 1 % claim on
the heavy round (main's known miss, tests/test_exp35_export_matrix.py's xfail)."""

from __future__ import annotations

import numpy as np
import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle.accountant import limits
from _krr_export_check import check_krr_export

dp_interop = pytest.importorskip("sharpdp.interop.dp_accounting")


def test_krr_replace_export_dominates_the_exact_blanket_divergence():
    """5-RR(eps0 = 3), n = 3000, replace-one: at 31 eps of [0, 1000 Delta] the PLD's delta >= the exact blanket
    divergence of the replace law (binomial sums), and within 1 % above the certified upper value where >= 1e-12."""
    assert check_krr_export(dp_interop, 5, 3.0, 3000, 1000, 31) >= 10


HEAVY = (0.0462579752243591, 0.7578495751181393)  # calibrate_bmg(1e4, 1, 1e-6, 1)


def test_heavy_replace_export_against_a_tight_accountant():
    """The heavy BMG round, replace-one, n = 1e4, where the rule fires (eps 3.3-3.6, delta ~1e-12 - 6e-12, the samples
    taken upper first): the PLD's delta >= a fresh rel_tol-1e-3 lower value at every eps checked, and within 1 % above
    the default accountant's upper value (the goal) where the switch is on."""
    mk = lambda **kw: sh.ShuffleAccountant(sh.BlanketMixedGaussian(*HEAVY, 1), 10**4, "replace", **kw)  # noqa: E731
    sh.clear_caches()
    pld = dp_interop.to_pld(mk(), progress=False)
    ref, ref3 = mk(), mk(rel_tol=1e-3)
    goal = getattr(limits, "EXPORT_UPPER_FIRST_CHECK", False)
    for e in np.concatenate([np.linspace(3.3, 3.6, 7), [0.5, 1.5, 2.5]]):
        e = float(e)
        d = float(pld.get_delta_for_epsilon(e))
        lo3 = float(ref3.get_delta_bounds(e)[0])
        assert d >= lo3, (e, d, lo3)
        if goal:
            up = float(ref.get_delta_bounds(e)[1])
            assert d <= 1.01 * up, (e, d / up)
