"""The power step's complex logarithm (docs/accountant_tail.md §42.1): the kernel ``power`` returns, at every
frequency it evaluates, exactly exp(n Log z) with the C library's complex log and exp, which numpy's complex ``log``
and ``exp`` call on glibc. An independent reference, compared bit for bit on pmfs with many frequencies on glibc's
accurate branch 1/2 <= |z| < 1 (at least 50 per case), where ``clog_same`` replaces the library's call."""

from __future__ import annotations

import platform

import numpy as np
import pytest

from sharpdp._core_loader import core

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                                reason="numpy's complex log is the C library's (the reference) on glibc")


def _pmf(K: int, seed: int) -> np.ndarray:
    """A lattice pmf of K + 1 nodes with a heavy right tail (the far-tail laws' shape)."""
    rng = np.random.default_rng(seed)
    k = np.arange(K + 1, dtype=float)
    p = np.exp(-0.5 * ((k - 0.1 * K) / (0.02 * K)) ** 2) + 1e-3 * (1.0 + k) ** -1.5 * rng.uniform(0.5, 1.5, K + 1)
    return p / p.sum()


@pytest.mark.parametrize("n, K, N, seed", [(99, 400, 6000, 1), (7, 100, 4096, 2), (1000, 300, 9000, 3),
                                           (30, 2000, 30000, 4)])
def test_power_is_exp_n_log_z_bit_for_bit(n, K, N, seed):
    y = np.zeros(N)
    y[:K + 1] = _pmf(K, seed)
    z = np.fft.rfft(y)
    Q, err, norm, rec = core.accountant.power(z, float(n), 1e-13, N, y, 1e300, 0.0)
    assert rec == 0
    az = np.abs(z)
    x = np.maximum(np.abs(z.real), np.abs(z.imag))
    # the frequencies the kernel evaluates (|z|^n above e^-736), and among them those on glibc's accurate branch
    live = n * np.log(az * (1 + 4 * 2.0**-53)) > -736.0
    branch = live & (x >= 0.5) & (x < 1.0) & (az * az >= 0.5)
    assert branch.sum() > 50
    ref = np.exp(n * np.log(z[live]))
    assert np.array_equal(Q[live].view(np.float64), ref.view(np.float64))
    # and the bound of the frequencies it drops covers them: |Q| there is below e^-736 (0 in double)
    assert np.all(np.abs(Q[~live]) <= np.exp(-730.0))
    assert err > 0 and norm > 0
