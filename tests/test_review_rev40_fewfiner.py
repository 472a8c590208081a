"""Review rev40 (session 40) of eps40's docs/accountant §8.18 (``limits.FEW_FINER``: small_n_bracket's cost gates
read max(rel_tol, 1e-2), so a finer request forms the few-user bracket, with its rel_tol's smaller tail cut, wherever
the default request would). The builder's test (tests/test_eps40_few_finer.py) checks GaussianRandomizer(0.3) and
two-atom laws; here the finer requests' brackets (rel_tol 3e-3, 1e-3, 1e-4; the bracket itself, ``small_n_bracket``)
at every cell of rev39's Asmussen-Kroese references (tests/test_review_rev39_fewwide.py: GaussianRandomizer(0.46) at
n = 600 - 5000, eps 15 - 26.5, where the value is 1e-3 - 1e-9; sigma0 = 0.3, eps 0.5 - 4, both laws), 6 standard errors
+ 1e-12 relative, and nested in the default request's bracket where both are formed; one reported bracket at rel_tol
1e-3 through get_delta_bounds (n = 1000, eps 20). Passes on main too (where the gate declines, nothing to check)."""

from __future__ import annotations

import pytest

from test_review_rev39_fewwide import AK, AK_BOT, _holds
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant.closed_forms import small_n_bracket
from sharpdp.shuffle.laws import laws_for


@pytest.mark.parametrize("cell", sorted(AK), ids=str)
def test_finer_requests_few_user_bracket_holds_the_reference(cell):
    s, n, eps = cell
    clear_caches()
    pairs = laws_for(GaussianRandomizer(s, 1), eps, "zero_out")
    g0, law0 = float(pairs[0][0]), pairs[0][1]
    default = small_n_bracket(law0, g0, n, 1e-2)
    for rt in (3e-3, 1e-3, 1e-4):
        br = small_n_bracket(law0, g0, n, rt)
        if br is None:
            continue
        assert _holds(br, cell), (cell, rt, br, AK[cell])
        if default is not None:  # (nested in the default request's, up to the sums' rounding)
            assert br[0] >= default[0] * (1 - 1e-12) and br[1] <= default[1] * (1 + 1e-12), (cell, rt, br, default)
        if cell in AK_BOT:
            ref, se = AK_BOT[cell]
            bb = small_n_bracket(pairs[1][1], float(pairs[1][0]), n, rt)
            assert bb is None or (bb[0] <= ref + 6 * se and bb[1] >= ref - 6 * se), (cell, rt, bb, ref, se)


def test_finer_report_holds_the_reference():
    cell = (0.46, 1000, 20.0)
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(0.46, 1), 1000, rel_tol=1e-3).get_delta_bounds(20.0)
    assert _holds((lo, up), cell), (cell, lo, up, AK[cell])
