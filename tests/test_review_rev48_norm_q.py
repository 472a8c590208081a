"""Review rev48 (session 48): attack on ``limits.LEAD47_NORM_Q_UP`` (docs/accountant_tail.md §74, on): ``fft.spectrum``
promises ``norm_Q`` >= the l2 norm of the full (Hermitian) spectrum it returns; the power kernel's blocked sum of
squares (cpp/kernels/accountant.cpp, ``power``: per block of 8,192 frequencies ``b2 += wgt * aq * aq`` in index order,
aq = |q| by hypot, then the blocks' sums in order, then sqrt) is rounded up by (1 + 1e-10).

Reference: the exact sum of w |Q~_k|^2 of the returned doubles (each square split exactly into two doubles by
Dekker's product, summed by ``math.fsum``, correctly rounded), its square root in mpmath. Adversarial spectra in the
kernel's order: one huge term first and ~2^21 tiny ones after it in the same block (each below half an ulp of the
running sum: the recursive sum's worst case), magnitudes alternating 1 / 1e-8, and the several-part product's numpy
norm times sqrt 2.

Found (fixed at session 48's merge, §74's underflow paragraph; the test below was a strict xfail): §74's argument is relative only; where |Q~_k| < 2^-511 (~1.5e-154) the squares are
subnormal or 0 and the kernel's norm_Q is far below the norm (0 for a spectrum of constant modulus 1e-200), which no
relative factor covers. Not reached by the lattice engine (its tilted pmf has mass ~1, so |Q_0| ~ 1 and the deficit,
<= sqrt(N 2^-1074) ~ 1e-157 absolute, is ~1e-157 relative), but the stated premise "N <= 2^30" is not enough.
Proposed fix (fft._norm_up): norm * (1 + 1e-10) + sqrt(N) * 2^-537 (each of the <= N weighted squares loses at most
2^-1074 to underflow, so q2 >= exact - N 2^-1074 and sqrt(a + b) <= sqrt(a) + sqrt(b))."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from sharpdp import _core
from sharpdp.shuffle.accountant import fft, limits

from _main_floats34 import switch

_SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp)


def _two_square(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p, e) with p + e = a^2 exactly (Dekker's product; |a| within 1e-150 .. 1e150, no underflow of e)."""
    c = _SPLIT * a
    hi = c - (c - a)
    lo = a - hi
    p = a * a
    e = ((hi * hi - p) + 2.0 * hi * lo) + lo * lo
    return p, e


def _exact_norm(Q: np.ndarray, N: int) -> mp.mpf:
    """The l2 norm over the full Hermitian spectrum of the half spectrum Q (rfft layout), exact to 40 digits."""
    w = np.full(Q.size, 2.0)
    w[0] = 1.0
    if N % 2 == 0:
        w[-1] = 1.0
    parts = []
    for comp in (Q.real, Q.imag):
        p, e = _two_square(np.ascontiguousarray(comp))
        parts += [w * p, w * e]  # (w is 1 or 2: exact)
    s = math.fsum(np.concatenate(parts).tolist())
    with mp.workdps(40):
        return mp.sqrt(mp.mpf(s))  # (fsum correctly rounded: within u/2 of the exact sum)


