"""Shared references of the k-RR tests: the sharp accountant kernel's arguments re-derived from
docs/sharp_krr.md §4.4, and the exact blanket divergence of a two-atom law (binary RR) by binomial sums."""

from __future__ import annotations

import functools
import math

import mpmath as mp
import numpy as np
from scipy import stats
from scipy.stats import binom

U = 2.0**-53
ULP = 8 * U


def kernel_args(e0: float, eps: float, n: int, j: int, nats: float) -> tuple:
    """The arguments OneClass._at passes to the class kernel (docs/sharp_krr.md §4.4), re-derived here."""
    lp = -math.log1p(math.exp(-e0))
    p, q = math.exp(lp), math.exp(lp - e0)

    def rel(z: float) -> float:
        return 0.0 if z == 0.0 else ULP + (e0 + 1) * (2 * ULP + U) + ULP + U * (1 + abs(z)) * 1.01 + 2 * U

    a, b, e = -p * math.expm1(eps - e0), q * math.expm1(eps + e0), math.expm1(eps)
    return (e0, p, q, a, b, e, rel(eps - e0), rel(eps + e0), ULP + 2 * U, n, j, nats)


def exact_two_atom(gamma: float, values: np.ndarray, probs: np.ndarray, n: int, width: float = 12.0) -> float:
    """E[(sum_i B_i L_i)_+] / (n gamma) for a two-atom law (a1 < 0 < a2; 0 when L <= 0), B_i ~
    Bernoulli(gamma), by scipy's binomial functions: given M active users, c ~ Bin(M, p2) of them at a2
    and S = c (a2 - a1) + M a1, E[S_+ | M] = (a2 - a1) M p2 P(Bin(M - 1, p2) >= k) + M a1 P(c > k),
    k = floor(-M a1 / (a2 - a1)) (E[c 1{c > k}] = M p2 P(Bin(M - 1, p2) >= k)); summed over M within
    ``width`` sd of n gamma (the mass left out is below 1e-30 for the cases used)."""
    if values.size == 1 or values.max() <= 0.0:
        return 0.0
    (a1, a2), (_, p2) = values, probs
    assert a1 < 0 < a2
    sd = math.sqrt(n * gamma * (1 - gamma))
    M = np.arange(max(1, int(n * gamma - width * sd)), min(n, int(n * gamma + width * sd)) + 1)
    k = np.floor(-M * a1 / (a2 - a1))
    cond = (a2 - a1) * M * p2 * stats.binom.sf(k - 1, M - 1, p2) + M * a1 * stats.binom.sf(k, M, p2)
    return float(np.sum(stats.binom.pmf(M, n, gamma) * np.maximum(cond, 0.0))) / (n * gamma)


def class_delta_scipy(n: int, eps0: float, j: int, eps: float) -> float:
    """delta_j(eps) of docs/sharp_krr.md §3 from full-support scipy pmfs (no threshold form assumed)."""
    p = math.exp(eps0) / (1 + math.exp(eps0))
    q = 1 - p
    N = n - 1
    u = np.convolve(binom.pmf(np.arange(j + 1), j, p), binom.pmf(np.arange(N - j + 1), N - j, q))
    um1 = np.concatenate([[0.0], u])
    u0 = np.concatenate([u, [0.0]])
    a = -p * math.expm1(eps - eps0)
    b = q * math.expm1(eps + eps0)
    return float(np.maximum(a * um1 - b * u0, 0.0).sum())


def class_deltas_mp(e0: float, eps: float, n: int) -> list:
    """delta_j(eps) of every class j = 0..n-1 (docs/sharp_krr.md §3: sum_c (a U_j(c - 1) - b U_j(c))_+) by
    enumeration, at the current mpmath precision; q from 1 / (1 + e^e0) (not 1 - p, which cancels at large e0)."""
    p, q, laws = _class_laws_mp(e0, n, mp.mp.prec)
    t = mp.e ** mp.mpf(eps)
    a, b = p - t * q, t * p - q
    N = n - 1
    out = []
    for U in laws:
        out.append(mp.fsum(max(a * (U[c - 1] if c >= 1 else 0) - b * (U[c] if c <= N else 0), 0)
                           for c in range(N + 2)))
    return out


@functools.lru_cache(maxsize=16)
def _class_laws_mp(e0: float, n: int, prec: int) -> tuple:
    """(p, q, the law U_j of every class j) of :func:`class_deltas_mp` at ``prec`` bits (the current precision
    of its caller): independent of eps, so shared by the eps asked at one (e0, n) (a pure function of its
    arguments; mpf values are immutable)."""
    with mp.workprec(prec):
        E = mp.mpf(e0)
        p, q = 1 / (1 + mp.e ** (-E)), 1 / (1 + mp.e**E)
        N = n - 1
        laws = []
        for j in range(n):
            A = [mp.binomial(j, i) * p**i * q ** (j - i) for i in range(j + 1)]
            B = [mp.binomial(N - j, i) * q**i * p ** (N - j - i) for i in range(N - j + 1)]
            U = [mp.mpf(0)] * (N + 1)
            for i, x in enumerate(A):
                for k, y in enumerate(B):
                    U[i + k] += x * y
            laws.append(tuple(U))
        return p, q, tuple(laws)


def class_tables_mp(e0: float, fractions, n: int, dps: int = 40) -> list:
    """[(eps, delta_j of every class j)] at eps = f e0 for each f in ``fractions``, by :func:`class_deltas_mp`
    at ``dps`` digits."""
    out = []
    for f in fractions:
        eps = f * e0
        with mp.workdps(dps):
            out.append((eps, class_deltas_mp(e0, eps, n)))
    return out


def trinomial(gamma: float, values: np.ndarray, probs: np.ndarray, n: int) -> float:
    """E[(sum_i B_i L_i)_+] / (n gamma) by summation over the trinomial counts (c1 users at a1 < 0,
    c2 at a2 > 0, the rest inactive): c1 ~ Bin(n, gamma p1), then c2 ~ Bin(n - c1, gamma p2 / (1 -
    gamma p1)), as bench/bench_krr.py's baseline sums it (O(n^2))."""
    (a1, a2), (p1, p2) = values, probs
    q1, q2 = gamma * p1, gamma * p2
    total = 0.0
    # scipy's pmf is elementwise: one call for every c1 and one for all the c2 ranges (concatenated) give the
    # same doubles as two calls per c1 (~100 us); the per-c1 dot products are as before (fresh arrays, in order)
    w1s = stats.binom.pmf(np.arange(n + 1), n, q1)
    c1s = [c1 for c1 in range(n + 1) if w1s[c1] != 0.0]
    if not c1s:
        return total / (n * gamma)
    sizes = [n - c1 + 1 for c1 in c1s]
    c2r = np.concatenate([np.arange(m) for m in sizes])
    w2r = stats.binom.pmf(c2r, np.repeat(n - np.array(c1s), sizes), q2 / (1.0 - q1))
    at = 0
    for c1, m in zip(c1s, sizes):
        c2 = np.arange(m)
        w2 = w2r[at:at + m].copy()
        at += m
        total += w1s[c1] * float(np.dot(w2, np.maximum(c1 * a1 + c2 * a2, 0.0)))
    return total / (n * gamma)
