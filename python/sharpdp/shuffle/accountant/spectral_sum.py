"""The engine's window sum taken in the frequency domain (docs/accountant_tail.md §65).

The lattice engine's value E = sum_{s in W, s > 0} s h e^{-theta s h} q(s) over the window W = {sa, ..., sa + N - 1}
of the circular n-fold pmf q (position r of q holds s = n k0 + r mod N) is, by Parseval, (1/N) sum_k Q_k Phi_k with Q
the pmf's spectrum and Phi_k = sum_{s in W, s > 0} s h e^{-theta s h} e^{2 pi i k (s - n k0) / N} the weights' (a
geometric sum in closed form). At n >= 1e7 the computed half spectrum Q~ of the power step is exactly 0 but at a few
dozen low frequencies (z^n underflows), so the sum has a few dozen terms and the inverse FFT and the O(N) window loop
are not run. :func:`window_sum` returns E~ and a certified bound of |E_true - E~| (Lemma 65.1): the power step's
err_Q times a closed-form bound of the weights' l2 norm over sqrt(N), the weights Phi_k's enclosures (complex ball
arithmetic, :class:`Ball`) against Q~, and the final sum's rounding; or None where it does not apply (the caller then
takes the inverse FFT, as before). Switch ``limits.BODY43_SPECTRAL_SUM`` (off: main's floats).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sharpdp.shuffle.accountant.limits import U

#: at most this many non-zero frequencies, all at k <= N / 8 (else None: the inverse FFT runs)
MAX_TERMS = 4096
#: the sum's own error (enclosures and rounding) at most this fraction of |E~| (else None: the inverse FFT runs)
OWN_REL = 1e-8


@dataclass(frozen=True)
class Ball:
    """Complex enclosures: the true value lies within ``r`` of the computed ``z`` (arrays over the frequencies)."""

    z: np.ndarray
    r: np.ndarray

    def __add__(self, o: Ball) -> Ball:
        z = self.z + o.z  # each part rounded once: |error| <= u |exact| <= 2u |z| (|z| >= (1 - u) |exact|)
        return Ball(z, (self.r + o.r + 2 * U * np.abs(z)) * (1 + 8 * U))

    def __mul__(self, o: Ball) -> Ball:
        z = self.z * o.z  # the naive complex product: |error| <= sqrt(5) u |a| |b| (Brent, Percival, Zimmermann 2007)
        a, b = np.abs(self.z), np.abs(o.z)
        return Ball(z, (a * o.r + b * self.r + self.r * o.r + 3 * U * a * b) * (1 + 8 * U))

    def scale(self, c: float) -> Ball:
        """Times the exact double ``c``."""
        z = self.z * c
        return Ball(z, (abs(c) * self.r + 2 * U * np.abs(z)) * (1 + 8 * U))

    def inv(self) -> Ball | None:
        """1 / self, or None where an enclosure may contain 0 or leave double's comfortable range."""
        a = np.abs(self.z)
        if not (np.all(self.r < 0.5 * a) and np.all(a > 1e-150) and np.all(a < 1e150)):
            return None
        n2 = self.z.real * self.z.real + self.z.imag * self.z.imag  # relative error <= 2u + u^2
        z = np.conj(self.z) / n2  # each part: one more rounding, and the error of n2: <= 4u |1 / z| in all
        # |1/x - 1/z| <= r / (|z| (|z| - r)) for |x - z| <= r < |z|
        return Ball(z, (self.r / (a * (a - self.r)) + 5 * U / a) * (1 + 8 * U))


