"""Independent mpmath references for tests/test_review_rev_krr6.py (no sharpdp code is used here).

delta_j(eps) of shuffled binary RR (docs/sharp_krr.md Proposition 1): class j of n users,
U_j = Bin(j, p) + Bin(n - 1 - j, q), delta_j = sum_c (a U(c - 1) - b U(c))_+ with
a = p - e^eps q, b = e^eps p - q, p = e^eps0 / (1 + e^eps0).

* ``small_class_deltas``: every class, full enumeration of the count law (80 digits).
* ``class_delta``: one class at any n by the threshold form (U_j is log-concave, §3):
  delta_j = max_t [a U(t - 1) - (b - a) P(U >= t)], U(t) one dot product of the two binomial pmfs
  (each kept where pmf >= 1e-420 of its mode: the mass left out is < 1e-410, far below every value
  used), 60 digits.
"""

from __future__ import annotations

import mpmath as mp


def _pq(e0):
    E0 = mp.mpf(e0)
    return 1 / (1 + mp.e**-E0), 1 / (1 + mp.e**E0)  # (q not as 1 - p: no cancellation at large eps0)


def _ab(e0, eps):
    p, q = _pq(e0)
    t = mp.e**mp.mpf(eps)
    return p - t * q, t * p - q


def small_laws(e0: float, n: int) -> list:
    """U_j as full lists of length n (80 digits), j = 0..n-1."""
    out = []
    with mp.workdps(80):
        p, q = _pq(e0)
        for j in range(n):
            A = [mp.binomial(j, k) * p**k * q**(j - k) for k in range(j + 1)]
            B = [mp.binomial(n - 1 - j, k) * q**k * p**(n - 1 - j - k) for k in range(n - j)]
            U = [mp.mpf(0)] * n
            for i, x in enumerate(A):
                for k, y in enumerate(B):
                    U[i + k] += x * y
            out.append(U)
    return out


def small_class_deltas(e0: float, eps: float, laws: list) -> list:
    if eps >= e0:  # a <= 0: exactly 0 (a computed here would be rounding noise ~1e-80)
        return [mp.mpf(0)] * len(laws)
    with mp.workdps(80):
        a, b = _ab(e0, eps)
        res = []
        for U in laws:
            n = len(U)
            res.append(sum(max(a * (U[c - 1] if c else 0) - b * (U[c] if c < n else 0), 0) for c in range(n + 1)))
        return res


def _window(m, pi, pi_c, cut_log10=-420):
    """(lo, pmf list) of Bin(m, pi) where pmf >= 10^cut_log10 times its mode."""
    if m == 0:
        return 0, [mp.mpf(1)]
    k0 = int(mp.floor((m + 1) * pi))
    k0 = min(max(k0, 0), m)
    logpmf0 = mp.log(mp.binomial(m, k0)) + k0 * mp.log(pi) + (m - k0) * mp.log(pi_c)
    thr = mp.mpf(10) ** cut_log10
    ratio_up = pi / pi_c
    vals_up, v, k = [], mp.mpf(1), k0
    while k < m:
        v = v * (m - k) / (k + 1) * ratio_up
        k += 1
        if v < thr:
            break
        vals_up.append(v)
    vals_dn, v, k = [], mp.mpf(1), k0
    while k > 0:
        v = v * k / (m - k + 1) / ratio_up
        k -= 1
        if v < thr:
            break
        vals_dn.append(v)
    scale = mp.e**logpmf0
    pmf = [x * scale for x in vals_dn[::-1]] + [scale] + [x * scale for x in vals_up]
    return k0 - len(vals_dn), pmf


TINY = mp.mpf("1e-329")


def class_delta(e0: float, eps: float, n: int, j: int, dps: int = 60, deep: bool = True):
    """delta_j(eps) for class j of n users (threshold form), as an mpf. The windows are deepened until
    the value is at least 1e80 times the cut (so the left-out mass cannot matter). deep=False: a value
    below 1e-330 at the first cut is returned as TINY = 1e-329, an upper bound (the windows' left-out
    mass changes the value by < 1e-410)."""
    if eps >= e0:  # a <= 0: exactly 0
        return mp.mpf(0)
    cut = -420
    while True:
        v = _class_delta(e0, eps, n, j, dps, cut)
        if not deep and v < mp.mpf("1e-330"):
            return TINY
        if v == 0 or v > mp.mpf(10) ** (cut + 80):
            return v
        cut = min(2 * cut, int(mp.log10(v)) - 120)


def _class_delta(e0, eps, n, j, dps, cut):
    with mp.workdps(dps):
        p, q = _pq(e0)
        a, b = _ab(e0, eps)
        if a <= 0:
            return mp.mpf(0)
        la, A = _window(j, p, q, cut)
        lb, B = _window(n - 1 - j, q, p, cut)
        if len(A) > len(B):
            la, A, lb, B = lb, B, la, A
        Bt = [mp.mpf(0)] * (len(B) + 1)  # Bt[l] = sum B[l:]
        for l in range(len(B) - 1, -1, -1):
            Bt[l] = Bt[l + 1] + B[l]
        c_lo, c_hi = la + lb, la + lb + len(A) + len(B) - 2

        def U(c):
            k = c - la - lb
            i1, i2 = max(0, k - len(B) + 1), min(len(A) - 1, k)
            if i2 < i1:
                return mp.mpf(0)
            return mp.fdot(A[i1:i2 + 1], [B[k - i] for i in range(i1, i2 + 1)])

        def tail(c):
            k = c - la - lb
            s = mp.mpf(0)
            terms = []
            for i in range(len(A)):
                l = k - i
                if l >= len(B):
                    continue
                terms.append(A[i] * Bt[max(l, 0)])
            s = mp.fsum(terms)
            return s

        def tau(c):
            return a * U(c - 1) - b * U(c)

        # smallest c in [c_lo, c_hi + 1] with tau(c) > 0 (tau(c_hi + 1) = a U(c_hi) > 0)
        lo_c, hi_c = c_lo, c_hi + 1
        if tau(lo_c) > 0:
            hi_c = lo_c
        while hi_c - lo_c > 1:
            mid = (lo_c + hi_c) // 2
            if tau(mid) > 0:
                hi_c = mid
            else:
                lo_c = mid
        t = hi_c
        return max(a * U(c - 1) - (b - a) * tail(c) for c in (t - 1, t, t + 1))
