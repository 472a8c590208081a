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
import sys
from typing import Any, Iterator

import numpy as np

from sharpdp import _validation as V
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.exact_krr.branch_bound import (MAX_BRACKET_EVALS, MAX_EPSILON_EVALS, MAX_START, N_EXACT,
                                                  BranchAndBound)
from sharpdp.shuffle.exact_krr.search import BRACKET_FRACTION, gdp_epsilon_estimate, refine_bracket
from sharpdp.shuffle.exact_krr.tables import Classes

__all__ = ["MAX_BRACKET_EVALS", "MAX_EPSILON_EVALS", "N_EPSILON_TABLES", "N_EXACT", "N_MAX", "ExactShuffleAccountant", "all_equal_delta_bounds"]

#: get_epsilon uses the all-class tables at n <= N_EPSILON_TABLES (cheap to build there), and at
#: n <= N_EXACT when xtol < 1e-4; the branch and bound otherwise (docs/sharp_krr.md §4.9, §4.11; at
#: n <= N_EXACT get_delta still uses the tables).
N_EPSILON_TABLES = 64
#: Largest number of users covered (n <= N_EXACT: every class j = 0..n-1 tabulated; above: branch and
#: bound over ranges of classes, docs/sharp_krr.md §4.11; above N_MAX use the blanket ShuffleAccountant).
N_MAX = 10**9  # the library's limit; get_epsilon(1e-6) about 0.01-0.26 s CPU at 1e9 (docs/sharp_krr.md §5-§6)


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
    (branch and bound, docs/sharp_krr.md §4.11; above 1e5 users a delta below 1e-100 is bracketed
    as [lower, upper <= ~1e-100], §4.13). Binary RR is eps0-LDP: delta = 0 exactly for
    eps >= eps0.

    Cost. n <= N_EXACT = 4000: ``get_delta``/``report`` tabulate every class on their first call,
    O(n w^2) with w ~ 25 sqrt(n p q) (0.1 s at n = 1000, 0.4 s at n = 4000, eps0 = 1), then
    milliseconds per value. ``get_epsilon`` (n > N_EPSILON_TABLES = 64, xtol >= 1e-4) and every call at
    n > N_EXACT: a few hundred to a few thousand O(w) class evaluations (w ~ 18 sqrt(n p q); in
    C++, docs/sharp_krr.md §4.12), independent of n in number: measured at delta = 1e-6
    (``python bench/bench_krr.py speed``, CPU, 2 shared cores) ``get_epsilon`` about 0.1-3 ms at
    n <= 4000, 0.2-4 ms at n = 1e5, 0.5-8.3 ms at n = 1e6, 0.01-0.26 s at n = 1e9 (eps0 = 8 to 0.5); ``get_delta``
    (rel_tol = 1e-2) similar. Where the classes' delta are nearly equal (eps0 tiny, or a target inside the band of
    the classes' delta) the evaluations are capped: :data:`MAX_BRACKET_EVALS` per delta (the
    certified bracket may then be wider than ``rel_tol``), :data:`MAX_EPSILON_EVALS` per epsilon
    (then the blanket accountant's certified, looser answer); docs/sharp_krr.md §4.11. A progress
    bar appears on stderr after 3 s.

    Parameters
    ----------
    randomizer : RandomizedResponse
        Binary randomized response (k = 2), any eps0 in (0, 300].
    n : int
        Number of users, 1 <= n <= :data:`N_MAX` = 1e9 (every one of the n classes of the other
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
        self._tables: Classes | None = None  # n <= N_EXACT: built on the first get_delta / report
        # the branch and bound (docs/sharp_krr.md §4.11): get_delta above N_EXACT, get_epsilon above
        # N_EPSILON_TABLES (milliseconds where building every class's table costs 0.1-1 s)
        self._bb = BranchAndBound(self.epsilon0, self.n)

    @property
    def _classes(self) -> Classes:
        """Every class tabulated (n <= N_EXACT; O(n w^2), built once on first use)."""
        if self._tables is None:
            self._tables = Classes(self.epsilon0, self.n, range(self.n))  # row j is class j
        return self._tables

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
            # an upper value certified at eps' <= eps by get_epsilon's branch and bound bounds it too
            up = min([up] + [t for e_c, t in self._bb.certified if e_c <= eps])
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
            Privacy loss in nats, any sign (+-inf allowed), scalar or array of any shape.

        Returns
        -------
        (lower, upper) : floats (scalar input) or float64 arrays of the input's shape
            ``lower <= delta(eps) <= upper`` where delta is the largest hockey-stick divergence
            over all replace-one neighbouring datasets and both orders (a true lower bound on the
            mechanism's delta, unlike the blanket accountant's lower value); both exactly 0 for
            eps >= eps0 (+inf included). For eps < 0 the swap identity
            delta(eps) = 1 - e^eps + e^eps delta(-eps) on the bracket at -eps, rounded outwards
            (:func:`sharpdp.shuffle.privacy_profile_bounds`' values; both ends stay bounds of the
            mechanism's delta, docs/sharp_krr.md §7); (1, 1) at -inf.

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
            epsilon NaN.
        """
        arr = V.epsilon_values("epsilon", epsilon)
        if np.any(arr < 0):  # the swap identity on the brackets at -eps (docs/sharp_krr.md §7, composition.md §8)
            from sharpdp.shuffle.accountant.epsilon_domain import by_sign
            from sharpdp.shuffle.profile import privacy_profile_bounds

            return by_sign(arr, self.get_delta_bounds, lambda a: privacy_profile_bounds(self, a))
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
            (1e-6) class evaluations of O(sqrt n) each (0.5-8.3 ms at n = 1e6, delta = 1e-6, xtol = 1e-3); after
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
        # branch and bound above N_EXACT, and above N_EPSILON_TABLES at xtol >= 1e-4 (milliseconds, where
        # building the tables costs 0.1-1 s); the tables at finer xtol (n <= N_EXACT): their answers
        # are the certified end of a bisection bracket, the branch and bound's the far end of the
        # allowed one (docs/sharp_krr.md §4.9)
        if self.n > N_EXACT or (self.n > N_EPSILON_TABLES and xtol >= 1e-4):
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
        """get_epsilon for n > N_EXACT (docs/sharp_krr.md §4.11): a bracket search (§4.14: from an
        estimate, by safeguarded regula falsi) on the lower values of a few candidate classes, then a
        branch-and-bound certificate that every class has upper
        delta <= d at a point 0.5 xtol above; a class found with lower delta > d there (the one of
        the largest upper value, :meth:`BranchAndBound.decide`) joins the candidates and the
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
        bb.one.xtol = xtol  # the decisions' ranges start at a level charging <= 0.1 xtol (§4.15)
        min_step = xtol * e0 * 2.0**-20
        # per decision: a share of the budget (an undecided point is followed by a higher one), but
        # enough for every range of the search tree at small n (<= 2n + the first partition)
        share = max(MAX_EPSILON_EVALS // 6, 2 * self.n + 2 * MAX_START + 64)

        def cand_lower(eps: float) -> float:
            best = 0.0
            for j in cand[::-1]:  # the latest candidates first (the largest ones found by decide)
                best = max(best, bb.range_bracket(eps, j, j, d)[0])
                if best > d:
                    break
            return best

        def fallback() -> float:
            from sharpdp.shuffle.accountant import ShuffleAccountant

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
                # the candidates' crossing, to BRACKET_FRACTION xtol: from the normal-approximation
                # estimate (first round) or just above the last point (after a witness), by
                # interpolation; the ends keep the bisection's invariants (docs/sharp_krr.md §4.14)
                guess = gdp_epsilon_estimate(e0, self.n, d) if lo == 0.0 else lo * (1 + 2 * xtol)
                lo, hi = refine_bracket(cand_lower, d, lo, hi, BRACKET_FRACTION * xtol, 1e-12 * e0, guess)
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
        cls = Classes(e0, nn, sorted({0, nn - 1}))
        if len(_ALL_EQUAL) >= 16:
            _ALL_EQUAL.clear()
        _ALL_EQUAL[key] = cls
    lo, up, _ = cls.bracket(eps)
    return lo, up


_ALL_EQUAL: dict[tuple[float, int], Classes] = {}  # the two classes' tables per (eps0, n)
