"""The C++ power step (n-fold DFT power with its error bound) against 50-digit arithmetic, shared by
the tests of docs/accountant.md §3.6 (tests/test_shuffle_accountant_large_n.py, test_shuffle_blocks_large.py)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np


def power_case(seed: int, n: int, N: int = 64):
    """A random pmf y on N points (20 atoms), its computed n-th DFT power Q~ with the returned error
    bound, and the 50-digit DFT of y: (y, Q, err, nfix, zs), zs[k] = exact DFT at frequency k."""
    import scipy.fft as sfft

    from sharpdp._core_loader import core

    rng = np.random.default_rng(seed)
    y = np.zeros(N)
    y[:20] = rng.random(20)
    y /= y.sum()
    z = sfft.rfft(y)
    e_fft = 10 * math.log2(N) * 2.0**-53 * math.sqrt(N) * float(np.sqrt(np.sum(y * y)))
    Q, err, _, nfix = core.accountant.power(z, float(n), e_fft, N, y, 1e-300, 1e9)
    mp.mp.dps = 50
    zs = [mp.fsum(mp.mpf(float(y[j])) * mp.expjpi(-2 * mp.mpf(j * k) / N) for j in range(N))
          for k in range(N // 2 + 1)]
    return y, Q, err, nfix, zs


def l2_distance(Q, zs, n: int) -> float:
    """|Q~ - z^n|_2 over the full spectrum (the half spectrum with its mirrored frequencies)."""
    N = 2 * (len(zs) - 1)
    sq = mp.mpf(0)
    for k, zk in enumerate(zs):
        d = abs(zk**n - mp.mpc(complex(Q[k])))
        sq += (1 if k in (0, N // 2) else 2) * d * d
    return float(mp.sqrt(sq))
