"""Session 48's speed-ups of the DFT by blocks (cpp/kernels/dft_taylor.hpp, docs/accountant_tail.md §75): the blocks'
twiddles from a table of the angles that occur, the frequencies swept together over the blocks and the moments' Sum2
accumulators in SIMD lanes must give the same doubles as Lemma 72.1's computation one operation at a time (§72.2).
References: a replica of that computation in Python floats (IEEE doubles, libm's cos and sin: the kernel's own
operations in its order, session 47's code path), the kernel at a small K (each twiddle computed directly) against
the same kernel at a large K (the table), and mpmath (40 digits) within the bound e."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from sharpdp.shuffle.accountant import fft

U = 2.0**-53


def _sum2(xs) -> float:
    """Ogita, Rump and Oishi's Sum2 in the kernel's order (accountant.cpp's ``Sum2``)."""
    s = c = 0.0
    for x in xs:
        t = s + x
        z = t - s
        c += (s - (t - z)) + (x - z)
        s = t
    return s + c


def _replica(y: np.ndarray, K: int) -> list[complex]:
    """z~_0..z~_K of Lemma 72.1 as session 47's kernel computes them, one operation at a time in Python floats: the
    moments by Sum2 per block and power, each block's twiddle of m = (c_b mod N) k mod N reduced to [0, N/2] by
    cos / sin of 2 pi (m / N) directly."""
    N = y.size
    cb, mom = [], []
    for b in range(-(-N // 64)):
        x0, x1, c = 64 * b, min(N, 64 * b + 64), 64 * b + 32
        xs = [x for x in range(x0, x1) if y[x] != 0.0]
        if not xs:
            continue
        terms: list[list[float]] = [[] for _ in range(10)]
        for x in xs:
            yx, t, tp = float(y[x]), (x - c) / 32.0, 1.0
            for p in range(10):
                terms[p].append(yx * tp)
                tp *= t
        cb.append(c)
        mom.append([_sum2(tt) for tt in terms])
    out = []
    for k in range(K + 1):
        al = (2.0 * math.pi) * ((k * 32) / N)
        w = [1.0]
        for p in range(1, 10):
            w.append((w[-1] * al) / p)
        re: list[float] = []
        im: list[float] = []
        for c, M in zip(cb, mom):
            T = [0.0] + [w[p] * M[p] for p in range(1, 10)]
            sr = M[0] + (((T[8] - T[6]) + T[4]) - T[2])
            si = -((((T[9] - T[7]) + T[5]) - T[3]) + T[1])
            m = (c % N) * k % N
            sg = 1.0
            if 2 * m > N:
                m, sg = N - m, -1.0
            ang = 2.0 * math.pi * (m / N)
            cs, sn = math.cos(ang), sg * math.sin(ang)
            re += [cs * sr, sn * si]
            im += [cs * si, -(sn * sr)]
        out.append(complex(_sum2(re), _sum2(im)))
    return out


def _y(N: int, dens: float, seed: int, gaps: bool = True) -> np.ndarray:
    """Random non-negative y with zero entries, empty blocks (``gaps``) and a wide range of magnitudes."""
    rng = np.random.default_rng(seed)
    y = rng.random(N) * (rng.random(N) < dens)
    y[::7] **= 6
    if gaps:
        y[N // 3:N // 3 + 300] = 0.0  # at least 3 empty blocks
        y[-40:] = 0.0
    y[rng.integers(0, N)] = 0.5
    return y


def _uses_table(N: int, K: int, y: np.ndarray) -> bool:
    """The kernel's choice (docs/accountant_tail.md §75.1): the table where the frequencies' blocks need more than
    its N / (2g) + 1 angles, g = gcd(32, N)."""
    nb = sum(1 for b in range(-(-N // 64)) if np.any(y[64 * b:64 * b + 64] != 0.0))
    return (K + 1) * nb > N // (2 * math.gcd(32, N)) + 1


# N with g = gcd(32, N) = 1, 2, 4, 8, 16, 32 (the table's stride), partial last blocks, K with and without the table
CASES = [(2001, 40), (2002, 40), (2004, 40), (3000, 40), (3088, 40), (4096, 40), (4096, 1), (6144, 12), (1999, 3)]


@pytest.mark.parametrize(("N", "K"), CASES)
def test_the_same_doubles_as_the_direct_computation(N, K):
    """Every z~_k bit for bit equal to the replica of session 47's computation (each twiddle by cos / sin, each
    moment by its own Sum2, one frequency at a time), with and without the table."""
    y = _y(N, 0.6, N + K)
    z, e = fft.kernels().dft_low(y, K)
    assert math.isfinite(e)
    ref = _replica(y, K)
    for k in range(K + 1):
        assert (float(z[k].real).hex(), float(z[k].imag).hex()) == (ref[k].real.hex(), ref[k].imag.hex()), (N, k)


def test_the_cases_cover_both_paths():
    """(A test that cannot fail is a defect:) the cases above run both the table and the direct twiddles."""
    used = {_uses_table(N, K, _y(N, 0.6, N + K)) for N, K in CASES}
    assert used == {True, False}


@pytest.mark.parametrize("N", [2**16, 3 * 2**14, 2**16 + 2, 99_999, 100_000])
def test_table_against_direct_twiddles_at_larger_n(N):
    """z~_k at a small K (every twiddle direct: (K + 1) nb at most the table's size) equals z~_k at a large K (the table)
    bit for bit, k <= the small K: each frequency's sums do not depend on K."""
    y = _y(N, 0.05, N)
    y[N // 2:N // 2 + 3000] = np.random.default_rng(1).random(3000)  # a dense stretch
    nb = sum(1 for b in range(-(-N // 64)) if np.any(y[64 * b:64 * b + 64] != 0.0))
    ntab = N // (2 * math.gcd(32, N)) + 1
    Ks = ntab // nb - 1
    Kb = min(N // 2, int(5.0 * N / (2 * math.pi * 32)))
    assert 0 <= Ks < Kb and not _uses_table(N, Ks, y) and _uses_table(N, Kb, y)
    zs, es = fft.kernels().dft_low(y, Ks)
    zb, eb = fft.kernels().dft_low(y, Kb)
    assert math.isfinite(es) and math.isfinite(eb) and es <= eb
    assert [complex(v) for v in zs] == [complex(v) for v in zb[:Ks + 1]]


@pytest.mark.parametrize("N", [4097, 4100, 4104])
def test_within_the_bound_near_the_last_frequency(N):
    """|z~_k - z_k| <= e against 40-digit sums at frequencies near the largest the kernel accepts (a close to 5.5,
    where the truncation term dominates), through the table (g = 1, 4, 8)."""
    y = _y(N, 0.3, 7)
    K = int(5.45 * N / (2 * math.pi * 32))
    assert _uses_table(N, K, y)
    z, e = fft.kernels().dft_low(y, K)
    assert math.isfinite(e)
    nz = np.flatnonzero(y)
    for k in (0, 1, K // 2, K - 1, K):
        with mpmath.workdps(40):
            ex = mpmath.fsum(mpmath.mpf(float(y[x])) * mpmath.expjpi(-2 * mpmath.mpf(int(k)) * int(x) / N) for x in nz)
        assert abs(mpmath.mpc(complex(z[k])) - ex) <= e


def test_refused_frequencies_flagged():
    """Past a = 5.5 the bound is infinite (the caller's refusal, §72.2) and the frequencies not computed are NaN
    (never a stale value)."""
    N = 2048
    y = _y(N, 0.5, 3, gaps=False)
    K = N // 2
    z, e = fft.kernels().dft_low(y, K)
    assert e == math.inf
    kbad = math.ceil(5.5 * N / (2 * math.pi * 32) * (1 + 1e-12))
    assert np.all(np.isnan(z[kbad + 8:].real))
