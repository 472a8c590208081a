"""Shuffle-index helpers: the asymptotic template, the HCR bound, chi_chua
("Shuffling-Aware Optimization for Private Vector Mean Estimation")."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import asymptotic_delta, gaussian_chi_chua, mse_lower_bound
from sharpdp.shuffle.templates import gaussian_chua_variance


def test_asymptotic_delta_formula_and_shapes():
    n, eps, chi = 1e4, 0.05, 3.0
    ref = math.exp(-chi**2 * eps**2 * n / 2) / (math.sqrt(2 * math.pi) * chi**3 * eps**2 * n**1.5)
    assert asymptotic_delta(n, eps, chi) == pytest.approx(ref, rel=1e-13)
    assert isinstance(asymptotic_delta(n, eps, chi), float)
    out = asymptotic_delta(np.array([1e3, 1e4]), eps, chi)
    assert out.shape == (2,) and out[1] < out[0]
    assert asymptotic_delta(1e8, 1.0, 5.0) == 0.0  # underflows to 0, never NaN


@settings(max_examples=50, deadline=None)
@given(n=st.floats(1, 1e9), eps=st.floats(1e-3, 2.0), c1=st.floats(0.1, 20), c2=st.floats(0.1, 20))
def test_asymptotic_delta_decreasing_in_chi(n, eps, c1, c2):
    a, b = sorted((c1, c2))
    fa, fb = asymptotic_delta(n, eps, a), asymptotic_delta(n, eps, b)
    assert np.isfinite(fa) and fb <= fa


def test_mse_lower_bound():
    assert mse_lower_bound(2.0, 3) == 12.0
    assert np.allclose(mse_lower_bound(np.array([1.0, 2.0]), 2), [2.0, 8.0])


def test_chua_variance_against_mpmath_and_series():
    for s in (0.7, 2.0, 4.6, 30.0):
        a = mpmath.mpf(1) / mpmath.mpf(s) ** 2
        ref = mpmath.e ** (4 * a) - 2 * mpmath.e ** (2 * a) + mpmath.e ** a
        assert gaussian_chua_variance(s) == pytest.approx(float(ref), rel=1e-13)
    # chi_chua^2 = s^2 - 9/2 + 145/(12 s^2) - 27/s^4 + O(s^-6)   (eq. chiup-tilde-series-in-sigma)
    for s in (20.0, 40.0):
        rem = gaussian_chi_chua(s) ** 2 - (s**2 - 4.5 + 145 / (12 * s**2) - 27 / s**4)
        assert abs(rem) < 200 / s**6
    # Err_1 = d sigma^2 = d chi^2 (1 + 9/2 chi^-2 + O(chi^-4))
    s = 50.0
    chi2 = gaussian_chi_chua(s) ** 2
    assert (s**2 / chi2 - 1 - 4.5 / chi2) * chi2**2 == pytest.approx(-145 / 12, rel=0.02)  # eq. sigma2-in-chiup-tilde


@pytest.mark.parametrize("call,name", [
    (lambda: asymptotic_delta(0, 0.1, 1.0), "n"),
    (lambda: asymptotic_delta(10, 0.0, 1.0), "epsilon"),
    (lambda: asymptotic_delta(10, 0.1, float("nan")), "chi"),
    (lambda: asymptotic_delta(10, 0.1, 0.0), "chi"),
    (lambda: mse_lower_bound(-1.0, 2), "chi_up"),
    (lambda: mse_lower_bound(1.0, 0), "dim"),
    (lambda: gaussian_chi_chua(0.0), "sigma0"),
])
def test_bad_input_names_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


# ----------------------------------------------------------------------------- hiding among the clones
from scipy.stats import binom  # noqa: E402

from sharpdp.shuffle.clones import clones_delta, clones_epsilon  # noqa: E402


def exact_binary_rr_shuffled_delta(eps0, n, eps):
    """Exact hockey-stick of the shuffled binary RR count for (1, 0, ..., 0) vs (0, ..., 0)."""
    p = 1 / (1 + math.exp(-eps0))
    j = np.arange(n + 1)
    b = binom.pmf(j, n, 1 - p)  # all zeros: count of ones ~ Bin(n, 1 - p)
    rest = binom.pmf(j[:-1], n - 1, 1 - p)
    a = np.zeros(n + 1)
    a[1:] += p * rest
    a[:-1] += (1 - p) * rest
    return float(np.maximum(a - math.exp(eps) * b, 0).sum())


def test_clones_at_n1_is_the_local_profile():
    eps0 = 1.0
    p = 1 / (1 + math.exp(-eps0))
    for eps in (0.0, 0.3, 0.9):
        assert clones_delta(eps0, 1, eps) == pytest.approx(p - math.exp(eps) * (1 - p), rel=1e-9)
    assert clones_delta(eps0, 1, 1.0) <= 1e-15 and clones_delta(eps0, 1, 1.01) == 0.0


@pytest.mark.parametrize("eps0,n", [(1.0, 10), (1.0, 200), (3.0, 100), (0.5, 1000)])
def test_clones_bound_dominates_an_exact_shuffled_profile(eps0, n):
    for eps in np.linspace(0.0, eps0, 7):
        exact = exact_binary_rr_shuffled_delta(eps0, n, eps)
        assert clones_delta(eps0, n, eps) >= exact * (1 - 1e-9) - 1e-15


def test_clones_monotone_and_epsilon_safe_end():
    ds = [clones_delta(1.0, 1000, e) for e in np.linspace(0, 1, 11)]
    assert all(a >= b for a, b in zip(ds, ds[1:]))
    assert clones_delta(1.0, 10_000, 0.05) < clones_delta(1.0, 1000, 0.05)
    e = clones_epsilon(1.0, 10_000, 1e-6)
    assert 0 < e < 1 and clones_delta(1.0, 10_000, e) <= 1e-6 < clones_delta(1.0, 10_000, e * 0.999)
    with pytest.raises(ValueError, match="delta"):
        clones_epsilon(1.0, 10, 0.0)
    with pytest.raises(ValueError, match="n"):
        clones_delta(1.0, 0, 0.1)
