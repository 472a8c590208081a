"""Review rev38 (session 38) of hat38's rule (docs/accountant_tail.md §53, ``limits.HAT_PIECES``: §45.2's coupling cost
of the jump term's and the body's spread measures bounded piece by piece, so the hat lower values rise).

The moved lower values of GaussianRandomizer(0.5) at n = 1e8, 1e9 are checked against FFT values in
tests/test_review_rev38_fft.py. Here: the body-dominated cells (BMG picks of calibrate_bmg at n = 1e8, 1e9 and
GaussianRandomizer(1), n = 1e9, eps = 0.001, whose gap is the map's worst) against main's (6d5c8782) rel_tol-1e-3
brackets, and a side effect the builder switched off in a pinned test:

* tests/test_review_rev31_tail.py's ``test_finer_request_no_worse_than_the_default_request`` (docs/accountant_tail.md
  §36's guarantee: a request finer than 1e-2 that misses its rel_tol answers with a bracket at least as tight as the
  default request's at both ends) now runs with HAT_PIECES off (hat38 bd039dc, "§37.4's premise no longer holds"). With
  §53 on, BMG(0.008546, 0.34095), n = 1e8, replace, eps = 4: rel_tol 1e-2 [1.0012092e-6, 1.0038346e-6], rel_tol 1e-3
  [9.997971e-7, 1.0031108e-6] -- the finer request's lower value is 0.14 % *below* the default's (rev38, hat38
  338727d). Both brackets are certified and intersect (no under-report); the guarantee fails at the lower end. Kept
  here with the rule on (a non-strict xfail until session 39: §54.2 restores the guarantee; far39), and the two brackets' intersection is checked."""

from __future__ import annotations

import functools

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches

# (gamma, sigma0, n, eps): main's rel_tol-1e-3 bracket, zero-out
BMG_TIGHT = {(0.171, 0.781, 10**8, 0.001): (9.69027991966038e-07, 9.692781059749807e-07),
             (0.0389, 0.529, 10**8, 0.01): (1.0081207566742573e-06, 1.008700336033955e-06),
             (0.0202, 0.456, 10**8, 0.1): (1.026476236633983e-06, 1.0266579217992154e-06),
             (0.0204, 0.461, 10**9, 0.01): (9.75435273238694e-07, 9.763006315584164e-07)}
FINER = (0.008545970743400005, 0.3409533484609755, 10**8, 4.0)  # tests/test_review_rev31_tail.py's BMG_A_1E8_4


@pytest.mark.parametrize("cell", sorted(BMG_TIGHT), ids=str)
def test_bmg_bracket_overlaps_main_tight(cell):
    """The bracket never lies below main's tight lower value and overlaps main's tight bracket."""
    g, s, n, eps = cell
    ref_lo, ref_up = BMG_TIGHT[cell]
    clear_caches()
    acc = ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n)
    lo, up = acc.get_delta_bounds(eps)
    assert up >= ref_lo * (1 - 1e-12) and lo <= ref_up * (1 + 1e-12), (cell, lo, up)
    assert up - lo <= acc.rel_tol * lo


def test_gauss1_n1e9_gap_cell_overlaps_main_tight():
    """GaussianRandomizer(1), n = 1e9, eps = 0.001 (main's rel_tol-1e-3 bracket [9.66315e-10, 9.84262e-10]): the
    bracket holds main's tight lower value and overlaps it."""
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**9).get_delta_bounds(0.001)
    assert up >= 9.6631494443932e-10 * (1 - 1e-12) and lo <= 9.842622379160832e-10 * (1 + 1e-12), (lo, up)


@functools.lru_cache(maxsize=1)
def _finer_pair():
    g, s, n, eps = FINER
    out = []
    for rt in (1e-2, 1e-3):
        clear_caches()
        out.append(ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n, "replace", rel_tol=rt).get_delta_bounds(eps))
    return out


def test_finer_and_default_brackets_intersect():
    """Both certified brackets of the same D_up: they intersect."""
    (lo2, up2), (lo3, up3) = _finer_pair()
    assert max(lo2, lo3) <= min(up2, up3) * (1 + 1e-12), (lo2, up2, lo3, up3)


def test_finer_request_no_worse_than_the_default_request_rule_on():
    """tests/test_review_rev31_tail.py's check with §53 on (an xfail until session 39: passes with §54.2's
    FINER_DEFAULT_RUN; far39)."""
    (lo2, up2), (lo3, up3) = _finer_pair()
    assert up3 <= up2 * (1 + 1e-12) and lo3 >= lo2 * (1 - 1e-12), (lo2, up2, lo3, up3)
