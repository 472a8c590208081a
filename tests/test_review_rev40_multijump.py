"""Review rev40 (session 40) of eps40's docs/accountant §8.19 (``FEW_MULTI_JUMP``: the few-user terms' upper values
from (8.19.1), E[(S_k)_+] / k <= sum_{i < M} P(B = i) E[(L - t_{i+1})_+] + P(B >= M) E[L_+], B ~ Bin(j, P(L > -c)),
t_m = (k - m) c / m) at cells the builder's tests do not reach (they use finite laws at k <= 7, n = 3 - 6, BMGs at
n = 4 - 6 and GaussianRandomizer(0.5), n = 100, eps = 8): GaussianRandomizer(0.5, 0.7, 1) at n = 100 - 500, eps 4 - 10
and BMG(0.0511, 0.567) at n = 100, 300 (zero-out, the x-vs-bot law), where the rule lowers the few-user bracket's upper
value by up to 40x (GaussianRandomizer(1), n = 300, eps = 4: 4.7e-3 -> 1.2e-4).

Reference: the Asmussen-Kroese conditional Monte Carlo of D_up (tests/_review28_ak_reference.py, the mechanism's
densities; N samples per value of M, seed n + 3; computed offline by rev40, ~10 s in all): the few-user bracket (every
term: rel_tol None; and the default request's, 1e-2) and the report (get_delta_bounds, where the bracket now meets
rel_tol it is returned) must hold it within 6 standard errors + 1e-12 relative. Measured on eps40 388f3a30: upper value
/ AK 1.0087 - 5.87 (rule off: 1.0145 - 239); report lower / AK >= 0.99953; none outside. Passes on main too."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant.closed_forms import small_n_bracket
from sharpdp.shuffle.laws import laws_for

# (kind, params, n, eps): (AK estimate of D_up, its standard error)
AK = {
    ("g", (0.5,), 100, 8.0): (0.0832042563720426, 4.2e-07),
    ("g", (1.0,), 300, 4.0): (1.9696963613776723e-05, 1.24e-09),
    ("g", (0.5,), 100, 4.0): (0.34128442205665643, 1.3e-05),
    ("g", (0.5,), 300, 8.0): (0.05061294120103776, 3.49e-07),
    ("b", (0.0511, 0.567), 100, 8.0): (8.781267620951811e-07, 3.51e-12),
    ("g", (0.7,), 200, 6.0): (0.0028202549412247122, 6.2e-08),
    ("g", (0.5,), 500, 10.0): (0.012132682119154647, 2.03e-08),
    ("b", (0.0511, 0.567), 300, 6.0): (6.367673361123904e-06, 1.36e-10),
    ("g", (1.0,), 100, 4.0): (0.00017567977251933185, 1.42e-08),
}


def _holds(br, cell):
    ref, se = AK[cell]
    tol = 6.0 * se + 1e-12 * ref
    return br[0] <= ref + tol and br[1] >= ref - tol


@pytest.mark.parametrize("cell", sorted(AK), ids=str)
def test_few_user_bracket_and_report_hold_the_ak_reference(cell):
    kind, p, n, eps = cell
    r = GaussianRandomizer(p[0], 1) if kind == "g" else BlanketMixedGaussian(p[0], p[1], 1)
    gamma, law = laws_for(r, eps, "zero_out")[0]
    for rt in (None, 1e-2):
        clear_caches()
        br = small_n_bracket(law, float(gamma), n, rt)
        assert br is not None and _holds(br, cell), (cell, rt, br, AK[cell])
    clear_caches()
    lo, up = ShuffleAccountant(r, n).get_delta_bounds(eps)
    assert _holds((lo, up), cell), (cell, lo, up, AK[cell])
