"""Estimators (18)-(19), (21) and Algorithm 4 ("Privacy-Preserving Cramer-Rao Lower Bound", Sections 3.4 and 4.3)."""

import itertools
import math

import numpy as np
import pytest
from scipy.linalg import block_diag

from sharpdp.crlb import (
    classical_crlb,
    distributed_identification,
    efficient_estimator,
    gaussian_mechanism,
    ml_private_estimator,
    ppcrlb,
)


def test_gaussian_mechanism_attains_ppcrlb():
    rng = np.random.default_rng(0)
    m, n, R = 6, 3, 40_000
    H = rng.uniform(-1, 1, (m, n))
    A = rng.normal(size=(m, m))
    S = A @ A.T / m + 0.1 * np.eye(m)
    Sw = 0.3 * np.eye(m) + 0.05
    mu = np.full(m, 0.7)
    theta = np.array([0.5, -1.0, 2.0])
    y = theta @ H.T + mu + rng.multivariate_normal(np.zeros(m), Sw, size=R)
    z = gaussian_mechanism(y, S, mu_w=mu, rng=1)
    est = efficient_estimator(z, H, S, Sw)
    cov = ppcrlb(H, S, Sw)
    err = est - theta
    assert np.all(np.abs(err.mean(0)) < 5 * np.sqrt(np.diag(cov) / R))
    mse = err.T @ err / R
    assert np.all(np.abs(np.diag(mse) - np.diag(cov)) < 5 * np.diag(cov) * math.sqrt(2 / R))
    # the mechanism's noise has covariance S (so I_z(y) = S)
    d = gaussian_mechanism(np.zeros((R, m)), S, rng=2)
    np.testing.assert_allclose(np.cov(d.T), S, atol=5 * np.max(np.diag(S)) * math.sqrt(2 / R))
    # single vector in -> single vector out
    assert efficient_estimator(z[0], H, S, Sw).shape == (n,)


def test_mechanism_bad_input():
    with pytest.raises(ValueError, match="^S"):
        gaussian_mechanism(np.zeros(2), -np.eye(2))
    with pytest.raises(ValueError, match="^z"):
        efficient_estimator(np.zeros(3), np.eye(2), np.eye(2), np.eye(2))
    with pytest.raises(ValueError, match="^mu_w"):
        gaussian_mechanism(np.zeros(2), np.eye(2), mu_w=np.zeros(3))


def test_ml_private_gaussian_exact_trace_and_mse():
    rng = np.random.default_rng(3)
    K, n, sig, sK = 200, 2, 0.5, 50.0
    H = rng.uniform(-1, 1, (K, n))
    theta = np.array([0.3, -0.2])
    R = 4000
    errs = np.empty((R, n))
    for r in range(R):
        res = ml_private_estimator(H @ theta + sig * rng.standard_normal(K), H, sK, rng=rng)
        errs[r] = res.estimate - theta
    assert res.fisher_trace == pytest.approx(sK, rel=1e-10)
    # (22) with c = 1 is exact for Gaussian noise: Sigma_CR + n/s_K (H^T H)^{-1}
    ref = classical_crlb(H, sig**2 * np.eye(K)) + n / sK * np.linalg.inv(H.T @ H)
    np.testing.assert_allclose(res.noise_cov, n / sK * np.linalg.inv(H.T @ H), rtol=1e-12)
    mse = errs.T @ errs / R
    assert np.all(np.abs(np.diag(mse) - np.diag(ref)) < 5 * np.diag(ref) * math.sqrt(2 / R))


def test_ml_private_laplace_is_exact_lad():
    rng = np.random.default_rng(4)
    # n = 1, mean estimation: the ML is the sample median
    y = rng.laplace(size=101)
    res = ml_private_estimator(y, np.ones((101, 1)), 101.0, noise="laplace", rng=0)
    assert res.ml_estimate[0] == np.median(y)
    # the median moves with one observation only: trace = 1 / Var(d) = s_K * K / n
    assert res.fisher_trace == pytest.approx(101.0 * 101, rel=1e-12)
    # n = 2: LAD optimum equals the best basic solution (brute force over row pairs)
    K = 9
    H = rng.normal(size=(K, 2))
    y = H @ [1.0, -2.0] + rng.laplace(size=K)
    got = ml_private_estimator(y, H, 5.0, noise="laplace", rng=0).ml_estimate
    best = min(
        (np.sum(np.abs(y - H @ np.linalg.solve(H[list(b)], y[list(b)]))) for b in itertools.combinations(range(K), 2))
    )
    assert np.sum(np.abs(y - H @ got)) == pytest.approx(best, rel=1e-9)


