"""Review rev40 (session 40) of body40's docs/accountant_tail §56 (``TOP_CLAMP_REDO``: §52.2's / §54.3's upper-only
run of the law bounded above (bot vs x) redone with its lower clamp B x 4, and returned as [0, Up'] where Up' is below
the maximum so far; Lemma 56.1: every round's upper value is certified at any lower clamp) where it matters most: the
bot-vs-x law within 1.6-5 % of the x-vs-bot law (the calibrated BMGs of the regime map at n = 1e8 - 1e9, eps 0.001,
and GaussianRandomizer(1), n = 1e8, 1e9, eps 0.001 - the cells §56.2 measures), so that an upper value below the truth
could hide the law. ``far_tail.try_certify`` on the bot-vs-x law below a maximum so far ``negligible`` (that of the
x-vs-bot law's tight upper value, and 0.5 % / 2 % above the law's own tight lower value): the upper value returned (the
rule's Up' where it returns [0, Up']) must be at or above main's rel_tol-1e-3 lower value of that law
(``ShuffleAccountant._report(eps, 1e-3, (1,))`` on main c6d2e6a1, computed offline by rev40, hard-coded below).
Measured on body40's c2ef9f69: Up' / tight lower 1.0013 - 1.28 ([0, Up'] returned at 6 of the 13 calls), never below 1.
Passes on main too (the same contract)."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, clear_caches
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.laws import laws_for

# (kind, params, n, eps): (main's rel_tol-1e-3 lower value of the bot-vs-x law, of the x-vs-bot law: its upper value)
CELLS = {("g", (1.0,), 10**8, 0.001): (2.5815649230766904e-05, 2.7703183431825212e-05),
         ("b", (0.171, 0.781), 10**8, 0.001): (9.535698325070259e-07, 9.692781059749807e-07),
         ("b", (0.0786, 0.597), 10**9, 0.001): (9.619964426850994e-07, 1.011356724656176e-06),
         ("g", (1.0,), 10**9, 0.001): (2.023774058890674e-10, 9.831834408916237e-10),
         ("b", (0.0389, 0.529), 10**8, 0.01): (1.0111106094735278e-07, 1.008700336033955e-06)}


@pytest.mark.parametrize("cell", sorted(CELLS), ids=str)
def test_bot_vs_x_upper_value_below_a_near_maximum_holds_its_tight_lower(cell):
    kind, p, n, eps = cell
    lo1, up0 = CELLS[cell]
    r = GaussianRandomizer(p[0], 1) if kind == "g" else BlanketMixedGaussian(p[0], p[1], 1)
    gamma, law = laws_for(r, eps, "zero_out")[1]
    for negligible in (up0, 1.005 * lo1) + ((1.02 * lo1,) if n < 10**9 else ()):
        clear_caches()
        rb = far_tail.try_certify(law, float(gamma), n, 1e-2, 1, negligible=negligible)
        assert rb is not None
        assert rb.upper >= lo1 * (1 - 1e-12), (cell, negligible, rb.lower, rb.upper, lo1)  # (never under-reports)
        assert rb.lower <= lo1 * 1.01, (cell, negligible, rb.lower, rb.upper, lo1)
