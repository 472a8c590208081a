"""One class in O(w) and the branch and bound over ranges of classes (docs/sharp_krr.md §2.2, §4.10-4.11)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sharpdp._core_loader import core
from sharpdp.shuffle.exact_krr.binomial import RR, UROUND, ULP_CALL, binom_window, chernoff_edges
from sharpdp.shuffle.exact_krr.ranges import dropped_estimate, reach, representative, size_for_budget, upper_edge


# ---------------------------------------------------------------------------------------------- n > N_EXACT
#: At or below this n every class is tabulated (O(n w^2), docs/sharp_krr.md §4.8-4.9), as before;
#: above it one class costs O(w) (§4.10) and the maximum over classes is found by branch and bound
#: over ranges of classes (§4.11).
N_EXACT = 4000
#: Tail levels of the O(w) path: a first, shallower level keeps the windows short (its truncation
#: charge 4 a e^-40 ~ 2e-17 a is below 1e-6 of any value >= 2e-11 a).
FAST_TAIL_LEVELS = (40.0, 80.0, 300.0, 745.0)
#: Deepest tail level of the compiled class evaluation (its pmf ratios stay in the normal range).
_COMPILED_MAX_NATS = 300.0
_BAND = 8  # half-width of the first band of terms evaluated around the threshold guess
#: Upper values at or below this are not refined further (the bracket is then [lower, upper] with
#: upper <= 1e-290: values this small are near the end of the double range, where the absolute
#: underflow charges of §4.6 dominate and no relative bracket is possible).
_FLOOR = 1e-290
#: Above DEEP_N users a class whose upper value at the compiled path's deepest level (300 nats) is at
#: most DEEP_STOP is not refined at 745 nats: that level runs in numpy and costs O(w^2) for an
#: interior class (~0.3 s at n = 1e6, ~500 s at 1e9), for values far below the 1e-24 down to which
#: the bracket is promised within rel_tol (docs/sharp_krr.md §4.13). The upper value stays certified.
DEEP_N = 100_000
DEEP_STOP = 1e-100
_CACHE_ELEMENTS = 10_000_000  # binomial windows kept (pmf and tail sums), in float64 elements
#: Largest number of ranges of the first partition of the branch and bound (docs/sharp_krr.md §4.11).
MAX_START = 1024
#: Evaluations the search of BranchAndBound.decide continues after a first class above the
#: target, for a larger one (a class near the maximum: fewer rounds of get_epsilon).
_WITNESS_EVALS = 64
#: Fraction of a range's estimated margin below the target that BranchAndBound.split_size spends
#: (the rest absorbs the estimate's error; only the number of evaluations depends on it. 0.97-0.99
#: saved 2-5 % of the evaluations at n >= 1e7 but doubled them at some n <= 1e6, §4.15).
_SPARE = 0.93
#: The two-ended sweep of BranchAndBound.decide pairs a range with its mirror image while the sizes
#: predicted for the two sides are within this ratio (docs/sharp_krr.md §4.16; only the cost depends on it).
_PAIR_RATIO = 1.5
#: ... and only where n p q >= this (windows of >= ~6e4 entries, whose building outweighs the Python
#: cost of an evaluation; at smaller windows the pairs' extra ranges cost more than they save, §4.16).
_PAIR_MIN_VAR = 1e7
#: Class evaluations allowed to one max_bracket (get_delta, report) beyond N_EXACT: on reaching it
#: the certified bracket found so far is returned, possibly wider than rel_tol (§4.11).
MAX_BRACKET_EVALS = 3000
#: Class evaluations allowed to one get_epsilon beyond N_EXACT: on reaching it the blanket
#: accountant's epsilon (a certified, looser answer: sharp delta <= blanket delta) is returned.
MAX_EPSILON_EVALS = 20_000


def decision_levels(target: float) -> tuple[float, ...]:
    """Tail levels of an evaluation that decides upper <= target or lower > target (get_epsilon):
    the first one L0 = ceil(log(4e6 / target)) nats (between 20 and 40), where the truncation charge
    4 e^-L0 a (a <= p <= 1) is at most 1e-6 of the target, then FAST_TAIL_LEVELS (an evaluation
    that L0 does not decide goes on exactly as one without a target: docs/sharp_krr.md §4.10; every
    level is certified; a shallower one only has shorter windows and, for a range, drops fewer
    users, §2.3)."""
    if not target > 0:
        return FAST_TAIL_LEVELS
    first = float(min(max(math.ceil(math.log(4e6) - math.log(target)), 20), 40))
    return (first,) + FAST_TAIL_LEVELS if first < FAST_TAIL_LEVELS[0] else FAST_TAIL_LEVELS


#: Truncation charge of the first level of a *range* in a decision, relative to the target and to
#: get_epsilon's xtol (§4.15): a range's upper value only has to fall below the target, whose margin
#: is about |d log delta / d log eps| xtol >= ~3 xtol relative (1e-4 of the target at xtol = 1e-3).
RANGE_CHARGE = 0.1


def range_levels(target: float, xtol: float = 1e-3) -> tuple[float, ...]:
    """:func:`decision_levels` for the ranges of a decision at get_epsilon's xtol: the first level
    L0 = ceil(log(4 / (RANGE_CHARGE xtol target))) nats (20-40: 25 at the target 1e-6 and xtol 1e-3),
    never deeper than decision_levels' first, so shorter windows (docs/sharp_krr.md §4.15) where the
    charge 4 e^-L0 a stays below RANGE_CHARGE xtol of the target; every level is certified."""
    if not target > 0:
        return FAST_TAIL_LEVELS
    first = float(min(max(math.ceil(math.log(4.0 / (RANGE_CHARGE * xtol)) - math.log(target)), 20), 40))
    first = min(first, decision_levels(target)[0])
    return (first,) + FAST_TAIL_LEVELS if first < FAST_TAIL_LEVELS[0] else FAST_TAIL_LEVELS


class OneClass(RR):
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
        #: the O(w) evaluation in C++ (sharpdp._core.exact_krr, docs/sharp_krr.md §4.12) for tail
        #: levels up to 300 nats; False: the numpy path of §4.10 (the 745-nat level always)
        self.compiled = True
        # a user with input 1 is, with probability 1 - q/p, a fixed 1, else a user with input 0
        # (Bern(p) = (q/p) Bern(q) + (1 - q/p) delta_1, docs/sharp_krr.md §2.3)
        self._conv = -math.expm1(-self.epsilon0)  # 1 - q/p
        self._conv_c = math.exp(-self.epsilon0)  # q/p
        self._edges: dict[tuple[int, float], tuple[int, int]] = {}
        self.xtol = 1e-3  # get_epsilon's xtol, set by it: the ranges' first level (range_levels, §4.15)
        self._levels: dict[tuple[float | None, float, bool], tuple[float, ...]] = {}
        #: the ranges' kernel: windows may be mirror images of cached ones (§4.16; a private binding of
        #: sharpdp._core.exact_krr, not in the stubs)
        self._kernel_mirror: Any = getattr(core.exact_krr, "_class_bracket_mirror")
        self._ranged = False  # the evaluation under way is a range's (set by bracket)

    def _window(self, m: int, side: int, nats: float) -> tuple[int, np.ndarray, float, np.ndarray]:
        """(first index, pmf, relative error bound, tail sums) of Bin(m, p) (side +1) or Bin(m, q) (-1)."""
        key = (m, side, nats)
        got = self._win.get(key)
        if got is None:
            e0 = self.epsilon0
            pi, pi_c, log_odds = (self._p, self._q, e0) if side > 0 else (self._q, self._p, -e0)
            lo, hi = chernoff_edges(m, pi, pi_c, nats)
            pmf, rel = binom_window(m, log_odds, lo, hi, nats)
            tail = np.cumsum(pmf[::-1])[::-1].copy()  # tail[k] = sum(pmf[k:])
            if self._cached + 2 * pmf.size > _CACHE_ELEMENTS:
                self._win.clear()
                self._cached = 0
            got = (lo, pmf, rel, tail)
            self._win[key] = got
            self._cached += 2 * pmf.size
        return got

    def _reach(self, mix: int, nats: float) -> tuple[int, int]:
        """(r, k1) of ranges.reach for a range of mix + 1 classes at the level ``nats``: k1 the upper
        Chernoff edge of Bin(r, 1 - q/p), 2 r - k1 >= mix, r <= mix (remembered: the branch and bound
        meets the same range sizes at every eps of a search)."""
        key = (mix, nats)
        got = self._edges.get(key)
        if got is None:
            if len(self._edges) > 100_000:
                self._edges.clear()
            got = self._edges[key] = reach(mix, self._conv, self._conv_c, nats)
        return got

    def bracket(self, eps: float, npop: int, j: int, target: float | None = None,
                mix: int = 0) -> tuple[float, float]:
        """(lower, upper) of delta_j(eps), class j of a population of npop users, 0 <= eps < eps0:
        at the first tail level whose truncation charge is below 1e-6 of the upper value, or that
        decides upper <= target or lower > target (levels: decision_levels, or range_levels for a
        range with a target, which also stops where a deeper level would not decide, §4.15).

        ``mix`` > 0: ``upper`` bounds every class j' in [j, j + mix] of the population npop (the
        range bound of docs/sharp_krr.md §2.4: a class a inside the range, of the population
        npop - k1, plus (p - q) e^-(nats + 1), k1 the Chernoff quantile of Bin(r, 1 - q/p) at the level
        and 2 r - k1 >= mix; never above the bound of §2.2, class j of npop - mix; its windows may be
        mirror images of cached ones, §4.16); ``lower`` is then no lower bound of anything (it only
        decides lower > target for the upper value).
        """
        self.evaluations += 1
        if self.bar is not None:
            self.bar.update(1)
        key = (target, self.xtol, mix > 0)  # (the levels of a call are remembered: a decision asks often)
        levels = FAST_TAIL_LEVELS if target is None else self._levels.get(key)
        if levels is None:
            self._levels = {} if len(self._levels) > 999 else self._levels
            levels = self._levels[key] = range_levels(target or 0.0, self.xtol) if mix else decision_levels(target or 0.0)
        for nats in levels:
            pop, cls, extra = npop, j, 0.0
            if mix > 0:  # the class cls of npop - k1 users bounds [j, j + mix] (Proposition 4, §2.4)
                r, k1 = self._reach(mix, nats)  # P(Bin(r, 1 - q/p) > k1) <= e^-(nats+1)
                cls, pop = representative(j, j + mix, npop - 1, r, k1), npop - k1
                if k1 < r:
                    extra = (self._p - self._q) * math.exp(-(nats + 1.0)) * (1 + 4 * ULP_CALL + 4 * UROUND)
                    extra = max(extra, 5e-324)  # exp(-746) underflows to 0: round the term up, never to 0
            self._ranged = mix > 0  # (read by _at: a range's windows may be mirror images, §4.16)
            lo, up, charge = self._at(eps, pop, cls, nats)
            if extra:
                up = min((up + extra) * (1 + 2 * UROUND), 1.0)
                charge = max(charge, extra)
            decided = target is not None and (up <= target or lo > target)
            if decided or (charge <= 1e-6 * up and nats >= FAST_TAIL_LEVELS[0]):
                break  # (a shallower decision level that does not decide goes on at FAST_TAIL_LEVELS)
            if mix and target is not None and up - 4.0 * charge > target:
                break  # a deeper level would not bring this range below the target (§4.15; only cost)
            if nats >= _COMPILED_MAX_NATS and npop > DEEP_N and up <= DEEP_STOP:
                break
        return lo, up

    def _at(self, eps: float, npop: int, j: int, nats: float) -> tuple[float, float, float]:
        e0 = self.epsilon0
        a = -self._p * math.expm1(eps - e0)
        b = self._q * math.expm1(eps + e0)
        e = math.expm1(eps)  # b - a (p + q = 1)
        ra, rb = self._coef_rel(eps - e0), self._coef_rel(eps + e0)
        re = ULP_CALL + 2 * UROUND
        if self.compiled and nats <= _COMPILED_MAX_NATS:  # the same evaluation in C++ (§4.12)
            kernel = self._kernel_mirror if self._ranged else core.exact_krr.class_bracket
            lo_c, up_c, charge_c, *_ = kernel(e0, self._p, self._q, a, b, e, ra, rb, re, npop, j, nats)
            return lo_c, up_c, charge_c
        return self._at_numpy(eps, npop, j, nats, a, b, e, ra, rb, re)

    def _at_numpy(self, eps: float, npop: int, j: int, nats: float, a: float, b: float, e: float,
                  ra: float, rb: float, re: float) -> tuple[float, float, float]:
        a0, A, rA, At = self._window(j, 1, nats)
        b0, B, rB, Bt = self._window(npop - 1 - j, -1, nats)
        if A.size > B.size:
            a0, A, At, b0, B, Bt = b0, B, Bt, a0, A, At
        ws, wl = A.size, B.size  # U(c) = sum_i A[i] B[c - a0 - b0 - i]: dots of length ws
        nk = ws + wl - 1  # support of U_win: k = c - a0 - b0 in [0, nk - 1]
        # relative error of every computed U value and tail sum (§4.3, §4.10): pmfs, products, sums
        # of at most ws (dot) plus wl (tail cumsum) positive terms
        r = 1.01 * (rA + rB + UROUND) + 1.02 * (ws + wl + 2) * UROUND
        aP, aM = a * (1 + ra + r + 16 * UROUND), a * (1 - ra - r - 16 * UROUND)
        bP, bM = b * (1 + rb + r + 16 * UROUND), b * (1 - rb - r - 16 * UROUND)
        eP, eM = e * (1 + re + r + 16 * UROUND), e * (1 - re - r - 16 * UROUND)
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
        cut = 4.0 * math.exp(-nats) * (1 + 4 * ULP_CALL)  # mass left out of U_win (§4.6)
        up_cut = a * (1 + ra) * cut * (1 + 2 * UROUND)
        lo_cut = b * (1 + rb) * cut * (1 + 2 * UROUND)
        p_lo, p_up = phi(k_gt)
        up_sum = (float(np.sum(np.maximum(mid_up, 0.0))) + max(p_up, 0.0)) * (1 + 1.01 * (mid_up.size + 2) * UROUND)
        up = min((up_sum + up_cut) * (1 + 2 * UROUND), 1.0)
        # the terms from k_gt on are all >= 0: the sum of positive parts is at least the positive
        # parts of the middle terms' lower values plus Phi(k_gt)'s
        lo = float(np.sum(np.maximum(mid_lo, 0.0))) * (1 - 1.01 * (mid_lo.size + 2) * UROUND) + p_lo
        # the subtractions' rounding (each within u of its operands' sum) charged with a margin
        lo = max(lo - lo_cut - 4 * UROUND * (abs(lo) + lo_cut + tiny_phi), 0.0)
        return lo, up, max(up_cut, lo_cut)


class BranchAndBound:
    """max over the classes j = 0..N of delta_j(eps), population n > N_EXACT (docs/sharp_krr.md §4.11).

    A range of classes [j1, j2] is bounded above by class j1 of the population n - (j2 - j1)
    (§2.2: the users whose input varies in the range are a post-processing); single classes give
    the lower values.
    """

    def __init__(self, epsilon0: float, n: int) -> None:
        self.one = OneClass(epsilon0)
        self.n = n
        self.epsilon0 = float(epsilon0)
        self.certified: list[tuple[float, float]] = []  # (eps, d): every class has upper delta <= d at eps
        #: estimated relative growth of a range's upper value per user the range bound drops (only
        #: steers how finely decide splits a range; nothing certified depends on it), None until measured
        self.beta: float | None = None
        self.edge_nats = FAST_TAIL_LEVELS[0]  # the first tail level of the evaluations (for _dropped)

    def range_bracket(self, eps: float, j1: int, j2: int, target: float | None = None) -> tuple[float, float]:
        """(lower, upper): upper >= delta_j(eps) for every j in [j1, j2]; lower <= delta_j1(eps) when
        j1 == j2, else 0."""
        if j1 == j2:
            return self.one.bracket(eps, self.n, j1, target)
        return 0.0, self.one.bracket(eps, self.n, j1, target, mix=j2 - j1)[1]

    def _start(self, eps: float, bound: float, target: float | None) -> int:
        """Size s of the first partition: the largest power of two (or N + 1) whose range [0, s - 1]
        is bounded by ``bound`` (halving from the whole range), but at most MAX_START ranges (when
        every class lies close to ``bound``, e.g. eps0 tiny or a target between the end classes'
        delta and the interior maximum, a partition into single classes would cost n evaluations;
        the best-first search splits the coarser ranges only where needed)."""
        s = self.n
        s_min = max(1, -(-self.n // MAX_START))
        prev = None
        while s > s_min:
            up = self.range_bracket(eps, 0, s - 1, target)[1]
            if prev is not None:  # two ranges with the same first class: measures beta (an estimate)
                self._learn(prev[0] - 1, prev[1], s - 1, up)
            if up <= bound:
                break
            prev = (s, up)
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
        floor = DEEP_STOP if self.n > DEEP_N else _FLOOR  # no refinement below it (§4.13)
        s = self._start(eps, max(best_lo * (1 + 0.5 * rel_tol), floor), None)
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
            if (up <= best_lo * (1 + rel_tol) or j1 == j2 or up <= floor
                    or self.one.evaluations - start_evals >= budget):
                break
            heapq.heappop(heap)
            mid = (j1 + j2) // 2
            push(j1, mid)
            push(mid + 1, j2)
        # a class inside the top range (greedy descent) may beat the best lower value found; it
        # does not change the certified upper value (the heap still covers every class)
        k1, k2 = heap[0][1], heap[0][2]
        while -heap[0][0] > floor and k1 < k2 and self.one.evaluations - start_evals < budget + 64:
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

        self.edge_nats = range_levels(target, self.one.xtol)[0]
        s = self._start(eps, target, target)
        heap: list[tuple[float, int, int]] = []
        evals = 0
        best_lo, best_j, first = target, -1, -1

        def push(j1: int, j2: int) -> tuple[float, tuple[float, int, int] | None]:
            """Evaluate a range: (its upper value, the heap entry when it is still above the target);
            a witness is recorded."""
            nonlocal evals, best_lo, best_j, first
            lo, up = self.range_bracket(eps, j1, j2, target)
            evals += 1
            if lo > best_lo:  # a single class (a range's lower value is 0)
                best_lo, best_j = lo, j1
                first = evals if first < 0 else first
            elif up > target:
                return up, (-up, j1, j2)
            return up, None

        # the first partition: consecutive ranges, each sized from the previous one's upper value
        # (split_size; the classes' delta vary slowly in j) so that most fall below the target at
        # once; at least ceil(n / MAX_START) classes each. Every class is covered whatever the sizes.
        # (n <= N_EXACT: uniform sizes and halves, as the classes' delta are not flat there: they
        # fall away from the end classes, which are near the maximum, §2.2)
        # n > N_EXACT: swept from both ends at once, each range followed by its mirror image
        # [N - j2, N - j1], whose representative's windows are the mirror images of the range's (§4.16:
        # no new windows for the mirror), sized from the larger of the two upper values.
        s_min = max(1, -(-self.n // MAX_START))
        adaptive = self.n > N_EXACT
        N = self.n - 1
        j1, top = 0, N  # the classes [j1, top] are not yet covered
        pairing = adaptive and self.n * self.one._p * self.one._q >= _PAIR_MIN_VAR
        while j1 <= top:
            j2 = min(j1 + s - 1, top)
            # mirrored while what is left is symmetric ([j1, N - j1]) with room for more beyond the pair
            mirrored = pairing and top == N - j1 and N - j2 > j2 + s
            up, got = push(j1, j2)
            if got is not None:
                heapq.heappush(heap, got)
            up_m = up
            if mirrored:
                up_m, got = push(N - j2, N - j1)
                if got is not None:
                    heapq.heappush(heap, got)
                top = N - j2 - 1
            if adaptive:
                s_left = max(min(self.split_size(j2 - j1, up, target), 2 * s), s_min)
                if mirrored:
                    s_right = max(min(self.split_size(j2 - j1, up_m, target), 2 * s), s_min)
                    # a pair takes the smaller size; where the two sides want sizes too far apart the rest
                    # is swept from the left alone (a mirror costs about 0.4 of a range with new windows)
                    pairing = max(s_left, s_right) <= _PAIR_RATIO * min(s_left, s_right)
                    s_left = min(s_left, s_right) if pairing else s_left
                s = s_left
            j1 = j2 + 1
        current = None  # a dive: the child of larger upper value next, the others on the heap
        while current is not None or heap:
            if best_j >= 0 and evals - first >= _WITNESS_EVALS:
                break
            neg_up, j1, j2 = current if current is not None else heapq.heappop(heap)
            current = None
            if j1 == j2:  # its bracket contains the target
                return ("class", best_j) if best_j >= 0 else ("unknown", j1)
            if evals >= max_evals:
                return ("class", best_j) if best_j >= 0 else ("unknown", -1)
            # the range is replaced by consecutive pieces covering it (every class stays covered);
            # how many is an estimate (split_count), halves until one has been measured
            m = self.split_count(j2 - j1, -neg_up, target) if adaptive else 2
            edges = [j1 + ((j2 - j1 + 1) * i) // m for i in range(m + 1)]
            kids = []
            for i in range(m):
                up_i, kid = push(edges[i], edges[i + 1] - 1)
                if i == 0:
                    self._learn(j2 - j1, -neg_up, edges[1] - 1 - j1, up_i)
                if kid is not None:
                    kids.append(kid)
            kids.sort()
            if kids:
                current = kids[0]
                for k in kids[1:]:
                    heapq.heappush(heap, k)
        return ("class", best_j) if best_j >= 0 else ("ok", -1)

    def _dropped(self, mix: int) -> float:
        """About how many users the range bound of a range of mix + 1 classes drops (docs/sharp_krr.md
        §2.3: the Chernoff edge of Bin(mix, 1 - q/p) at edge_nats, in closed form; an estimate)."""
        return dropped_estimate(mix, self.one._conv, self.edge_nats)

    def _learn(self, mix: int, up: float, mix_child: int, up_child: float) -> None:
        """Update beta from a range and its first piece (same first class): up = d (1 + beta k) and
        up_child = d (1 + beta k_child), k the users dropped."""
        k, kc = self._dropped(mix), self._dropped(mix_child)
        if not (up_child > 0 and up >= up_child and math.isfinite(up)):
            return
        rho = up / up_child
        den = k - rho * kc
        if den > 0:
            self.beta = (rho - 1.0) / den

    def split_size(self, mix: int, up: float, target: float) -> int:
        """Classes per range predicted to fall below the target next to a range of mix + 1 classes
        with upper value up (a fraction 1 - _SPARE of the margin spared); mix + 1 when beta is unknown or the range's
        first class is estimated above the target. An estimate: only the number of evaluations
        depends on it."""
        beta = self.beta
        if beta is None or beta <= 0 or not (up > 0 and target > 0 and math.isfinite(up)):
            return mix + 1
        d = up / (1.0 + beta * self._dropped(mix))
        if not d < target:
            return mix + 1
        budget = _SPARE * (target / d - 1.0) / beta  # users a range may drop
        return int(min(size_for_budget(budget, self.one._conv, self.edge_nats), 4.0 * self.n)) + 1

    def split_count(self, mix: int, up: float, target: float) -> int:
        """Pieces to split a range of mix + 1 classes with upper value up > target into: 2 (halves)
        until beta is measured or where the range's own first class is estimated above the target
        (a dive towards a witness); else enough pieces that each is predicted to fall below the
        target (split_size; at most 64). Only the number of evaluations
        depends on this choice."""
        if not (up > target):
            return 2
        size = self.split_size(mix, up, target)
        return int(min(max(-(-(mix + 1) // size), 2), 64, mix + 1))


__all__ = ["MAX_BRACKET_EVALS", "MAX_EPSILON_EVALS", "MAX_START", "N_EXACT", "BranchAndBound", "OneClass",
           "decision_levels", "range_levels", "upper_edge"]  # (upper_edge: defined in ranges, kept here for its callers)