def test_ml_private_bad_input():
    H = np.ones((5, 1))
    with pytest.raises(ValueError, match="^s_K"):
        ml_private_estimator(np.zeros(5), H, 0.0)
    with pytest.raises(ValueError, match="^noise"):
        ml_private_estimator(np.zeros(5), H, 1.0, noise="cauchy")
    with pytest.raises(ValueError, match="^y"):
        ml_private_estimator(np.zeros(4), H, 1.0)


def _ring_weights(N):
    A = np.zeros((N, N))
    for i in range(N):
        A[i, (i + 1) % N] = A[(i + 1) % N, i] = 1 / 3
    return A + np.diag(1 - A.sum(axis=1))


def test_algorithm4_converges_to_centralized_efficient_estimate():
    rng = np.random.default_rng(5)
    N, n = 6, 2
    H = [rng.normal(size=(1, n)) for _ in range(N)]
    Sw = [np.array([[0.2 + 0.1 * i]]) for i in range(N)]
    S = [np.array([[rng.uniform(0.5, 2.0)]]) for _ in range(N)]
    theta = np.array([1.0, -0.5])
    y = [H[i] @ theta + math.sqrt(Sw[i][0, 0]) * rng.standard_normal(1) for i in range(N)]
    res = distributed_identification(y, H, Sw, S, _ring_weights(N), iterations=400, rng=6)
    assert np.all(np.isnan(res.estimates[0]))  # scalar data: no node can estimate theta alone
    np.testing.assert_allclose(res.estimates[-1], np.tile(res.centralized, (N, 1)), rtol=1e-9)
    # (33) written out independently
    W = [H[i].T @ np.linalg.inv(S[i] @ Sw[i] + 1) for i in range(N)]
    cov = np.linalg.inv(sum(W[i] @ S[i] @ H[i] for i in range(N)))
    np.testing.assert_allclose(res.covariance, cov, rtol=1e-12)
    np.testing.assert_allclose(res.centralized, cov @ sum(W[i] @ res.outputs[i] for i in range(N)), rtol=1e-12)
    # Sigma'_PPCR is the privacy-preserving CRLB of the stacked system
    np.testing.assert_allclose(cov, ppcrlb(np.vstack(H), block_diag(*S), block_diag(*Sw)), rtol=1e-10)


def test_algorithm4_monte_carlo_efficiency():
    rng = np.random.default_rng(8)
    N, n, R = 4, 2, 1500
    H = [rng.normal(size=(2, n)) for _ in range(N)]
    Sw = [0.5 * np.eye(2)] * N
    S = [np.eye(2) * (1 + i) for i in range(N)]
    theta = np.array([0.2, 0.9])
    errs = np.empty((R, n))
    for r in range(R):
        y = [H[i] @ theta + math.sqrt(0.5) * rng.standard_normal(2) for i in range(N)]
        res = distributed_identification(y, H, Sw, S, _ring_weights(N), iterations=0, rng=rng)
        errs[r] = res.centralized - theta
    cov = res.covariance
    assert np.all(np.abs(errs.mean(0)) < 5 * np.sqrt(np.diag(cov) / R))
    mse = errs.T @ errs / R
    assert np.all(np.abs(np.diag(mse) - np.diag(cov)) < 5 * np.diag(cov) * math.sqrt(2 / R))


def test_algorithm4_bad_graph():
    H, Sw, S, y = [np.eye(1)] * 3, [np.eye(1)] * 3, [np.eye(1)] * 3, [np.zeros(1)] * 3
    disconnected = np.diag([1.0, 0.5, 0.5])
    disconnected[1, 2] = disconnected[2, 1] = 0.5
    with pytest.raises(ValueError, match="connected"):
        distributed_identification(y, H, Sw, S, disconnected)
    with pytest.raises(ValueError, match="^weights"):
        distributed_identification(y, H, Sw, S, np.full((3, 3), 0.5))
    with pytest.raises(ValueError, match="^weights"):
        distributed_identification(y, H, Sw, S, np.eye(2))
    with pytest.raises(ValueError, match=r"^S\[1\]"):
        distributed_identification(y, H, Sw, [np.eye(1), -np.eye(1), np.eye(1)], np.full((3, 3), 1 / 3))
