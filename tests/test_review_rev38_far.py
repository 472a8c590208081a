"""Review rev38 (session 38) of far38's rules (docs/accountant_tail.md §52): §52.1 ``SCALED_PAIR_KEEP`` (a scaled far-tail
run's round within BODY_WHOLE_ACCEPT rel_tol keeps its clamp) and §52.2 ``TOP_COARSE`` (a law bounded above, asked for a
bracket below the maximum so far, first runs for its upper value alone at TOP_COARSE times its clamp unit H and returns
[0, Up_c] where Up_c is below that maximum; Lemma 52.2: Up_c is a certified upper value of the law's D_up).

Attacked where the builder's tests do not look (they use sigma0 = 0.5 at n = 2, 3 and n = 1e8, where the bot-vs-x law
is far below the x-vs-bot law and main's tight lower value of the law is 0):

* Lemma 52.2 at the law level where the bot-vs-x law is within 0.2-7 % of the x-vs-bot law (sigma0 = 0.5, n = 1e6,
  eps = 0.001; sigma0 = 1, n = 1e6 ... 1e8; sigma0 = 2, n = 1e6), so that a low Up_c could hide the law that sets delta:
  Up_c (certify_bigjump at top_coarse = 4, lower = False, no floor) is at or above main's (6d5c8782, /work/venv/main)
  rel_tol-1e-3 *lower* value of that law (hard-coded, ``_report(eps, 1e-3, (1,))``). Measured (far38 67d6570):
  Up_c / main's tight lower = 1.0034, 1.0092, 1.0056, 1.0567, 1.3475, 1.1619 (never below 1);
* Lemma 52.2 at n = 2 for sigma0 = 1, 2 against rev38's own y-space quadrature (tests/_rev38_botx.py);
* the reported brackets at the cells where §52.1 / §52.2 run (GaussianRandomizer(0.5) n = 1e6, 1e8 and 1e9,
  sigma0 = 1, 2) against main's rel_tol-1e-3 (n = 1e9: 1e-4) brackets: each never lies below main's tight lower value,
  overlaps it and meets rel_tol. Every test also passes on main (no switch: the same contract)."""

from __future__ import annotations

import inspect

import pytest

from _rev36_cells import check_overlaps_main_tight
from _rev38_botx import botx_dup_n2
from test_review_rev37_far import MOVED as MOVED37  # (main's rel_tol-1e-3 brackets, shared)
from sharpdp.shuffle import GaussianRandomizer, clear_caches
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.laws import laws_for

# main's rel_tol-1e-3 lower value of the bot-vs-x law (law 1) at cells where it is positive
LAW1_TIGHT_LO = {(0.5, 10**6, 0.001): 0.1255291757730926,
                 (0.5, 10**6, 0.1): 0.0705527198527285,
                 (1.0, 10**6, 0.001): 0.0023403068505790676,
                 (1.0, 10**7, 0.001): 0.000483906236371404,
                 (1.0, 10**8, 0.001): 2.5815649230766904e-05,
                 (2.0, 10**6, 0.001): 0.00011016785638284034}
# main's rel_tol-1e-3 bracket of the report (the maximum over both laws); n = 1e9, eps = 0.001: rel_tol 1e-4
MAIN_TIGHT = {**{k: v for k, v in MOVED37.items() if k in ((0.5, 10**6, 0.001), (0.5, 10**6, 0.1))},
              (0.5, 10**8, 0.001): (0.028959448358522925, 0.02897891873091703),
              (0.5, 10**8, 0.01): (0.026160869855000848, 0.02618202119107093),
              (0.5, 10**8, 0.1): (0.012408404831025245, 0.012429177243461997),
              (0.5, 10**8, 0.5): (0.0036063074618197127, 0.0036328529711363356),
              (0.5, 10**8, 1.0): (0.001712137403307647, 0.0017142925116636176),
              (0.5, 10**9, 0.001): (0.012333588524875672, 0.012360067683878755),
              (0.5, 10**9, 0.01): (0.009612283809846082, 0.009659705993197385),
              (1.0, 10**6, 0.001): (0.002367091699280771, 0.0023677739467289883),
              (1.0, 10**7, 0.001): (0.0004947855912367924, 0.0004949162844907927),
              (1.0, 10**8, 0.001): (2.768867330961804e-05, 2.770474148480715e-05),
              (2.0, 10**6, 0.001): (0.0001106608378031636, 0.00011072717123154224)}


def _law1(s: float, eps: float):
    gamma, law = laws_for(GaussianRandomizer(s, 1), eps, "zero_out")[1]
    return float(gamma), law


def _needs_top_coarse():
    if "top_coarse" not in inspect.signature(far_tail.certify_bigjump).parameters:
        pytest.skip("no §52.2 (certify_bigjump has no top_coarse)")


@pytest.mark.parametrize("cell", sorted(LAW1_TIGHT_LO), ids=str)
def test_top_coarse_upper_at_or_above_the_law_tight_lower(cell):
    """Lemma 52.2 where the bot-vs-x law is close to the maximum: Up_c >= main's tight lower value of that law."""
    _needs_top_coarse()
    s, n, eps = cell
    gamma, law = _law1(s, eps)
    clear_caches()
    r = far_tail.certify_bigjump(law.shifted(up=True), gamma, n, 1e-2, 1, lower=False, negligible=0.0, top_coarse=4.0)
    assert r.upper >= LAW1_TIGHT_LO[cell] * (1 - 1e-12), (cell, r.upper, LAW1_TIGHT_LO[cell])


@pytest.mark.parametrize("cell", sorted(LAW1_TIGHT_LO), ids=str)
def test_try_certify_below_a_near_maximum_holds_the_law_tight_lower(cell):
    """The path of the report: the law asked for a bracket below a maximum 0.5 % above its tight lower value (where
    §52.2 returns [0, Up_c] if Up_c is below it): the upper value returned is at or above the law's tight lower."""
    s, n, eps = cell
    gamma, law = _law1(s, eps)
    clear_caches()
    r = far_tail.try_certify(law, gamma, n, 1e-2, 1, negligible=1.005 * LAW1_TIGHT_LO[cell])
    if r is None:
        pytest.skip("the far tail does not apply")
    assert r.upper >= LAW1_TIGHT_LO[cell] * (1 - 1e-12), (cell, r)


@pytest.mark.parametrize("s", [1.0, 2.0])
@pytest.mark.parametrize("eps", [0.001, 0.1, 1.0])
def test_top_coarse_n2_holds_the_quadrature(s, eps):
    """n = 2: try_certify below a maximum 2 % above the exact D_up (rev38's quadrature) returns an upper value at or
    above it and a lower value at or below it."""
    ref, g = botx_dup_n2(s, eps)
    if ref <= 0.0:
        pytest.skip("L <= 0")
    gamma, law = _law1(s, eps)
    assert abs(gamma - g) <= 1e-14
    clear_caches()
    r = far_tail.try_certify(law, gamma, 2, 1e-2, 1, negligible=1.02 * ref)
    if r is None:
        pytest.skip("the far tail does not apply")
    assert r.lower <= ref * (1 + 1e-9) and r.upper >= ref * (1 - 1e-9), (s, eps, r, ref)


@pytest.mark.parametrize("cell", sorted(MAIN_TIGHT), ids=str)
def test_report_overlaps_main_tight(cell):
    """The reported bracket never lies below main's tight lower value, overlaps it and meets rel_tol."""
    check_overlaps_main_tight(cell, MAIN_TIGHT[cell])
