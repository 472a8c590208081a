"""The privacy profile of a round bounded through bot from its legs' profiles (docs/composition.md §2.13).

The float hull curves against the lattice curves of the pair (same vertices, same values up to the margins), the split
bound against a brute-force minimum over a fine grid of real splits, the lower value of every split bound against a
brute-force minimum of the legs' true (convex, non-increasing) curves, and a round's 40-point profile against the
accountant's own per-eps split search (an independent certified upper value at every eps, by its own split search).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle import profile_bottom as PB
from sharpdp.shuffle.pair import Curve


_P = np.array([0.7, 0.2, 0.08, 0.02])
_Q = np.array([0.2, 0.3, 0.3, 0.2])


def _hockey(e, p, q):
    """H_{e^eps}(p || q) = sum (p - e^eps q)_+ at real eps: a true hockey-stick curve (convex in e^eps, non-increasing)."""
    e = np.atleast_1d(np.asarray(e, dtype=float))
    return np.maximum(p[None, :] - np.exp(e)[:, None] * q[None, :], 0.0).sum(axis=1)


def _true_a(e):  # leg A = H(P || Q) and leg B = H(Q || P): each the other's swap (docs/composition.md §1, (F2))
    return _hockey(e, _P, _Q)


def _true_b(e):
    return _hockey(e, _Q, _P)


def test_float_curve_matches_the_lattice_curve():
    """Vertices at the floats k dx: the float curve's values at lattice points equal the lattice Curve's within 1e-11
    relative (both carry the 1e-12 margin), and it lies above the sampled points' values at every vertex."""
    dx = 0.01
    ks = np.array([0, 3, 7, 20, 41, 90])
    h = np.array([0.5, 0.3, 0.15, 0.02, 1e-3, 1e-9])
    lat = Curve(ks, h, dx)
    flt = PB.FloatCurve(ks * dx, h)
    pts = np.arange(-5, 120)
    assert np.allclose(flt(pts * dx), lat(pts), rtol=1e-11, atol=0.0)
    assert np.all(flt(ks * dx) >= h)


def test_split_bound_is_the_minimum_over_real_splits():
    """The certified split bound of two hull curves is the curves' minimum over the real splits: within 1e-9 of the
    minimum over 20001 real splits and the breakpoints, never below it by more than float rounding, and at most the
    fine grid's minimum (the minimum is at a breakpoint)."""
    rng = np.random.default_rng(7)
    ea = np.sort(np.concatenate([[0.0], rng.uniform(0.0, 3.0, 25)]))
    eb = np.sort(np.concatenate([[0.0], rng.uniform(0.0, 3.0, 25)]))
    la, ua = 0.999 * _true_a(ea), 1.001 * _true_a(ea)
    lb, ub = 0.999 * _true_b(eb), 1.001 * _true_b(eb)
    ca = PB.float_leg_curve(ea, ua, eb, lb, ub)
    cb = PB.float_leg_curve(eb, ub, ea, la, ua)
    for eps in (0.05, 0.4, 1.1, 2.5):
        v, e1 = PB.split_bound(ca, cb, eps)
        fine = np.linspace(0.0, eps, 20001)
        grid = np.concatenate([fine, ca.e[(ca.e >= 0) & (ca.e <= eps)], (eps - cb.e)[(cb.e >= 0) & (cb.e <= eps)]])  # (a fine grid and the breakpoints)
        brute = np.min(ca(grid) + np.exp(grid) * cb(eps - grid))
        assert brute * (1 - 1e-12) <= v <= brute * (1 + 1e-9), (eps, v, brute)
        assert v <= np.min(ca(fine) + np.exp(fine) * cb(eps - fine)) * (1 + 1e-9)  # the vertices' minimum is the least
        # the curves lie above the true legs, so the split bound is above the true chain's minimum
        true = np.min(_true_a(grid) + np.exp(grid) * _true_b(eps - grid))
        assert v >= 0.999 * true


def test_lower_split_bound_is_below_every_split():
    """The lower value of every split bound, from the legs' lower values at their points, is at or below the true
    legs' chain at every real split (brute force over 20001 splits), and not far below it on a fine sampling."""
    ea = np.linspace(0.0, 3.0, 301)
    eb = np.linspace(0.0, 3.0, 301)
    la, lb = 0.999 * _true_a(ea), 0.999 * _true_b(eb)
    for eps in (0.05, 0.4, 1.1, 2.5):
        lo = PB.lower_split_bound(ea, la, eb, lb, eps)
        grid = np.linspace(0.0, eps, 20001)
        chain = np.min(_true_a(grid) + np.exp(grid) * _true_b(eps - grid))
        assert 0.0 < lo <= chain
        assert lo >= 0.9 * chain  # (grid 0.01, slopes <= 9: within ~9 %)


def test_second_leg_is_exact():
    for eps, e1 in ((0.3, 0.1), (1.0, 1.0 / 3.0), (7.58, 2.2000000000000001), (1e-300, 0.0)):
        e2 = PB._second(eps, e1)
        from fractions import Fraction
        assert Fraction(e1) + Fraction(e2) <= Fraction(eps)
        assert Fraction(e1) + Fraction(math.nextafter(e2, math.inf)) > Fraction(eps) or e2 == eps - e1


@pytest.fixture(scope="module")
def small_round():
    sh.clear_caches()
    return sh.ShuffleAccountant(sh.GaussianRandomizer(2.0, 1), 10, "replace")


def test_profile_through_bot_from_legs(small_round):
    """40 eps of a round through bot (GaussianRandomizer(2, 1), n = 10, replace; ~8 s of CPU): every value from the legs is a certified upper value, so it is at or above the
    round's certified lower values (the accountant's split search lower value at its split is of the bound, not of
    delta: compared instead with max(A_lo, B_lo) at eps, a lower value of every split bound, docs/composition.md §2.11);
    its lower value is at most the accountant's upper value (which is one split's value); and the values are within
    a stated factor of the accountant's own per-eps split search."""
    acc = small_round
    assert acc.via_bottom
    eps = np.linspace(0.0, 3.0, 40)
    lo, up = sh.privacy_profile_bounds(acc, eps, progress=False)
    ref_lo, ref_up = np.array([acc.get_delta_bounds(float(e)) for e in eps]).T
    assert np.all(np.diff(up) <= 0.0)
    assert np.all(lo <= ref_up * (1 + 1e-12)), (lo, ref_up)
    vb = acc._bottom
    for e, u in zip(eps.tolist(), up.tolist()):
        floor = max(vb.leg(0, e, acc.rel_tol).lower, vb.leg(1, e, acc.rel_tol).lower)
        assert u >= floor
    ratio = up / ref_up  # (measured: 0.99974 ... 1.0017)
    assert np.all(ratio <= 1.005) and np.all(ratio >= 0.95), ratio
    assert np.all(up <= 1.13 * lo)  # (measured: at most 1.124 x the lower value of every split bound)
    # a few eps take the accountant's split search, unchanged
    assert np.array_equal(sh.privacy_profile(acc, eps[-1:]), ref_up[-1:])
