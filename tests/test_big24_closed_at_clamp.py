"""The closed form's jump term at the FFT treatment's clamp (docs/accountant_tail.md §24): the fast bracket of
E phi(A') against an exact quadrature at n = 2 (fixed cells and a hypothesis property over sigma0, eps and T0), the
combination rule on a round with known terms, and the accountant's brackets at n = 1e8 / 1e9 against the previous
engine's (inside them, never disjoint) and the FFT treatment at rel_tol 1e-4 at n = 1e4."""

from __future__ import annotations

import math
import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import concentrated, far_tail
from sharpdp.shuffle.accountant.jump import JumpTerm
from test_gauss23_closed_tail import _parts, _tau_mp, _xb
from _main_floats34 import switch


def _exact_n2(law, gamma, T0):
    """E phi(A') at n = 2 (one other user) by quadrature over the atom and the lognormal part of the stored law."""
    mp.mp.dps = 25
    xa, pa, a, G, r, zl, w = _parts(law)
    prm = (xa, pa, a, G, r, zl, w)
    vT = (math.log((T0 - a) / G) + 0.5 * r * r) / r

    def g(z):
        ell = a + G * mp.e ** (r * z - r * r / 2)
        return _tau_mp(max(T0, -min(ell, T0)), *prm) * w * mp.npdf(z)

    q = pa * _tau_mp(max(T0, -xa), *prm) + mp.quad(g, [zl, max(zl, vT), max(zl, vT) + 12, mp.inf])
    return float((1 - gamma) * _tau_mp(T0, *prm) + gamma * q)


@pytest.mark.parametrize("sigma0,eps,t0", [(0.5, 1.0, 200.0), (1.0, 2.0, 40.0), (1.0, 0.5, 10.0), (0.5, 4.0, 3e3)])
def test_fast_bracket_contains_the_exact_value_at_n2(sigma0, eps, t0):
    gamma, law = _xb(sigma0, eps)
    lo, up = concentrated.jump_bracket(law, gamma, 2, t0, fast=True)
    exact = _exact_n2(law, gamma, t0)
    assert 0 <= lo <= exact * (1 + 1e-9) and up >= exact * (1 - 1e-9)
    assert up <= exact * 1.5  # (not a vacuous upper value: at n = 2 the expansion is loose, but not by much)


@settings(max_examples=12, deadline=None, derandomize=True)
@given(sigma0=st.floats(0.5, 1.2), eps=st.floats(0.3, 4.0), scale=st.floats(0.5, 3.0))
def test_fast_bracket_property_n2(sigma0, eps, scale):
    gamma, law = _xb(sigma0, eps)
    T0 = scale * (max(law.mean(), 0.0) + law.std())
    if not concentrated.eligible(law, gamma, 2):
        return
    lo, up = concentrated.jump_bracket(law, gamma, 2, T0, fast=True)
    exact = _exact_n2(law, gamma, T0)
    assert lo <= exact * (1 + 1e-9) and up >= exact * (1 - 1e-9)


def test_intersection_rule(monkeypatch):
    # the closed form's bracket set by hand: the larger lower and the smaller upper value (a swapped min / max, or the
    # closed form's values taken as they are, fails one of the asserts); the clamp passed through
    seen = []
    monkeypatch.setattr(concentrated, "jump_bracket", lambda law, g, n, T0, fast: seen.append((T0, fast)) or (4.0, 5.0))
    o = far_tail.closed_at_clamp(JumpTerm(up=6.0, lo=0.0, N=16), None, 0.1, 10, 7.5)
    assert (o.lo, o.up, o.N) == (4.0, 5.0, 16) and seen == [(7.5, True)]
    o = far_tail.closed_at_clamp(JumpTerm(up=4.5, lo=4.2, N=16), None, 0.1, 10, 7.5)
    assert (o.lo, o.up) == (4.2, 4.5)


def test_round_values_from_the_narrower_jump_bracket(monkeypatch):
    # the round's values with the intersected jump term: Up = (body_up + J_up + pair)(1 + 1e-9), Lo = (body_lo + J_lo
    # - penalty)(1 - 1e-9), checked on a real round (Gaussian sigma0 = 1, n = 1e8, eps = 0.01)
    gamma, law = _xb(1.0, 0.01)
    run = law.shifted(up=True)
    r = far_tail.certify_bigjump(run, gamma, 10**8, 1e-2)
    assert r.upper == pytest.approx((r.body_up + r.jump.up + r.multi) * (1 + 1e-9), rel=1e-14)
    assert r.lower == pytest.approx((r.body_lo + r.jump.lo - r.penalty_B) * (1 - 1e-9), rel=1e-14)
    lo_c, up_c = concentrated.jump_bracket(run, gamma, 10**8, r.T0, fast=True)
    assert r.jump.up <= up_c and r.jump.lo >= lo_c and r.jump.up - r.jump.lo <= 0.02 * r.jump.lo


# the previous engine's brackets (main e81037e, before §24) and the ones with §24
_BIG = [
    (GaussianRandomizer(0.5, 1), 10**8, 1.0, (0.0, 1.83418e-3), 0.02),
    (GaussianRandomizer(1.0, 1), 10**8, 0.01, (4.30852e-10, 6.65598e-10), 0.02),
    (GaussianRandomizer(1.0, 1), 10**9, 0.01, (0.0, 1.26993e-12), 0.01),
    (BlanketMixedGaussian(0.01424190084729267, 0.40485813171778634, 1), 10**9, 0.1, (0.0, 9.9901e-7), 0.01),
]


@pytest.mark.parametrize("rnd,n,eps,before,gap", _BIG)
def test_big_n_brackets_inside_the_previous_ones(rnd, n, eps, before, gap, monkeypatch):
    switch(monkeypatch, "HAT_PIECES", False)  # (**) session 38, lead: HAT_PIECES (§53) moves this pinned float (n = 1e9, eps = 0.1: +8.7e-5 up)
    lo, up = (float(v) for v in ShuffleAccountant(rnd, n).get_delta_bounds(eps))
    assert before[0] * (1 - 1e-5) <= lo and up <= before[1] * (1 + 1e-5)  # (5 printed digits)
    assert 0 < lo <= up <= lo * (1 + gap)


def test_against_the_fft_treatment_at_tight_rel_tol(monkeypatch):
    # n = 1e4, where the FFT treatment reaches rel_tol 1e-4: the combined bracket of a rel_tol 1e-2 round meets it
    gamma, law = _xb(0.5, 1.0)
    run = law.shifted(up=True)
    monkeypatch.setattr(concentrated, "certify", lambda *a, **k: None)  # the FFT treatment alone
    r = far_tail.certify_bigjump(run, gamma, 10**4, 1e-2)
    o = far_tail.closed_at_clamp(r.jump, run, gamma, 10**4, r.T0)
    lo = (r.body_lo + o.lo - r.penalty_B) * (1 - 1e-9)
    up = (r.body_up + o.up + r.multi) * (1 + 1e-9)
    ref = far_tail.certify_bigjump(run, gamma, 10**4, 1e-4)
    assert r.jump.lo <= o.lo <= o.up <= r.jump.up
    assert lo <= ref.upper and ref.lower <= up
