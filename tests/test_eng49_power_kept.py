"""Session 49's power step (cpp/kernels/accountant.cpp ``power``, docs/composition.md §2.34.2): the recomputed
frequencies kept in a sorted list instead of arrays of M entries, and the accurate DFT's twiddles from a table kept by N
once the direct twiddles computed for that N reach the table's cost. Both must leave every double as before.
References: the same call repeated (its first calls compute the twiddles directly, the later ones read the table), a
call recomputing no frequency (the other frequencies' doubles), and mpmath (40 digits) within the returned bound."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from sharpdp.shuffle.accountant import fft

U = 2.0**-53


def _case(N: int, nnz: int, seed: int, stride: int = 1) -> tuple[np.ndarray, np.ndarray, float]:
    """A sparse pmf y on N points (clustered near 0 on multiples of ``stride``, so that a few frequencies near the
    multiples of N / stride have |z| near 1), its rfft and the forward FFT's componentwise bound."""
    rng = np.random.default_rng(seed)
    y = np.zeros(N)
    idx = stride * rng.choice(np.arange(3 * nnz), size=nnz, replace=False)
    y[idx] = rng.random(nnz)
    y /= y.sum()
    z = np.fft.rfft(y)
    e = 10 * math.log2(N) * U * math.sqrt(N) * float(np.sqrt(np.sum(y * y)))
    return y, z, e


def _hex(r) -> tuple:
    Q, err, qn, rec = r
    return tuple(float(v).hex() for v in np.concatenate([Q.real, Q.imag])), float(err).hex(), float(qn).hex(), int(rec)


@pytest.mark.parametrize("N", [20_011, 24_576])
def test_repeated_calls_same_doubles(N):
    """The first calls on this N compute the twiddles directly; once their count reaches 2 (N/2 + 1), a table is built
    and kept, and every later call reads it: every call's output is the same doubles."""
    y, z, e = _case(N, 400, N)
    C = fft.kernels()
    n = 3000.0
    work = 6 * 400  # at most 6 frequencies recomputed per call: 2400 direct twiddles, ~9 calls to reach the table
    first = _hex(C.power(z, n, e, N, y, 1e-300, float(work)))
    assert first[3] == 6
    for _ in range(14):
        assert _hex(C.power(z, n, e, N, y, 1e-300, float(work))) == first


def test_unfixed_frequencies_and_mpmath():
    """Frequencies not recomputed hold the doubles of a call recomputing none; the recomputed ones (spread over the
    power loop's blocks of 8192 frequencies) are within the returned bound of z^n, z from mpmath."""
    N = 40_000
    y, z, e = _case(N, 60, 7, stride=4)
    C = fft.kernels()
    n = 2000.0
    Q0, err0, _, rec0 = C.power(z, n, e, N, y, 0.0, 0.0)
    assert rec0 == 0
    Q, err, _, rec = C.power(z, n, e, N, y, 1e-300, 40.0 * 60)
    assert rec == 40
    # which frequencies were recomputed: the largest mean-value terms n e (|z| + e)^(n - 1), i.e. the largest |z|
    lb = np.log(np.abs(z) + e)
    fixed = np.argsort(-lb, kind="stable")[:40]
    assert np.any((fixed > 8192) & (fixed < 16384)) and np.any(fixed > 16384)  # (in three blocks of the loop)
    other = np.setdiff1d(np.arange(z.size), fixed)
    diff = np.flatnonzero(Q[other] != Q0[other])
    # (a frequency tied with the 40th largest may be the one recomputed instead: none here)
    assert diff.size == 0
    assert err <= err0
    mpmath.mp.dps = 40
    nz = np.flatnonzero(y)
    worst = 0.0
    for k in fixed[:12].tolist():
        zk = mpmath.fsum(mpmath.mpf(float(y[j])) * mpmath.expjpi(-2 * mpmath.mpf(j * k) / N) for j in nz.tolist())
        worst = max(worst, float(abs(zk ** int(n) - mpmath.mpc(complex(Q[k])))))
    assert worst <= err
    assert np.any(Q[fixed] != Q0[fixed])  # the recomputation changed something (the test can see it)
