"""Review rev38 (session 38): the brackets of GaussianRandomizer(0.5) and (1) at n = 1e8 and 1e9 that far38 (§52:
SCALED_PAIR_KEEP, TOP_COARSE, BODY_JUMP_STOP) and hat38 (§53: HAT_PIECES, whose lower values rise, e.g. n = 1e9, eps =
0.1: Lo 0.0025312 -> 0.0025475) move, against an independent value of D_up where main's own rel_tol-1e-3 and 1e-4
brackets cannot help (the size caps bind: n = 1e9, eps = 0.1 stays [0.0025312, 0.0025638] at any rel_tol).

References (session 41, rev41: rev38's plain FFT of the whole sum on a circular window, tests/_rev29_fft_reference.py
with ``neg=True``, was biased high: the sums above the window's top fold onto its negative side, which E[S] + E[S_-]
counts; +0.08 % at n = 1e9, eps = 0.5, found by rev40, tests/test_review_rev40_far.py):
* sigma0 = 0.5: the one-jump decomposition of tests/_rev41_jump.py (jumps: users with L > T = 1e8; the body, the n - 1
  users' sum of L | L <= T, by the long-double FFT of tests/_rev39_jump_reference.body_pmf, which the truncated sum fits
  (edge masses <= 2e-11, the transform's noise); the one-jump term integrated exactly against the body's discrete law from
  L's closed-form tail; two jumps to first order; n q = n g P(L > T) = 8e-6 (n = 1e8) / 8e-5 (n = 1e9): three jumps
  ~1e-10 / 1e-9 relative). Windows (lo, top): n = 1e8: (-3e6 / -3.5e6 / -4e6, lo + 1.34e8); n = 1e9: (-1e7 / -1.2e7 /
  -3e7 / -6e7, lo + 2.68e8). The grid's cell split converges at first order here (L's mass near -1 lies in one cell):
  values at steps h, 2h, 4h (n = 1e8: h = 8; n = 1e9: h = 16), the reference their quadratic extrapolation
  v0 = (8 v(h) - 6 v(2h) + v(4h)) / 3, its error stated as 3 |v0 - (2 v(h) - v(2h))| (the second-order term's size)
  + 2e-5 v0 (the neglected terms and the transform's noise, far above their estimates).
* sigma0 = 1, n = 1e8, eps = 0.001: rev38's double FFT had no fold bias (nodes above 0) but an indicator of 0.44 %
  (its tolerance 1.3 %); now the long-double FFT of the whole sum (tests/_rev39_fft_ld.d_up_fft_ld) on [-2.5e5, 1.9e6]
  plus E[L; L > W] (5e-12, first order), at h = (E - g) / 4, / 2, / 1 (L's atom g - E on a node: second order,
  differences 2.34e-8, 8.88e-8), Richardson of the two finest, its error stated as twice its distance to the
  Richardson value of the next two: 2.76991e-5 +- 3.1e-9 (1.1e-4 relative; rev38's value 2.76960e-5).
References (v0, stated error relative): n = 1e8, eps 0.001, 0.01, 0.1: 0.02896339 (3.9e-5), 0.02617390 (3.8e-5),
0.01242250 (2.6e-5); n = 1e9, eps 0.001, 0.01, 0.1, 0.5: 0.01234970 (4.3e-5), 0.009654875 (4.2e-5), 0.002561194 (2.3e-5),
5.690887e-4 (2.0e-5); sigma0 = 1: 2.769912e-5 (1.1e-4). rev38's folded values were 5e-5 (n = 1e8) to 7.9e-4 (n = 1e9, eps = 0.5) relative above these;
rev40's one-jump values (tests/test_review_rev40_far.py's JUMP: no two-jump term, 2.7e-8 = 4.8e-5 relative at eps 0.5;
h = 32) lie 4e-5 - 5e-5 relative away. Measured on main 4eee1c4c (and body41 144abe49: the same brackets): every
bracket holds; least margins: lower values 0.155 % (sigma0 = 1) and 0.19 % (n = 1e8, eps = 0.001) below, upper values
0.060 % (sigma0 = 1) and 0.10 % (n = 1e9, eps = 0.1) above the reference, against stated errors of 0.002 - 0.011 %."""

