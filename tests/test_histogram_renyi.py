"""Renyi tools and quadrature D_alpha between released laws.

Source: "Better Privacy Guarantees for Larger Groups", eq. (11), Lemma 7.1.
"""

import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import log_ndtr

from sharpdp.histogram import ShiftedLogGaussian
from sharpdp.histogram.renyi import gaussian_renyi, released_renyi, renyi_finite

ALPHAS = [1.5, 2.0, 8.0, 32.0]
MECHS = [ShiftedLogGaussian(0.5), ShiftedLogGaussian(0.2, 0.18, 0.3)]


def _quad_renyi(alpha, mp, sp, mq, sq):
    """log int p^alpha q^(1-alpha) / (alpha - 1) by adaptive quadrature around the tilted peak."""
    g = lambda x: alpha * stats.norm.logpdf(x, mp, sp) + (1 - alpha) * stats.norm.logpdf(x, mq, sq)
    a2 = alpha / sp**2 + (1 - alpha) / sq**2  # curvature of g (> 0 when finite)
    peak = (alpha * mp / sp**2 + (1 - alpha) * mq / sq**2) / a2
    w = 40 / math.sqrt(a2)
    gmax = g(peak)
    val = integrate.quad(lambda x: math.exp(g(x) - gmax), peak - w, peak + w, points=[peak], limit=500,
                         epsabs=0, epsrel=1e-12)[0]
    return (gmax + math.log(val)) / (alpha - 1)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_equal_variance_gaussian_eq11(alpha):
    assert gaussian_renyi(alpha, 0.3, 0.7, -0.2, 0.7) == pytest.approx(alpha * 0.25 / (2 * 0.49), rel=1e-14)
    assert gaussian_renyi(alpha, 0.3, 0.7, -0.2, 0.7) == pytest.approx(_quad_renyi(alpha, 0.3, 0.7, -0.2, 0.7), rel=1e-8)


@pytest.mark.parametrize("alpha,sp,sq", [(1.5, 1.0, 1.2), (2.0, 1.3, 1.0), (3.0, 1.1, 1.0)])
def test_unequal_variance_closed_form(alpha, sp, sq):
    assert renyi_finite(alpha, sp, sq)
    assert gaussian_renyi(alpha, 0.5, sp, 0.0, sq) == pytest.approx(_quad_renyi(alpha, 0.5, sp, 0.0, sq), rel=1e-7)


@pytest.mark.parametrize("n", [1, 3, 10, 100])
def test_lemma_7_1_threshold_eq35(n):
    # reverse divergence from N(n+1, r^2 (n+1)^2) to N(n, r^2 n^2): finite iff alpha < (n+1)^2/(2n+1)
    r = 0.3
    thr = (n + 1) ** 2 / (2 * n + 1)
    sp, sq = r * (n + 1), r * n
    assert renyi_finite(thr * (1 - 1e-9), sp, sq)
    assert not renyi_finite(thr * (1 + 1e-9), sp, sq)
    assert gaussian_renyi(thr * 1.01, n + 1, sp, n, sq) == math.inf
    assert math.isfinite(gaussian_renyi(thr * 0.99, n + 1, sp, n, sq))


def _clipped_closed_form(m, n, alpha, reverse):
    """log-sum for the clipped law: atoms + e^{alpha(alpha-1)D^2/(2s^2)} Phibar((log c - m_alpha)/s)."""
    s, c = m.sigma, m.c
    hi, lo = math.log(n + c) - s * s, math.log(n - 1 + c) - s * s
    mp, mq = (lo, hi) if reverse else (hi, lo)
    atom = alpha * log_ndtr((math.log(c) - mp) / s) + (1 - alpha) * log_ndtr((math.log(c) - mq) / s)
    ma = alpha * mp + (1 - alpha) * mq
    cont = alpha * (alpha - 1) * (mp - mq) ** 2 / (2 * s * s) + log_ndtr((ma - math.log(c)) / s)
    return float(np.logaddexp(atom, cont)) / (alpha - 1)


@pytest.mark.parametrize("m", MECHS, ids=["r0.5", "r0.2c0.3"])
@pytest.mark.parametrize("n", [1, 3, 10, 1000])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_released_divergence_within_budget(m, n, alpha):
    bound = alpha * m.budget(n)
    tol = bound * 1e-9
    fwd = released_renyi(m, n, alpha)
    rev = released_renyi(m, n, alpha, reverse=True)
    # quadrature against the closed form of the clipped law
    assert fwd == pytest.approx(_clipped_closed_form(m, n, alpha, False), rel=1e-9, abs=1e-13)
    assert rev == pytest.approx(_clipped_closed_form(m, n, alpha, True), rel=1e-9, abs=1e-13)
    # Theorem 3.1 (ii) via data processing: both directions <= alpha v(n)
    assert fwd <= bound + tol and rev <= bound + tol
    # docs/papers.md §2.2 item 7: clipping barely changes the forward direction; the bound is tight there
    assert fwd >= bound * (1 - 1e-6)
    # stochastic rounding (upper estimate) is also within the budget
    for reverse in (False, True):
        d = released_renyi(m, n, alpha, reverse=reverse, integer=True)
        assert 0 < d <= bound + tol


def test_rounded_pmf_is_a_distribution_with_the_clipped_mean():
    from sharpdp._kernels import histogram as K

    m = ShiftedLogGaussian(0.5, 0.4, 0.5)
    for n in (0, 2, 30):
        mu = math.log(n + m.c) - m.sigma**2
        p = K.rounded_pmf(mu, m.sigma, m.c, 2000, K._GL_X, K._GL_W)
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
        s = m.sigma
        z0 = (math.log(m.c / (n + m.c)) + s * s) / s  # the release is positive for Z > z0
        mean = (n + m.c) * math.exp(-s * s / 2) * stats.norm.sf(z0 - s) - m.c * stats.norm.sf(z0)
        assert np.dot(p, np.arange(p.size)) == pytest.approx(mean, rel=1e-10)


def test_bad_alpha_and_n():
    m = MECHS[0]
    with pytest.raises(ValueError, match="alpha"):
        released_renyi(m, 3, 1.0)
    with pytest.raises(ValueError, match="n"):
        released_renyi(m, 0, 2.0)
    with pytest.raises(ValueError, match="s_p"):
        gaussian_renyi(2.0, 0, 0.0, 0, 1.0)
    assert released_renyi(ShiftedLogGaussian(1.0), 3, 2.0) == 0.0
