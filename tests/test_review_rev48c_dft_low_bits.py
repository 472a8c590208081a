"""Review rev48c (session 48): attack on dft48's claim (docs/accountant_tail.md §75.1) that ``dft_low``'s twiddle
table, its frequencies swept 8 at a time and its SIMD lanes give the same doubles as session 47's direct computation
(§72.2). Reference: the replica of that computation one operation at a time in Python floats
(tests/test_dft48_twiddle_table.py ``_replica``) and the kernel's own direct path (a small K) against its table path
(a large K) on the same input. Attacked: N with g = gcd(32, N) = 1 ... 32, N = 1 ... 70 (one partial block, its
centre beyond N), N = 64 q +- 1 (a short last block), K = 0, 1, (K + 1) at multiples of 8 +- 1 (the chunks), K = N / 2
(the frequencies past a = 5.5 NaN, those below compared), signed values, -0.0, denormals, NaN / inf entries, an all-zero
vector. Each comparison is by float.hex (NaN compared as NaN)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_dft48_twiddle_table import _replica

from sharpdp.shuffle.accountant import fft

KER = fft.kernels()


def _hx(z: complex) -> tuple[str, str]:
    return (float(z.real).hex(), float(z.imag).hex())


def _vec(N: int, seed: int, kind: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = rng.random(N) * (rng.random(N) < 0.7)
    if kind == "signed":
        y = y * np.where(rng.random(N) < 0.5, -1.0, 1.0)
    elif kind == "tiny":
        y[rng.random(N) < 0.3] = 5e-324
        y[rng.random(N) < 0.2] = -0.0
    elif kind == "range":
        y = y * np.exp(rng.uniform(-600, 0, N))
    if N > 1:
        y[-1] = 0.75  # the last node of the (partial) last block
    return y


def _kmax_ok(N: int) -> int:
    """The largest k with a = 2 pi 32 k / N comfortably below 5.5 (the kernel computes it)."""
    return min(N // 2, int(5.4 * N / (2 * math.pi * 32)))


def _check(y: np.ndarray, K: int) -> int:
    z, e = KER.dft_low(y, K)
    kc = K if math.isfinite(e) else _kmax_ok(y.size)
    ref = _replica(y, kc)
    for k in range(kc + 1):
        assert _hx(complex(z[k])) == _hx(ref[k]), (y.size, K, k)
    return kc


@pytest.mark.parametrize("N", list(range(1, 71)))
def test_tiny_n_every_k(N):
    """One or two blocks (the centre 32 beyond N for N <= 32: c_b mod N), every K <= N / 2 (table and direct)."""
    for kind in ("plain", "signed", "tiny"):
        y = _vec(N, N, kind)
        for K in range(N // 2 + 1):
            _check(y, K)


# N = 64 q + r with g = gcd(32, N) = 1, 2, 4, 8, 16, 32 and a short last block (r != 0) or none
NS = [64 * 37 + 1, 64 * 37 - 1, 64 * 37 + 2, 64 * 37 + 62, 64 * 37 + 4, 64 * 37 + 60, 64 * 37 + 8, 64 * 37 + 56,
      64 * 37 + 16, 64 * 37 + 48, 64 * 37 + 32, 64 * 37, 64 * 38 - 32]
KS = [0, 1, 6, 7, 8, 9, 15, 16, 17, 23]


@pytest.mark.parametrize("N", NS)
def test_gcd_and_chunk_edges(N):
    """Every g, short last blocks, (K + 1) at multiples of 8 +- 1: the replica's doubles, table or not."""
    y = _vec(N, 3 * N, "signed" if N % 2 else "range")
    y[N // 2:N // 2 + 200] = 0.0  # empty blocks
    for K in KS:
        _check(y, K)


@pytest.mark.parametrize("N", [64 * 37 + 1, 64 * 37 + 32, 64 * 37 + 16, 4096])
def test_k_half_n_flags_and_keeps_the_low_frequencies(N):
    """K = N / 2: e = inf (a > 5.5), the frequencies below the break equal the replica's, those past it NaN."""
    y = _vec(N, N, "plain")
    z, e = KER.dft_low(y, N // 2)
    assert e == math.inf
    kc = _check(y, N // 2)
    kbad = math.ceil(5.5 * N / (2 * math.pi * 32) * (1 + 1e-12))
    assert kc < kbad and np.all(np.isnan(z[kbad + 8:].real)) and np.all(np.isnan(z[kbad + 8:].imag))


@pytest.mark.parametrize(("N", "seed"), [(2**16 + 1, 1), (2**16 + 2, 2), (2**16 + 4, 3), (2**16 + 8, 4),
                                         (2**16 + 16, 5), (2**16 + 32, 6), (2**16 - 1, 7), (2**16 - 32, 8)])
def test_direct_path_equals_table_path(N, seed):
    """The kernel's direct twiddles (K + 1 small: (K + 1) nb <= N / (2g) + 1) against its table (a larger K) on the same
    y, every shared frequency bit for bit; both choices asserted."""
    rng = np.random.default_rng(seed)
    y = rng.standard_normal(N) * (rng.random(N) < 0.02)
    y[N - 1] = 1.0
    nb = sum(1 for b in range(-(-N // 64)) if np.any(y[64 * b:64 * b + 64] != 0.0))
    ntab = N // (2 * math.gcd(32, N)) + 1
    Ks = ntab // nb - 1
    Kb = _kmax_ok(N)
    assert 0 <= Ks < Kb and (Ks + 1) * nb <= ntab < (Kb + 1) * nb
    zs, es = KER.dft_low(y, Ks)
    zb, eb = KER.dft_low(y, Kb)
    assert math.isfinite(es) and math.isfinite(eb)
    assert [_hx(complex(v)) for v in zs] == [_hx(complex(v)) for v in zb[:Ks + 1]]


def test_nonfinite_and_zero_vectors():
    """NaN / inf entries and an all-zero (or all -0.0) vector: the replica's doubles (NaN as NaN)."""
    N = 64 * 12 + 3
    for bad in (math.nan, math.inf, -math.inf):
        y = _vec(N, 11, "plain")
        y[70] = bad
        for K in (0, 1, 7, 8, 20):
            z, _ = KER.dft_low(y, K)
            ref = _replica(y, K)
            for k in range(K + 1):
                assert _hx(complex(z[k])) == _hx(ref[k])
    for zero in (0.0, -0.0):
        y = np.full(N, zero)
        for K in (0, 9, 20):
            z, e = KER.dft_low(y, K)  # (e = inf here: every bound term underflows, a refusal; see below)
            assert [_hx(complex(v)) for v in z] == [_hx(c) for c in _replica(y, K)]


def test_bound_scales_with_the_input_near_underflow():
    """|z~ - z| scales with y exactly (y s, s a power of 2: every operation scaled, nothing subnormal in the sums), so
    a bound e(y s) should not fall below s e(y). At sum|y| ~ 1e-147 (K = 0) the final sqrt(er^2 + ei^2) 1.01 of
    dft_taylor.hpp squares doubles near 1e-162 into subnormals: e(y s) is 16 % below s e(y) (er^2 rounded down to a few
    ulps of 2^-1074), before the refusal (er^2 + ei^2 = 0: e = inf) sets in. Fixed at session 48's merge (er + ei
    where the squares' sum is below 2^-968, docs/accountant_tail.md §75.6); a strict xfail before."""
    rng = np.random.default_rng(1)
    y = rng.random(771)
    _, e0 = KER.dft_low(y, 0)
    for kexp in range(490, 500):
        for frac in range(0, 200):  # s = 2^-kexp times a dyadic in [1, 2) of 8 bits: y s rounds once per entry
            s = math.ldexp(1.0 + frac / 256.0, -kexp)
            ys = y * s
            _, e = KER.dft_low(ys, 0)
            if math.isfinite(e):
                assert e >= s * e0 * (1.0 - 1e-6), (kexp, frac, e, s * e0)
