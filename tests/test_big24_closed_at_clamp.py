"""The closed form's jump term at the FFT treatment's clamp (docs/accountant_tail.md §24): the fast bracket of
E phi(A') against an exact quadrature at n = 2 (fixed cells and a hypothesis property over sigma0, eps and T0), the
combination rule on a round with known terms, and the accountant's brackets at n = 1e8 / 1e9 against the previous
engine's (inside them, never disjoint) and the FFT treatment at rel_tol 1e-4 at n = 1e4."""

from __future__ import annotations

import math
from dataclasses import replace

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import concentrated, far_tail
from sharpdp.shuffle.accountant.jump import JumpTerm
from test_gauss23_closed_tail import _parts, _tau_mp, _xb


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


def test_combination_rule(monkeypatch):
    # a round with known terms; the closed form's bracket set by hand: min of the uppers, max of the lowers, with the
    # round's body, pair term and penalty (a dropped body or a swapped min/max fails one of the asserts)
    r = far_tail.FarTailBracket(lower=0.0, upper=10.0, T0=5.0, h=1.0, B=2.0, N=16, multi=0.25, body_up=3.0,
                                body_lo=2.0, penalty_B=0.5, jump=JumpTerm(up=6.0, lo=0.0, N=16))
    monkeypatch.setattr(concentrated, "jump_bracket", lambda *a, **k: (4.0, 5.0))
    o = far_tail.closed_at_clamp(r, None, 0.1, 10)
    assert o.upper == pytest.approx((3.0 + 5.0 + 0.25) * (1 + 1e-9), rel=1e-15)
    assert o.lower == pytest.approx((2.0 + 4.0 - 0.5) * (1 - 1e-9), rel=1e-15)
    assert (o.jump.lo, o.jump.up) == (4.0, 5.0)
    # the round's own values where they are the better ones
    monkeypatch.setattr(concentrated, "jump_bracket", lambda *a, **k: (-1.0, 100.0))
    o = far_tail.closed_at_clamp(replace(r, lower=1.0, upper=9.0, jump=JumpTerm(up=6.0, lo=3.0, N=16)), None, 0.1, 10)
    assert o.upper == 9.0 and o.lower == pytest.approx((2.0 + 3.0 - 0.5) * (1 - 1e-9), rel=1e-15)


# the previous engine's brackets (main e81037e, before §24) and the ones with §24
_BIG = [
    (GaussianRandomizer(0.5, 1), 10**8, 1.0, (0.0, 1.83418e-3), 0.02),
    (GaussianRandomizer(1.0, 1), 10**8, 0.01, (4.30852e-10, 6.65598e-10), 0.02),
    (GaussianRandomizer(1.0, 1), 10**9, 0.01, (0.0, 1.26993e-12), 0.01),
    (BlanketMixedGaussian(0.01424190084729267, 0.40485813171778634, 1), 10**9, 0.1, (0.0, 9.9901e-7), 0.01),
]


@pytest.mark.parametrize("rnd,n,eps,before,gap", _BIG)
def test_big_n_brackets_inside_the_previous_ones(rnd, n, eps, before, gap):
    lo, up = (float(v) for v in ShuffleAccountant(rnd, n).get_delta_bounds(eps))
    assert before[0] * (1 - 1e-5) <= lo and up <= before[1] * (1 + 1e-5)  # (5 printed digits)
    assert 0 < lo <= up <= lo * (1 + gap)


def test_against_the_fft_treatment_at_tight_rel_tol(monkeypatch):
    # n = 1e4, where the FFT treatment reaches rel_tol 1e-4: the combined bracket of a rel_tol 1e-2 round meets it
    gamma, law = _xb(0.5, 1.0)
    run = law.shifted(up=True)
    monkeypatch.setattr(concentrated, "certify", lambda *a, **k: None)  # the FFT treatment alone
    r = far_tail.certify_bigjump(run, gamma, 10**4, 1e-2)
    o = far_tail.closed_at_clamp(r, run, gamma, 10**4)
    ref = far_tail.certify_bigjump(run, gamma, 10**4, 1e-4)
    assert r.lower <= o.lower <= o.upper <= r.upper
    assert o.lower <= ref.upper and ref.lower <= o.upper
