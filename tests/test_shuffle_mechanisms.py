"""BMG / Gaussian local randomizers: C++ sampler moments, reproducibility, estimator, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from sharpdp import _core
from sharpdp._rng import core_key
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer

Z5 = 5.0  # confidence-interval width in standard errors


def _unit_rows(n, d, rng, radius=1.0):
    x = rng.standard_normal((n, d))
    return radius * x / np.linalg.norm(x, axis=1, keepdims=True)


# ---------------------------------------------------------------- ziggurat normals
def test_ziggurat_normals_match_standard_normal():
    z = _core.samplers.standard_normals(2_000_000, core_key(20240601), 2)
    n = z.size
    assert abs(z.mean()) < Z5 / math.sqrt(n)
    assert abs(z.var() - 1.0) < Z5 * math.sqrt(2.0 / n)
    assert abs(np.mean(z**4) - 3.0) < Z5 * math.sqrt(96.0 / n)
    assert stats.kstest(z, "norm").pvalue > 1e-4
    # tail mass beyond the ziggurat's base strip r = 3.654... and deep in the tail
    for t in (1.0, 2.5, 3.6541528853610088, 4.5):
        p = 2 * stats.norm.sf(t)
        assert abs(np.mean(np.abs(z) > t) - p) < Z5 * math.sqrt(p * (1 - p) / n)
    # every bin of a fine histogram matches its normal probability
    edges = np.linspace(-4, 4, 81)
    counts, _ = np.histogram(z, edges)
    p = np.diff(stats.norm.cdf(edges))
    assert np.all(np.abs(counts - n * p) < Z5 * np.sqrt(n * p * (1 - p)) + 1)


# ---------------------------------------------------------------- sampler moments
@pytest.mark.parametrize("gamma,sigma0,d", [(0.7, 0.8, 3), (0.0, 1.5, 2), (0.95, 4.6, 1)])
def test_bmg_sample_mean_and_covariance(gamma, sigma0, d):
    rng = np.random.default_rng(7)
    x0 = _unit_rows(1, d, rng, radius=1.0 if d != 2 else 0.6)[0]
    n = 300_000
    y = BlanketMixedGaussian(gamma, sigma0, d).sample(np.tile(x0, (n, 1)), rng=11)
    mu = (1 - gamma) * x0
    cov = sigma0**2 * np.eye(d) + gamma * (1 - gamma) * np.outer(x0, x0)
    assert np.all(np.abs(y.mean(axis=0) - mu) < Z5 * np.sqrt(np.diag(cov) / n))
    c = y - mu
    prods = c[:, :, None] * c[:, None, :]  # unbiased for cov since mu is the true mean
    se = prods.std(axis=0) / math.sqrt(n)
    assert np.all(np.abs(prods.mean(axis=0) - cov) < Z5 * se)


def test_blanket_fraction_is_gamma():
    # sigma0 tiny: a message is either ~0 (blanket) or ~x (informative)
    gamma, n = 0.3, 200_000
    y = BlanketMixedGaussian(gamma, 1e-6, 1).sample(np.ones((n, 1)), rng=3)
    frac = np.mean(np.abs(y[:, 0]) < 0.5)
    assert abs(frac - gamma) < Z5 * math.sqrt(gamma * (1 - gamma) / n)


# ---------------------------------------------------------------- estimator
def test_estimator_unbiased_and_mse_single():
    gamma, sigma0, d, n = 0.8, 0.9, 4, 400_000
    rng = np.random.default_rng(5)
    x = _unit_rows(n, d, rng)  # |x| = 1: the worst case of Err_1
    bmg = BlanketMixedGaussian(gamma, sigma0, d)
    y = bmg.sample(x, rng=rng)
    est = bmg.estimate(y)
    assert est.shape == (d,)
    var_j = (sigma0**2 / (1 - gamma) ** 2 + gamma / (1 - gamma) * np.mean(x**2, axis=0)) / n
    assert np.all(np.abs(est - x.mean(axis=0)) < Z5 * np.sqrt(var_j))
    # per-user squared error has mean Err_1 = d s^2/(1-g)^2 + g/(1-g) at |x| = 1
    sq = np.sum((y / (1 - gamma) - x) ** 2, axis=1)
    assert abs(sq.mean() - bmg.mse_single) < Z5 * sq.std() / math.sqrt(n)
    assert bmg.mse_single == pytest.approx(d * sigma0**2 / (1 - gamma) ** 2 + gamma / (1 - gamma), rel=1e-15)


def test_estimator_mean_over_repetitions():
    # small n, many repetitions: the average estimate converges to the true mean
    bmg = BlanketMixedGaussian(0.5, 0.5, 2)
    x = np.array([[1.0, 0.0], [0.0, -1.0], [0.6, 0.8]])
    rng = np.random.default_rng(9)
    ests = np.array([bmg.estimate(bmg.sample(x, rng=rng)) for _ in range(4000)])
    se = ests.std(axis=0) / math.sqrt(len(ests))
    assert np.all(np.abs(ests.mean(axis=0) - x.mean(axis=0)) < Z5 * se)


def test_gaussian_randomizer_is_gamma_zero():
    g = GaussianRandomizer(1.3, 2)
    assert g.gamma == 0.0 and g.chi_lo == 0.0
    assert g.mse_single == pytest.approx(2 * 1.3**2)
    x = np.array([[0.5, 0.5]] * 5)
    assert np.array_equal(g.sample(x, rng=4), BlanketMixedGaussian(0.0, 1.3, 2).sample(x, rng=4))
    # dim >= 2: the release sampler scales the inputs by grid_scale < 1, the estimator divides it back
    assert g.grid_scale == pytest.approx(1 - 2.0**-g.grid_bits * math.sqrt(2), rel=1e-9)
    assert np.allclose(g.estimate(np.array([[1.0, 2.0], [3.0, 4.0]])), np.array([2.0, 3.0]) / g.grid_scale)


# ---------------------------------------------------------------- chi_lo vs its definition
@pytest.mark.parametrize("gamma,sigma0", [(0.95, 4.6), (0.5, 1.0), (0.2, 0.7)])
def test_chi_lo_matches_variance_definition(gamma, sigma0):
    # chi_lo = 1/sqrt(Var_{Y~N(0,s^2)}[l_0(Y; x, bot)] / gamma), |x| = 1, by quadrature
    # ("Shuffling-Aware Optimization for Private Vector Mean Estimation", Section 4.2)
    def l0(y):
        return (1 - gamma) * (math.exp(y / sigma0**2 - 0.5 / sigma0**2) - 1)

    pdf = stats.norm(scale=sigma0).pdf
    m2, _ = integrate.quad(lambda y: l0(y) ** 2 * pdf(y), -40 * sigma0, 40 * sigma0, limit=400)
    m1, _ = integrate.quad(lambda y: l0(y) * pdf(y), -40 * sigma0, 40 * sigma0, limit=400)
    assert abs(m1) < 1e-10
    assert BlanketMixedGaussian(gamma, sigma0, 3).chi_lo == pytest.approx(1 / math.sqrt((m2 - m1**2) / gamma), rel=1e-8)


# ---------------------------------------------------------------- reproducibility
def test_reproducible_and_thread_independent():
    rng = np.random.default_rng(1)
    n = 3 * _core.samplers.BLOCK_ROWS + 17  # several blocks plus a ragged one
    x = _unit_rows(n, 5, rng, radius=0.9)
    bmg = BlanketMixedGaussian(0.6, 1.1, 5)
    a = bmg.sample(x, rng=123, threads=1)
    assert a.shape == (n, 5) and a.dtype == np.float64
    for t in (2, 3, 8):
        assert np.array_equal(a, bmg.sample(x, rng=123, threads=t))
    assert np.array_equal(a, bmg.sample(x, rng=np.random.default_rng(123)))
    assert not np.array_equal(a, bmg.sample(x, rng=124))
    assert not np.array_equal(bmg.sample(x), bmg.sample(x))  # rng=None: fresh entropy
    # integer-valued and non-contiguous inputs are accepted and converted
    assert np.array_equal(bmg.sample(np.asfortranarray(x), rng=123, threads=1), a)
    one = BlanketMixedGaussian(0.6, 1.1, 1).sample([[0]], rng=5)
    assert one.shape == (1, 1) and np.isfinite(one).all()


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs,name", [
    (dict(gamma=-0.1, sigma0=1.0, dim=1), "gamma"),
    (dict(gamma=1.0, sigma0=1.0, dim=1), "gamma"),
    (dict(gamma=float("nan"), sigma0=1.0, dim=1), "gamma"),
    (dict(gamma=0.5, sigma0=0.0, dim=1), "sigma0"),
    (dict(gamma=0.5, sigma0=-1.0, dim=1), "sigma0"),
    (dict(gamma=0.5, sigma0=float("inf"), dim=1), "sigma0"),
    (dict(gamma=0.5, sigma0=float("nan"), dim=1), "sigma0"),
    (dict(gamma=0.5, sigma0=1.0, dim=0), "dim"),
    (dict(gamma=0.5, sigma0=1.0, dim=1.5), "dim"),
])
def test_bad_parameters_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        BlanketMixedGaussian(**kwargs)


def test_bad_gaussian_parameters():
    with pytest.raises(ValueError, match="sigma0"):
        GaussianRandomizer(0.0, 2)
    with pytest.raises(ValueError, match="dim"):
        GaussianRandomizer(1.0, 0)


@pytest.mark.parametrize("x,msg", [
    (np.zeros((0, 2)), "x must not be empty"),
    (np.zeros(2), "x must have shape"),
    (np.zeros((3, 3)), "x must have shape"),
    (np.zeros((2, 2, 1)), "x must have shape"),
    (np.array([[0.1, np.nan]]), "x must contain only finite"),
    (np.array([[0.1, np.inf]]), "x must contain only finite"),
    (np.array([[0.8, 0.7]]), "x: every row must lie in the unit L2 ball, row 0"),
    (np.array([[0.0, 0.0], [0.0, 1.0 + 1e-9]]), "row 1"),
    ([["a", "b"]], "x must be an array of real numbers"),
])
def test_bad_x(x, msg):
    bmg = BlanketMixedGaussian(0.5, 1.0, 2)
    with pytest.raises((ValueError, TypeError), match=msg):
        bmg.sample(x, rng=0)


def test_rows_on_the_sphere_accepted():
    x = _unit_rows(50, 3, np.random.default_rng(2))
    assert np.isfinite(BlanketMixedGaussian(0.5, 1.0, 3).sample(x, rng=0)).all()


def test_bad_threads_messages_and_rng():
    bmg = BlanketMixedGaussian(0.5, 1.0, 2)
    with pytest.raises(ValueError, match="threads"):
        bmg.sample(np.zeros((2, 2)), rng=0, threads=0)  # threads: None (all cores) or >= 1
    with pytest.raises(ValueError, match="rng"):
        bmg.sample(np.zeros((2, 2)), rng=-1)
    with pytest.raises(ValueError, match="messages"):
        bmg.estimate(np.zeros((3, 1)))
    with pytest.raises(ValueError, match="messages"):
        bmg.estimate(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="messages"):
        bmg.estimate(np.array([[np.nan, 0.0]]))


# sigma0 from a fixed set spanning the former range [1e-3, 50]: the noise table of each (sigma0, grid) is built
# with mpmath (~1 ms per entry, up to 13.2 * 2^14 entries for dim >= 2) and cached, so a continuous sigma0 spent
# ~95 % of this test rebuilding tables. The set keeps both ends (50: the largest table, s = 12800 for dim >= 2;
# 1e-3: the finest grid, 2^-18) and the middle (1.0: s = 512 / 1024 by dim).
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9000), st.integers(1, 6), st.floats(0.0, 0.99), st.sampled_from([1e-3, 0.02, 0.3, 1.0, 50.0]),
       st.integers(0, 2**63 - 1))
def test_sampler_properties(n, d, gamma, sigma0, seed):
    x = _unit_rows(n, d, np.random.default_rng(seed % 1000), radius=0.7)
    bmg = BlanketMixedGaussian(gamma, sigma0, d)
    a = bmg.sample(x, rng=seed, threads=1)
    assert a.shape == (n, d) and np.isfinite(a).all()
    assert np.array_equal(a, bmg.sample(x, rng=seed, threads=3))
    # each message is sigma0 * Z + (0 or x): its residual is the same noise either way
    z_blank, z_info = a / sigma0, (a - x) / sigma0
    assert np.all(np.minimum(np.abs(z_blank).max(axis=1), np.abs(z_info).max(axis=1)) < 12.0)
