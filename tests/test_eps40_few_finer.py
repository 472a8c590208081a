"""Session 40, eps40: a finer request forms the few-user bracket wherever the default request would
(docs/accountant.md §8.18, ``limits.FEW_FINER``): ``small_n_bracket``'s two cost gates read max(rel_tol, 1e-2).

References (independent of the accountant): exact binomial sums in mpmath for two-atom laws
(tests/test_eps38_few_wide.py ``_two_atom_dup``), and rev39's Asmussen-Kroese conditional Monte Carlo values of D_up
for GaussianRandomizer(0.3), zero-out (tests/test_review_rev39_fewwide.py ``AK``, 6 standard errors)."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from _main_floats34 import switch
from test_eps38_few_wide import CASES, _two_atom_dup
from test_review_rev39_fewwide import AK, _holds

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import closed_forms as cf
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.laws.finite import FiniteLaw

FINER = (3e-3, 1e-3, 1e-4)
GAUSS = [c for c in sorted(AK) if c[0] == 0.3 and c[2] <= 2.0]


def test_switch_values():
    assert limits.FEW_FINER is True and limits.FEW_FINER_TOL == 1e-2
    assert cf._gate_tol(None) is None and cf._gate_tol(1e-3) == 1e-2 and cf._gate_tol(0.3) == 0.3


def _x_bot(s, eps):
    g, law = laws_for(GaussianRandomizer(s, 1), eps, "zero_out")[0]  # (x vs bot: the report's maximum, rev39)
    return float(g), law


def _nested(inner, outer):
    return outer[0] <= inner[0] <= inner[1] <= outer[1]


@pytest.mark.parametrize("cell", GAUSS, ids=str)
def test_gaussian_finer_bracket_formed_holds_reference_and_nested(cell):
    """Wherever the default request forms the bracket, every finer one does, holds D_up (AK), and lies inside it (its
    terms a superset: a smaller tail cut)."""
    s, n, eps = cell
    g, law = _x_bot(s, eps)
    base = cf.small_n_bracket(law, g, n, 1e-2)
    assert base is not None and _holds(base, cell)
    for rt in FINER:
        br = cf.small_n_bracket(law, g, n, rt)
        assert br is not None and _holds(br, cell), (rt, br, AK[cell])
        assert _nested(br, base), (rt, br, base)


def test_gaussian_switch_off_restores_main(monkeypatch):
    """Switch off: the finer request's gate declines as on main (rev39's cells), and rel_tol >= 1e-2 and None are
    unchanged bit for bit either way."""
    s, n, eps = 0.3, 5000, 0.5
    g, law = _x_bot(s, eps)
    on = [cf.small_n_bracket(law, g, n, rt) for rt in (None, 1e-2, 0.3)]
    switch(monkeypatch, "FEW_FINER", False)
    assert cf._gate_tol(1e-3) == 1e-3
    assert cf.small_n_bracket(law, g, n, 1e-3) is None
    off = [cf.small_n_bracket(law, g, n, rt) for rt in (None, 1e-2, 0.3)]
    assert on == off


@pytest.mark.parametrize("vals, probs, gamma", CASES)
@pytest.mark.parametrize("n", [50, 300, 501, 1000])
def test_two_atom_finer_contains_exact_and_nested(vals, probs, gamma, n):
    """Two-atom laws, n on both sides of JUMP_N_MAX: every finer bracket holds the exact D_up (mpmath) and, where the
    default forms one, is formed and lies inside it."""
    law = FiniteLaw(np.array(vals), np.array(probs))
    with mp.workdps(50):
        ref_lo, ref_up = _two_atom_dup(vals, probs, gamma, n)
        base = cf.small_n_bracket(law, gamma, n, 1e-2)
        for rt in FINER:
            br = cf.small_n_bracket(law, gamma, n, rt)
            assert (br is None) == (base is None)
            if br is not None:
                assert mp.mpf(float(br[0])) <= ref_up and ref_lo <= mp.mpf(float(br[1])), (rt, br, ref_lo, ref_up)
                assert _nested(br, base), (rt, br, base)


def test_get_delta_bounds_finer_request_at_600():
    """get_delta_bounds at rel_tol 1e-3 (the engines run and miss it, ~7 s): the answer holds D_up (AK) and lies inside
    the default request's (main: (0.55, 0.98)-wide engine brackets; rev39's cell at n = 5000 is
    tests/test_review_rev39_fewwide.py's test_finer_request_no_looser)."""
    cell = (0.3, 600, 1.0)
    clear_caches()
    base = ShuffleAccountant(GaussianRandomizer(0.3, 1), 600).get_delta_bounds(1.0)
    clear_caches()
    fine = ShuffleAccountant(GaussianRandomizer(0.3, 1), 600, rel_tol=1e-3).get_delta_bounds(1.0)
    assert _holds(fine, cell) and _holds(base, cell), (fine, base, AK[cell])
    assert _nested(fine, base), (fine, base)