from __future__ import annotations

import pytest

from _rev41_jump import gauss_jump
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches

# (sigma0, n, eps): (h, v(h), v(2h), v(4h)) of tests/_rev41_jump.gauss_jump, T = 1e8 (offline, rev41)
JUMP = {(0.5, 10**8, 0.001): (8.0, 0.02896812962631937, 0.028973055799450878, 0.0289834640830048),
        (0.5, 10**8, 0.01): (8.0, 0.026177982109117332, 0.026182224885682066, 0.026191186346247532),
        (0.5, 10**8, 0.1): (8.0, 0.012423227862853794, 0.012423978581520154, 0.012425557045856062),
        (0.5, 10**9, 0.001): (16.0, 0.012351994229853355, 0.012354386673187424, 0.012359458348083961),
        (0.5, 10**9, 0.01): (16.0, 0.00965654848514252, 0.009658290928518212, 0.009661983883801926),
        (0.5, 10**9, 0.1): (16.0, 0.0025612519322783076, 0.0025613120202959724, 0.002561438701666354),
        (0.5, 10**9, 0.5): (16.0, 0.0005690891858321446, 0.0005690897336158391, 0.0005690910949662371)}
# (sigma0, n, eps): (v(h), v(2h), v(4h), E[L; L > W]) of tests/_rev39_fft_ld.d_up_fft_ld, h = (E - g) / 4 (offline, rev41)
FFT_LD = {(1.0, 10**8, 0.001): (2.7706898258838427e-05, 2.7730254622849603e-05, 2.7819094403836645e-05,
                                5.130085884825451e-12)}


def _reference(cell):
    if cell in FFT_LD:
        a, b, c, tail = FFT_LD[cell]
        r1, r2 = a - (b - a) / 3.0, b - (c - b) / 3.0
        return r1 + tail, 2.0 * abs(r1 - r2)
    _, a, b, c = JUMP[cell]
    v0 = (8.0 * a - 6.0 * b + c) / 3.0
    return v0, 3.0 * abs(v0 - (2.0 * a - b)) + 2e-5 * v0


#: (sigma0, n, eps): (reference, a third of its stated error) for every cell: the name and form rev38's table had
#: (tests/test_far39_keep.py reads it with the tolerance 3 x the second entry + 1e-4 relative, i.e. the stated error
#: + 1e-4): the unbiased references above, no longer rev38's folded values
FFT_REF = {cell: (_reference(cell)[0], _reference(cell)[1] / 3.0) for cell in list(JUMP) + list(FFT_LD)}


@pytest.mark.parametrize("cell", sorted(JUMP) + sorted(FFT_LD), ids=str)
def test_bracket_holds_the_reference(cell):
    """Lo <= D_up <= Up against the reference within its stated error; the bracket meets rel_tol below n = 1e9."""
    s, n, eps = cell
    ref, tol = _reference(cell)
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), n)
    lo, up = acc.get_delta_bounds(eps)
    assert lo <= ref + tol and up >= ref - tol, (cell, lo, up, ref, tol)
    if n < 10**9:
        assert up - lo <= acc.rel_tol * lo, (cell, lo, up)


@pytest.mark.slow
def test_jump_reference_reproduces():
    """One step recomputed (n = 1e8, eps = 0.1, h = 32 on 2^22 nodes: ~5 s CPU, 0.4 GB): the hard-coded values come
    from this code."""
    v, info = gauss_jump(0.5, 0.1, 10**8, 1e8, 32.0, -4e6, 2**22)
    assert abs(v - JUMP[(0.5, 10**8, 0.1)][3]) <= 1e-12, v
    assert max(info["edge_lo"], info["edge_hi"]) <= 2e-11, info
