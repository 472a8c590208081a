"""Review rev38 (session 38) of rep38's rule (docs/accountant.md §9.15, ``limits.VIA_BOTTOM_MIRROR``,
accountant/via_bottom_mirror.py): leg B (bot vs x) of replace-one through bot gets a lower value from leg A's law
(x vs bot) at the negative epsilon -e2, by the identity D_up^B(e) = 1 - e^e (1 - D_up^A(-e)) (l^B_e = -e^e l^A_{-e},
E[r] = 1), where leg B's own lower value is 0 (GaussianRandomizer(0.5), n = 1e8).

Attacked with references the builder did not use:

* the identity itself at n = 2, both sides by rev38's y-space quadrature (tests/_rev38_botx.py: the bot-vs-x law at
  +e and the x-vs-bot law at -e, composite Gauss-Legendre, no accountant object): equal to 4e-15;
* the engine at a negative epsilon (the law built at -e2, which no call made before §9.15): at n = 2 certify's bracket
  holds the exact D_up^A(-e) and leg_b_lower's value is at or below the exact D_up^B(e) (sigma0 0.5, 1, 2, e 0.001 ...
  3, rel_tol 1e-2 and 1.25e-3, the rule's two rounds);
* at n = 1e6 and 1e8 the mirror lower value against leg B's *own* certified upper value by main (6d5c8782,
  /work/venv/main, rel_tol 1e-3, the bot-vs-x law directly: an independent route): measured (rep38 33704a0) mirror
  lower / main's upper = 0.99939, 0.99875, 0.92339, 0.70602 (n = 1e8, e2 = 0.01, 0.0624, 0.1115, 0.1274: the report's
  splits at eps = 0.01, 0.1, 0.5, 1), 0.99964 (n = 1e6, e2 = 0.01), 0.99941 (sigma0 = 1, n = 1e8, e2 = 0.001), never above;
* (not run here: ~1 min of FFTs) an FFT value of D_up^A(-e2) at n = 1e8 (tests/_rev29_fft_reference.py, h = 16, 8, 4,
  first-order convergence extrapolated) gives leg B by the identity: e2 = 0.01 0.0232668 (mirror lower 0.0232638, main
  direct upper 0.0232781), e2 = 0.0624 0.0033497 (mirror lower 0.0033470, main direct upper 0.0033511); the chain at
  eps = 0.01 (e1 = 0) 0.052567 in rep38's [0.0525573, 0.0526098], at eps = 0.1 0.023295 in [0.0231613, 0.0233211].
"""

from __future__ import annotations

import math

import pytest

from _rev38_botx import botx_dup_n2, xbot_dup_n2
from sharpdp.shuffle import GaussianRandomizer, clear_caches
from sharpdp.shuffle.accountant.driver import certify

mirror = pytest.importorskip("sharpdp.shuffle.accountant.via_bottom_mirror")

# main's rel_tol-1e-3 bracket of the bot-vs-x law (leg B) at (sigma0, n, e2), certified directly
MAIN_LEG_B = {(0.5, 10**8, 0.01): (0.0, 0.023278051612678766),
              (0.5, 10**8, 0.06240314704183963): (0.0, 0.0033511387375431897),
              (0.5, 10**8, 0.11152949775818466): (0.0, 6.57480273311927e-05),
              (0.5, 10**8, 0.1274145954495834): (0.0, 8.667596021003231e-06),
              (0.5, 10**6, 0.01): (0.12015152461552286, 0.12015901352210637),
              (0.5, 10**6, 0.1): (0.0705527198527285, 0.07056177316469359),
              (1.0, 10**6, 0.001): (0.0023403068505790676, 0.00234124387659216),
              (1.0, 10**8, 0.001): (2.5815649230766904e-05, 2.5885237389540273e-05),
              (2.0, 10**6, 0.001): (0.00011016785638284034, 0.00011023417942118792)}
SLOW = {(0.5, 10**8, e) for e in (0.06240314704183963, 0.11152949775818466, 0.1274145954495834)} | {(1.0, 10**8, 0.001)}
# (3-4 s per run at n = 1e8: the second rel_tol only at e2 = 0.01)


@pytest.mark.parametrize("s", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("e", [0.001, 0.1, 1.0])
def test_identity_at_n2_by_quadrature(s, e):
    """D_up^B(e) = 1 - e^e (1 - D_up^A(-e)) at n = 2, both sides by quadrature."""
    b, _ = botx_dup_n2(s, e)
    a, _ = xbot_dup_n2(s, -e)
    assert abs(b - (1.0 - math.exp(e) * (1.0 - a))) <= 1e-12


@pytest.mark.parametrize("s", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("e", [0.001, 0.1, 1.0, 3.0])
def test_negative_eps_engine_and_leg_b_lower_at_n2(s, e):
    """The law at -e certified at n = 2 (both rel_tols of the rule) holds the exact D_up^A(-e); leg_b_lower of its
    lower value is at or below the exact D_up^B(e)."""
    a, g = xbot_dup_n2(s, -e)
    b, _ = botx_dup_n2(s, e)
    ml = mirror.mirror_law(GaussianRandomizer(s, 1), ((0,), (1,)), e)
    assert ml is not None and abs(ml[0] - g) <= 1e-14
    for rt in (1e-2, 1.25e-3):
        clear_caches()
        r = certify(ml[1], ml[0], 2, rt, 1)
        assert r.lower <= a * (1 + 1e-12) and r.upper >= a * (1 - 1e-12), (s, e, rt, r.lower, r.upper, a)
        assert mirror.leg_b_lower(float(r.lower), e) <= max(b, 0.0) + 1e-15, (s, e, rt, b)


@pytest.mark.parametrize("cell", sorted(MAIN_LEG_B), ids=str)
def test_mirror_lower_below_leg_b_own_upper(cell):
    """The mirror's leg-B lower value (rel_tol 1e-2 and 1e-2 / 8, the rule's two rounds) never exceeds leg B's own
    certified upper value (main, the bot-vs-x law directly); where main has a positive lower value the two brackets
    meet."""
    s, n, e2 = cell
    ml = mirror.mirror_law(GaussianRandomizer(s, 1), ((0,), (1,)), e2)
    assert ml is not None
    ref_lo, ref_up = MAIN_LEG_B[cell]
    for rt in ((1e-2,) if cell in SLOW else (1e-2, 1.25e-3)):
        clear_caches()
        r = certify(ml[1], ml[0], n, rt, 1)
        b_lo = mirror.leg_b_lower(float(r.lower), e2)
        b_up = 1.0 - math.exp(e2) * (1.0 - float(r.upper))  # (the mirror's upper value, unrounded: a consistency check)
        assert b_lo <= ref_up * (1 + 1e-12), (cell, rt, b_lo, ref_up)
        assert b_up >= ref_lo * (1 - 1e-9), (cell, rt, b_up, ref_lo)
