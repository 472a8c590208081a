"""Review rev48 (session 48): attack on Lemma 72.1 (docs/accountant_tail.md §72.2; ``_core.accountant.dft_low``,
cpp/kernels/dft_taylor.hpp), on since session 47's merge (``limits.DFT47_TAYLOR_PRUNED``), at the limits rev47's test
(tests/test_review_rev47_dft47.py, N <= 20,000) did not reach: N up to 2^30 + 20 (the last block partial with its
centre beyond N, so the twiddle's index is reduced mod N), frequencies at K and next to it, K at the kernel's own
limit alpha ~ 5.4 at N = 2^21 + 20, sparse vectors with all their mass in one node of the last block, the first and
last node (t = -1 and the partial block), denormals (5e-324) beside O(1) values, dynamic range 1e-300 .. 1, and
alternating signs. Claim: |z~_k - z_k| <= e for every k <= K, z_k = sum_x y_x e^{-2 pi i k x / N} of the stored
doubles. Reference: direct sums over the non-zero nodes in mpmath at 40 digits (the index k x reduced mod N exactly).
The vectors are sparse: ``np.zeros`` of 2^30 doubles is read through the zero page (no 8 GB resident)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from sharpdp import _core


def _exact(N: int, nz: np.ndarray, vals: np.ndarray, ks) -> list:
    with mp.workdps(40):
        v = [mp.mpf(float(x)) for x in vals]
        return [mp.fsum(a * mp.expjpi(mp.mpf(-2 * ((int(k) * int(i)) % N)) / N) for a, i in zip(v, nz)) for k in ks]


def _sparse(kind: str, N: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(nodes, values): a sparse vector of length N."""
    rng = np.random.default_rng(seed)
    last0 = (N // 64) * 64 if N % 64 else N - 64  # first node of the last block
    if kind == "last_node":  # all mass in one node of the partial last block (its centre >= N)
        return np.array([N - 1]), np.array([1.0])
    if kind == "ends":  # t = -1 at node 0, the last node, one in the middle
        return np.array([0, N // 2 + 31, N - 1]), np.array([0.25, 0.5, 0.25])
    if kind == "denormal":  # denormals beside O(1) values (the products y t^p underflow)
        nz = np.unique(np.concatenate([rng.integers(0, N, 200), np.arange(last0, N)]))
        y = np.full(nz.size, 5e-324)
        y[rng.integers(0, nz.size, 3)] = 1.0 / 3
        return nz, y
    if kind == "range":  # 1e-300 .. 1, the last block full of the small ones
        nz = np.unique(np.concatenate([rng.integers(0, N, 300), np.arange(last0, N)]))
        y = 10.0 ** rng.uniform(-300, 0, nz.size)
        return nz, y / np.sum(y)
    if kind == "signed":  # alternating signs, magnitudes 1e-8 .. 1 (cancelling moments)
        nz = np.unique(np.concatenate([rng.integers(0, N, 300), np.arange(last0, N)]))
        y = 10.0 ** rng.uniform(-8, 0, nz.size) * np.where(np.arange(nz.size) % 2, -1.0, 1.0)
        return nz, y
    raise ValueError(kind)


def _check(N: int, kind: str, K: int, seed: int = 0) -> float:
    nz, vals = _sparse(kind, N, seed)
    y = np.zeros(N)
    y[nz] = vals
    z, e = _core.accountant.dft_low(y, K)
    del y
    assert math.isfinite(e) and e > 0, (N, kind, K, e)
    z = np.asarray(z)
    assert z.shape == (K + 1,)
    rng = np.random.default_rng(seed + 1)
    ks = sorted({0, 1, 2, K // 2, max(0, K - 2), max(0, K - 1), K} | set(rng.integers(0, K + 1, 4).tolist()))
    worst = 0.0
    for k, zk in zip(ks, _exact(N, nz, vals, ks)):
        with mp.workdps(40):
            d = abs(mp.mpc(complex(z[k])) - zk)
            assert d <= mp.mpf(e), (N, kind, K, k, float(d), e)
            worst = max(worst, float(d / mp.mpf(e)))
    return worst


@pytest.mark.parametrize("kind", ["last_node", "ends", "denormal", "range", "signed"])
def test_dft_low_at_n_2_30(kind):
    """N = 2^30 + 20 (the largest FFT length of the claim, the last block of 20 nodes, its centre beyond N): K = 300
    (the cells' order) and K = 2^16 (alpha = 0.012)."""
    N = 2 ** 30 + 20
    for K in (300, 2 ** 16):
        _check(N, kind, K)


@pytest.mark.parametrize("kind", ["last_node", "ends", "range", "signed", "denormal"])
def test_dft_low_at_the_kernels_alpha_limit(kind):
    """N = 2^21 + 20, K with alpha = 2 pi K 32 / N just below 5.4 (the Taylor remainder's largest): the bound holds
    at k = K and its neighbours; one frequency above the kernel's alpha limit 5.5 refuses (e = inf)."""
    N = 2 ** 21 + 20
    K = int(5.4 * N / (2 * math.pi * 32))
    _check(N, kind, K)
    y = np.zeros(N)
    y[N - 1] = 1.0
    Kbad = int(5.5 * N / (2 * math.pi * 32)) + 2
    assert _core.accountant.dft_low(y, Kbad)[1] == math.inf


def test_dft_low_bound_is_not_vacuous():
    """The bound is a few tens of u |y|_1 at the cells' alpha (the check above could not pass by a huge e): at
    N = 2^30 + 20, K = 300, one node of mass 1, e < 1e-14, and the measured error of a dense-ish vector is a visible
    share of it somewhere (the comparison is live)."""
    N = 2 ** 30 + 20
    y = np.zeros(N)
    y[N - 1] = 1.0
    assert _core.accountant.dft_low(y, 300)[1] < 1e-14
    assert _check(2 ** 20 + 20, "range", 1000, seed=3) > 1e-4
