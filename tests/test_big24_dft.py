"""The power step's accurate DFT with its tabulated twiddles (cpp/kernels/accountant.cpp, docs/accountant.md §3.6.4).

When the recomputed frequencies need at least four times N/2 + 1 twiddles, ``power`` tabulates cos and sin of
2 pi m / N once; each entry is the expression the direct path evaluates, so the values are the same bit for bit.
Checked against 40-digit DFTs (pmfs with gaps between their nonzeros: m = r k mod N formed both by the step of
consecutive nodes and by the remainder) and against the direct path on the frequencies both recompute."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from sharpdp._core_loader import core

U = 2.0**-53


def _pmf(seed: int, N: int, nnz: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = np.zeros(N)
    r = np.unique(np.concatenate([np.arange(5, 5 + nnz // 2), rng.choice(N, nnz - nnz // 2, replace=False)]))
    y[r] = rng.random(r.size) + 0.1
    return y / y.sum()


def _e_fft(y: np.ndarray) -> float:
    N = y.size
    return 10 * math.log2(N) * U * math.sqrt(N) * float(np.sqrt(np.sum(y * y)))


@pytest.mark.parametrize("seed,N,n", [(0, 384, 40), (1, 500, 7), (2, 512, 300)])
def test_tabulated_dft_against_mpmath(seed, N, n):
    y = _pmf(seed, N, 60)
    z = np.fft.rfft(y)
    # every frequency with a bound above 1e-300 recomputed (budget ample): the tabulated path
    Q, err, _, nfix = core.accountant.power(z, float(n), _e_fft(y), N, y, 1e-300, 1e9)
    assert nfix * np.count_nonzero(y) >= 4 * (N // 2 + 1)
    mp.mp.dps = 40
    nz = np.flatnonzero(y)
    sq = mp.mpf(0)
    worst = 0.0
    for k in range(N // 2 + 1):
        zk = mp.fsum(mp.mpf(float(y[j])) * mp.expjpi(-2 * mp.mpf(int(j) * k) / N) for j in nz)
        d = abs(zk**n - mp.mpc(complex(Q[k])))
        sq += (1 if k in (0, N // 2) else 2) * d * d
        worst = max(worst, float(d))
    assert float(mp.sqrt(sq)) <= err
    # and the bound is that of the accurate DFT (a wrong twiddle, e.g. m + 1 for m, is off by ~ n 2 pi / N)
    assert err < 1e-10


@pytest.mark.parametrize("seed,N,n", [(3, 4096, 20), (4, 3000, 50)])
def test_tabulated_equals_direct(seed, N, n):
    y = _pmf(seed, N, 400)
    z = np.fft.rfft(y)
    e = _e_fft(y)
    nnz = int(np.count_nonzero(y))
    # budget for 3 frequencies: 3 nnz < 4 (N/2 + 1), the direct twiddles
    Qd, _, _, nd = core.accountant.power(z, float(n), e, N, y, 1e-300, 3.0 * nnz)
    Qt, _, _, nt = core.accountant.power(z, float(n), e, N, y, 1e-300, 1e9)
    assert nd == 3 and 4 * (N // 2 + 1) <= nt * nnz
    top = np.argsort(-np.abs(z), kind="stable")[:3]  # the largest bounds n e (|z| + e)^(n-1): the largest |z|
    assert np.array_equal(Qd[top], Qt[top])
    # not trivially equal: the frequencies recomputed only in the second call moved
    assert not np.array_equal(Qd, Qt)


def test_convolve_reuses_its_spectra():
    # fft.convolve's ``spectra``: a second call on the same parts and N takes the stored fold, forward FFT and bound;
    # its result equals a fresh call's bit for bit (the jump term's second run, docs/accountant_tail.md §17)
    from sharpdp.shuffle.accountant.fft import Part, convolve

    N, n = 4096, 50
    g = _pmf(5, 600, 300)[:600]
    g = g / g.sum()
    parts = [Part(g, n)]
    for work in (0.0, 2e7):  # (without the accurate DFT every frequency's power comes from the stored transform)
        sp: dict = {}
        a = convolve(parts, N, 1e-30, 0.0, spectra=sp)
        assert set(sp) == {0}
        b = convolve(parts, N, 1e-30, work, spectra=sp)
        c = convolve(parts, N, 1e-30, work)
        assert np.array_equal(b.q, c.q) and b.err_q == c.err_q
        assert (b.err_q < a.err_q) == (work > 0)  # (the second call ran its own power step)
