"""The jump term's window sums by Parseval from the power step's few non-zero frequencies (docs/accountant_tail.md §66).

The jump term of :mod:`.jump` sums two weights over the window of the untilted (n - 1)-fold lattice law: the ramp
(x + T0)_+ and phi_c (tau(-x) for x <= -T0, tau(T0) + c (x + T0) beyond). On the nodes x = s h > -T0 both are
linear in s, so their transforms are :func:`~.spectral_sum.geometric`'s closed forms at r = 1 (T0 = m0 h, an
integer m0); below -T0 phi_c's computed weights (the stop-loss grid's) are transformed directly on the nodes where
they exceed a cut (:func:`partial_dft`, by blocks and one matrix product), the rest bounded by the largest weight
there times the exact circular pmf's mass. :func:`window_sums` returns each weight's (E~, certified error) by
Lemma 65.1 (:func:`~.spectral_sum.finish`), or None where a part does not apply (the caller then runs the inverse
FFT, as before). Switch ``limits.BODY44_JUMP_SPECTRAL`` (off: main's floats).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.accountant.spectral_sum import Ball, finish, frequencies, geometric, phasor

#: at most this many nodes of phi_c's part below -T0 are transformed directly (else None: the inverse FFT runs)
MAX_TAU_NODES = 1 << 15


@dataclass(frozen=True)
class Linear:
    """A weight on the window's nodes s (x = s h): ``w`` (the computed weights, as the inverse FFT's sum takes them)
    where s <= -m0 (x <= -T0), ``const`` + ``slope`` h (s + m0) beyond (``const``, ``slope`` >= 0 exact doubles);
    ``norm`` >= its l2 norm over the window."""

    w: np.ndarray
    const: float
    slope: float
    norm: float


def partial_dft(w: np.ndarray, ks: np.ndarray, N: int, pos0: int) -> Ball:
    """Enclosures of sum_{j < M} w_j e^{2 pi i k (pos0 + j) / N} (real w of M >= 1 entries) at the frequencies ``ks``:
    by blocks of L nodes, sum_b e^{2 pi i k (pos0 + b L) / N} sum_{l < L} w_{bL+l} e^{2 pi i k l / N}, the inner sums as
    one real matrix product per part. Radius (docs/accountant_tail.md §66.1, Lemma 66.2): (80 + 2 L + 2 B) u sum|w|
    (the phasors' 32u each, the products' sqrt(2) gamma_L and gamma_B, the complex products' sqrt(5) u)."""
    M = w.size
    L = max(16, int(math.isqrt(M)))
    B = -(-M // L)
    W = np.zeros(B * L)
    W[:M] = w
    W = W.reshape(B, L).T  # (L, B): block b's nodes in column b
    kk = ks.astype(np.int64)
    A = phasor((kk[:, None] * np.arange(L, dtype=np.int64)[None, :] % N).ravel(), N)
    Bk = phasor((kk[:, None] * ((pos0 + L * np.arange(B, dtype=np.int64)) % N)[None, :] % N).ravel(), N)
    Az = A.z.reshape(ks.size, L)
    Y = (Az.real @ W) + 1j * (Az.imag @ W)  # (K, B)
    z = np.sum(Bk.z.reshape(ks.size, B) * Y, axis=1)
    S = float(np.sum(np.abs(w))) * (1 + 1e-6)
    return Ball(z, np.full(ks.size, (80 + 2 * L + 2 * B) * U * S * (1 + 1e-6)))


def window_sums(Q: np.ndarray, err_Q: float, N: int, p0: int, sa: int, h: float, m0: int, weights: list[Linear],
                mass: float, cut: float) -> list[tuple[float, float]] | None:
    """(E~, certified error) of sum_r w_r q_r for each weight of ``weights`` on the window's N nodes s = sa, ...,
    sa + N - 1 (node s at position (s - p0) mod N of the circular pmf whose half spectrum ``Q`` is within ``err_Q`` of
    the exact one in l2 over the full spectrum; docs/accountant_tail.md §66.1, Lemma 66.1), or None where a part does
    not apply. ``mass`` >= the exact circular pmf's total mass (the pmf >= 0; inf: nothing is left out); ``cut``: below -T0, the nodes before the last one
    whose weight exceeds ``cut`` are left out, each sum's error charged the largest weight there times ``mass``
    (a choice of which certified computation runs)."""
    if not (h > 0 and N >= 16 and mass >= 0.0):
        return None
    if not math.isfinite(mass):
        cut = 0.0  # (only the weights 0 are left out then)
    ks = frequencies(Q, N)
    if ks is None:
        return None
    s1 = max(sa, 1 - m0)  # (the linear part's first node: x > -T0)
    J = sa + N - s1
    k = min(max(s1 - sa, 0), N)  # (positions 0 .. k - 1: x <= -T0)
    if ks.size == 0:
        return [(0.0, err_Q * wt.norm / math.sqrt(N) * (1 + 4 * U)) for wt in weights]
    if abs(s1) >= 2**40 or abs(p0) >= 2**52 or J >= 2**40 or abs(s1 + m0) >= 2**40:
        return None
    lin = geometric(ks, N, p0, s1, J, s1 + m0, 0.0, const=True) if J > 0 else None
    if J > 0 and (lin is None or lin[1] is None):
        return None
    out = []
    for wt in weights:
        parts: list[Ball] = []
        rem = 0.0
        if J > 0:
            assert lin is not None and lin[1] is not None
            if wt.slope > 0:
                parts.append(lin[0].scale(h).scale(wt.slope))
            if wt.const > 0:
                parts.append(lin[1].scale(wt.const))
        if k > 0:
            wl = wt.w[:k]
            cm = np.maximum.accumulate(wl)
            r0 = int(np.searchsorted(cm, cut, side="right"))  # (cm[:r0] <= cut)
            if r0 > 0 and not float(np.min(wl[:r0])) >= 0.0:
                return None  # (Lemma 66.1's charge needs the left-out weights >= 0)
            rem = float(cm[r0 - 1]) * mass * (1 + 1e-9) if r0 > 0 and cm[r0 - 1] > 0.0 else 0.0
            if k - r0 > MAX_TAU_NODES:
                return None
            if r0 < k and np.any(wl[r0:] != 0.0):
                parts.append(partial_dft(wl[r0:], ks, N, (sa + r0 - p0) % N))
        if not parts:
            out.append((0.0, (err_Q * wt.norm / math.sqrt(N) + rem) * (1 + 1e-9)))
            continue
        Phi = parts[0]
        for p in parts[1:]:
            Phi = Phi + p
        got = finish(Q, ks, Phi, err_Q, wt.norm, N)
        if got is None:
            return None
        out.append((got[0], (got[1] + rem) * (1 + 1e-9)))
    return out


__all__ = ["Linear", "MAX_TAU_NODES", "partial_dft", "window_sums"]
