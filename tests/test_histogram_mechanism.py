"""Shifted-log Gaussian mechanism: closed forms, Monte Carlo, sampler.

Source: "Better Privacy Guarantees for Larger Groups", Sections 3-5 and 8.
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from sharpdp.conversions import gaussian_mechanism_epsilon, zcdp_to_epsilon, zcdp_to_epsilon_bun_steinke
from sharpdp.histogram import ShiftedLogGaussian, compose

PARAMS = [(0.5, None, 1.0), (0.2, 0.15, 1.0), (0.9, 0.5, 0.25), (0.05, 0.04, 3.0), (1.0, 0.8, 0.01), (0.3, 0.2, 1e9)]


def _sigma_mp(r0, c):
    mpmath.mp.dps = 30
    return mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf(r0) / (1 + mpmath.mpf(c)))


@pytest.mark.parametrize("r,r0,c", PARAMS)
def test_sigma_and_budget_closed_forms(r, r0, c):
    m = ShiftedLogGaussian(r, r0, c)
    r0 = r / 2 if r0 is None else r0
    assert m.r0 == r0
    sig = _sigma_mp(r0, c)
    assert m.sigma == pytest.approx(float(sig), rel=1e-13)
    # eq. (9) calibration: 2 Phi(sigma) - 1 = r0 / (1 + c)
    assert math.erf(m.sigma / math.sqrt(2)) == pytest.approx(r0 / (1 + c), rel=1e-12)  # = 2 Phi(sigma) - 1
    ns = [0, 1, 2, 3, 10, 1000, 10**6, 10**12]
    v = m.budget(ns)
    for n, vn in zip(ns, v):
        k = max(n, 1)
        exact = mpmath.log((k + mpmath.mpf(c)) / (k - 1 + mpmath.mpf(c))) ** 2 / (2 * sig**2)
        assert vn == pytest.approx(float(exact), rel=1e-12)
    assert v[0] == v[1]  # eq. (5)
    assert np.all(np.diff(v) <= 0)
    assert m.budget(7) == pytest.approx(float(v[ns.index(10)]) * 0 + m.budget([7])[0])


def test_corollary_3_2_default_shift():
    m = ShiftedLogGaussian(0.3)
    s = stats.norm.ppf(0.5 + m.r0 / 4)
    assert m.sigma == pytest.approx(s, rel=1e-12)
    assert m.budget(0) == pytest.approx(math.log(2) ** 2 / (2 * s * s), rel=1e-12)
    n = np.array([1, 5, 50])
    assert np.allclose(m.budget(n), np.log1p(1 / n) ** 2 / (2 * s * s), rtol=1e-12)


@pytest.mark.parametrize("c", [0.1, 0.4, 0.5, 1.0, 3.0])
def test_inverse_square_limit_and_direction(c):
    m = ShiftedLogGaussian(0.4, 0.3, c)
    lim = 1 / (2 * m.sigma**2)
    n = np.array([1e3, 1e4, 1e5])
    scaled = n**2 * m.budget(n)
    assert np.allclose(scaled, lim, rtol=1e-2)
    assert abs(scaled[-1] / lim - 1) < 1e-4
    # docs/papers.md §2.2 item 6: n^2 v(n) = lim (1 + (1 - 2c)/n + O(n^-2)): from below for c > 1/2, above for c < 1/2
    assert np.all(np.abs(n * (scaled / lim - 1) - (1 - 2 * c)) <= 5 * (1 + c) ** 2 / n)
    if c != 0.5:
        assert np.all(np.sign(scaled - lim) == np.sign(0.5 - c))


def _exact_clipped_error(m, n):
    """E|[(n + c) e^(sigma Z - sigma^2) - c]_+ - n| by adaptive quadrature over z."""
    s, c = m.sigma, m.c
    z0 = (math.log(c / (n + c)) + s * s) / s  # release is 0 below z0
    z1 = (math.log((n + c) / (n + c)) + s * s) / s  # crosses n at z = sigma
    below = n * stats.norm.cdf(z0)
    f = lambda z: abs((n + c) * math.exp(s * z - s * s) - c - n) * stats.norm.pdf(z)
    mid = integrate.quad(f, z0, z1, epsabs=0, epsrel=1e-12)[0]
    up = integrate.quad(f, z1, np.inf, epsabs=0, epsrel=1e-12)[0]
    return below + mid + up


@pytest.mark.parametrize("r,r0,c", [(0.5, None, 1.0), (0.2, 0.18, 0.3)])
@pytest.mark.parametrize("n", [0, 1, 3, 10, 1000])
@pytest.mark.parametrize("integer", [False, True])
def test_monte_carlo_expected_error(r, r0, c, n, integer):
    m = ShiftedLogGaussian(r, r0, c)
    draws = 1_000_000
    y = m.release(np.full(draws, n), rng=12345 + n, integer=integer)
    err = np.abs(y - n)
    mean, se = err.mean(), err.std(ddof=1) / math.sqrt(draws)
    bound = m.expected_abs_error(n)
    assert bound == pytest.approx((n + c) * m.r0 / (1 + c))
    assert bound < r * max(n, 1)  # eq. (2), strictly
    assert mean <= bound + 5 * se  # Theorem 3.1 (i), after clipping (and rounding)
    # rounding keeps the expected error exactly (linear between integers): both match quadrature
    exact = _exact_clipped_error(m, n)
    assert exact <= bound * (1 + 1e-12)
    assert abs(mean - exact) <= 5 * se


@pytest.mark.parametrize("n", [0, 2, 50])
def test_rounding_preserves_mean(n):
    m = ShiftedLogGaussian(0.6, 0.5, 0.7)
    y_real = m.release(np.full(10**6, n), rng=7)
    y_int = m.release(np.full(10**6, n), rng=8, integer=True)
    assert np.all(y_int == np.floor(y_int))
    se = math.sqrt(y_int.var() / 1e6 + y_real.var() / 1e6)
    assert abs(y_int.mean() - y_real.mean()) <= 5 * se


def test_release_reproducible_thread_independent_and_clean():
    m = ShiftedLogGaussian(0.9, 0.85, 0.05)  # large sigma, small c: many clipped zeros
    counts = np.tile(np.array([0, 1, 2, 5, 1000, 2**40]), 20_000).reshape(600, 200)
    for integer in (False, True):
        outs = [m.release(counts, rng=99, integer=integer, threads=t) for t in (1, 2, 3, 8)]
        for o in outs[1:]:
            assert np.array_equal(o, outs[0])
        o = outs[0]
        assert o.shape == counts.shape and o.dtype == np.float64
        assert np.all(np.isfinite(o)) and np.all(o >= 0) and not np.any(np.signbit(o))
        assert np.any(o == 0.0)
        if integer:
            assert np.all(o == np.floor(o))
    assert not np.array_equal(m.release(counts, rng=1), m.release(counts, rng=2))
    assert m.release([], rng=1).shape == (0,)
    assert m.release(5, rng=1).shape == ()
    # int64 and integral float inputs agree
    assert np.array_equal(m.release(np.array([3, 4], dtype=np.int64), rng=5), m.release([3.0, 4.0], rng=5))


def test_data_independent_release_r1():
    m = ShiftedLogGaussian(1.0)
    assert m.data_independent and m.sigma == math.inf
    n = np.array([0, 1, 5, 10**6])
    assert np.all(m.budget(n) == 0) and np.all(m.epsilon(n, 1e-9) == 0)
    assert np.all(m.release(n, rng=1) == 0.5)
    assert np.array_equal(m.expected_abs_error(n), np.abs(n - 0.5))
    assert np.all(m.expected_abs_error(n) < np.maximum(n, 1))  # Prop. 2.3, strictly
    y = m.release(np.zeros(10**5), rng=3, integer=True)
    assert set(np.unique(y)) == {0.0, 1.0} and abs(y.mean() - 0.5) < 5 * 0.5 / math.sqrt(1e5)
    # an explicit r0 at r = 1 gives the shifted-log Gaussian mechanism
    assert ShiftedLogGaussian(1.0, 0.5).budget(3) > 0


def _gaussian_delta_mp(eps, n, m):
    mpmath.mp.dps = 40
    mu = mpmath.log((n + mpmath.mpf(m.c)) / (n - 1 + mpmath.mpf(m.c))) / mpmath.mpf(m.sigma)
    e = mpmath.mpf(eps)
    return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)


@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_per_count_epsilon(delta):
    m = ShiftedLogGaussian(0.3, 0.25, 0.5)
    n = np.array([0, 1, 4, 100, 10**5])
    eps = m.epsilon(n, delta)
    for k, e in zip(n, eps):
        k1 = max(k, 1)
        direct = gaussian_mechanism_epsilon(delta, m.sigma, math.log((k1 + m.c) / (k1 - 1 + m.c)))
        assert e == pytest.approx(direct, rel=1e-9)
        assert _gaussian_delta_mp(e, k1, m) <= delta  # safe side: the exact profile meets delta at e
    assert eps[0] == eps[1] and np.all(np.diff(eps) <= 0)  # larger groups: stronger privacy
    cks = m.epsilon(n, delta, method="cks20")
    bs = m.epsilon(n, delta, method="bun_steinke")
    assert np.all(eps <= cks) and np.all(cks <= bs)
    assert zcdp_to_epsilon(m.budget(4), delta) <= cks[2] == pytest.approx(zcdp_to_epsilon(m.budget(4), delta), rel=1e-13)
    bs_direct = zcdp_to_epsilon_bun_steinke(m.budget(100), delta)
    assert bs_direct <= bs[3] == pytest.approx(bs_direct, rel=1e-13)
    assert isinstance(m.epsilon(3, delta), float)


def test_composition_adds_budgets():
    a, b = ShiftedLogGaussian(0.3), ShiftedLogGaussian(0.5, 0.4, 2.0)
    comp = compose(a, b, ShiftedLogGaussian(1.0))
    n = np.array([0, 1, 7, 300])
    assert np.allclose(comp.budget(n), a.budget(n) + b.budget(n), rtol=1e-15)
    # two copies of one mechanism: a Gaussian shift with mu * sqrt(2), i.e. sigma / sqrt(2)
    twice = compose(a, a)
    e = twice.epsilon(n, 1e-6)
    for k, ek in zip(n, e):
        k1 = max(k, 1)
        direct = gaussian_mechanism_epsilon(1e-6, a.sigma / math.sqrt(2), math.log((k1 + a.c) / (k1 - 1 + a.c)))
        assert ek == pytest.approx(direct, rel=1e-9)
    assert np.all(twice.epsilon(n, 1e-6, method="cks20") >= e)
    with pytest.raises(ValueError, match="mechanisms"):
        compose()


@settings(max_examples=50, deadline=None)
@given(r=st.floats(0.01, 1.0), frac=st.floats(0.01, 0.99), c=st.floats(0.01, 10.0),
       n=st.integers(0, 10**9))
def test_budget_properties(r, frac, c, n):
    m = ShiftedLogGaussian(r, r * frac, c)
    v = m.budget([n, n + 1, n + 10])
    assert np.all(v >= 0) and v[0] >= v[1] >= v[2]
    # a larger shift-free slack r0 (bigger sigma) lowers every budget
    assert ShiftedLogGaussian(r, r * min(frac * 1.01, 0.999), c).budget(n) <= v[0]
    assert m.expected_abs_error(n) < r * max(n, 1)


@pytest.mark.parametrize("kwargs,name", [
    (dict(r=0.0), "r"), (dict(r=1.5), "r"), (dict(r=float("nan")), "r"), (dict(r=-0.2), "r"),
    (dict(r=0.5, r0=0.5), "r0"), (dict(r=0.5, r0=0.0), "r0"), (dict(r=0.5, r0=0.7), "r0"),
    (dict(r=0.5, r0=float("nan")), "r0"), (dict(r=0.5, c=0.0), "c"), (dict(r=0.5, c=-1.0), "c"),
    (dict(r=0.5, c=float("inf")), "c"), (dict(r=0.5, c=1e13), "c"),
])
def test_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        ShiftedLogGaussian(**kwargs)


@pytest.mark.parametrize("counts", [[-1, 2], [1.5, 2], [float("nan")], [float("inf")], [2**53]])
def test_bad_counts(counts):
    m = ShiftedLogGaussian(0.5)
    with pytest.raises(ValueError, match="counts"):
        m.release(counts, rng=1)
    with pytest.raises(ValueError, match=r"^n\b"):
        m.budget(counts)


def test_bad_misc_arguments():
    m = ShiftedLogGaussian(0.5)
    with pytest.raises(TypeError, match="counts"):
        m.release(["a"], rng=1)
    with pytest.raises(ValueError, match="delta"):
        m.epsilon(3, 1.0)
    with pytest.raises(ValueError, match="delta"):
        m.epsilon(3, 0.0)
    with pytest.raises(ValueError, match="method"):
        m.epsilon(3, 1e-5, method="rdp")
    with pytest.raises(ValueError, match="threads"):
        m.release([1], rng=1, threads=-1)


def test_float_reference_kernel_equals_eq4_on_the_same_normals():
    # the former float release (bench/bench_histogram.py's speed reference) draws exactly the shared sampler stream (samplers.standard_normals, whose
    # distribution tests/test_shuffle_mechanisms.py checks), so eq. (4) can be checked pointwise
    # (this also checks the C++ polynomial exp against numpy's exp)
    from sharpdp._core import histogram as core
    from sharpdp._core import samplers
    from sharpdp._rng import core_key

    m = ShiftedLogGaussian(0.95, 0.9, 0.2)
    counts = np.tile(np.arange(0, 2000, dtype=float), 100)
    z = samplers.standard_normals(counts.size, core_key(77), 2)
    expect = np.maximum((counts + m.c) * np.exp(m.sigma * z - m.sigma**2) - m.c, 0.0)
    got = core.release_float(counts, m.c, m.sigma, core_key(77), False, 3)
    assert np.allclose(got, expect, rtol=1e-14, atol=1e-12)


def test_per_count_epsilon_matches_dp_accounting_gaussian():
    # peer check: the edge n-1 <-> n is a Gaussian mechanism with noise sigma / log((n + c)/(n - 1 + c))
    from dp_accounting import get_epsilon_gaussian

    m = ShiftedLogGaussian(0.2, 0.15, 1.0)
    for n in (1, 10, 1000):
        sens = math.log((n + m.c) / (n - 1 + m.c))
        peer = get_epsilon_gaussian(m.sigma / sens, 1e-6)
        assert m.epsilon(n, 1e-6) == pytest.approx(peer, rel=1e-8)
