"""Certified binomial windows and the coefficients of shuffled binary RR (docs/sharp_krr.md §3, §4.1-4.4)."""

from __future__ import annotations

import functools
import math
import threading
from collections import OrderedDict

import numpy as np

#: Each binomial window leaves out mass <= exp(-nats) on each side (Chernoff bound), for nats in
#: TAIL_LEVELS: the first level's tables serve values >= ~1e-28 (its truncation charge is then a
#: relative 1e-6); deeper levels are built on demand for smaller values (down to the double range).
TAIL_LEVELS = (80.0, 300.0, 745.0)
UROUND = 2.0**-53  # unit roundoff
#: Relative error allowed to one libm call (log, log1p, exp, expm1): 4 ulp, an assumption on
#: the platform's libm (glibc documents <= 2-4 ulp for these) - docs/sharp_krr.md §4.
ULP_CALL = 8 * UROUND


@functools.lru_cache(maxsize=1 << 16)
def chernoff_edges(m: int, pi: float, pi_c: float, nats: float) -> tuple[int, int]:
    """Smallest window [lo, hi] of Bin(m, pi) whose two tails each have mass <= exp(-(nats + 1)).

    ``pi_c`` is 1 - pi, passed separately (accurate when pi rounds to 1, e.g. p at eps0 = 300).

    Chernoff: P(X >= k) <= exp(-m KL(k/m || pi)) for k >= m pi and P(X <= k) likewise for
    k <= m pi (KL the Bernoulli relative entropy). The edges are found where m KL >= nats + 1 (the
    extra nat covers the rounding of KL, whose relative error is far below 1/nats).
    """
    if m == 0:
        return 0, 0
    need = nats + 1.0
    mean = m * pi

    def tail_exponent(k: int) -> float:
        x = k / m
        t1 = x * math.log(x / pi) if x > 0 else 0.0
        t2 = (1 - x) * math.log((1 - x) / pi_c) if x < 1 else 0.0
        return m * (t1 + t2)

    # m KL(k/m || pi) decreases on [0, mean] and increases on [mean, m]: bisection for the edges
    lo = 0
    if tail_exponent(0) >= need:  # largest k < mean with exponent >= need, plus one
        a, b = 0, math.floor(mean)  # exponent(a) >= need; b is the last point at or below the mean
        if tail_exponent(b) >= need:
            a = b
        while b - a > 1:
            mid = (a + b) // 2
            a, b = (mid, b) if tail_exponent(mid) >= need else (a, mid)
        lo = a + 1
    hi = m
    if tail_exponent(m) >= need:  # smallest k > mean with exponent >= need, minus one
        a, b = math.ceil(mean), m  # exponent(b) >= need
        if tail_exponent(a) >= need:
            b = a
        while b - a > 1:
            mid = (a + b) // 2
            a, b = (a, mid) if tail_exponent(mid) >= need else (mid, b)
        hi = b - 1
    return lo, hi


#: Windows already computed in this process, shared by every accountant (a window is a pure function of
#: its arguments, and accountants of one eps0 at different n, or made afresh for each call, ask for the
#: same ones); the least recently used are dropped beyond _WINDOW_ELEMENTS pmf entries in all.
_WINDOWS: OrderedDict[tuple[int, float, int, int, float], tuple[np.ndarray, float]] = OrderedDict()
_WINDOW_ELEMENTS = 8_000_000  # 64 MB
_window_elements = [0]
_WINDOWS_LOCK = threading.Lock()


def binom_window(m: int, log_odds: float, lo: int, hi: int, nats: float) -> tuple[np.ndarray, float]:
    """Bin(m, pi) pmf on [lo, hi] (a window leaving out <= e^-(nats + 1) per tail) and a bound on its
    entrywise relative error; log_odds = log(pi / (1 - pi)) (+-eps0 for RR, exact). The pmf returned is
    read-only (it may be shared with other callers: the windows are memoised).
    """
    key = (m, log_odds, lo, hi, nats)
    with _WINDOWS_LOCK:
        got = _WINDOWS.get(key)
        if got is not None:
            _WINDOWS.move_to_end(key)
            return got
    got = _binom_window(m, log_odds, lo, hi, nats)
    got[0].flags.writeable = False
    with _WINDOWS_LOCK:
        if key not in _WINDOWS:
            _WINDOWS[key] = got
            _window_elements[0] += got[0].size
        while _window_elements[0] > _WINDOW_ELEMENTS and len(_WINDOWS) > 1:
            _window_elements[0] -= _WINDOWS.popitem(last=False)[1][0].size
    return got