def phasor(m: np.ndarray, N: int) -> Ball:
    """Enclosures of e^{2 pi i m / N} (integers m, reduced here to (-N/2, N/2]): the angle's rounding (3 roundings
    of |angle| <= pi, and 2 pi's own: <= 9.5u) and libm's cos, sin within 4 ulp each (F3 assumes 2): radius 32u."""
    mr = np.where(m > N // 2, m - N, m).astype(np.float64)
    ang = (2.0 * math.pi) * mr / float(N)
    return Ball(_libm(math.cos, ang) + 1j * _libm(math.sin, ang), np.full(m.shape, 32 * U))


def _libm(f, x: np.ndarray) -> np.ndarray:
    """``f`` (math.sin or math.cos: libm, assumption F3 of docs/accountant.md §3.6.4) at each entry of ``x``."""
    return np.array(list(map(f, x.tolist())), dtype=np.float64).reshape(x.shape)  # (the same calls as a loop)


def real_exp_ball(x: float, size: int) -> Ball:
    """Enclosure of e^{-x} for x = (an integer) x (theta h) >= 0 computed as one product of doubles: the product's
    rounding moves the exponent by <= u x, exp is within 1 ulp; 1e-300 absolute covers underflow."""
    v = math.exp(-x)
    return Ball(np.full(size, v + 0j), np.full(size, v * (2 * x + 4) * U + 1e-300))


def fnorm_bound(h: float, theta: float) -> float:
    """An upper bound of ||(s h)_+ e^{-theta s h}||_2 over every integer s >= 1 (>= the window's): the sum
    h^2 x (1 + x) / (1 - x)^3, x = e^{-2 theta h}, with every rounding covered by the factor 1 + (8 t + 64) u."""
    t = 2.0 * theta * h
    if not t <= 600.0:  # (x would leave the normal range and the bound round to 0; the engine's theta h <= 300)
        return math.inf
    x = math.exp(-t)
    om = -math.expm1(-t)
    if not om > 0:
        return math.inf
    v = h * h * x * (1.0 + x) / (om * om * om)
    return math.sqrt(v) * (1.0 + (8.0 * t + 64.0) * U)


def _mul_mod(ks: np.ndarray, c: int, N: int) -> np.ndarray:
    """(k c) mod N in [0, N) for the non-negative integers ``ks`` (int64): in int64 where every product fits (numpy's
    % of int64 takes the divisor's sign, as Python's), else with Python's integers; the same integers either way."""
    kmax = int(ks.max()) if ks.size else 0
    if kmax * abs(int(c)) < 2**62 and abs(int(c)) < 2**62:
        return (ks.astype(np.int64) * np.int64(c)) % np.int64(N)
    return np.array([(int(k) * int(c)) % N for k in ks.tolist()], dtype=np.int64)


def window_sum(Q: np.ndarray, err_Q: float, N: int, nk0: int, sa: int, h: float, theta: float
               ) -> tuple[float, float] | None:
    """(E~, its certified error bound) of the engine's window sum from the half spectrum ``Q`` (rfft layout) with
    ``err_Q`` >= ||Q_true - Q||_2 over the full spectrum (docs/accountant_tail.md §65.1, Lemma 65.1), or None where
    more than MAX_TERMS frequencies are non-zero, one lies above N / 8, or an enclosure is too wide (the caller runs
    the inverse FFT then: a choice of which certified computation runs)."""
    if not (theta > 0 and h > 0 and N >= 16):
        return None
    top = N // 8 + 1
    if Q[top:].any():  # (a frequency above N / 8 is non-zero)
        return None
    ks = np.flatnonzero(Q[:top])
    if ks.size > MAX_TERMS:
        return None
    s1 = max(sa, 1)
    J = sa + N - s1  # the window's nodes s >= 1: s1, ..., s1 + J - 1
    fn = fnorm_bound(h, theta)
    if not math.isfinite(fn):
        return None
    if J <= 0 or ks.size == 0:
        return 0.0, err_Q * fn / math.sqrt(N) * (1 + 4 * U)
    if J >= 2**52 or s1 >= 2**52:
        return None
    m = ks.size
    t = theta * h
    # D = 1 - rho, rho = r e^{i beta}, beta = 2 pi k / N, r = e^{-theta h}: Re D = (1 - r) + 2 r sin^2(beta / 2)
    # (two non-negative terms, no cancellation), Im D = -r sin beta
    kf = ks.astype(np.float64)
    x = math.pi * kf / float(N)  # beta / 2 <= pi / 16
    r = math.exp(-t)
    sx = _libm(math.sin, x)
    sb = _libm(math.sin, 2.0 * x)
    cb = _libm(math.cos, 2.0 * x)
    om1r = -math.expm1(-t)
    d_re = om1r + 2.0 * r * sx * sx
    d_im = -r * sb
    dz = d_re + 1j * d_im
    D = Ball(dz, np.abs(dz) * (2 * t + 64) * U)
    rho = Ball(r * cb + 1j * (r * sb), np.full(m, r * ((2 * t + 64) * U)))
    P = real_exp_ball(J * t, m) * phasor(_mul_mod(ks, J, N), N)
    e0 = real_exp_ball(s1 * t, m) * phasor(_mul_mod(ks, s1 - nk0, N), N)
    one = Ball(np.ones(m, dtype=complex), np.zeros(m))
    oneP = one + P.scale(-1.0)
    # sum_{j < J} (s1 + j) rho^j = [s1 (1 - P)(1 - rho) + rho - J P + (J - 1) rho P] / (1 - rho)^2, P = rho^J
    num = (oneP * D).scale(float(s1)) + rho + P.scale(-float(J)) + (rho * P).scale(float(J - 1))
    iD = D.inv()
    if iD is None:
        return None
    Phi = (e0 * num * iD * iD).scale(h)
    if not (np.all(np.isfinite(Phi.z)) and np.all(np.isfinite(Phi.r))):
        return None
    Qk = Q[ks]
    w = np.where((ks == 0) | ((N % 2 == 0) & (ks == N // 2)), 1.0, 2.0)
    a, b, c, d = Qk.real, Qk.imag, Phi.z.real, Phi.z.imag
    S = math.fsum((w * (a * c - b * d)).tolist())  # correctly rounded sum of the computed terms
    E = S / N
    A = float(np.sum(w * (np.abs(a * c) + np.abs(b * d)))) * (1 + 1e-6)  # (w (a c - b d): 2u + u^2 of |ac| + |bd|)
    own = (float(np.sum(w * np.abs(Qk) * Phi.r)) * (1 + 1e-6) / N  # the weights' enclosures
           + 3 * U * A / N + 2 * U * abs(S) / N * (1 + 1e-6))  # the terms' and the sum's rounding, and / N
    if not (math.isfinite(E) and math.isfinite(own) and own <= OWN_REL * abs(E)):
        return None
    err = (err_Q * fn / math.sqrt(N) + own) * (1 + 1e-9)  # + Q's error against the weights' l2 norm (Parseval)
    if not math.isfinite(err):
        return None
    return E, err


__all__ = ["Ball", "MAX_TERMS", "OWN_REL", "fnorm_bound", "phasor", "real_exp_ball", "window_sum"]