def _spectrum_case(kind: str, N: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "huge_first":  # Q_0 = 1 (a pmf of mass 1), then |Q_k| = 1e-9 in the rest of the kernel's first block
        z = np.zeros(N // 2 + 1, dtype=complex)  # (squares 2e-18 < u/2 of the running sum 1: each lost), 0 above
        z[0] = 1.0
        z[1:8192] = 1e-9 * np.exp(2j * np.pi * rng.uniform(0, 1, 8191))
        return np.fft.irfft(z, N)
    elif kind == "alternate":  # |Q_k| alternating ~1 and ~1e-8 (a two-node comb plus a tiny perturbation)
        y = np.zeros(N)
        y[0] = y[N // 2] = 0.5
        y += np.abs(rng.normal(0, 1e-8 / math.sqrt(N), N))
    else:  # "dense": a random pmf
        y = rng.uniform(0, 1, N) ** 8
    return y / math.fsum(y.tolist())  # (the "huge_first" vector is not a pmf: the kernel's norm does not use y)


def _check_kernel(y: np.ndarray, n: float) -> tuple[float, float]:
    """(kernel's raw norm_Q / exact - 1, rounded-up norm_Q / exact - 1) for Q = rfft(y)^n by the power kernel."""
    N = y.size
    z = np.fft.rfft(y)
    Q, _, norm, _ = _core.accountant.power(z, n, 1e-15, N, y, 0.0, 0.0)
    ex = _exact_norm(np.asarray(Q), N)
    with mp.workdps(40):
        return float(mp.mpf(norm) / ex - 1), float(mp.mpf(norm * (1.0 + 1e-10)) / ex - 1)


@pytest.mark.parametrize("kind, N, n", [("huge_first", 2 ** 22, 1.0), ("huge_first", 2 ** 21 + 6, 1.0),
                                        ("alternate", 2 ** 20, 1.0), ("alternate", 2 ** 18, 3.0),
                                        ("dense", 2 ** 16, 1.0), ("dense", 12345 * 2, 7.0)])
def test_kernel_norm_rounded_up_covers_the_exact_norm(kind, N, n):
    raw, up = _check_kernel(_spectrum_case(kind, N, N), n)
    assert up >= 0.0, (kind, N, raw, up)
    assert abs(raw) <= 1e-12, (kind, N, raw)  # §74's (8,200 + nb) u: the factor 1e-10 has room


def test_huge_first_really_loses_in_the_kernel():
    """The adversarial order is live: the kernel's raw norm is below the exact one there (a rounding on the unsafe
    side, the reason for §74), so the test above exercises the factor."""
    raw, up = _check_kernel(_spectrum_case("huge_first", 2 ** 22, 2 ** 22), 1.0)
    assert -1e-12 < raw < -1e-15 and up > 0.0, (raw, up)


@pytest.mark.parametrize("kind", ["huge_first", "alternate", "dense"])
def test_spectrum_norm_covers_one_part_and_products(monkeypatch, kind):
    """Through ``fft.spectrum`` (the switch on, as main): one part (the kernel's norm rounded up), and two parts (numpy's
    norm of the product times sqrt 2)."""
    switch(monkeypatch, "LEAD47_NORM_Q_UP", True)
    N = 2 ** 16
    y = _spectrum_case(kind, N // 2, 5)
    for parts in ([fft.Part(y, 3)], [fft.Part(y, 2), fft.Part(y[::-1].copy(), 1)]):
        Q, _, norm = fft.spectrum(parts, N, 0.0, 0.0)
        ex = _exact_norm(np.asarray(Q), N)
        with mp.workdps(40):
            assert mp.mpf(norm) >= ex, (kind, len(parts), norm, float(ex))


def test_norm_q_covers_a_tiny_spectrum(monkeypatch):
    """A part of mass 1e-5 to the 40th power: |Q_k| = 1e-200 at every k, the kernel's sum of squares underflows to
    0, so norm_Q (even times 1 + 1e-10) is 0 against the exact sqrt(N) 1e-200."""
    switch(monkeypatch, "LEAD47_NORM_Q_UP", True)
    assert limits.LEAD47_NORM_Q_UP
    N = 4096
    y = np.zeros(N // 2)
    y[0] = 1e-5
    Q, _, norm = fft.spectrum([fft.Part(y, 40)], N, 0.0, 0.0)
    with mp.workdps(40):
        ex = mp.sqrt(mp.fsum(mp.mpf(abs(complex(q))) ** 2 * (1 if k in (0, N // 2) else 2) for k, q in enumerate(Q)))
    assert ex > 1e-199
    assert norm >= ex, (norm, float(ex))


def _proposed_up(norm: float, N: int) -> float:
    """The module docstring's proposed fix: the relative factor and an absolute term for the squares' underflow."""
    return norm * (1.0 + 1e-10) + math.sqrt(N) * 2.0 ** -537


@pytest.mark.parametrize("mass, count, N", [(1e-5, 40, 4096), (1e-31, 5, 2 ** 14), (0.3, 300, 2 ** 12),
                                            (2e-3, 57, 6000)])
def test_proposed_absolute_term_covers_tiny_spectra(monkeypatch, mass, count, N):
    """The proposed absolute term covers spectra whose squares underflow (|Q_k| from 1e-200 to ~1e-157), computed
    exactly in mpmath from the returned doubles; and it does not change a spectrum of mass ~1 by more than 1e-150."""
    switch(monkeypatch, "LEAD47_NORM_Q_UP", False)
    rng = np.random.default_rng(count)
    y = np.zeros(N // 2)
    y[:5] = rng.uniform(0, 1, 5)
    y *= mass / math.fsum(y.tolist())
    Q, _, norm = fft.spectrum([fft.Part(y, count)], N, 0.0, 0.0)
    w = [1 if k == 0 or (N % 2 == 0 and k == Q.size - 1) else 2 for k in range(Q.size)]
    with mp.workdps(50):
        ex = mp.sqrt(mp.fsum(wk * (mp.mpf(float(q.real)) ** 2 + mp.mpf(float(q.imag)) ** 2) for wk, q in zip(w, Q)))
        assert ex > 0
        assert mp.mpf(_proposed_up(norm, N)) >= ex, (mass, count, norm, float(ex))
    assert _proposed_up(1.0, 2 ** 30) - (1.0 + 1e-10) < 1e-150
