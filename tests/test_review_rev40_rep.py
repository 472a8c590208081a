"""Review rev40 (session 40) of rep40's docs/accountant §9.18 (replace-one through bot at small eps: the model
search from the end split f = 0 (VIA_BOTTOM_END_FIRST), the cap proofs refuted by closed-form upper values
(VIA_BOTTOM_CAP_REFUTE, Lemma 9.18.1), the first split below the value floor reported (VIA_BOTTOM_FLOOR_FIRST)):
the reported upper value must stay at or above the least chain over all splits, which the truth of the chain bound
cannot go below.

Reference (from main's legs, independent of the search): for every split e1 in [0, eps], e2 = eps - e1, the chain
A(e1) + e^{e1} B(e2) of the two zero-out legs' true D_up (x vs bot, bot vs x: ``zero_out_legs``); on each of 48 equal
intervals [a, b] of e1 it is at least A_lo(b) + e^a B_lo(eps - a) (D_up is non-increasing in eps, docs/accountant.md
§1.6), A_lo, B_lo main's (c6d2e6a1) rel_tol-1e-3 lower values of the legs (``_report(e, 1e-3, only=leg)``). The least
of these, LB, is at most every split's true chain, so every certified chain upper value, whichever split the search
reports, is >= LB (computed offline by rev40, hard-coded). GaussianRandomizer(sigma0) at n = 10 (eps <= 0.1: the end
split least), n = 1e3 (eps <= 0.01) and sigma0 = 0.46, n = 1e5, eps = 1e-3 (§9.18's cell), replace. Measured on rep40
40c4a053: Up / LB 1.0011 - 1.0088. Passes on main."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches

# (sigma0, n, eps): LB
LB = {(1.0, 10, 0.1): 0.677826061615863,
      (1.0, 10, 0.01): 0.714026346404707,
      (2.0, 10, 0.05): 0.22006104387820322,
      (1.0, 1000, 0.01): 0.13838710210998112,
      (1.0, 1000, 0.001): 0.14311671048471847,
      (2.0, 1000, 0.01): 0.023088497499505443,
      (0.46, 10**5, 0.001): 0.6604099950312681}


@pytest.mark.parametrize("cell", sorted(LB), ids=str)
def test_replace_through_bot_at_or_above_the_least_chain(cell):
    s, n, eps = cell
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace")
    lo, up = acc.get_delta_bounds(eps)
    assert up >= LB[cell] * (1 - 1e-12), (cell, lo, up, LB[cell])
    assert lo <= up and up - lo <= acc.rel_tol * lo, (cell, lo, up)
