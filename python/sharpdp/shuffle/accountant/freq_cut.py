"""A certified cut-off for the n-th power of a non-negative pmf's DFT (docs/accountant_tail.md §70.1-§70.2).

For a non-negative vector y on the circle of N points (a folded lattice pmf, mass m = sum y) with exact DFT
z(beta) = sum_x y(x) e^{i beta x}, Lemma 70.1 gives, for every anchor node x0, every integer D >= 1 and every
beta in [b1, pi / D] (0 <= b1):

    m^2 - |z(beta)|^2 >= 2 y(x0) sum_{1 <= |d| <= D} y(x0 + d) 2 sin^2(b1 d / 2)        (circular positions)

(the pairs (x0, x0 + d) and (x0 + d, x0) of the double sum m^2 - |z|^2 = sum_{x,y} y(x) y(y) (1 - cos beta (x - y)),
every other pair's term dropped as non-negative, each kept term non-decreasing in beta while beta |d| <= pi).
:func:`cut` chains the lemma over the intervals [pi / D_{j+1}, pi / D_j] (D_0 = 1, D_{j+1} ~ ratio D_j) from the top
frequency pi down, and returns the least K such that every lattice frequency 2 pi k / N with K < k <= N / 2 has
|z_k|^n <= e^{LOG_CUT} (then |z_k^n| is below 1e-300 and the power step may treat it as 0 with that charge).
Used by :func:`~.fft.spectrum` behind ``limits.BODY46_PRUNED_FORWARD`` (docs/accountant_tail.md §70.3) to skip the
forward FFT: the frequencies k <= K are then recomputed by the power step's accurate DFT.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from sharpdp.shuffle.accountant.limits import U

LOG_CUT = -760.0  # |z_k|^n <= e^-760 < 1e-300 above the cut (the power step's own negligible level, docs/accountant.md §3.6.3)


def pair_bound(y: np.ndarray, x0: int, W: int, b1: float, b2: float) -> float:
    """A lower bound (rounding included) on Lemma 70.1's pair sum 2 y(x0) sum_{1<=|d|<=W} y(x0+d) c_d, c_d =
    min over beta in [b1, b2] of 1 - cos(beta d), for the stored y (positions mod N = y.size, 2 W + 1 <= N,
    0 < b1 <= b2): c_d = 0 where [b1 d, b2 d] may hold a multiple of 2 pi (a margin 1e-9 relative), else the smaller of
    2 sin^2(b1 d / 2), 2 sin^2(b2 d / 2) (1 - cos t is unimodal between consecutive multiples of 2 pi), less the
    absolute margin 8 u (b2 d + 1) for the arguments' rounding and numpy's sin (within 1 ulp); the products and the
    pairwise sums of non-negative terms lose at most (log2(2 W) + 8) u relative, covered by the factor 1 - 1e-9
    (docs/accountant_tail.md §70.2)."""
    N = y.size
    d = np.arange(1, W + 1, dtype=np.float64)
    t1 = d * b1
    t2 = d * b2
    two_pi = 2.0 * math.pi
    hit = np.floor(t2 / two_pi * (1.0 + 1e-9)) >= np.ceil(t1 / two_pi * (1.0 - 1e-9))
    s1 = np.sin(0.5 * t1)
    s2 = np.sin(0.5 * t2)
    c = np.minimum(2.0 * s1 * s1, 2.0 * s2 * s2) - 8.0 * U * (t2 + 1.0)
    c = np.where(hit, 0.0, np.maximum(c, 0.0))
    right = np.take(y, np.arange(x0 + 1, x0 + W + 1) % N)
    left = np.take(y, np.arange(x0 - 1, x0 - W - 1, -1) % N)
    s = float(np.sum(c * right)) + float(np.sum(c * left))
    return 2.0 * float(y[x0]) * s * (1.0 - 1e-9)


W_MIN = 32  # the least window of pairs (odd distances reach the top frequencies where y(x0 +- 1) = 0)


def cut(y: np.ndarray, n: float, ratio: float = 1.1, log_cut: float = LOG_CUT, max_K: int | None = None) -> int | None:
    """The least K found by the chain of docs/accountant_tail.md §70.2 such that n log|z_k| <= ``log_cut`` for every
    integer K < k <= N // 2 (z the exact DFT of the stored non-negative y, N = y.size, n >= 2), or None where the chain
    cannot certify any such K (or only one above ``max_K``). The anchor is y's largest node. ``ratio`` (> 1) sets the
    intervals' growth; a choice of work and tightness only, every K returned is certified."""
    N = int(y.size)
    if N < 8 or not n >= 2 or not ratio > 1:
        return None
    x0 = int(np.argmax(y))
    if not y[x0] > 0:
        return None
    m = float(np.sum(y))
    if not (m > 0 and math.isfinite(m)):
        return None
    m_up = m * (1.0 + N * U * 1.01) + 1e-300  # >= sum y (pairwise sum of N non-negative terms)
    m2m1 = (m_up * m_up - 1.0) + 4.0 * U * max(1.0, m_up * m_up)  # >= m^2 - 1
    need = -log_cut / (0.5 * n)  # 1 - |z|^2 >= need implies n log|z| <= (n / 2) log(1 - need) <= log_cut
    b_hi = math.pi
    lo_ok = None  # every beta in [lo_ok, pi] certified
    first = 2.0 * math.pi / N
    while b_hi > first:
        b_lo = max(b_hi / ratio, first * (1.0 - 1e-12))
        D = max(1, int(math.pi / b_hi * (1.0 - 1e-12)))
        W = min(max(D, W_MIN), (N - 1) // 2)
        s = (pair_bound(y, x0, W, b_lo, b_hi) - m2m1) * (1.0 - 4.0 * U)  # <= 1 - |z(beta)|^2 on [b_lo, b_hi]
        if not s * (1.0 - 4.0 * U) >= need * (1.0 + 4.0 * U):
            break
        lo_ok = b_lo
        b_hi = b_lo
    if lo_ok is None:
        return None
    # every beta >= lo_ok is certified: k > K implies 2 pi k / N > lo_ok
    K = max(0, math.ceil(lo_ok * N / (2.0 * math.pi) * (1.0 + 1e-12)))
    if max_K is not None and K > max_K:
        return None
    return min(K, N // 2)


def pruned_spectrum(y: np.ndarray, count: int, work: float, ratio: float, power: Callable,
                    dft_low: Callable | None = None) -> tuple[np.ndarray, float, float] | None:
    """:func:`~.fft.spectrum`'s (Q, err_Q, norm_Q) for one part without the forward FFT (docs/accountant_tail.md §70.3),
    or None where it does not apply (the caller then runs the FFT): the folded pmf y (N = y.size), the cut K of
    :func:`cut`, and the power step ``power`` (the compiled kernel, ``fft.kernels().power``) on the K + 2 frequencies 0..K+1 with every k <= K recomputed by its accurate DFT from
    y (a placeholder estimate 1 with componentwise bound 2^-1000 and threshold 2^-1020 makes each k <= K a candidate;
    only where all K + 1 were recomputed, i.e. (K + 1) nnz(y) within ``work``, is the result used) and k = K + 1 given
    as 0 (the kernel skips it). Every frequency K < k <= N // 2 holds Q~_k = 0 against |Q_k| = |z_k|^count <= e^-760
    < 1e-300 (Lemma 70.1), charged as 1e-300 sqrt(2 (N // 2 - K)) on err_Q; norm_Q is the kernel's (Q~ is 0 above).
    With ``dft_low`` (the compiled ``dft_low``, docs/accountant_tail.md §72.3) the frequencies k <= K come from the
    DFT by blocks with a Taylor expansion of the phase with its bound e, given to the power step as its componentwise
    bound (no accurate DFT), where (K + 1) min(nnz, N / 64) (frequencies times blocks) fits ``work``."""
    n, N = int(count), int(y.size)
    if n < 2 or N < 16:
        return None
    K = cut(y, float(n), ratio)
    if K is None or K + 2 > N // 2 + 1:
        return None
    nnz = max(1, int(np.count_nonzero(y)))
    if dft_low is not None and (K + 1) * min(nnz, -(-N // 64)) <= work:  # (docs/accountant_tail.md §72.3)
        zl, e = dft_low(y, K)
        if not math.isfinite(e):
            return None
        z = np.zeros(K + 2, dtype=np.complex128)
        z[:K + 1] = zl
        Q, err, qn, _ = power(z, float(n), float(e), N, y, 0.0, 0.0)
        return _pruned_out(Q, err, qn, N, K)
    if (K + 1) > int(work / nnz):
        return None
    z = np.zeros(K + 2, dtype=np.complex128)
    z[:K + 1] = 1.0
    Q, err, qn, rec = power(z, float(n), 2.0 ** -1000, N, y, 2.0 ** -1020, work)
    if int(rec) != K + 1:
        return None
    return _pruned_out(Q, err, qn, N, K)


def _pruned_out(Q: np.ndarray, err: float, qn: float, N: int, K: int) -> tuple[np.ndarray, float, float]:
    """The half spectrum Q~ (0 above K + 1), err_Q with Lemma 70.1's charge above K, and norm_Q (docs/accountant_tail.md
    §70.3)."""
    out = np.zeros(N // 2 + 1, dtype=np.complex128)
    out[:K + 2] = Q
    err_Q = (err + 1e-300 * math.sqrt(2.0 * (N // 2 - K))) * (1.0 + 4.0 * U)
    return out, err_Q, qn


__all__ = ["LOG_CUT", "W_MIN", "cut", "pair_bound", "pruned_spectrum"]
