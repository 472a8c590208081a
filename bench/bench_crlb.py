"""Benchmarks for sharpdp.crlb: Algorithms 1-3 (C++ core) vs direct dense recomputation with numpy.

Run: ``python -m pytest bench/bench_crlb.py --benchmark-only --benchmark-group-by=group``

Streaming setting of Section 5.2: scalar measurements (m = 1), n = 5,
``S_k ~ U[0.2, 2]``, ``U_k = 0.1 sqrt(S_k) xi_k`` (general U_k, O(k^2) per step).
Each group times, at step K, one streaming update of the recursion (through the
public Python class) against recomputing the same quantity from scratch with
dense numpy linear algebra (O(K^3)), which is what a stream without the
recursion would have to do at every step. A further group times the
``U_k = 0`` path (Remark 23) in steps per second.
"""

import math

import numpy as np
import pytest

from sharpdp.crlb import PrivateRLS, RecursivePPCRLB, RecursivePPFisher

N_THETA = 5
SIGMA2 = 0.04


class Stream:
    """A stream of K steps with its dense reference quantities at step K."""

    def __init__(self, K, seed=0):
        rng = np.random.default_rng(seed)
        self.K = K
        self.H = rng.uniform(-1, 1, (K + 64, N_THETA))
        self.S = rng.uniform(0.2, 2.0, K + 64)
        self.xi = rng.standard_normal(K + 64)
        self.y = self.H @ np.array([0.63, 0.81, -0.75, 0.83, 0.26]) + math.sqrt(SIGMA2) * rng.standard_normal(K + 64)
        # dense Sbar_K by recursion (16) (built once, not timed)
        Sbar = np.zeros((K, K))
        for k in range(K):
            u = self.U(k)
            if u is not None:
                Sbar[:k, :k] += np.outer(u[:, 0], u[:, 0]) / self.S[k]
                Sbar[:k, k] = Sbar[k, :k] = u[:, 0]
            Sbar[k, k] = self.S[k]
        self.Sbar = Sbar

    def U(self, k):
        return None if k == 0 else 0.1 * math.sqrt(self.S[k]) * self.xi[:k, None]


_STREAMS = {}


def stream(K):
    if K not in _STREAMS:
        _STREAMS[K] = Stream(K)
    return _STREAMS[K]


def _advance(obj, st, upto, rls=False):
    for k in range(obj.k, upto):
        if rls:
            obj.update(st.y[k], st.H[k], SIGMA2, st.S[k], st.U(k))
        else:
            obj.update(st.H[k], SIGMA2, st.S[k], st.U(k))


def _dense_fisher(st):
    Hb = st.H[: st.K]
    return Hb.T @ np.linalg.solve(np.eye(st.K) + SIGMA2 * st.Sbar, st.Sbar @ Hb)


@pytest.mark.parametrize("K", [500, 2000])
@pytest.mark.parametrize("alg", ["alg1_fisher", "alg2_crlb", "alg3_private_rls"])
def test_recursive_step(benchmark, alg, K):
    st = stream(K + 64)
    cls = {"alg1_fisher": RecursivePPFisher, "alg2_crlb": RecursivePPCRLB}.get(alg)
    obj = PrivateRLS(N_THETA, rng=1) if cls is None else cls(N_THETA)
    rls = cls is None
    _advance(obj, st, K - 1, rls)
    benchmark.group = f"crlb {alg} K={K}"
    benchmark.extra_info.update(K=K, kind="recursive step (sharpdp C++)")

    def step():
        k = obj.k
        if rls:
            obj.update(st.y[k], st.H[k], SIGMA2, st.S[k], st.U(k))
        else:
            obj.update(st.H[k], SIGMA2, st.S[k], st.U(k))

    benchmark.pedantic(step, rounds=30, iterations=1)


@pytest.mark.parametrize("K", [500, 2000])
@pytest.mark.parametrize("alg", ["alg1_fisher", "alg2_crlb", "alg3_private_rls"])
def test_dense_recompute(benchmark, alg, K):
    st = Stream(K)
    benchmark.group = f"crlb {alg} K={K}"
    benchmark.extra_info.update(K=K, kind="dense recomputation (numpy)")
    zeta = st.Sbar @ st.y[:K] + np.linalg.cholesky(st.Sbar + 1e-12 * np.eye(K)) @ np.ones(K)

    def fisher():
        return _dense_fisher(st)

    def crlb():
        return np.linalg.inv(_dense_fisher(st))

    def estimate():
        # theta_K = Sigma_K Hbar^T B_K zeta_K with B_K = (I + Sbar Sigmabar_w)^{-1}
        Hb = st.H[:K]
        Bz = np.linalg.solve(np.eye(K) + SIGMA2 * st.Sbar, zeta)
        return np.linalg.inv(_dense_fisher(st)) @ (Hb.T @ Bz)

    fn = {"alg1_fisher": fisher, "alg2_crlb": crlb, "alg3_private_rls": estimate}[alg]
    benchmark.pedantic(fn, rounds=5 if K > 1000 else 20, iterations=1)


def _zero_u_inputs(K, seed=3):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (K, 1, N_THETA)), np.full((K, 1, 1), SIGMA2), rng.uniform(0.2, 2.0, (K, 1, 1))


def test_zero_u_path(benchmark):
    K = 1_000_000
    H, Sw, S = _zero_u_inputs(K)
    benchmark.group = "crlb U_k = 0 path, 1e6 steps"
    benchmark.extra_info.update(steps=K, kind="RecursivePPCRLB.update_many (C++)")

    def run():
        RecursivePPCRLB(N_THETA).update_many(H, Sw, S)

    benchmark.pedantic(run, rounds=3, iterations=1)


def test_zero_u_numpy_baseline(benchmark):
    K = 1_000_000
    H, Sw, S = _zero_u_inputs(K)
    benchmark.group = "crlb U_k = 0 path, 1e6 steps"
    benchmark.extra_info.update(steps=K, kind="numpy vectorised sum of per-step PI (final value only)")

    def run():
        lam = S / (1.0 + Sw * S)  # Lambda_k for m = 1
        PI = np.einsum("ki,k,kj->ij", H[:, 0, :], lam[:, 0, 0], H[:, 0, :])
        return np.linalg.inv(PI)

    benchmark.pedantic(run, rounds=3, iterations=1)