def _binom_window(m: int, log_odds: float, lo: int, hi: int, nats: float) -> tuple[np.ndarray, float]:
    """:func:`binom_window` computed.

    docs/sharp_krr.md §4.2: the log-ratios log pmf(i) - log pmf(i - 1) = log((m - i + 1)/i) + log_odds
    are summed outward from the mode (no log-gamma: its cancellation costs ~ u log-gamma(m) in the
    log, 1e-5 at m = 1e9), exponentiated and normalised by their window sum; the true normalisation
    differs by at most the left-out mass 2 e^-(nats + 1).
    """
    if m == 0:
        return np.ones(1), 0.0
    pi = 1.0 / (1.0 + math.exp(-log_odds))
    k0 = min(max(math.floor((m + 1) * pi), lo), hi)  # the mode (up to rounding: any anchor is valid)
    up_i = np.arange(k0 + 1, hi + 1, dtype=np.float64)
    dn_i = np.arange(k0, lo, -1, dtype=np.float64)  # pmf(i - 1) / pmf(i) for i = k0, k0 - 1, ..., lo + 1
    errs = []
    sides = []
    for i, sign in ((up_i, 1.0), (dn_i, -1.0)):
        ratio = (m - i + 1.0) / i  # exact integers (m <= 1e9 < 2^53), one rounding
        lr = np.log(ratio)
        t = sign * (lr + log_odds)
        s_side = np.cumsum(t)
        # per term: the ratio's rounding (u in the log), the log (8u of it), the addition (u of t);
        # the running sums: u of each partial sum; all accumulated along the side (1.01 margin)
        err = 1.01 * (np.sum(UROUND + ULP_CALL * np.abs(lr) + UROUND * np.abs(t)) + UROUND * np.sum(np.abs(s_side)))
        errs.append(float(err))
        sides.append(s_side)
    logw = np.concatenate([sides[1][::-1], [0.0], sides[0]])  # positions lo .. hi
    w = np.exp(logw)
    total = float(np.sum(w))
    pmf = w / total
    e_log = max(errs)  # every entry's log within e_log; the window sum within e^e_log relative too
    tails = 2.0 * math.exp(-(nats + 1.0)) * (1 + 4 * ULP_CALL)
    # the true pmf is the window's normalised one times a factor in [1 - tails, 1]: relative error
    # (1 + x)/(1 - tails) - 1 = (x + tails)/(1 - tails) (x + tails alone is short by tails^2, which
    # matters at shallow levels: m = 10, pi = 1/2, nats just below 10 log 2 - 1)
    x = math.expm1(2 * e_log + 2 * ULP_CALL + 1.01 * (w.size + 2) * UROUND)
    rel = (x + tails) / (1.0 - tails)  # (the same double as x + tails wherever tails < u/2)
    return pmf, rel


class RR:
    """Constants of binary RR with local parameter eps0, and the error bound of its coefficients."""

    def __init__(self, epsilon0: float) -> None:
        self.epsilon0 = e0 = float(epsilon0)
        # log p = -log1p(e^-eps0), log q = log p - eps0 (exact identities; rounding in binom_window)
        self._log_p = -math.log1p(math.exp(-e0))
        self._log_q = self._log_p - e0
        self._p = math.exp(self._log_p)
        self._q = math.exp(self._log_q)

    def _coef_rel(self, z: float) -> float:
        """Relative error bound of p or q times expm1(z), z = eps -+ eps0 computed in floating point."""
        if z == 0.0:
            return 0.0
        # rounding of the argument dz = |z| u and |d/dz log|expm1 z|| = e^z / |expm1 z| <= 1/|z| + 1
        # (for all z != 0): dz (1/|z| + 1) = u (1 + |z|), written without 1/|z| (which overflows for
        # subnormal z, and dz underflows: 0 * inf)
        # p (or q) = exp(log p) with log p within (2 ULP_CALL + u)|log p| and |log q| <= eps0 + 1:
        # relative error <= ULP_CALL + (eps0 + 1)(2 ULP_CALL + u); expm1 within ULP_CALL
        p_rel = ULP_CALL + (self.epsilon0 + 1) * (2 * ULP_CALL + UROUND)
        return p_rel + ULP_CALL + UROUND * (1 + abs(z)) * 1.01 + 2 * UROUND


__all__ = ["RR", "TAIL_LEVELS", "UROUND", "ULP_CALL", "binom_window", "chernoff_edges"]
