"""Sharp accountant of shuffled binary randomized response: the mechanism's own delta(eps), certified.

Proof and error budget: docs/sharp_krr.md. In short (replace-one adjacency, k = 2, n users):

- The shuffled output of binary RR is (a bijective function of) the number C of reported ones.
  For neighbouring datasets that differ in user 1 (x1 = 1 vs x1' = 0) and whose other N = n - 1
  users hold j ones, C = Y + U_j with Y ~ Bern(p) vs Bern(q) (p = e^eps0 / (1 + e^eps0),
  q = 1 - p) and U_j = Bin(j, p) + Bin(N - j, q) independent of Y. The law of C depends on the
  other users' data only through j, so the worst case over all datasets is the maximum over the
  N + 1 classes j = 0..N (docs/sharp_krr.md §2); reflection C -> n - C maps the class j of the
  order (x1 = 1, x1' = 0) to the class N - j of the other order, so the maximum over j covers both.
- delta_j(eps) = sum_c (a U_j(c - 1) - b U_j(c))_+ with a = p - e^eps q = -p expm1(eps - eps0) and
  b = e^eps p - q = q expm1(eps + eps0) (docs/sharp_krr.md §3).
- The maximum is NOT attained at "all other users equal" (j = 0 or N) in general: e.g. n = 6,
  eps0 = 1, eps = 0.25 gives 0.1023 at j = 4 against 0.0889 at j in {0, 5} (docs/sharp_krr.md §2.1).
  So every class is covered: at n <= :data:`N_EXACT` each class is tabulated (O(n) classes of
  O(sqrt n) terms); above, class j1 of the population n - (j2 - j1) bounds every class of the
  range [j1, j2] (data processing, docs/sharp_krr.md §2.2), one class costs O(sqrt n) (threshold
  form with certified signs, §4.10) and a branch and bound over ranges of classes brackets the
  maximum (§4.11), up to :data:`N_MAX`; above it use :class:`sharpdp.shuffle.ShuffleAccountant`
  (the blanket bound); :func:`all_equal_delta_bounds` gives a certified lower bound on delta at
  any n <= 1e9.

Evaluation (docs/sharp_krr.md §4): binomial pmfs from summed log-ratios (log space, normalised on
their window) on windows outside which each binomial's tails are below ``exp(-nats)``, nats in
``TAIL_LEVELS`` (Chernoff bound), the windows convolved exactly (sums of positive terms), every rounding bounded by a relative error charged to the
terms, the truncated mass charged as an absolute term; the result is a bracket
``lower <= delta(eps) <= upper`` of the mechanism's delta itself.
"""

from __future__ import annotations

import contextlib
import math
import sys
from typing import Any, Iterator

import numpy as np

from sharpdp import _validation as V
from sharpdp.shuffle.accountant.results import AccountantReport

__all__ = ["N_MAX", "ExactShuffleAccountant", "all_equal_delta_bounds"]

#: Largest number of users covered (n <= N_EXACT: every class j = 0..n-1 tabulated; above: branch and
#: bound over ranges of classes, docs/sharp_krr.md §4.11; above N_MAX use the blanket ShuffleAccountant).
N_MAX = 10**7  # the algorithm runs at 1e9 too (1.7-8 s per get_epsilon): docs/sharp_krr.md §5
#: Each binomial window leaves out mass <= exp(-nats) on each side (Chernoff bound), for nats in
#: TAIL_LEVELS: the first level's tables serve values >= ~1e-28 (its truncation charge is then a
#: relative 1e-6); deeper levels are built on demand for smaller values (down to the double range).
TAIL_LEVELS = (80.0, 300.0, 745.0)
_U = 2.0**-53  # unit roundoff
#: Relative error allowed to one libm call (log, log1p, exp, expm1): 4 ulp, an assumption on
#: the platform's libm (glibc documents <= 2-4 ulp for these) - docs/sharp_krr.md §4.
_ULP_CALL = 8 * _U


def _chernoff_edges(m: int, pi: float, pi_c: float, nats: float) -> tuple[int, int]:
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


