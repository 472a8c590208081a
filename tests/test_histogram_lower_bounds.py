"""Lower bounds of "Better Privacy Guarantees for Larger Groups", Section 6, and its Table 2 constants."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sharpdp.histogram import ShiftedLogGaussian
from sharpdp.histogram import lower_bounds as LB


@pytest.mark.parametrize("n", [1, 2, 7, 100, 12345])
def test_two_count_closed_form(n):
    # r = 1/5: C_r = ((1 + 3/5)/(4/5))^2 = 4 exactly, so v(n) >= (16/25) / (2 (3n)^2)
    assert LB.two_count(n, 0.2) == pytest.approx((16 / 25) / (18 * n * n), rel=1e-14)
    # r = 1/3: C_r = 9, gap 8n
    assert LB.two_count(n, 1 / 3) == pytest.approx((4 / 9) / (2 * 64 * n * n), rel=1e-14)
    # a generic r: ceil(C_r n) from mpmath-free exact reasoning
    r = 0.37
    C = ((1 + 3 * r) / (1 - r)) ** 2
    assert LB.two_count(n, r) == pytest.approx((1 - r) ** 2 / (2 * (math.ceil(C * n) - n) ** 2), rel=1e-14)


@pytest.mark.parametrize("r", [0.05, 0.2, 0.5, 0.9])
def test_two_count_limit(r):
    assert LB.two_count_limit(r) == pytest.approx((1 - r) ** 6 / (128 * r * r * (1 + r) ** 2), rel=1e-15)
    n = np.array([10**6, 10**7])
    assert np.allclose(n.astype(float) ** 2 * LB.two_count(n, r), LB.two_count_limit(r), rtol=1e-5)


@pytest.mark.parametrize("r", [0.01, 0.05, 0.2])
@pytest.mark.parametrize("n", [1, 5, 50, 500])
def test_uniform_prior_search_is_exhaustive_optimum(n, r):
    Ks = np.arange(3, 40 * (n + 10) + 3, 2)
    # eq. (23) for every odd K at once (numpy; equal to the library's value within 1e-14, see the closed-form
    # test below), then the library's own value at every K within 1e-9 of that maximum: the exhaustive maximum
    # of the library's function (a K outside would be 1e-9 below the maximum, far beyond the 1e-14 agreement)
    Kf = Ks.astype(float)
    closed = 12 / (Kf * Kf - 1) * np.maximum(np.log(Kf / (2 * math.e * (r * (n + (Kf - 1) / 2) + 0.25))), 0)
    near = Ks[closed >= closed.max() * (1 - 1e-9)] if closed.max() > 0 else Ks
    brute = max(LB.uniform_prior(n, r, K=int(K)) for K in near)
    for K in Ks[:: max(1, Ks.size // 50)]:  # and the library's function is eq. (23) across the range
        assert LB.uniform_prior(n, r, K=int(K)) == pytest.approx(closed[(K - 3) // 2], rel=1e-12, abs=1e-300)
    assert LB.uniform_prior(n, r) == pytest.approx(brute, rel=1e-14, abs=0)
    K = LB.uniform_prior_best_K(n, r)
    assert LB.uniform_prior(n, r, K=K) == LB.uniform_prior(n, r)


def test_uniform_prior_closed_form_and_many_count():
    n, r, K = 40, 0.03, 21
    direct = 12 / (K * K - 1) * max(math.log(K / (2 * math.e * (r * (n + (K - 1) / 2) + 0.25))), 0)
    assert direct > 0
    assert LB.uniform_prior(n, r, K=K) == pytest.approx(direct, rel=1e-14)
    # Theorem 6.4 with the uniform prior and j_star = (K-1)/2 is eq. (23)
    assert LB.many_count(n, r, np.full(K, 1 / K), (K - 1) // 2) == pytest.approx(direct, rel=1e-12)


def test_many_count_hand_example():
    # J uniform on {0, 2} (pmf [1/2, 0, 1/2]), j_star = 0: H = log 2, E J = 1, E J^2 = 2
    n, r = 1, 0.01
    expect = max(math.log(2) - math.log(2 * math.e * (r * (n + 1) + 0.25)), 0) / 2
    assert LB.many_count(n, r, [0.5, 0, 0.5], 0) == pytest.approx(expect, rel=1e-14)
    assert expect > 0


@pytest.mark.parametrize("r", [1 / math.e + 1e-9, 0.4, 0.5, 0.9])
def test_many_count_bounds_vanish_for_r_above_1_over_e(r):
    # docs/papers.md §2.2 item 3: (23) and (19) are 0 for every r >= 1/e; only (14) is informative there
    n = np.array([1, 10, 1000, 10**6])
    assert np.all(LB.uniform_prior(n, r) == 0)
    assert np.all(LB.truncated_gaussian_prior(np.array([10, 1000]), r) == 0)
    assert np.all(LB.two_count(n, r) > 0)


def test_uniform_prior_limit_eq24():
    r, a = 0.02, 2 * math.exp(1.5)
    n = 10**6
    K = int(2 * round((a * r * n - 1) / 2) + 1)
    lim = 12 / a**2 * max(math.log(a / (2 * math.e * (1 + a * r / 2))), 0)
    assert (r * n) ** 2 * LB.uniform_prior(n, r, K=K) == pytest.approx(lim, rel=1e-4)


@pytest.mark.parametrize("L", [0.5, 2.0, 3.0, 6.0])
def test_truncated_gaussian_entropy_and_variance(L):
    Z = math.erf(L / math.sqrt(2))
    phi = stats.norm.pdf(L)
    h, tau2 = LB.truncnorm_entropy_var(L)
    assert tau2 == pytest.approx(1 - 2 * L * phi / Z, rel=1e-13)
    assert h == pytest.approx(math.log(math.sqrt(2 * math.pi * math.e) * Z) - L * phi / Z, rel=1e-13)


@pytest.mark.parametrize("S,L", [(0.7, 2.0), (5.0, 3.0), (40.0, 1.5), (1000.0, 4.0)])
def test_quantised_prior_stats_against_cdf_differences(S, L):
    from sharpdp._kernels import histogram as K

    H, m1, m2, tot = K.quantised_truncnorm_stats(S, L, K._GL_X, K._GL_W)
    kmax = int(math.floor(L * S + 0.5))
    k = np.arange(-kmax, kmax + 1)
    a = np.maximum(-L, (k - 0.5) / S)
    b = np.minimum(L, (k + 0.5) / S)
    # upper-tail form for positive cells avoids cancellation
    p = np.where(a >= 0, stats.norm.sf(a) - stats.norm.sf(b), stats.norm.cdf(b) - stats.norm.cdf(a))
    p = p / (2 * stats.norm.cdf(L) - 1)
    keep = p > 0
    p, k = p[keep], k[keep]
    assert tot == pytest.approx(1.0, abs=1e-13)
    assert H == pytest.approx(-np.sum(p * np.log(p)), rel=1e-12)
    assert abs(m1) < 1e-10 * max(1.0, S)  # symmetric prior
    assert m2 == pytest.approx(np.sum(p * k**2), rel=1e-11)


def test_truncated_gaussian_prior_limit_eq30():
    r, L, x = 0.01, 3.0, 1.5
    h, tau2 = LB.truncnorm_entropy_var(L)
    lim = max(math.log(x) + h - math.log(2 * math.e) - math.log1p(L * x * r), 0) / (x * x * tau2)
    assert lim > 0
    vals = [(r * n) ** 2 * LB.truncated_gaussian_prior(n, r, L, x) for n in (10**4, 10**6)]
    assert abs(vals[1] - lim) < abs(vals[0] - lim) + 1e-12
    assert vals[1] == pytest.approx(lim, rel=2e-3)


def test_truncated_gaussian_prior_optimised_beats_paper_choice_at_r_0_1():
    # docs/papers.md §2.2 item 4: with L = 3 and x = x_L = 2 e^(3/2 - h_L), (19) is already 0 at r = 0.1
    r, n, L = 0.1, 1000, 3.0
    h, _ = LB.truncnorm_entropy_var(L)
    assert LB.truncated_gaussian_prior(n, r, L, 2 * math.exp(1.5 - h)) == 0.0
    best = LB.truncated_gaussian_prior(n, r)
    assert best > 0
    # optimised over (L, x): at least as good as a grid of fixed choices
    for LL in (1.0, 2.0, 3.0):
        for xx in (1.0, 2.0, 4.0):
            assert best >= LB.truncated_gaussian_prior(n, r, LL, xx) * (1 - 1e-9)
    # and better than the uniform prior at small r, large n
    assert LB.truncated_gaussian_prior(10**4, 0.01) > LB.uniform_prior(10**4, 0.01)


def test_small_error_constants_table2():
    c = LB.small_error_constants()
    assert list(c) == ["two_count", "uniform_prior", "truncated_gaussian_prior", "shifted_log_gaussian"]
    assert c["two_count"] == pytest.approx(1 / 128, rel=1e-10)
    assert c["uniform_prior"] == pytest.approx(3 / (2 * math.e**3), rel=1e-10)
    assert c["truncated_gaussian_prior"] == pytest.approx(math.pi / (4 * math.e**2), rel=1e-10)
    assert c["shifted_log_gaussian"] == pytest.approx(1 / math.pi, rel=1e-10)
    vals = list(c.values())
    assert vals == sorted(vals)
    assert c["shifted_log_gaussian"] / c["truncated_gaussian_prior"] == pytest.approx(4 * math.e**2 / math.pi**2)


@settings(max_examples=30, deadline=None)
@given(r=st.floats(0.01, 0.95), frac=st.floats(0.05, 0.99), c=st.floats(0.05, 5.0), n=st.integers(1, 10**5))
def test_lower_bounds_below_every_admissible_mechanism(r, frac, c, n):
    # the mechanism with r0 < r satisfies the utility assumption, so every bound sits below its v(n)
    v = ShiftedLogGaussian(r, r * frac, c).budget(n)
    assert LB.two_count(n, r) <= v
    assert LB.uniform_prior(n, r) <= v


@pytest.mark.parametrize("r", [0.01, 0.05])
@pytest.mark.parametrize("n", [10, 1000])
def test_truncated_prior_below_mechanism(r, n):
    assert LB.truncated_gaussian_prior(n, r) <= ShiftedLogGaussian(r, 0.999 * r, 1e-3).budget(n)


@pytest.mark.parametrize("call,name", [
    (lambda: LB.two_count(5, 1.0), "r"), (lambda: LB.two_count(5, 0.0), "r"), (lambda: LB.two_count(0, 0.5), "n"),
    (lambda: LB.two_count(2.5, 0.5), "n"), (lambda: LB.two_count_limit(float("nan")), "r"),
    (lambda: LB.uniform_prior(5, 0.1, K=4), "K"), (lambda: LB.uniform_prior(5, 0.1, K=1), "K"),
    (lambda: LB.many_count(5, 0.1, [0.5, 0.6], 0), "pmf"), (lambda: LB.many_count(5, 0.1, [-0.5, 1.5], 0), "pmf"),
    (lambda: LB.many_count(5, 0.1, [1.0], 0), "j_star"), (lambda: LB.many_count(5, 0.1, [0.5, 0.5], -1), "j_star"),
    (lambda: LB.many_count(5, 0.1, [float("nan"), 1.0], 0), "pmf"),
    (lambda: LB.truncated_gaussian_prior(5, 0.1, L=-1.0, x=1.0), "L"),
    (lambda: LB.truncated_gaussian_prior(5, 0.1, L=1.0, x=0.0), "x"),
])
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()
