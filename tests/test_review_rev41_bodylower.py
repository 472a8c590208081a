"""Review rev41 (session 41) of docs/accountant_tail.md §57.4 (``BODY_LOWER_POSITION``: the far-tail body's lower value
takes the engine pass's lattice-position charge; before, far-tail lower values could exceed the truth by up to that
charge, measured 4.8e-7 relative at GaussianRandomizer(1), n = 1e8, eps = 0.001) and of the far-tail lower values
in general: at far-tail cells n = 1e6 - 1e8 the reported lower value (rel_tol 1e-2 and, where it is cheap, 1e-3: a
lower value closer to the truth) must be at most an independent reference of D_up plus its stated error, and the upper
value at least the reference minus it.

References (offline, rev41 unless named; none computed by the accountant):
* GaussianRandomizer(1): the long-double FFT of the whole sum (tests/_rev39_fft_ld.d_up_fft_ld: the cell split keeping
  the mean, nodes above 0) plus E[L; L > W] for L's mass beyond the window's top W (first order; two windows agree to
  1e-12 after it); window [lo, W] with P(S < lo) negligible (lo -10 sd of S). The steps h = (E - g) / 12, / 6, / 3 put
  L's atom g - E (mass 1/2) on a node (at powers of two its split oscillates with its place in the cell: rev41 first
  saw ratios 3.6 - 5.2 between differences); then second order (differences 2.49e-8, 9.87e-8 at n = 1e6, eps 0.01;
  2.01e-8, 7.96e-8 at n = 1e7, eps 0.001: ratios 3.97). Richardson of the two finest steps, its error stated as the
  larger of twice its distance to the Richardson value of the next two (5e-10) and 2e-6 relative;
* GaussianRandomizer(1), n = 1e8, eps = 0.01 and BMG(0.020104, 0.456590), n = 1e8, eps = 0.1: rev39's one-jump references
  (tests/test_review_rev39_hat.py's REF intervals, imported);
* BMG(0.198, 0.833), n = 1e6, eps = 0.01: tests/_rev39_jump_reference.ref_bmg (T = 1e4: P(L > T) ~ 1e-17, the body's
  long-double FFT alone), h = 1/64, 1/32, 1/16 (differences 3.34e-10, 1.34e-9: second order), Richardson and error as
  above (1e-5 relative: the two Richardson values agree to 2e-6);
* BMG(0.171, 0.781), n = 1e8, eps = 0.001 (T = 1e5: P(L > T) = 7e-23) and BMG(0.0389, 0.529), n = 1e8, eps = 0.01
  (T = 2e5: n gamma P(L > T) = 2e-7, two jumps negligible), two of body41's cells of docs/accountant_tail.md §59
  (BODY_LEAP_EIGHT): ref_bmg at h = 1/16, 1/8, 1/4 (differences 2.79e-9, 1.05e-8 / 1.46e-10, 5.51e-10: ratios 3.8),
  Richardson and error as above (4.5e-4 / 2.1e-5 relative).
(BMG(0.0786, 0.597), n = 1e9, eps = 0.001, where §57 runs: tests/test_review_rev40_far.py already holds it.)
Measured on main 4eee1c4c (and body41 144abe49: the same brackets): every bracket holds; least margins (relative to
the reference, against its stated error): lower values 5.4e-5 below (GaussianRandomizer(1), n = 1e6, eps = 0.01, rel_tol
1e-3; error 2e-6), 1.1e-4 (BMG(0.198, 0.833), n = 1e6, 1e-3), 1.6e-4 (GaussianRandomizer(1), n = 1e7, 1e-3); upper values
8.4e-5 above (GaussianRandomizer(1), n = 1e6, 1e-3), 1.0e-4 (n = 1e7, 1e-3), 1.8e-4 (BMG(0.0389, 0.529), n = 1e8, 1e-3)."""

from __future__ import annotations

import pytest

from test_review_rev39_hat import REF as REV39

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches


def _rich(a, b, c, extra=0.0, floor_rel=1e-5):
    """(Richardson of the steps h, 2h, plus ``extra``; error max(2 |that - Richardson of 2h, 4h|, floor_rel relative))."""
    r1, r2 = a - (b - a) / 3.0, b - (c - b) / 3.0
    return r1 + extra, max(2.0 * abs(r1 - r2), floor_rel * r1)


_G8, _B8 = REV39[("G", 1.0, 0.0, 10**8, 0.01)], REV39[("B", 0.020104468458158786, 0.45659017565152327, 10**8, 0.1)]
# (kind, params, n, eps): (reference, its error)
REF = {("g", (1.0,), 10**6, 0.01): _rich(0.0003246308114449752, 0.0003246556928724506, 0.0003247543759714577,
                                         extra=1.4808451559735008e-10, floor_rel=2e-6),
       ("g", (1.0,), 10**7, 0.001): _rich(0.0004948730517072529 + 1.973328951594887e-10,
                                          0.0004948931231429876 + 1.973328951594887e-10,
                                          0.0004949729121565202 + 1.6429726101469346e-11, floor_rel=2e-6),
       ("b", (0.198, 0.833), 10**6, 0.01): _rich(1.0015165609338653e-06, 1.0018508432942925e-06, 1.0031941685901946e-06),
       ("b", (0.171, 0.781), 10**8, 0.001): _rich(9.70094477040834e-07, 9.728855641774818e-07, 9.833904359584416e-07),
       ("b", (0.0389, 0.529), 10**8, 0.01): _rich(1.0085705764071551e-06, 1.0087163257805637e-06, 1.0092674252881762e-06),
       ("g", (1.0,), 10**8, 0.01): (0.5 * (_G8[0] + _G8[1]), 0.5 * (_G8[1] - _G8[0])),
       ("b", (0.020104468458158786, 0.45659017565152327), 10**8, 0.1): (0.5 * (_B8[0] + _B8[1]), 0.5 * (_B8[1] - _B8[0]))}
TIGHT = {("g", (1.0,), 10**6, 0.01), ("g", (1.0,), 10**7, 0.001), ("b", (0.198, 0.833), 10**6, 0.01),
         ("b", (0.0389, 0.529), 10**8, 0.01)}  # (also at rel_tol 1e-3: cheap there)


def _make(kind, p):
    return GaussianRandomizer(p[0], 1) if kind == "g" else BlanketMixedGaussian(p[0], p[1], 1)


@pytest.mark.parametrize("cell", sorted(REF), ids=str)
def test_far_tail_lower_value_at_or_below_the_reference(cell):
    kind, p, n, eps = cell
    ref, err = REF[cell]
    for rt in (1e-2, 1e-3) if cell in TIGHT else (1e-2,):
        clear_caches()
        lo, up = ShuffleAccountant(_make(kind, p), n, rel_tol=rt).get_delta_bounds(eps)
        assert lo <= ref + err, (cell, rt, lo, up, ref, err)  # (never above the truth)
        assert up >= ref - err, (cell, rt, lo, up, ref, err)  # (never below it)
