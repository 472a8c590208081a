"""Algorithms 1-3 (C++ core) against direct dense formulas and Monte Carlo
("Privacy-Preserving Cramer-Rao Lower Bound", Sections 3.3-3.4)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import block_diag

from sharpdp.crlb import PrivateRLS, RecursivePPCRLB, RecursivePPFisher, pp_fisher_information


def _pinv(a):
    return np.linalg.pinv(a, hermitian=True)


class DenseReference:
    """Direct dense recomputation: Sbar by recursion (16), PI_k by Lemma A.2, Sigma = PI^{-1}."""

    def __init__(self, n):
        self.Sbar = np.zeros((0, 0))
        self.H = np.zeros((0, n))
        self.Sw = []

    def add(self, H, Sw, S, U):
        M, m = self.Sbar.shape[0], H.shape[0]
        U = np.zeros((M, m)) if U is None else U
        self.Sbar = np.block([[self.Sbar + U @ _pinv(S) @ U.T, U], [U.T, S]])
        self.H = np.vstack([self.H, H])
        self.Sw.append(Sw)

    def fisher(self):
        Swb = block_diag(*self.Sw)
        return self.H.T @ np.linalg.solve(np.eye(len(self.Sbar)) + self.Sbar @ Swb, self.Sbar @ self.H)


def _random_stream(seed, K, n, m, zero_every=0, singular_every=0, u_scale=0.3):
    rng = np.random.default_rng(seed)
    M = 0
    for k in range(K):
        H = rng.uniform(-1, 1, (m, n))
        A = rng.normal(size=(m, m))
        Sw = A @ A.T + 0.3 * np.eye(m)
        B = rng.normal(size=(m, max(1, m - 1)))
        S = B @ B.T + (0.0 if singular_every and k % singular_every == 0 else 0.4) * np.eye(m)
        U = None
        if M and not (zero_every and k % zero_every == 0):
            U = u_scale * rng.normal(size=(M, m)) @ S  # U = U S^+ S holds by construction
        yield H, Sw, S, U
        M += m


@pytest.mark.parametrize("m, zero_every, singular_every", [(1, 0, 0), (2, 4, 3), (1, 7, 0)])
def test_recursions_match_dense_to_1e10(m, zero_every, singular_every):
    n, K = 3, 200
    fi, cr, ref = RecursivePPFisher(n), RecursivePPCRLB(n), DenseReference(n)
    checked = 0
    for k, (H, Sw, S, U) in enumerate(_random_stream(11 + m, K, n, m, zero_every, singular_every), start=1):
        fi.update(H, Sw, S, U)
        cov = cr.update(H, Sw, S, U)
        ref.add(H, Sw, S, U)
        if k in (1, 2, 3, 5, 10, 50, 100, 150, 200):
            PI = ref.fisher()
            assert np.linalg.norm(fi.fisher - PI) <= 1e-10 * np.linalg.norm(PI)
            assert np.linalg.norm(cr.fisher - PI) <= 1e-10 * np.linalg.norm(PI)
            if cov is not None:
                Sig = np.linalg.inv(PI)
                assert np.linalg.norm(cov - Sig) <= 1e-10 * np.linalg.norm(Sig)
                checked += 1
    assert fi.k == K and fi.rows == K * m and checked >= 6


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 3), n=st.integers(1, 4), K=st.integers(1, 12),
       zero_every=st.integers(0, 3), singular_every=st.integers(0, 3), u_scale=st.floats(0.0, 2.0))
def test_recursion_property_matches_dense(seed, m, n, K, zero_every, singular_every, u_scale):
    cr, ref = RecursivePPCRLB(n), DenseReference(n)
    # Rounding in the covariance-form update of Algorithm 2 grows with the conditioning of
    # PI and with how much one step shrinks Sigma (cancellation in Sigma - Sigma G K G^T Sigma).
    worst_cond, shrink, prev = 1.0, 1.0, None
    for H, Sw, S, U in _random_stream(seed, K, n, m, zero_every, singular_every, u_scale):
        cov = cr.update(H, Sw, S, U)
        ref.add(H, Sw, S, U)
        if cov is not None:
            worst_cond = max(worst_cond, np.linalg.cond(ref.fisher()))
            if prev is not None:
                shrink = max(shrink, np.linalg.norm(prev) / np.linalg.norm(cov))
            prev = cov
    PI = ref.fisher()
    assert np.linalg.norm(cr.fisher - PI) <= 1e-9 * max(np.linalg.norm(PI), 1e-300)
    if cov is not None:
        assert np.all(np.linalg.eigvalsh(PI) > 0)
        Sig = np.linalg.inv(PI)
        assert np.linalg.norm(cov - Sig) <= 1e-12 * worst_cond * shrink * np.linalg.norm(Sig)


def test_k0_scalar_measurements_general_position():
    n = 4
    cr = RecursivePPCRLB(n)
    rng = np.random.default_rng(0)
    for k in range(1, 7):
        cov = cr.update(rng.normal(size=n), 0.5, 1.0)
        if k < n:
            assert cov is None and cr.k0 is None and cr.covariance is None
        else:
            assert cr.k0 == n and cov.shape == (n, n)


@pytest.mark.parametrize("m", [1, 2])
def test_zero_u_is_additive_remark23_and_batch_path(m):
    rng = np.random.default_rng(2)
    n, K = 3, 300
    H = rng.normal(size=(K, m, n))
    A = rng.normal(size=(K, m, m))
    Sw = A @ np.swapaxes(A, 1, 2) + 0.2 * np.eye(m)
    S = rng.uniform(0.2, 2.0, (K, 1, 1)) * np.eye(m)
    step, batch = RecursivePPCRLB(n), RecursivePPCRLB(n)
    for k in range(K):
        step.update(H[k], Sw[k], S[k])
    batch.update_many(H, Sw, S)
    additive = sum(pp_fisher_information(H[k], S[k], Sw[k]) for k in range(K))
    np.testing.assert_allclose(step.fisher, additive, rtol=1e-12)
    np.testing.assert_allclose(batch.fisher, additive, rtol=1e-12)
    np.testing.assert_allclose(batch.covariance, np.linalg.inv(additive), rtol=1e-10)
    # a non-zero U_k after a zero-U prefix switches to dense storage and stays exact
    ref = DenseReference(n)
    for k in range(K):
        ref.add(H[k], Sw[k], S[k], None)
    U = 0.2 * rng.normal(size=(K * m, m))
    Hn = rng.normal(size=(m, n))
    batch.update(Hn, np.eye(m), np.eye(m), U)
    ref.add(Hn, np.eye(m), np.eye(m), U)
    np.testing.assert_allclose(batch.covariance, np.linalg.inv(ref.fisher()), rtol=1e-10)


@pytest.mark.parametrize(
    "args, name",
    [
        ((np.ones((1, 2)), 1.0, 1.0), "H_k"),
        ((np.ones((1, 3)), 0.0, 1.0), "Sigma_w_k"),
        ((np.ones((1, 3)), -1.0, 1.0), "Sigma_w_k"),
        ((np.ones((1, 3)), 1.0, -0.5), "S_k"),
        ((np.ones((1, 3)), 1.0, math.nan), "S_k"),
        ((np.ones((2, 3)), np.eye(2), np.array([[1.0, 0.3], [0.0, 1.0]])), "S_k"),
        ((np.ones((2, 3)), np.eye(3), np.eye(2)), "Sigma_w_k"),
        ((np.full((1, 3), np.nan), 1.0, 1.0), "H_k"),
    ],
)
def test_update_bad_input(args, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        RecursivePPFisher(3).update(*args)


def test_cross_term_validation():
    fi = RecursivePPFisher(2)
    fi.update(np.eye(2), np.eye(2), np.eye(2))
    with pytest.raises(ValueError, match="^U_k must have shape"):
        fi.update(np.eye(2), np.eye(2), np.eye(2), np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"^U_k must satisfy U_k = U_k S_k\^\+ S_k"):
        fi.update(np.eye(2), np.eye(2), np.diag([1.0, 0.0]), np.ones((2, 2)))
    fi.update(np.eye(2), np.eye(2), np.diag([1.0, 0.0]), np.array([[1.0, 0.0], [2.0, 0.0]]))
    assert fi.k == 2
    with pytest.raises(ValueError, match="^n"):
        RecursivePPFisher(0)
    with pytest.raises(ValueError, match=r"^S\[1\] must be positive semidefinite"):
        RecursivePPFisher(1).update_many(np.ones((2, 1)), np.ones(2), np.array([1.0, -1.0]))


# ---------------------------------------------------------------- Algorithm 3


def _rls_problem(seed=7, K=8, n=3):
    rng = np.random.default_rng(seed)
    H = rng.uniform(-1, 1, (K, 1, n))
    S = rng.uniform(0.2, 2.0, K)
    U = [None] + [0.8 * math.sqrt(S[k]) * rng.normal(size=k) for k in range(1, K)]
    return H, S, U


def test_theorem25_fisher_of_outputs_equals_sbar():
    """Zbar = A Ybar + Dbar is linear Gaussian; recover A by linearity (same noise seed).

    The released z_k is on the grid h = 2^-12 in whitened units (docs/sampling.md §9): with the same
    seed (same rounding words and noise) z(t e_j) - z(0) = t A e_j + an error below h sqrt(S_k) per
    entry, so t = 2^24 recovers A to ~1.5e-11 relative.
    """
    H, S, U = _rls_problem()
    K, n = H.shape[0], H.shape[2]

    def outputs(Y, seed=123):
        p = PrivateRLS(n, rng=seed)
        return np.array([p.update(Y[k], H[k], 0.3, S[k], U[k])[0] for k in range(K)])

    t = 2.0**24
    z0 = outputs(np.zeros(K))
    A = np.column_stack([(outputs(t * np.eye(K)[j]) - z0) / t for j in range(K)])
    info = A.T @ np.diag(1.0 / S) @ A  # d_k ~ N(0, S_k) independent
    ref = DenseReference(n)
    for k in range(K):
        ref.add(H[k], np.eye(1), np.array([[S[k]]]), None if U[k] is None else U[k][:, None])
    np.testing.assert_allclose(info, ref.Sbar, rtol=1e-8, atol=1e-8)
    # the grid: every released z_k is sqrt(S_k) times a multiple of 2^-12
    scaled = z0 / np.sqrt(S) * 2.0**12
    np.testing.assert_allclose(scaled, np.round(scaled), rtol=0, atol=1e-6)
    # the privacy noise itself has covariance diag(S_k): Monte Carlo over seeds
    R = 3000
    Z = np.array([outputs(np.zeros(K), seed) for seed in range(R)])
    var = Z.var(axis=0)
    assert np.all(np.abs(var - S) < 5 * S * math.sqrt(2 / R))


def test_private_rls_unbiased_with_mse_equal_to_ppcrlb():
    H, S, U = _rls_problem(seed=9, K=10, n=3)
    K, n = H.shape[0], H.shape[2]
    theta = np.array([0.63, 0.81, -0.75])
    sw = 0.4
    rng = np.random.default_rng(2024)
    R = 3000
    est = np.empty((R, n))
    for r in range(R):
        p = PrivateRLS(n, rng=rng)
        for k in range(K):
            y = H[k] @ theta + sw * rng.standard_normal(1)
            p.update(y, H[k], sw**2, S[k], U[k])
        est[r] = p.estimate
    cov = p.covariance
    err = est - theta
    se = np.sqrt(np.diag(cov) / R)
    assert np.all(np.abs(err.mean(axis=0)) < 5 * se)  # unbiased
    # MSE matrix = Sigma_PPCR,K: diagonal and a fixed contrast within 5-sigma CIs
    mse = err.T @ err / R
    assert np.all(np.abs(np.diag(mse) - np.diag(cov)) < 5 * np.diag(cov) * math.sqrt(2 / R))
    v = np.array([1.0, -1.0, 0.5])
    assert abs(v @ mse @ v - v @ cov @ v) < 5 * (v @ cov @ v) * math.sqrt(2 / R)
    # and that is strictly above the classical CRLB
    assert np.trace(cov) > np.trace(np.linalg.inv(sum(H[k].T @ H[k] for k in range(K)) / sw**2))


def test_n_inferred_from_first_block():
    a, b = RecursivePPCRLB(), RecursivePPCRLB(2)
    assert a.n is None and a.k == 0 and a.fisher is None and a.covariance is None
    for k in range(3):
        H = [[1.0, float(k)]]
        np.testing.assert_array_equal(a.update(H, 0.5, 1.0), b.update(H, 0.5, 1.0))
    assert a.n == 2 and a.k0 == 2
    p = PrivateRLS(None, 7)
    p.update(1.0, [1.0, 2.0, 3.0], 1.0, 1.0)
    assert p.n == 3 and p.rows == 1


def test_private_rls_before_k0_and_reproducible():
    p = PrivateRLS(3, rng=5)
    z1 = p.update(1.0, [1.0, 0.0, 0.0], 1.0, 1.0)
    assert p.estimate is None and p.covariance is None and z1.shape == (1,)
    q = PrivateRLS(3, rng=5)
    assert q.update(1.0, [1.0, 0.0, 0.0], 1.0, 1.0)[0] == z1[0]
    with pytest.raises(ValueError, match="^y_k"):
        p.update([1.0, 2.0], [0.0, 1.0, 0.0], 1.0, 1.0)
    with pytest.raises(TypeError):
        p.update_many(np.ones((2, 3)), np.ones(2), np.ones(2))
