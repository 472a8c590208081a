"""Review of docs/accountant_tail.md §74, Lemma 74.1 (session 49): ``fft._half_norm_up(Q, N)`` is at least the exact
l2 norm of the full Hermitian spectrum whose half (numpy's rfft layout) is ``Q``, odd and even N, zero ends, tiny
(subnormal squares) and huge magnitudes, sizes up to 2^21 + 1. References: exact rationals (fractions) for small
sizes; for large ones the exact squares as double pairs (Veltkamp split) summed by math.fsum (correctly rounded)."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

from sharpdp.shuffle.accountant import fft, limits


def _full_sq_exact(Q: np.ndarray, N: int) -> Fraction:
    """sum over the full spectrum of |Q_k|^2, exactly: Q_0 once, the Nyquist term once for even N, the rest twice."""
    re, im = Q.real.tolist(), Q.imag.tolist()
    sq = [Fraction(a) ** 2 + Fraction(b) ** 2 for a, b in zip(re, im)]
    twice = sum(sq[1:N // 2 + (N % 2)], Fraction(0))
    return sq[0] + 2 * twice + (sq[N // 2] if N % 2 == 0 else 0)


def _two_prod_sq(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x*x = hi + lo exactly (Veltkamp split; |x| in the normal range away from overflow)."""
    c = x * 134217729.0
    xh = c - (c - x)
    xl = x - xh
    hi = x * x
    lo = ((xh * xh - hi) + 2 * xh * xl) + xl * xl
    return hi, lo


def _full_sq_upper(Q: np.ndarray, N: int) -> float:
    """An upper bound (one rounding, enlarged by 2^-51 relative) on the exact full sum of squares."""
    w = np.full(Q.size, 2.0)
    w[0] = 1.0
    if N % 2 == 0:
        w[-1] = 1.0
    parts = []
    for v in (Q.real, Q.imag):
        hi, lo = _two_prod_sq(np.ascontiguousarray(v))
        parts += [hi * w, lo * w]  # (times 1 or 2: exact)
    return math.fsum(np.concatenate(parts).tolist()) * (1 + 2.0 ** -51)


@pytest.fixture(autouse=True)
def _rule_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "LEAD49_NORM_DOT", True)


def _check_exact(Q: np.ndarray, N: int) -> None:
    b = fft._half_norm_up(Q, N)
    assert Fraction(b) ** 2 >= _full_sq_exact(Q, N), (N, b)


@pytest.mark.parametrize("N", [1, 2, 3, 4, 7, 8, 33, 64, 257, 1000])
def test_small_sizes_exact(N: int) -> None:
    rng = np.random.default_rng(N)
    M = N // 2 + 1
    for scale in (1.0, 1e-160, 1e-170, 1e-200, 1e150, 1e-320):
        Q = (rng.standard_normal(M) + 1j * rng.standard_normal(M)) * scale
        _check_exact(Q, N)
        Q[0] = 0.0
        Q[-1] = 0.0
        _check_exact(Q, N)
    # squares each just below the rounding to 0 (lost entirely), and equal entries whose squares round down
    _check_exact(np.full(M, 2.0 ** -538 * 0.99 * (1 + 1j)), N)
    x = 2.0 ** -538 * math.sqrt(2)  # (the largest loss: each square just under 2^-1075, every one rounded to 0)
    while Fraction(x) ** 2 >= Fraction(2) ** -1075:
        x = math.nextafter(x, 0.0)
    _check_exact(np.full(M, x * (1 + 1j)), N)
    _check_exact(np.full(M, complex(x, 0.0)), N)
    _check_exact(np.full(M, (1 + 2.0 ** -27 + 2.0 ** -52) * (1 + 1j)), N)


@pytest.mark.parametrize("N", [(1 << 22) + 1, 1 << 22])
def test_large_sizes(N: int) -> None:
    rng = np.random.default_rng(N)
    M = N // 2 + 1
    Q = rng.standard_normal(M) + 1j * rng.standard_normal(M)
    b = fft._half_norm_up(Q, N)
    assert b * b >= _full_sq_upper(Q, N) * (1 + 2.0 ** -51)
    # equal entries: every square rounds down by nearly half an ulp (the sum's rounding all one way)
    x = 1 + 2.0 ** -27 - 2.0 ** -52
    Q = np.full(M, x * (1 + 1j))
    b = fft._half_norm_up(Q, N)
    assert b * b >= _full_sq_upper(Q, N) * (1 + 2.0 ** -51)


def test_huge_values_give_inf_not_a_finite_underestimate() -> None:
    for v in (1e155, 1e200):  # (squares overflow: numpy's norm is inf, so is the bound)
        with np.errstate(over="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            assert fft._half_norm_up(np.full(5, v + v * 1j), 8) == math.inf