def _binom_window(m: int, log_odds: float, lo: int, hi: int, nats: float) -> tuple[np.ndarray, float]:
    """Bin(m, pi) pmf on [lo, hi] (a window leaving out <= e^-(nats + 1) per tail) and a bound on its
    entrywise relative error; log_odds = log(pi / (1 - pi)) (+-eps0 for RR, exact).

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
        err = 1.01 * (np.sum(_U + _ULP_CALL * np.abs(lr) + _U * np.abs(t)) + _U * np.sum(np.abs(s_side)))
        errs.append(float(err))
        sides.append(s_side)
    logw = np.concatenate([sides[1][::-1], [0.0], sides[0]])  # positions lo .. hi
    w = np.exp(logw)
    total = float(np.sum(w))
    pmf = w / total
    e_log = max(errs)  # every entry's log within e_log; the window sum within e^e_log relative too
    tails = 2.0 * math.exp(-(nats + 1.0)) * (1 + 4 * _ULP_CALL)
    rel = math.expm1(2 * e_log + 2 * _ULP_CALL + 1.01 * (w.size + 2) * _U) + tails
    return pmf, rel


class _RR:
    """Constants of binary RR with local parameter eps0, and the error bound of its coefficients."""

    def __init__(self, epsilon0: float) -> None:
        self.epsilon0 = e0 = float(epsilon0)
        # log p = -log1p(e^-eps0), log q = log p - eps0 (exact identities; rounding in _binom_window)
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
        # p (or q) = exp(log p) with log p within (2 _ULP_CALL + u)|log p| and |log q| <= eps0 + 1:
        # relative error <= _ULP_CALL + (eps0 + 1)(2 _ULP_CALL + u); expm1 within _ULP_CALL
        p_rel = _ULP_CALL + (self.epsilon0 + 1) * (2 * _ULP_CALL + _U)
        return p_rel + _ULP_CALL + _U * (1 + abs(z)) * 1.01 + 2 * _U


class _Classes(_RR):
    """The laws U_j of a list of classes j (docs/sharp_krr.md §2) and the certified bracket of
    max_j delta_j(eps) over them (§4); one row per class."""

    def __init__(self, epsilon0: float, n: int, classes: Any) -> None:
        """Constants of the randomizer; the classes' tables are built per tail level on demand."""
        super().__init__(epsilon0)
        self.n = n
        self.classes = list(classes)  # the j of each row
        self._levels: dict[float, tuple[np.ndarray, np.ndarray, float]] = {}

    def _level(self, nats: float) -> tuple[np.ndarray, np.ndarray, float]:
        """(table, relative error per row, truncated mass) of the laws U_j (j = 0..N) on windows
        leaving out <= e^-nats per binomial tail; one row per class, aligned with zero padding."""
        got = self._levels.get(nats)
        if got is not None:
            return got
        N, e0 = self.n - 1, self.epsilon0
        rows, rels = [], []
        edges_p: dict[int, tuple[int, int]] = {}
        edges_q: dict[int, tuple[int, int]] = {}
        for j in self.classes:
            m1, m2 = j, N - j
            if m1 not in edges_p:
                edges_p[m1] = _chernoff_edges(m1, self._p, self._q, nats)
            if m2 not in edges_q:
                edges_q[m2] = _chernoff_edges(m2, self._q, self._p, nats)
            (a0, a1), (b0, b1) = edges_p[m1], edges_q[m2]
            A, ra = _binom_window(m1, e0, a0, a1, nats)
            B, rb = _binom_window(m2, -e0, b0, b1, nats)
            rows.append(np.convolve(A, B))
            terms = min(A.size, B.size)
            # product: ra + rb + u; a sum of `terms` positive terms: (terms - 1) u (1.01 margin)
            rels.append((ra + rb + _U) * 1.01 + 1.01 * terms * _U)
        width = max(r.size for r in rows) + 2  # one zero each side: the terms just outside the window
        table = np.zeros((len(rows), width))
        for j, r in enumerate(rows):
            table[j, 1:1 + r.size] = r
        # mass left out of row j's window (each binomial: two tails of <= e^-(nats + 1))
        cut = 4.0 * math.exp(-nats) * (1 + 4 * _ULP_CALL)
        got = (table, np.array(rels), cut)
        self._levels[nats] = got
        return got

    # ------------------------------------------------------------------ one epsilon
    def bracket(self, eps: float, rows: Any = slice(None), target: float | None = None) -> tuple[float, float, int]:
        """(lower, upper, row index of the maximum among ``rows``) of max_j delta_j(eps) over the rows'
        classes, 0 <= eps < eps0 (docs/sharp_krr.md §4): at the first tail level whose truncation
        charges are below 1e-6 of the upper value (or the last); with a ``target``, also at the first
        level that decides upper <= target or lower > target (get_epsilon's question)."""
        lo, up = self.row_brackets(eps, rows, target)
        j = int(np.argmax(up))
        return float(np.max(lo)), float(up[j]), j

    def row_brackets(self, eps: float, rows: Any = slice(None),
                     target: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per-row (lower, upper) arrays of delta_j(eps), at the tail level :meth:`bracket` chooses."""
        for nats in TAIL_LEVELS:
            lo, up, cut_part = self._bracket_at(eps, rows, nats)
            lo_max, up_max = float(np.max(lo)), float(np.max(up))
            if cut_part <= 1e-6 * up_max or (target is not None and (up_max <= target or lo_max > target)):
                break
        return lo, up

    def _bracket_at(self, eps: float, rows: Any, nats: float) -> tuple[np.ndarray, np.ndarray, float]:
        """Per-row (lower, upper) on the tables of one tail level, and the larger truncation charge
        (of the upper values, a times the left-out mass, or of the lower ones, b times it)."""
        a = -self._p * math.expm1(eps - self.epsilon0)
        b = self._q * math.expm1(eps + self.epsilon0)
        ra = self._coef_rel(eps - self.epsilon0)  # relative error bounds of a and b (§4.4)
        rb = self._coef_rel(eps + self.epsilon0)
        table, rel, cut = self._level(nats)
        T = table[rows]
        rmax = float(np.max(rel[rows]))  # the rows' pmf errors (§4.3), one bound for all rows
        # §4.5: the true term a U(c-1) - b U(c) is at most a(1 + ra)(1 + r) X - b(1 - rb)(1 - r) Y with
        # X, Y the stored values; the coefficients below carry 16u more each side, which covers the
        # rounding of the two products and of the subtraction (|fl(x - y) - (x - y)| <= u(x + y))
        # and of the coefficients themselves; the lower terms symmetrically
        X, Y = T[:, :-1], T[:, 1:]  # U(c - 1), U(c) with c = column + 1
        tmp = X * (a * (1 + ra + rmax + 16 * _U))
        tmp -= Y * (b * (1 - rb - rmax - 16 * _U))
        np.maximum(tmp, 0.0, out=tmp)
        up_sum = tmp.sum(axis=1)
        tmp = X * (a * (1 - ra - rmax - 16 * _U))
        tmp -= Y * (b * (1 + rb + rmax + 16 * _U))
        np.maximum(tmp, 0.0, out=tmp)
        lo_sum = tmp.sum(axis=1)
        w = T.shape[1]
        s = 1.01 * w * _U  # sum of w nonnegative terms
        # the left-out mass (§4.6), and the subnormal range where relative error bounds fail: every
        # stored value and product is within 2^-1074 absolute of its bound, so each U entry within
        # (w + 1) 2^-1074 (w terms, w < width) and a row sum within width (w + 1)(a + b) 2^-1074
        width = T.shape[1]
        # each product's own underflow (<= 2^-1075, not scaled by a or b) is charged too; the charge
        # itself cannot underflow (docs/sharp_krr.md §4.6)
        tiny = width * ((width + 1) * (a + b) + 4.0) * 5e-324 * 2
        charge = a * (1 + ra) * cut * (1 + 2 * _U) + tiny
        up = up_sum * (1 + s) + charge
        lo_charge = b * (1 + rb) * cut * (1 + 2 * _U) + tiny
        lo = np.maximum(lo_sum * (1 - s) - lo_charge, 0.0)
        return lo, np.minimum(up * (1 + 2 * _U), 1.0), max(charge, lo_charge)


# ---------------------------------------------------------------------------------------------- n > N_EXACT
#: At or below this n every class is tabulated (O(n w^2), docs/sharp_krr.md §4.8-4.9), as before;
#: above it one class costs O(w) (§4.10) and the maximum over classes is found by branch and bound
#: over ranges of classes (§4.11).
N_EXACT = 4000
#: Tail levels of the O(w) path: a first, shallower level keeps the windows short (its truncation
#: charge 4 a e^-40 ~ 2e-17 a is below 1e-6 of any value >= 2e-11 a).
FAST_TAIL_LEVELS = (40.0, 80.0, 300.0, 745.0)
_BAND = 8  # half-width of the first band of terms evaluated around the threshold guess
#: Upper values at or below this are not refined further (the bracket is then [lower, upper] with
#: upper <= 1e-290: values this small are near the end of the double range, where the absolute
#: underflow charges of §4.6 dominate and no relative bracket is possible).
_FLOOR = 1e-290
_CACHE_ELEMENTS = 10_000_000  # binomial windows kept (pmf and tail sums), in float64 elements
#: Largest number of ranges of the first partition of the branch and bound (docs/sharp_krr.md §4.11).
_MAX_START = 1024
#: Evaluations the search of _BranchAndBound.decide continues after a first class above the
#: target, for a larger one (a class near the maximum: fewer rounds of get_epsilon).
_WITNESS_EVALS = 64
#: Class evaluations allowed to one max_bracket (get_delta, report) beyond N_EXACT: on reaching it
#: the certified bracket found so far is returned, possibly wider than rel_tol (§4.11).
MAX_BRACKET_EVALS = 3000
#: Class evaluations allowed to one get_epsilon beyond N_EXACT: on reaching it the blanket
#: accountant's epsilon (a certified, looser answer: sharp delta <= blanket delta) is returned.
MAX_EPSILON_EVALS = 20_000


class _OneClass(_RR):
    """Certified bracket of delta_j(eps) of one class j of a population of any size, O(w) work.

    docs/sharp_krr.md §4.10: U_win = A * B (A, B the windows of Bin(j, p), Bin(N - j, q)) is
    log-concave, so its positive terms a U(c - 1) - b U(c) are an upper tail {c >= t*}; the sum of
    the positive parts is Phi(t*) = a U(t* - 1) - expm1(eps) P_win(U >= t*). t* is bracketed by
    terms of certified sign (found around a normal-approximation guess); the terms between
    (ambiguous within rounding) are added as their upper values.
    """

    def __init__(self, epsilon0: float) -> None:
        super().__init__(epsilon0)
        self._win: dict[tuple[int, int, float], tuple[int, np.ndarray, float, np.ndarray]] = {}
        self._cached = 0
        self.evaluations = 0  # class evaluations (for the benchmark)
        self.bar: Any = None  # a progress bar counting the evaluations, set during long calls

    def _window(self, m: int, side: int, nats: float) -> tuple[int, np.ndarray, float, np.ndarray]:
        """(first index, pmf, relative error bound, tail sums) of Bin(m, p) (side +1) or Bin(m, q) (-1)."""
        key = (m, side, nats)
        got = self._win.get(key)
        if got is None:
            e0 = self.epsilon0
            pi, pi_c, log_odds = (self._p, self._q, e0) if side > 0 else (self._q, self._p, -e0)
            lo, hi = _chernoff_edges(m, pi, pi_c, nats)
            pmf, rel = _binom_window(m, log_odds, lo, hi, nats)
            tail = np.cumsum(pmf[::-1])[::-1].copy()  # tail[k] = sum(pmf[k:])
            if self._cached + 2 * pmf.size > _CACHE_ELEMENTS:
                self._win.clear()
                self._cached = 0
            got = (lo, pmf, rel, tail)
            self._win[key] = got
            self._cached += 2 * pmf.size
        return got

    def bracket(self, eps: float, npop: int, j: int, target: float | None = None) -> tuple[float, float]:
        """(lower, upper) of delta_j(eps), class j of a population of npop users, 0 <= eps < eps0:
        at the first tail level whose truncation charge is below 1e-6 of the upper value, or that
        decides upper <= target or lower > target."""
        self.evaluations += 1
        if self.bar is not None:
            self.bar.update(1)
        for nats in FAST_TAIL_LEVELS:
            lo, up, charge = self._at(eps, npop, j, nats)
            if charge <= 1e-6 * up or (target is not None and (up <= target or lo > target)):
                break
        return lo, up

    def _at(self, eps: float, npop: int, j: int, nats: float) -> tuple[float, float, float]:
        e0 = self.epsilon0
        a = -self._p * math.expm1(eps - e0)
        b = self._q * math.expm1(eps + e0)
        e = math.expm1(eps)  # b - a (p + q = 1)
        ra, rb = self._coef_rel(eps - e0), self._coef_rel(eps + e0)
        re = _ULP_CALL + 2 * _U
        a0, A, rA, At = self._window(j, 1, nats)
        b0, B, rB, Bt = self._window(npop - 1 - j, -1, nats)
        if A.size > B.size:
            a0, A, At, b0, B, Bt = b0, B, Bt, a0, A, At
        ws, wl = A.size, B.size  # U(c) = sum_i A[i] B[c - a0 - b0 - i]: dots of length ws
        nk = ws + wl - 1  # support of U_win: k = c - a0 - b0 in [0, nk - 1]
        # relative error of every computed U value and tail sum (§4.3, §4.10): pmfs, products, sums
        # of at most ws (dot) plus wl (tail cumsum) positive terms
        r = 1.01 * (rA + rB + _U) + 1.02 * (ws + wl + 2) * _U
        aP, aM = a * (1 + ra + r + 16 * _U), a * (1 - ra - r - 16 * _U)
        bP, bM = b * (1 + rb + r + 16 * _U), b * (1 - rb - r - 16 * _U)
        eP, eM = e * (1 + re + r + 16 * _U), e * (1 - re - r - 16 * _U)
        # underflow (§4.6): each U value within 4 (ws + 1) 2^-1074 of its bound, a tail sum within
        # 4 (ws + 1)(wl + 2) 2^-1074; written as products of factors >= 1 and 4e-323 (no underflow)
        tiny_term = (a + b + 4.0) * (ws + 2.0) * 4e-323
        tiny_phi = (a + e + 4.0) * (ws + 2.0) * (wl + 4.0) * 4e-323
        Bpad = np.concatenate([np.zeros(ws), B, np.zeros(ws + 1)])  # U(k) = A[::-1] . Bpad[k+1 : k+1+ws]
        Arev = A[::-1]

        def U(k1: int, k2: int) -> np.ndarray:
            """U_win at k = k1..k2 (zero outside [0, nk - 1])."""
            k1c, k2c = max(k1, -1), min(k2, nk)
            out = np.zeros(k2 - k1 + 1)
            if k2c >= k1c:
                view = np.lib.stride_tricks.sliding_window_view(Bpad, ws)
                step = max(1, (1 << 22) // ws)
                for s in range(k1c, k2c + 1, step):
                    t = min(s + step - 1, k2c)
                    # einsum, not BLAS: a threaded gemv is ~30x slower on a loaded machine
                    out[s - k1:t - k1 + 1] = np.einsum("ij,j->i", view[s + 1:t + 2], Arev)
            return out

        def terms(k1: int, k2: int) -> tuple[np.ndarray, np.ndarray]:
            """(lower, upper) of the terms a U(k - 1) - b U(k), k = k1..k2 (§4.5)."""
            u = U(k1 - 1, k2)
            X, Y = u[:-1], u[1:]
            return X * aM - Y * bP - tiny_term, X * aP - Y * bM + tiny_term

        def tail(k: int) -> float:
            """sum over c >= k of U_win (the tail sums of B dotted with A)."""
            idx = k - np.arange(ws)
            vals = np.where(idx < 0, Bt[0], Bt[np.clip(idx, 0, wl - 1)])
            vals[idx >= wl] = 0.0
            return float(np.einsum("i,i->", A, vals))

        def phi(k: int) -> tuple[float, float]:
            """(lower, upper) of Phi(k) = a U(k - 1) - expm1(eps) P(U_win >= k) (§3, §4.10)."""
            X, T = float(U(k - 1, k - 1)[0]), tail(k)
            return X * aM - T * eP - tiny_phi, X * aP - T * eM + tiny_phi

        # threshold guess: U ~ normal(mu, var), U(c - 1)/U(c) ~ exp((c - mu)/var) = b/a
        mu = j * self._p + (npop - 1 - j) * self._q - a0 - b0
        var = (npop - 1) * self._p * self._q
        guess = mu + var * math.log(b / a) + 0.5 if a > 0 else float(nk)
        k_le, k_gt = -1, nk + 1  # term(k_le) <= 0 (k_le <= nk - 1 or -1), term(k_gt) > 0 (or k_gt = nk + 1)
        center = int(min(max(round(guess), 0), nk))
        half, step = _BAND, 2 * _BAND
        while k_gt - k_le - 1 > 2 * half + 1:
            before = (k_le, k_gt)
            k1, k2 = max(center - half, k_le + 1), min(center + half, k_gt - 1)
            lo_t, up_t = terms(k1, k2)
            ks = np.arange(k1, k2 + 1)
            le = np.nonzero((up_t <= 0) & (ks <= nk - 1))[0]
            gt = np.nonzero(lo_t > 0)[0]
            if le.size:
                k_le = max(k_le, int(ks[le[-1]]))
            if gt.size:
                k_gt = min(k_gt, int(ks[gt[0]]))
            if le.size and gt.size:
                break
            if (k_le, k_gt) == before:  # nothing learnt: widen the band (terminates: the gap is finite)
                half *= 2
            elif le.size:
                center = min(k_le + step, k_gt - 1)
            elif gt.size:
                center = max(k_gt - step, k_le + 1)
            step *= 2
        mid_lo, mid_up = terms(k_le + 1, k_gt - 1) if k_gt - k_le > 1 else (np.zeros(0), np.zeros(0))
        cut = 4.0 * math.exp(-nats) * (1 + 4 * _ULP_CALL)  # mass left out of U_win (§4.6)
        up_cut = a * (1 + ra) * cut * (1 + 2 * _U)
        lo_cut = b * (1 + rb) * cut * (1 + 2 * _U)
        p_lo, p_up = phi(k_gt)
        up_sum = (float(np.sum(np.maximum(mid_up, 0.0))) + max(p_up, 0.0)) * (1 + 1.01 * (mid_up.size + 2) * _U)
        up = min((up_sum + up_cut) * (1 + 2 * _U), 1.0)
        # the terms from k_gt on are all >= 0: the sum of positive parts is at least the positive
        # parts of the middle terms' lower values plus Phi(k_gt)'s
        lo = float(np.sum(np.maximum(mid_lo, 0.0))) * (1 - 1.01 * (mid_lo.size + 2) * _U) + p_lo
        # the subtractions' rounding (each within u of its operands' sum) charged with a margin
        lo = max(lo - lo_cut - 4 * _U * (abs(lo) + lo_cut + tiny_phi), 0.0)
        return lo, up, max(up_cut, lo_cut)


class _BranchAndBound:
    """max over the classes j = 0..N of delta_j(eps), population n > N_EXACT (docs/sharp_krr.md §4.11).

    A range of classes [j1, j2] is bounded above by class j1 of the population n - (j2 - j1)
    (§2.2: the users whose input varies in the range are a post-processing); single classes give
    the lower values.
    """

    def __init__(self, epsilon0: float, n: int) -> None:
        self.one = _OneClass(epsilon0)
        self.n = n
        self.epsilon0 = float(epsilon0)
        self.certified: list[tuple[float, float]] = []  # (eps, d): every class has upper delta <= d at eps

    def range_bracket(self, eps: float, j1: int, j2: int, target: float | None = None) -> tuple[float, float]:
        """(lower, upper): upper >= delta_j(eps) for every j in [j1, j2]; lower <= delta_j1(eps) when
        j1 == j2, else 0."""
        lo, up = self.one.bracket(eps, self.n - (j2 - j1), j1, target)
        return (lo if j1 == j2 else 0.0), up

    def _start(self, eps: float, bound: float, target: float | None) -> int:
        """Size s of the first partition: the largest power of two (or N + 1) whose range [0, s - 1]
        is bounded by ``bound`` (halving from the whole range), but at most _MAX_START ranges (when
        every class lies close to ``bound``, e.g. eps0 tiny or a target between the end classes'
        delta and the interior maximum, a partition into single classes would cost n evaluations;
        the best-first search splits the coarser ranges only where needed)."""
        s = self.n
        s_min = max(1, -(-self.n // _MAX_START))
        while s > s_min and self.range_bracket(eps, 0, s - 1, target)[1] > bound:
            s = max((s + 1) // 2, s_min)
        return s

    def max_bracket(self, eps: float, rel_tol: float,
                    max_evals: int | None = None) -> tuple[float, float, int]:
        """(lower, upper, j): lower <= max_j delta_j(eps) <= upper, (upper - lower) <= rel_tol lower
        unless a single class's own bracket is wider or the budget is reached; j the class of the
        largest lower value found (not certified to be the worst class). See :meth:`max_report`."""
        lo, up, j, _ = self.max_report(eps, rel_tol, max_evals)
        return lo, up, j

    def max_report(self, eps: float, rel_tol: float,
                   max_evals: int | None = None) -> tuple[float, float, int, bool | None]:
        """:meth:`max_bracket` and whether the all-equal classes {0, N} are certified to be the worst.

        Best first over a partition of the classes into ranges (a heap on the ranges' upper values):
        the top range is split until its upper value is within rel_tol of the best lower value.
        ``max_evals`` (default :data:`MAX_BRACKET_EVALS`) bounds the class evaluations: on reaching
        it the bracket returned is [best lower, top of the heap], still certified (the heap's ranges
        cover every class) but possibly wider than rel_tol (docs/sharp_krr.md §4.11). At the end the
        top range is descended greedily (larger upper child) to one class, whose lower value may
        improve the best one: ``j`` names a class near the maximum, not a certified argmax.

        The flag is True when every range of the final partition other than the single classes 0
        and N has upper <= max(lower_0, lower_N) (certified), False when the best lower value (an
        interior class) exceeds max(upper_0, upper_N) (certified), None otherwise (undecided).
        """
        import heapq

        N = self.n - 1
        budget = MAX_BRACKET_EVALS if max_evals is None else max_evals
        start_evals = self.one.evaluations
        best_lo, best_j = -1.0, 0
        ends: dict[int, tuple[float, float]] = {}
        for j in sorted({0, N // 2, N}):  # the all-equal classes and the middle one (a first guess)
            lo, up_j = self.range_bracket(eps, j, j)
            if j in (0, N):
                ends[j] = lo, up_j
            if lo > best_lo:
                best_lo, best_j = lo, j
        s = self._start(eps, max(best_lo * (1 + 0.5 * rel_tol), _FLOOR), None)
        heap: list[tuple[float, int, int]] = []

        def push(j1: int, j2: int) -> tuple[float, float]:
            nonlocal best_lo, best_j
            lo, up = self.range_bracket(eps, j1, j2)
            if lo > best_lo:
                best_lo, best_j = lo, j1
            heapq.heappush(heap, (-up, j1, j2))
            return lo, up

        for j1 in range(0, N + 1, s):
            push(j1, min(j1 + s - 1, N))
        while True:
            neg_up, j1, j2 = heap[0]
            up = -neg_up
            if (up <= best_lo * (1 + rel_tol) or j1 == j2 or up <= _FLOOR
                    or self.one.evaluations - start_evals >= budget):
                break
            heapq.heappop(heap)
            mid = (j1 + j2) // 2
            push(j1, mid)
            push(mid + 1, j2)
        # a class inside the top range (greedy descent) may beat the best lower value found; it
        # does not change the certified upper value (the heap still covers every class)
        k1, k2 = heap[0][1], heap[0][2]
        while -heap[0][0] > _FLOOR and k1 < k2 and self.one.evaluations - start_evals < budget + 64:
            mid = (k1 + k2) // 2
            u_left = self.range_bracket(eps, k1, mid)[1]
            u_right = self.range_bracket(eps, mid + 1, k2)[1]
            k1, k2 = (k1, mid) if u_left >= u_right else (mid + 1, k2)
        if k1 == k2:
            lo_k, _ = self.range_bracket(eps, k1, k1)
            if lo_k > best_lo:
                best_lo, best_j = lo_k, k1
        up = -heap[0][0]
        end_lo = max(v[0] for v in ends.values())
        end_up = max(v[1] for v in ends.values())
        flag: bool | None = None
        if best_lo > end_up:
            flag = False
        elif all(-u <= end_lo for u, a, b in heap if not (a == b and a in ends)):
            flag = True
        return max(best_lo, 0.0), up, best_j, flag

    def decide(self, eps: float, target: float, max_evals: int) -> tuple[str, int]:
        """("ok", -1) when every class has upper delta_j(eps) <= target (certified), ("class", j) when
        class j has lower > target, ("unknown", j) when the search met a class j whose bracket
        contains the target, or max_evals range evaluations did not decide (j = -1).

        Best first with dives (a heap on the ranges' upper values; after a split the child of the
        larger upper value is split next, so single classes are reached in O(log n) evaluations
        even where every range has nearly the same upper value). A class with lower > target (a witness)
        ends the search after _WITNESS_EVALS more evaluations, and the witness of the largest lower
        value is returned: a class close to the maximum over the classes, so that get_epsilon's
        bisection on it lands near the answer (the first witness of a depth-first search is
        often barely above the target: one class per round, quadratic cost when many classes lie
        just above the target, docs/sharp_krr.md §4.11)."""
        import heapq

        s = self._start(eps, target, target)
        heap: list[tuple[float, int, int]] = []
        evals = 0
        best_lo, best_j, first = target, -1, -1

        def push(j1: int, j2: int) -> tuple[float, int, int] | None:
            """Evaluate a range; a witness is recorded, a range still above the target returned."""
            nonlocal evals, best_lo, best_j, first
            lo, up = self.range_bracket(eps, j1, j2, target)
            evals += 1
            if lo > best_lo:  # a single class (a range's lower value is 0)
                best_lo, best_j = lo, j1
                first = evals if first < 0 else first
            elif up > target:
                return (-up, j1, j2)
            return None

        for j1 in range(0, self.n, s):
            got = push(j1, min(j1 + s - 1, self.n - 1))
            if got is not None:
                heapq.heappush(heap, got)
        current = None  # a dive: the child of larger upper value next, the other one on the heap
        while current is not None or heap:
            if best_j >= 0 and evals - first >= _WITNESS_EVALS:
                break
            _, j1, j2 = current if current is not None else heapq.heappop(heap)
            current = None
            if j1 == j2:  # its bracket contains the target
                return ("class", best_j) if best_j >= 0 else ("unknown", j1)
            if evals >= max_evals:
                return ("class", best_j) if best_j >= 0 else ("unknown", -1)
            mid = (j1 + j2) // 2
            kids = [k for k in (push(j1, mid), push(mid + 1, j2)) if k is not None]
            kids.sort()
            if kids:
                current = kids[0]
                for k in kids[1:]:
                    heapq.heappush(heap, k)
        return ("class", best_j) if best_j >= 0 else ("ok", -1)


class ExactShuffleAccountant:
    """Certified delta(eps) of n shuffled binary randomized responses: the mechanism itself, worst case over datasets.

    Sources: the shuffle model of *Shuffling-Aware Optimization for Private Vector Mean
    Estimation* (Proposition 3.8: binary RR); the worst case over the other users' data and the
    closed form are proved in docs/sharp_krr.md §2-§3 (the maximum over the n classes "j of the
    other n - 1 users hold a one"); the certified evaluation is docs/sharp_krr.md §4.

    Unlike :class:`sharpdp.shuffle.ShuffleAccountant`, which bounds the privacy blanket (an upper
    bound on delta), the bracket here is of the shuffled mechanism's own delta(eps), maximised over
    every pair of replace-one neighbouring datasets and both orders: ``lower <= delta(eps) <=
    upper`` with (upper - lower)/lower below about 1e-6 wherever delta >= 1e-24 at n <= N_EXACT
    (the truncation charge's target; measured below 1e-8), and below ``rel_tol`` above N_EXACT
    (branch and bound, docs/sharp_krr.md §4.11). Binary RR is eps0-LDP: delta = 0 exactly for
    eps >= eps0.

    Cost. n <= N_EXACT = 4000: every class tabulated when the accountant is built, O(n w^2) with
    w ~ 25 sqrt(n p q) (0.4 s at n = 4000, eps0 = 1), then about 40 ms per ``get_epsilon``.
    n > N_EXACT: nothing is built; each delta or epsilon takes a few hundred to a few thousand
    O(w) class evaluations (w ~ 18 sqrt(n p q)), independent of n in number: measured at
    delta = 1e-6 (bench/bench_krr.py sharp, 2 shared cores) ``get_epsilon`` 0.02-0.13 s at n = 1e5,
    0.04-0.2 s at n = 1e6, 0.17-0.7 s at n = 1e7 (eps0 = 4 to 1); ``get_delta`` (rel_tol = 1e-2)
    similar. Where the classes' delta are nearly equal (eps0 tiny, or a target inside the band of
    the classes' delta) the evaluations are capped: :data:`MAX_BRACKET_EVALS` per delta (the
    certified bracket may then be wider than ``rel_tol``), :data:`MAX_EPSILON_EVALS` per epsilon
    (then the blanket accountant's certified, looser answer); docs/sharp_krr.md §4.11. A progress
    bar appears on stderr after 3 s.

    Parameters
    ----------
    randomizer : RandomizedResponse
        Binary randomized response (k = 2), any eps0 in (0, 300].
    n : int
        Number of users, 1 <= n <= :data:`N_MAX` = 1e7 (every one of the n classes of the other
        users' data is covered: tabulated up to N_EXACT, by branch and bound above).
    adjacency : {"replace"}, default "replace"
        Replace-one (one user's input replaced by another). Zero-out ("zero_out") is not covered.
    rel_tol : float, default 1e-2
        In (0, 1). n <= N_EXACT: accepted for interchangeability with ShuffleAccountant (the bracket
        achieved is far tighter). n > N_EXACT: relative width of the branch-and-bound bracket of
        ``get_delta_bounds`` / ``report`` (smaller costs more evaluations).

    Raises
    ------
    TypeError
        ``randomizer`` not a RandomizedResponse; ``n`` not an integer.
    ValueError
        k >= 3 (no proof of the worst case over datasets within this evaluation: docs/sharp_krr.md
        §5; use ShuffleAccountant), ``adjacency`` not "replace", n outside [1, N_MAX], rel_tol
        outside (0, 1).
    """

    via_bottom = False

    def __init__(self, randomizer: Any, n: int, adjacency: str = "replace", *, rel_tol: float = 1e-2) -> None:
        from sharpdp.shuffle.randomizers import RandomizedResponse

        if not isinstance(randomizer, RandomizedResponse):
            raise TypeError(f"randomizer must be a RandomizedResponse, got {type(randomizer).__name__}")
        if randomizer.k != 2:
            raise ValueError(f"randomizer: k = {randomizer.k} is not covered: the worst case over the other users' "
                             f"data is proved here for binary RR (k = 2) only (docs/sharp_krr.md §5); use "
                             f"ShuffleAccountant(RandomizedResponse({randomizer.k}, eps0), n, adjacency='replace') "
                             f"(the certified blanket bound)")
        if adjacency != "replace":
            raise ValueError(f"adjacency must be 'replace' (the worst case is proved for replace-one only), "
                             f"got {adjacency!r}; use ShuffleAccountant for 'zero_out'")
        self.n = V.integer("n", n, lo=1)
        if self.n > N_MAX:
            raise ValueError(f"n must be <= {N_MAX} (every class of the other users' data is covered, by "
                             f"branch and bound above {N_EXACT}: docs/sharp_krr.md §4.11), got {self.n}; use "
                             f"ShuffleAccountant (blanket bound) or smallest_certified_delta for larger n")
        self.rel_tol = V.real("rel_tol", rel_tol, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        self.randomizer = randomizer
        self.adjacency = "replace"
        self.epsilon0 = float(randomizer.epsilon0)
        if self.n <= N_EXACT:
            self._classes = _Classes(self.epsilon0, self.n, range(self.n))  # row j is class j
        else:
            self._bb = _BranchAndBound(self.epsilon0, self.n)

    # ------------------------------------------------------------------ public API
    def report(self, epsilon: float) -> AccountantReport:
        """Certified bracket of delta(epsilon) (epsilon >= 0 in nats) and the class attaining it.

        ``terms`` holds ``worst_class_j`` (number of the other n - 1 users holding user 1's value in
        the order x1 = 1 vs x1' = 0, whose delta is the largest upper value at n <= N_EXACT; above,
        the best class found by the branch and bound, i.e. of the largest certified lower value
        evaluated: not certified to be the worst class), ``all_equal_is_worst`` (True when certified
        that no other class exceeds the all-equal classes 0 and n - 1, i.e. every other class's
        (or range's, above N_EXACT) upper value is <= their larger lower value; False when certified
        that some other class does (its lower value above their upper values); None when the
        brackets do not decide) and ``bound``. n > N_EXACT: a few hundred to a few thousand
        O(sqrt n) class evaluations, at most :data:`MAX_BRACKET_EVALS` (+ about 2 log2 n) in the
        branch and bound, after which the bracket returned may be wider than ``rel_tol``
        (still certified: docs/sharp_krr.md §4.11).
        """
        eps = V.real("epsilon", epsilon, lo=0.0, allow_inf=True)
        if eps >= self.epsilon0:  # eps0-LDP: delta is exactly 0 (a <= 0: every term is <= 0)
            return AccountantReport(eps, 0.0, 0.0, terms={"bound": "sharp", "note": "epsilon >= epsilon0"})
        flag: bool | None
        if self.n <= N_EXACT:
            lo_j, up_j = self._classes.row_brackets(eps)
            lo, up, j = float(np.max(lo_j)), float(np.max(up_j)), int(np.argmax(up_j))
            ends = [0, self.n - 1]
            end_lo, end_up = float(np.max(lo_j[ends])), float(np.max(up_j[ends]))
            inner_lo = float(np.max(lo_j[1:-1])) if self.n > 2 else 0.0
            inner_up = float(np.max(up_j[1:-1])) if self.n > 2 else 0.0
            flag = True if inner_up <= end_lo else (False if inner_lo > end_up else None)
        else:  # j: the class of the largest lower value found (the ranges' upper values name no class)
            with self._progress("sharp delta"):
                lo, up, j, flag = self._bb.max_report(eps, self.rel_tol)
            # delta is non-increasing in eps: an upper value certified at eps' <= eps (by get_epsilon
            # or an earlier report) bounds it; this one serves later calls the same way
            up = min([up] + [t for e_c, t in self._bb.certified if e_c <= eps])
            self._bb.certified.append((eps, up))
        return AccountantReport(eps, lo, up, law_index=j,
                                terms={"bound": "sharp", "worst_class_j": j, "all_equal_is_worst": flag})

    def get_delta_bounds(self, epsilon: Any) -> tuple[Any, Any]:
        """Certified (lower, upper) of the shuffled mechanism's delta(epsilon).

        Parameters
        ----------
        epsilon : float or array_like
            Privacy loss in nats, >= 0 (+inf allowed), scalar or array of any shape.

        Returns
        -------
        (lower, upper) : floats (scalar input) or float64 arrays of the input's shape
            ``lower <= delta(eps) <= upper`` where delta is the largest hockey-stick divergence
            over all replace-one neighbouring datasets and both orders (a true lower bound on the
            mechanism's delta, unlike the blanket accountant's lower value); both exactly 0 for
            eps >= eps0.

        Notes
        -----
        n <= N_EXACT: each value is computed independently (no monotone memo as in
        ShuffleAccountant): the brackets are within about 1e-8 relative, so upper values at nearby
        epsilons can be out of order only at that level. n > N_EXACT: the brackets are up to
        ``rel_tol`` wide, so each upper value is the smallest one certified at any eps' <= eps by
        this accountant (delta is non-increasing in eps; earlier calls and get_epsilon included),
        and the values of one call are computed in increasing eps: its upper values are
        non-increasing in eps. ``privacy_profile`` makes its values non-increasing in any case.

        Raises
        ------
        TypeError
            epsilon not real.
        ValueError
            epsilon < 0 or NaN.
        """
        arr = V.epsilon_values("epsilon", epsilon)
        if np.any(arr < 0):
            raise ValueError(f"epsilon must be >= 0, got {arr.min()}")
        flat = arr.ravel()
        lo, up = np.empty(flat.size), np.empty(flat.size)
        for i in np.argsort(flat, kind="stable").tolist():  # increasing eps: see Notes
            rep = self.report(float(flat[i]))
            lo[i], up[i] = rep.lower, rep.upper
        return V.pair_like(arr, lo, up)

    def get_delta(self, epsilon: Any) -> Any:
        """Certified upper bound on the shuffled mechanism's delta(epsilon) (see :meth:`get_delta_bounds`)."""
        return self.get_delta_bounds(epsilon)[1]

    def get_epsilon(self, delta: float, *, xtol: float = 1e-3) -> float:
        """Smallest epsilon (safe end of a bisection bracket of relative width ``xtol``) with upper delta <= delta.

        Parameters
        ----------
        delta : float
            Target, 0 < delta < 1.
        xtol : float, default 1e-3
            Relative width of the final bracket, in [1e-9, 0.5].

        Returns
        -------
        float
            epsilon in [0, eps0] (nats) with ``get_delta(epsilon) <= delta``; the lower end of the
            final bracket has ``get_delta > delta`` (n > N_EXACT: some class has a certified lower
            delta > delta there, so the true epsilon lies in the bracket; the bracket is wider
            than xtol only if the branch and bound hit its budget or delta lies inside a class's
            certified bracket at eps = 0, docs/sharp_krr.md §4.11).
            0.0 when delta is met at 0. n > N_EXACT: a few hundred (xtol = 1e-3) to a few thousand
            (1e-6) class evaluations of O(sqrt n) each (0.04-0.6 s at n = 1e6, delta = 1e-6); after
            :data:`MAX_EPSILON_EVALS` evaluations (classes of nearly equal delta around the
            target) the blanket accountant's answer ``ShuffleAccountant(randomizer, n,
            adjacency="replace").get_epsilon(delta)`` (capped at eps0) is returned: certified
            (the blanket delta bounds this mechanism's delta from above), looser.

        Raises
        ------
        TypeError
            delta or xtol not real.
        ValueError
            delta outside (0, 1), xtol outside [1e-9, 0.5].
        """
        d = V.probability_open("delta", delta)
        xtol = V.real("xtol", xtol, lo=1e-9, hi=0.5)
        if self.n > N_EXACT:
            with self._progress("sharp epsilon"):
                return self._get_epsilon_bb(d, xtol)
        N = self.n - 1
        cand = sorted({0, 1, 2, N // 2, max(N - 2, 0), max(N - 1, 0), N} & set(range(N + 1)))
        # answer 0 when delta is met at 0 (checked over every class unless a candidate already fails)
        if self._classes.bracket(0.0, np.array(cand), d)[0] <= d and self._classes.bracket(0.0, target=d)[1] <= d:
            return 0.0
        # Bisection on the maximum over a few candidate classes (the "all equal" ones and their
        # neighbours, and the middle), then a check over every class: if a class outside the
        # candidates exceeds delta at the answer, it joins them and the search restarts from the
        # bracket found so far. The lower end only ever moves to points where the candidates' (so
        # the full) upper value exceeds delta; the answer is a point where the full one does not.
        lo, hi = 0.0, self.epsilon0  # upper(lo) > d, upper(hi) = 0 <= d
        for _ in range(N + 2):
            idx = np.array(cand)
            for _ in range(200):  # bisection (each step halves the bracket; 200 steps reach any xtol)
                if hi - lo <= xtol * hi:
                    break
                mid = 0.5 * (lo + hi)
                if self._classes.bracket(mid, idx, d)[1] <= d:
                    hi = mid
                else:
                    lo = mid
            _, ups = self._classes.row_brackets(hi, target=d)
            if float(np.max(ups)) <= d:
                return hi
            # hi is not certified over every class: the largest class outside the candidates joins
            # them and the search resumes above hi (whatever the classes, an answer is returned only
            # where the upper value over every class is <= d)
            outside = np.setdiff1d(np.arange(N + 1), idx)
            if outside.size:
                cand.append(int(outside[np.argmax(ups[outside])]))
            lo = hi
            hi = self.epsilon0
        return self.epsilon0  # (not reached: every class joins at most once)

    def privacy_profile(self, epsilons: Any) -> np.ndarray:
        """Certified upper delta(eps) for eps of any sign; see :func:`sharpdp.shuffle.profile.privacy_profile`."""
        from sharpdp.shuffle.profile import privacy_profile

        return privacy_profile(self, epsilons)

    def delta_at_class(self, epsilon: float, j: int) -> tuple[float, float]:
        """Certified (lower, upper) of delta(eps) for one class: x1 = 1 vs x1' = 0, j of the other users hold 1.

        A lower value here is a certified lower bound on the mechanism's delta (one pair of
        neighbouring datasets). Used by the tests and the benchmark (j = 0 and j = n - 1 are the
        "all other users equal" datasets).
        """
        eps = V.real("epsilon", epsilon, lo=0.0)
        j = V.integer("j", j, lo=0, hi=self.n - 1)
        if eps >= self.epsilon0:
            return 0.0, 0.0
        if self.n > N_EXACT:
            return self._bb.range_bracket(eps, j, j)
        lo, up, _ = self._classes.bracket(eps, slice(j, j + 1))
        return lo, up

    @contextlib.contextmanager
    def _progress(self, desc: str) -> Iterator[None]:
        """A progress bar on stderr over the class evaluations of one call (n > N_EXACT), shown only
        when the call takes more than 3 s (e.g. small xtol or rel_tol at n near N_MAX)."""
        from sharpdp._progress import progress_bar

        one = self._bb.one
        one.bar = progress_bar(total=None, desc=f"{desc} (class evaluations)", unit=" classes", file=sys.stderr,
                               leave=False, delay=3.0)
        try:
            yield
        finally:
            one.bar.close()
            one.bar = None

    def _get_epsilon_bb(self, d: float, xtol: float) -> float:
        """get_epsilon for n > N_EXACT (docs/sharp_krr.md §4.11): bisection on the lower values of a
        few candidate classes, then a branch-and-bound certificate that every class has upper
        delta <= d at a point 0.5 xtol above; a class found with lower delta > d there (the one of
        the largest upper value, :meth:`_BranchAndBound.decide`) joins the candidates and the
        search resumes above it.

        Termination: when the target lies inside the certified bracket of some class at eps = 0
        (or the budget is reached there), the bisection stops at hi < 1e-12 eps0 and the certified
        point rises from there by doubling steps starting at xtol eps0 2^-20 (a positive step: the
        answer is then not within xtol of the true one, which lies in [0, answer]). After
        :data:`MAX_EPSILON_EVALS` class evaluations the blanket accountant's answer is returned
        (certified: the blanket delta bounds the sharp one from above, docs/sharp_krr.md §4.11)."""
        bb, e0, N = self._bb, self.epsilon0, self.n - 1
        cand = sorted({0, N, N // 2})  # the all-equal classes and the middle one (often the maximum)
        max_evals = 200_000
        start = bb.one.evaluations
        min_step = xtol * e0 * 2.0**-20
        # per decision: a share of the budget (an undecided point is followed by a higher one), but
        # enough for every range of the search tree at small n (<= 2n + the first partition)
        share = max(MAX_EPSILON_EVALS // 6, 2 * self.n + 2 * _MAX_START + 64)

        def cand_lower(eps: float) -> float:
            best = 0.0
            for j in cand[::-1]:  # the latest candidates first (the largest ones found by decide)
                best = max(best, bb.range_bracket(eps, j, j, d)[0])
                if best > d:
                    break
            return best

        def fallback() -> float:
            from sharpdp.shuffle import ShuffleAccountant

            blanket = ShuffleAccountant(self.randomizer, self.n, adjacency="replace")
            e_b = min(float(blanket.get_epsilon(d)), e0)
            bb.certified.append((e_b, d))  # blanket delta(e_b) <= d bounds the sharp delta
            return e_b

        def budget_left() -> int:
            return MAX_EPSILON_EVALS - (bb.one.evaluations - start)

        lo, hi = 0.0, e0  # lo = 0 or some class has lower delta > d at lo; upper delta = 0 at eps0
        if cand_lower(0.0) <= d:
            verdict, j = bb.decide(0.0, d, min(max_evals, share, budget_left()))
            if verdict == "ok":
                bb.certified.append((0.0, d))
                return 0.0
            if verdict == "class":
                cand.append(j)
        point, step = None, 0.0
        while True:
            if budget_left() <= 0:
                return fallback()
            if point is None:
                while hi - lo > 0.25 * xtol * hi and not (lo == 0.0 and hi < 1e-12 * e0):
                    mid = 0.5 * (lo + hi)
                    if cand_lower(mid) > d:
                        lo = mid
                    else:
                        hi = mid
                # as far above lo as the bracket allows (lo < answer <= point = lo (1 + xtol)): the
                # more slack, the larger the ranges pruned
                point = max(lo * (1 + xtol), hi * (1 + 0.5 * xtol))
                step = max(xtol * point, min_step)
            if point >= e0:
                return e0
            verdict, j = bb.decide(point, d, max(1, min(max_evals, share, budget_left())))
            if verdict == "ok":
                bb.certified.append((point, d))
                return point
            if verdict == "class":  # certified lower delta_j > d at point: the answer is above
                cand.append(j)
                lo, hi, point = point, e0, None
            else:  # undecided: certify further up (the bracket widens; the steps double, or grow
                # 4-fold when the budget ran out (the cost of a certificate falls as the margin grows),
                # so a target below what can be certified, e.g. < 1e-290, ends at eps0 quickly)
                point += step
                step *= 2 if j >= 0 else 4


def all_equal_delta_bounds(epsilon0: float, n: int, epsilon: float) -> tuple[float, float]:
    """Certified bracket of delta(eps) of shuffled binary RR on the "all other users equal" datasets.

    The two classes j = 0 and j = n - 1 of docs/sharp_krr.md §2 (user 1's input differs, the other
    n - 1 users all hold 0, or all hold 1), both orders: a pair of neighbouring datasets, so the
    lower value is a certified LOWER bound on the shuffled mechanism's delta(eps) (replace-one) at
    any n. It is not an upper bound: the worst case over datasets can be another class (§2.1);
    :class:`ExactShuffleAccountant` gives that (n <= N_MAX). O(sqrt n) work, n up to 1e9.

    Parameters
    ----------
    epsilon0 : float
        Local epsilon of binary RR, in (0, 300] nats.
    n : int
        Number of users, 1 <= n <= 1e9.
    epsilon : float
        eps >= 0, nats.

    Returns
    -------
    (float, float)
        ``lower <= max(delta_0(eps), delta_{n-1}(eps)) <= upper``; (0, 0) for eps >= eps0.

    Raises
    ------
    TypeError, ValueError
        Bad ``epsilon0``, ``n`` or ``epsilon`` (each named).
    """
    e0 = V.real("epsilon0", epsilon0, lo=0.0, hi=300.0, lo_open=True)
    nn = V.integer("n", n, lo=1, hi=10**9)
    eps = V.real("epsilon", epsilon, lo=0.0, allow_inf=True)
    if eps >= e0:
        return 0.0, 0.0
    key = (e0, nn)
    cls = _ALL_EQUAL.get(key)
    if cls is None:
        cls = _Classes(e0, nn, sorted({0, nn - 1}))
        if len(_ALL_EQUAL) >= 16:
            _ALL_EQUAL.clear()
        _ALL_EQUAL[key] = cls
    lo, up, _ = cls.bracket(eps)
    return lo, up


_ALL_EQUAL: dict[tuple[float, int], _Classes] = {}  # the two classes' tables per (eps0, n)
