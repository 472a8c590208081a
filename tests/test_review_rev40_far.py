"""Review rev40 (session 40) of session 39's far-tail run choices in main (docs/accountant_tail.md §54.1 COARSE_KEEP:
a coarser run kept within 0.95 rel_tol, retried at c / 2^k; §54.4 COARSE_FAR and the lead's §54.5 COARSE_FAR_MIN,
never reviewed: the 16x first factor only where the one-jump estimate is >= 1e-4; §55 HAT_DENSITY moves brackets at
the same cells) at heavy cells rev39's tests do not reach: GaussianRandomizer(0.5) at n = 1e8, eps 2, 4 and n = 1e9,
eps 0.5, 1, 2, 4; GaussianRandomizer(1), n = 1e9, eps 0.01; the BMGs calibrate_bmg picks at delta = 1e-6 (bench/README.md's
regime map) at n = 1e8 (eps 0.001, 0.01, 0.1) and n = 1e9 (eps 0.001, 0.01, 0.1). Zero-out, rel_tol 1e-2.

References (computed offline by rev40, main c6d2e6a1, fresh processes):
* TIGHT: main with every session-39 switch at its session-38 value (tests/_main_floats34.SESSION38) at rel_tol 1e-3: a
  certified bracket by the older runs; the bracket must overlap it and not lie below its lower value;
* JUMP (sigma0 = 0.5, n = 1e9, eps 0.5, 1, 2, where the rel_tol-1e-3 run is the same as the default one: the caps bind):
  a one-jump decomposition in long double (tests/_rev39_jump_reference.py's method with T = 1e8, plus the no-jump term
  E[S'_+] of the n - 1 body users; window checked by its edge masses <= 4e-12; two jumps: (n gamma P(L > T))^2 ~ 6e-9),
  at steps 32 and 16 (eps 2: 64): 5.690623e-4 / 5.690463e-4 (eps 0.5), 2.371998e-4 (eps 1; h = 16's window too narrow,
  its edge mass 1e-5: rejected; a plain long-double FFT of the whole sum, the mass beyond the window added to first order,
  gives 2.37196e-4 at h = 128 on a window 2.1e9 wide), 6.694251e-5 (eps 2); eps 0.1: 2.561283e-3 / 2.561135e-3
  (h = 16's edge mass 1.6e-8: its window a little narrow), eps 4 (T = 1e8, h = 128, 2^25 nodes): 6.969588e-6. Tolerance: 2e-4 relative (the two
  methods' and steps' differences are <= 3e-5 relative).
  Found on the way: rev38's FFT value at eps 0.5 (tests/test_review_rev38_fft.py, 5.69509e-4 with tolerance 1.2e-7) is
  biased high by the circular window (the sum's values above its top fold onto its negative side, which E[S] + E[S_-]
  counts): at eps 1 the same method gives 2.38420e-4 at 5.4e8 wide, 2.37363e-4 at 1.07e9, 2.37239e-4 at 2.1e9. A bracket
  whose upper value lies in [5.6906e-4, 5.6939e-4] would be right and still fail that test.
Measured on main (c6d2e6a1): every bracket holds its reference; closest margins: BMG(0.0786, 0.597), n = 1e9, eps 0.001,
lower value 1.4e-5 relative below TIGHT's, upper value 0.049 % above BMG_REF; sigma0 = 0.5, n = 1e9, eps 1, lower value 0.054 % below JUMP."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches

TIGHT = {("g", (0.5,), 10**8, 2.0): (0.0005753726071380146, 0.0005761102842976804),
         ("g", (0.5,), 10**8, 4.0): (7.974618007020974e-05, 7.975279737359084e-05),
         ("g", (0.5,), 10**9, 2.0): (6.693176223810988e-05, 6.697696082827301e-05),
         ("g", (0.5,), 10**9, 4.0): (6.968591412086762e-06, 6.972651036803987e-06),
         ("g", (1.0,), 10**9, 0.01): (1.7770188295342763e-13, 1.7782568217710068e-13),
         ("b", (0.171, 0.781), 10**8, 0.001): (9.69027991966038e-07, 9.692781059749807e-07),
         ("b", (0.0389, 0.529), 10**8, 0.01): (1.0081207566742573e-06, 1.008700336033955e-06),
         ("b", (0.0202, 0.456), 10**8, 0.1): (1.026476236633983e-06, 1.0266579217992154e-06),
         ("b", (0.0786, 0.597), 10**9, 0.001): (1.0096963617753715e-06, 1.011356724656176e-06),
         ("b", (0.0204, 0.461), 10**9, 0.01): (9.75435273238694e-07, 9.763006315584164e-07),
         ("b", (0.014268, 0.404851), 10**9, 0.1): (9.947755520633702e-07, 9.957021020873215e-07)}
JUMP = {("g", (0.5,), 10**9, 0.1): 2.56128295441913e-3,
        ("g", (0.5,), 10**9, 0.5): 5.690623393643231e-4,
        ("g", (0.5,), 10**9, 1.0): 2.3719979446129382e-4,
        ("g", (0.5,), 10**9, 2.0): 6.694251191237818e-05,
        ("g", (0.5,), 10**9, 4.0): 6.96958841096416e-06}
JUMP_TOL = 2e-4
# BMG(0.0786, 0.597), n = 1e9, eps = 0.001 (body40's §57 moves it): tests/_rev39_jump_reference.ref_bmg (T = 1e5, window
# [-1e6, 1.1e6), long double) at h = 0.25, 0.125, 0.0625: 1.014454e-6, 1.011629e-6, 1.011042e-6 (differences shrink
# 4.8x: second order), Richardson of the last two 1.010846e-6, the geometric tail 1.010888e-6; tolerance 3e-4 relative
BMG_REF = {("b", (0.0786, 0.597), 10**9, 0.001): 1.01087e-06}
BMG_TOL = 3e-4


def _bracket(cell):
    kind, p, n, eps = cell
    clear_caches()
    r = GaussianRandomizer(p[0], 1) if kind == "g" else BlanketMixedGaussian(p[0], p[1], 1)
    acc = ShuffleAccountant(r, n)
    return acc, acc.get_delta_bounds(eps)


@pytest.mark.parametrize("cell", sorted(TIGHT), ids=str)
def test_bracket_overlaps_the_switches_off_tight_bracket(cell):
    ref_lo, ref_up = TIGHT[cell]
    acc, (lo, up) = _bracket(cell)
    assert up >= ref_lo * (1 - 1e-12), (cell, lo, up, ref_lo)  # (never below a certified lower value)
    assert lo <= ref_up * (1 + 1e-12), (cell, lo, up, ref_up)
    if cell[2] < 10**9:
        assert up - lo <= acc.rel_tol * lo, (cell, lo, up)


@pytest.mark.parametrize("cell", sorted(JUMP) + sorted(BMG_REF), ids=str)
def test_bracket_holds_the_one_jump_reference(cell):
    ref, tol = (JUMP[cell], JUMP_TOL) if cell in JUMP else (BMG_REF[cell], BMG_TOL)
    _, (lo, up) = _bracket(cell)
    assert lo <= ref * (1 + tol) and up >= ref * (1 - tol), (cell, lo, up, ref)
