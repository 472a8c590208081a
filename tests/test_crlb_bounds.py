"""Closed-form bounds of sharpdp.crlb against independent references ("Privacy-Preserving Cramer-Rao Lower Bound")."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.crlb import (
    bayesian_ppcrlb,
    classical_crlb,
    consensus_lower_bound,
    crlb_gap_lower_bound,
    dp_lower_bound,
    is_identifiable,
    pp_fisher_information,
    ppcrlb,
)


def _rand_psd(rng, m, shift=0.1):
    A = rng.normal(size=(m, m))
    return A @ A.T + shift * np.eye(m)


def _psd_diff_ok(A, B, tol=1e-9):
    """A - B is PSD up to a relative tolerance."""
    ev = np.linalg.eigvalsh(0.5 * ((A - B) + (A - B).T))
    return ev[0] >= -tol * max(np.abs(A).max(), np.abs(B).max())


def test_isotropic_closed_form_and_cor18_equality():
    rng = np.random.default_rng(0)
    H = rng.uniform(-1, 1, (10, 5))
    for s in (0.1, 1.0, 10.0):
        S, Sw = s * np.eye(10), 0.04 * np.eye(10)
        ref = (0.04 + 1 / s) * np.linalg.inv(H.T @ H)
        np.testing.assert_allclose(ppcrlb(H, S, Sw), ref, rtol=1e-10)
        # docs/papers.md §3.2 item 1: Corollary 18 holds with equality in the isotropic case
        np.testing.assert_allclose(crlb_gap_lower_bound(H, S, Sw), ref, rtol=1e-10)
        np.testing.assert_allclose(pp_fisher_information(H, S, Sw), np.linalg.inv(ref), rtol=1e-10)


def test_lemma_a2_form_and_classical_limit():
    rng = np.random.default_rng(1)
    H = rng.normal(size=(6, 3))
    S, Sw = _rand_psd(rng, 6), _rand_psd(rng, 6)
    alt = np.linalg.inv(H.T @ np.linalg.solve(np.eye(6) + S @ Sw, S @ H))
    np.testing.assert_allclose(ppcrlb(H, S, Sw), alt, rtol=1e-10)
    # S -> infinity removes the privacy constraint: the classical CRLB
    np.testing.assert_allclose(ppcrlb(H, 1e9 * np.eye(6), Sw), classical_crlb(H, Sw), rtol=1e-7)
    np.testing.assert_allclose(classical_crlb(H, Sw), np.linalg.inv(H.T @ np.linalg.inv(Sw) @ H), rtol=1e-10)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(2, 6), scale=st.floats(0.05, 20.0))
def test_bound_ordering_property(seed, m, scale):
    rng = np.random.default_rng(seed)
    n = rng.integers(1, m + 1)
    H = rng.normal(size=(m, n))
    S1, Sw = scale * _rand_psd(rng, m), _rand_psd(rng, m)
    S2 = S1 + _rand_psd(rng, m, 0.0)  # S2 >= S1: weaker privacy
    P1, P2 = ppcrlb(H, S1, Sw), ppcrlb(H, S2, Sw)
    assert _psd_diff_ok(P1, P2)  # monotone in the privacy level
    assert _psd_diff_ok(P2, classical_crlb(H, Sw))  # never below the classical CRLB
    assert _psd_diff_ok(P1, crlb_gap_lower_bound(H, S1, Sw))  # Corollary 18


def test_singular_noise_covariance_limit():
    rng = np.random.default_rng(7)
    H = rng.normal(size=(4, 2))
    S = _rand_psd(rng, 4)
    # noise-free measurements: the bound is the pure privacy cost (H^T S H)^{-1}
    np.testing.assert_allclose(ppcrlb(H, S, np.zeros((4, 4))), np.linalg.inv(H.T @ S @ H), rtol=1e-10)
    Sw = np.diag([1.0, 0.5, 0.0, 0.0])
    np.testing.assert_allclose(ppcrlb(H, S, Sw), ppcrlb(H, S, Sw + 1e-9 * np.eye(4)), rtol=1e-7)
    # quantities that need Sigma_w^{-1} refuse a singular one
    with pytest.raises(ValueError, match="^Sigma_w must be positive definite"):
        crlb_gap_lower_bound(H, S, Sw)
    with pytest.raises(ValueError, match="^Sigma_w must be positive definite"):
        classical_crlb(H, Sw)


def test_cor18_strict_for_correlated_noise():
    H = np.array([[1.0], [1.0]])
    S = np.diag([1.0, 3.0])
    Sw = np.array([[1.0, 0.6], [0.6, 2.0]])
    gap = ppcrlb(H, S, Sw) - crlb_gap_lower_bound(H, S, Sw)
    assert gap[0, 0] > 1e-3


def test_singular_S_identifiable_remark13():
    # third row is the sum of the first two; its component gets no privacy budget at all
    H = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    S = np.diag([2.0, 3.0, 0.0])
    Sw = 0.5 * np.eye(3)
    assert is_identifiable(H, S)
    got = ppcrlb(H, S, Sw)
    # the proof's S_eps = (S^{1/2} + eps I)^2 -> S limit
    for eps in (1e-4, 1e-6):
        Se = (np.sqrt(S) + eps * np.eye(3)) ** 2
        np.testing.assert_allclose(ppcrlb(H, Se, Sw), got, rtol=10 * eps, atol=10 * eps)
    # only rows 1, 2 carry information: diag((0.5 + 1/2), (0.5 + 1/3))
    np.testing.assert_allclose(got, np.diag([1.0, 0.5 + 1 / 3]), rtol=1e-12)


def test_not_identifiable_raises():
    H = np.array([[1.0, 0.0], [0.0, 1.0]])
    S = np.diag([1.0, 0.0])
    assert not is_identifiable(H, S)
    with pytest.raises(ValueError, match="Theorem 12"):
        ppcrlb(H, S, np.eye(2))
    with pytest.raises(ValueError, match="Theorem 12"):
        crlb_gap_lower_bound(H, S, np.eye(2))
    assert np.linalg.matrix_rank(pp_fisher_information(H, S, np.eye(2))) == 1
    # rank-deficient H: not identifiable even without privacy
    Hd = np.array([[1.0, 2.0], [2.0, 4.0], [0.5, 1.0]])
    assert not is_identifiable(Hd, np.eye(3))
    with pytest.raises(ValueError, match="Theorem 12"):
        ppcrlb(Hd, np.eye(3), np.eye(3))
    with pytest.raises(ValueError, match="full column rank"):
        classical_crlb(Hd, np.eye(3))


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(H=np.ones((3, 2)), S=np.eye(2), Sigma_w=np.eye(3)), "S"),
        (dict(H=np.ones((3, 2)), S=np.eye(3), Sigma_w=np.eye(2)), "Sigma_w"),
        (dict(H=[[1.0, np.nan]], S=np.eye(1), Sigma_w=np.eye(1)), "H"),
        (dict(H=np.eye(2), S=np.array([[1.0, 0.5], [0.0, 1.0]]), Sigma_w=np.eye(2)), "S"),
        (dict(H=np.eye(2), S=np.diag([1.0, -0.5]), Sigma_w=np.eye(2)), "S"),
        (dict(H=np.eye(2), S=np.eye(2), Sigma_w=np.diag([1.0, -1.0])), "Sigma_w"),
        (dict(H=np.eye(2), S=np.eye(2), Sigma_w=[[1.0, np.inf], [np.inf, 1.0]]), "Sigma_w"),
    ],
)
def test_bad_input_names_parameter(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        ppcrlb(**kwargs)


def test_dp_lower_bound_mean_estimation_and_attainer():
    K, eps, sig2 = 50, 0.7, 2.0
    H_list = [np.ones((1, 1))] * K
    got = dp_lower_bound(H_list, [[sig2 / K]], eps)
    assert got[0, 0] == pytest.approx(sig2 / K + 1 / (K**2 * eps**2), rel=1e-12)
    # accepted layouts: list, (K, m, n), (K, n)
    np.testing.assert_allclose(dp_lower_bound(np.ones((K, 1, 1)), [[sig2 / K]], eps), got)
    np.testing.assert_allclose(dp_lower_bound(np.ones((K, 1)), [[sig2 / K]], eps), got)
    # Gaussian output perturbation z = mean(y) + N(0, tau^2) with Fisher trace K eps^2
    # attains it: trace I_z(Y) = K * (1/K)^2 / tau^2 = K eps^2  <=>  tau^2 = 1/(K eps)^2
    tau2 = 1 / (K * eps) ** 2
    assert K * (1 / K) ** 2 / tau2 == pytest.approx(K * eps**2)
    assert sig2 / K + tau2 == pytest.approx(got[0, 0])
    # the eps-DP Laplace output perturbation (scale 1/(K eps)) pays twice the privacy term
    assert sig2 / K + 2 * (1 / (K * eps)) ** 2 - got[0, 0] == pytest.approx(tau2)


def test_dp_bound_below_isotropic_ppcrlb():
    rng = np.random.default_rng(3)
    K, n, eps, sig = 30, 3, 0.5, 0.3
    H = rng.uniform(-1, 1, (K, n))
    Scr = classical_crlb(H, sig**2 * np.eye(K))
    dp = dp_lower_bound(H, Scr, eps)
    # S = eps^2 I has trace K eps^2: the trace relaxation can only lower the bound
    assert _psd_diff_ok(ppcrlb(H, eps**2 * np.eye(K), sig**2 * np.eye(K)), dp)


@pytest.mark.parametrize("eps", [0.0, -1.0, math.nan, math.inf])
def test_dp_bad_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon"):
        dp_lower_bound([np.ones((1, 1))], [[1.0]], eps)


def test_dp_bad_h_list():
    with pytest.raises(ValueError, match="H_list"):
        dp_lower_bound([np.ones((1, 2)), np.ones((1, 3))], np.eye(2), 1.0)
    with pytest.raises(ValueError, match="invertible"):
        dp_lower_bound([np.ones((1, 2))], np.eye(2), 1.0)
    with pytest.raises(ValueError, match="Sigma_cr"):
        dp_lower_bound([np.eye(2)], -np.eye(2), 1.0)


def test_bayesian_scalar_closed_form_and_flat_prior_limit():
    h, s, sig2, p = 1.5, 2.0, 0.3, 0.8
    JY = 1 / (h * h * p + sig2)
    se = s - JY
    ref = 1 / (h * h * se / (se * sig2 + 1) + 1 / p)
    assert bayesian_ppcrlb([[h]], [[s]], [[sig2]], [[p]])[0, 0] == pytest.approx(ref, rel=1e-12)
    rng = np.random.default_rng(4)
    # square invertible H: a flat prior carries no information about Y either (J_Y -> 0)
    H = rng.normal(size=(2, 2))
    S, Sw = _rand_psd(rng, 2), _rand_psd(rng, 2)
    np.testing.assert_allclose(bayesian_ppcrlb(H, S, Sw, 1e9 * np.eye(2)), ppcrlb(H, S, Sw), rtol=1e-6)
    with pytest.raises(ValueError, match="^S must dominate"):
        bayesian_ppcrlb([[1.0]], [[0.01]], [[1.0]], [[1.0]])
    with pytest.raises(ValueError, match="prior_cov"):
        bayesian_ppcrlb(H, S, Sw, np.zeros((2, 2)))


def test_consensus_bound():
    S = np.array([0.5, 1.0, 2.0, 4.0])
    N = S.size
    assert consensus_lower_bound(S) == pytest.approx(np.sum(1 / S) / N**2, rel=1e-14)
    # finite sigma_w: the proof's expression 1/sum(S/(S s^2+1)) - s^2/N (1/N factors restored)
    for sig in (0.3, 1.0, 5.0):
        ref = 1 / np.sum(S / (S * sig**2 + 1)) - sig**2 / N
        assert consensus_lower_bound(S, sig) == pytest.approx(ref, rel=1e-9)
    assert consensus_lower_bound(S, 1e5) == pytest.approx(consensus_lower_bound(S), rel=1e-8)
    # attained by z_i = S_i y_i + N(0, S_i), ybar = mean(z_i / S_i): Monte Carlo
    rng = np.random.default_rng(5)
    R = 200_000
    err = np.mean(rng.standard_normal((R, N)) / np.sqrt(S), axis=1)
    var = np.mean(err**2)
    bound = consensus_lower_bound(S)
    assert abs(var - bound) < 5 * bound * math.sqrt(2 / R)
    for bad in ([1.0, 0.0], [1.0, -1.0], [np.nan]):
        with pytest.raises(ValueError, match="^S"):
            consensus_lower_bound(bad)
    with pytest.raises(ValueError, match="sigma_w"):
        consensus_lower_bound(S, 0.0)
