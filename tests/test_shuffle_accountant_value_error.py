"""The laws' rounding bound ``value_error`` (docs/accountant.md §3.2.2): it covers the actual rounding
of the stored atoms / location parameters (checked against mpmath at 60 digits), it is charged by
the accountant (a law within value_error of the stored one is bracketed), and a law whose true top
is positive is never reported as exactly 0 because its computed top rounded to <= 0."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sharpdp.shuffle as sh
from sharpdp.shuffle import tables as TB
from sharpdp.shuffle.accountant.driver import certify
from sharpdp.shuffle.laws import FiniteLaw, LognormalLaw, bmg_laws

mpmath.mp.dps = 60
_prob = st.floats(1e-12, 1.0, allow_subnormal=False)


def _exact_atom(ra, rb, bg, eps):
    return (mpmath.mpf(ra) - mpmath.exp(mpmath.mpf(eps)) * mpmath.mpf(rb)) / mpmath.mpf(bg)


@settings(max_examples=300, deadline=None)
@given(ra=_prob, rb=_prob, bg=_prob, eps=st.floats(0.0, 40.0), cancel=st.booleans())
def test_table_value_error_covers_atom_rounding(ra, rb, bg, eps, cancel):
    if cancel:  # R_a ~ e^eps R_b: the atom cancels to ~0, the error is relative to the terms
        ra = min(float(rb * math.exp(eps)), 1.0)
        rb = float(ra * math.exp(-eps))
    a, b, g, w = (np.array([x]) for x in (ra, rb, bg, 1.0 / bg))
    v, _ = TB.table_pav_atoms(a, b, g, w, eps)
    err = TB.table_pav_value_error(a, b, g, w, eps)
    exact = _exact_atom(ra, rb, bg, eps)
    assert abs(mpmath.mpf(float(v[0])) - exact) <= err
    # and the bound is not vacuous: a few hundred u of the terms
    assert err <= 20 * 2.0 ** -53 * (ra + math.exp(eps) * rb) / bg


@settings(max_examples=200, deadline=None)
@given(gamma=st.floats(1e-6, 0.999), sigma0=st.floats(0.05, 20.0), eps=st.floats(0.0, 40.0),
       adjacency=st.sampled_from(["zero_out", "replace"]))
def test_bmg_location_value_error(gamma, sigma0, eps, adjacency):
    E, G = mpmath.exp(mpmath.mpf(eps)), mpmath.mpf(gamma)
    exact = [G * (1 - E)] if adjacency == "replace" else [G - E, 1 - E * G]
    laws = [law for _, law in bmg_laws(gamma, sigma0, eps, adjacency)]
    for law, a in zip(laws, exact):
        assert abs(mpmath.mpf(law.a) - a) <= law.value_error
        # not vacuous: a few u of the terms combined
        assert law.value_error <= 20 * 2.0 ** -53 * float(1 + G + E)


@settings(max_examples=60, deadline=None)
@given(sigma0=st.floats(0.2, 5.0), eps=st.floats(0.0, 30.0))
def test_gaussian_atom_value_error(sigma0, eps):
    """gamma = 0 (the Gaussian randomizer): atoms g - e^eps and 1 - e^eps g with g = 2 Phibar(1/sigma0)."""
    E = mpmath.exp(mpmath.mpf(eps))
    g = mpmath.erfc(1 / (mpmath.mpf(sigma0) * mpmath.sqrt(2)))
    xb, bx = (law for _, law in bmg_laws(0.0, sigma0, eps, "zero_out"))
    for law, exact in ((xb, g - E), (bx, 1 - E * g)):
        atom = law.parts[0]
        assert abs(mpmath.mpf(float(atom.values[0])) - exact) <= atom.value_error
        assert law.value_error >= atom.value_error


def _near_zero_table():
    """A table whose first atom is computed as exactly 0 while the exact one is > 0."""
    ee = math.exp(0.5)
    for k in range(1, 10_000):
        rb = 0.1 + k * 1e-6
        ra = float(ee * rb)
        x = _exact_atom(ra, rb, 1.0, 0.5)
        if x > 0:
            return ra, rb, x
    raise AssertionError("no near-zero atom found")


def test_true_positive_top_not_reported_zero():
    ra, rb, x = _near_zero_table()
    a, b, bg, w = np.array([ra, 0.0]), np.array([rb, 1.0]), np.array([1.0, 1.0]), np.array([0.5, 0.5])
    law = TB.table_pav_law(a, b, bg, w, 0.5)
    assert law.support()[1] <= 0.0 < law.value_error  # the computed top rounded to 0
    for n in (1, 10):
        r = certify(law, 0.5, n, 0.01, 1)
        assert r.upper > 0.0
    # n = 1: D_up = E[L_+] = x / 2 exactly
    assert certify(law, 0.5, 1, 0.01, 1).upper >= float(x) / 2
    # the same law without its rounding bound was reported 0 (the former behaviour)
    assert certify(FiniteLaw(law.values, law.probs), 0.5, 10, 0.01, 1).upper == 0.0


@pytest.mark.parametrize("rand", [sh.RandomizedResponse(4, 1.0), sh.PrivUnit(0.7, 0.2, 4)],
                         ids=["krr", "privunit"])
def test_exact_zero_kept_above_eps0(rand):
    eps0 = rand.local_epsilon
    for eps in (eps0 * (1 + 1e-9), eps0 + 0.5):
        for gamma, law in rand.privacy_amplification_laws(eps, "replace"):
            assert law.top_bound() <= 0.0  # proved <= 0 in exact arithmetic: no rounding charge
            assert certify(law, gamma, 100, 0.01, 1).upper == 0.0
    acc = sh.ShuffleAccountant(rand, 100, "replace")
    assert acc.get_delta(eps0) == 0.0 and acc.get_delta(eps0 + 0.5) == 0.0


@pytest.mark.parametrize("n", [1, 7, 300])
def test_finite_value_error_is_charged(n):
    """A law whose exact atoms are the stored ones plus err (the worst case the bound allows) is
    bracketed by the stored law with value_error = err."""
    v, p, err, gamma = np.array([-2.0, -0.5, 0.3, 1.7]), np.array([0.4, 0.3, 0.2, 0.1]), 1e-3, 0.3
    charged = certify(FiniteLaw(v, p, value_error=err), gamma, n, 0.01, 1)
    plain = certify(FiniteLaw(v, p), gamma, n, 0.01, 1)
    for shifted in (FiniteLaw(v + err, p), FiniteLaw(v - err, p)):
        r = certify(shifted, gamma, n, 0.01, 1)
        assert r.lower <= charged.upper
        assert charged.lower <= r.upper
    assert plain.upper < charged.upper <= plain.upper + 1.01 * err / gamma


def test_lognormal_value_error_is_charged():
    """The lattice path: c_pos of Lemma 3.2.1 includes value_error."""
    kw = dict(b=0.5, r=1.0)
    err, gamma, n = 1e-4, 0.5, 50
    law = LognormalLaw(-0.6, **kw)
    law.value_error = err
    charged = certify(law, gamma, n, 0.01, 1)
    shifted = certify(LognormalLaw(-0.6 + err, **kw), gamma, n, 0.01, 1)
    assert shifted.lower <= charged.upper
    assert charged.upper > certify(LognormalLaw(-0.6, **kw), gamma, n, 0.01, 1).upper


def test_value_error_validated():
    with pytest.raises(ValueError, match="value_error"):
        FiniteLaw([0.0, 1.0], [0.5, 0.5], value_error=-1.0)
    with pytest.raises(ValueError, match="value_error"):
        FiniteLaw([0.0, 1.0], [0.5, 0.5], value_error=math.nan)


def test_top_bound_rounds_up_and_negative_law_stays_zero():
    law = FiniteLaw([-1.0, -0.5], [0.5, 0.5], value_error=0.1)
    assert -0.4 <= law.top_bound() < -0.4 + 1e-15
    assert certify(law, 0.5, 10, 0.01, 1).upper == 0.0
    edge = FiniteLaw([-1.0, -0.5], [0.5, 0.5], value_error=0.5)  # exact top may be 0: not "L < 0"
    assert edge.top_bound() > 0.0
    r = certify(edge, 0.5, 10, 0.01, 1)  # E[(L~ + 0.5)_+] = 0, up to the outward rounding of -0.5
    assert r.terms["note"] == "L <= value_error almost surely" and 0.0 < r.upper <= 1e-15
