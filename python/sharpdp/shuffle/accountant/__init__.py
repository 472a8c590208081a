"""Certified FFT accountant for shuffled local randomizers (design and proofs: docs/accountant.md).

The quantity is the privacy-blanket bound of *Shuffling-Aware Optimization for Private Vector Mean
Estimation* (appendix "Computing the shuffled (eps, delta) guarantee", Lemma 5.3 of Balle et al. 2019)::

    D_up(eps) = E[(sum_{i<=n} B_i L_i)_+] / (n gamma),  B_i ~ Bern(gamma), L_i ~ l_eps(Y), Y ~ R_BG,

maximised over the neighbouring pairs and both orders (the paper's appendix covers x vs bot only: docs/papers.md §1.2).
:class:`ShuffleAccountant` returns a certified upper value ``Up >= D_up`` and a certified lower
value ``Lo <= D_up``. Steps and the bound each one contributes (docs/accountant.md §3-§6):

A. clamp L to [-B, T]: Up adds ``E[(L - T)_+]`` (clamping below is free); Lo subtracts
   ``E[(-B - L)_+]``. Both tails are closed forms with error bounds (:mod:`sharpdp.shuffle.laws`). Continuous
   laws with a heavy tail use a moderate clamp T0 and a single-big-jump term instead
   (:mod:`.far_tail`, proof in docs/accountant_tail.md); the plain steps remain its body.
B. mean-preserving hat rounding to the lattice hZ (Jensen: an upper bound); cell masses and
   local moments come with absolute error bounds eta_k.
C./D. per-user mixture g = (1-gamma) delta_0 + gamma psi, exponential tilt by theta (the root
   of Lambda'(theta) = 0, floored at 0.5/sigma_S so the weight s_+ e^{-theta s} stays bounded
   by 1/(e theta)); e^{n Lambda} is kept as a logarithm.
E. window W of N = next_fast_len points around the tilted mean; the tilted pmf is folded mod N
   (which leaves the circular convolution unchanged); q = irfft(rfft(g_theta)^n). Mass outside W
   is bounded by optimised Chernoff bounds on the computed tilted lattice law.
F. floating point: (i) TV bound  sup|f| n tau (m + tau)^(n-1)  for the pmf/tilt errors; (ii) FFT:
   componentwise forward error <= C log2(N) u sqrt(N) ||x||_2 with C = 10 (normwise bound of
   Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., Thm 24.2, which gives
   C ~ 5 for radix-2 with accurately computed twiddles; the factor 2 is our margin for pocketfft's
   mixed radices - an assumption, not a proof), the power step by the mean value theorem plus
   the rounding of exp(n Log z), the inverse FFT by the same normwise bound, and the sums by
   Cauchy-Schwarz  |sum f (q~ - q)| <= ||f||_2 ||q~ - q||_2  plus N u sum|f q| for summation.
   The mean-value term n e (|z| + e)^(n-1) with the FFT's normwise e grows like n u sqrt(N) and
   dominated everything at n ~ 1e9; the few frequencies where it matters (|z|^n not negligible)
   are recomputed by a direct DFT of the folded vector (exact integer phase reduction, angle
   within 9.5 u, cos/sin within 2 ulp - assumed of libm -, compensated sums: Ogita, Rump & Oishi
   2005, Sum2), whose error is a few u instead. The tilted mass is also summed by Sum2, and the
   upper law is assembled from the fine cells (h/4) of step H merged exactly, which keeps the
   law's quadrature on its accurate narrow-cell path (smaller pmf errors eta, hence tau). Each
   cell's local-moment error bound is added to its moment (cpp ``assemble``): the resulting hat
   law is stochastically larger than the exact one, so moment errors cost a tiny upward shift
   of the mean instead of a TV term; only mass errors enter tau.
G. Up = e^{n Lambda} (E + wrap_low + fp) / (n gamma) + E[(L - T)_+], multiplied by 1 + 1e-9; the
   cells' float edges against the exact lattice cost a charge (docs/accountant.md §3.2.1), added
   when above 0.99e-9 of the value (else within that margin); the Chernoff exponents carry a proven
   rounding allowance (§3.5.1).
H. Lo: a convex-order lower law on the same lattice (no Hoeffding gap). If Lt = E[L | C] for a
   sigma-field C (extra independent randomisation allowed), then sum B_i Lt_i = E[sum B_i L_i | C_1..C_n]
   and conditional Jensen gives E[(sum B_i Lt_i)_+] <= E[(sum B_i L_i)_+]. C: the law of
   clamp(L, -B, T) is cut into fine cells of width h/4 (masses and local moments from the same
   certified ``cells``); consecutive fine cells are merged into groups (the cell at a group's end
   split by an independent coin) whose conditional mean is exactly a lattice node, which receives
   the group's mass (cpp ``lower_lattice``; the sweep starts at the bounded end of the support and
   the unfinished last group, at the far-tail clamp atom, is floored to the lattice). The loss is
   second order (within-group variance ~ h^2/12), so Lo uses the grid step of Up. Round-off: the
   groups' moment errors give an overshoot bound mom_err; since (x + y)_+ <= x_+ + y_+,
   E[(sum B_i Lt_i)_+]/(n gamma) drops by at most mom_err h; the pmf errors enter the same TV
   bound as in F. The lower law goes through C-F with its own tilt and window:
   Lo = e^{n Lambda~} (E~ - wrap_high~ - fp~ - tv~)/(n gamma) - mom_err h - E[(-B - L)_+].
I. a cheap first round at h = sd(L)/4 estimates the value (for the clamps T, B); h is then set
   from the observed gap (both biases are O(h^2)) and refined until (Up - Lo)/Lo <= rel_tol.
   Size caps: N <= 2^24 (about 0.5 GB peak at n = 1e9), 4K <= 2^21; when a cap binds, the finest
   grid that fits is used (the values stay certified; report() shows the achieved gap).
J. atom laws (FiniteLaw: k-RR, binary RR, lower forms): a lattice law below an atom law in the
   convex order must merge off-lattice atoms with far-away mass, a first-order loss in h. So for
   atom laws the engine runs on blocks of t users (t | n): V = B_1 L_1 + ... + B_t L_t has the
   exact multinomial law (atoms much denser than h), and S is the sum of n/t i.i.d. blocks;
   D_up = E[S_+]/(n gamma) is unchanged. Blocks hold about 48 active users (t gamma <= 48) with
   the number of active users truncated where its binomial tail is below 1e-40 gamma/max|L| (an
   atom at 0 takes that mass; the coupling costs <= 1e-40 in delta). Block probabilities carry a
   certified relative error (log-domain binomial terms, Pascal coefficients, repeated products)
   and block values (compensated sums of exact products) an absolute one, charged through a
   Chernoff bound with the upper law's tilt (unblock). Any randomizer's Up is also capped by
   E[L_+] ((sum x_i)_+ <= sum (x_i)_+).
L. epsilon > 60: the value at 60 holds (D_up is non-increasing in epsilon), and so does the cap
   E[L_+] of the laws built at epsilon itself (up to 700 nats, e^eps finite); the smaller is
   reported. A lower value there is the Jensen bound E[(L - T0)_+]/n (docs/accountant_edges.md
   section 3).
M. monotone reporting: ``get_delta_bounds`` reports min(computed(eps), values reported before at
   any eps' <= eps) - each an upper bound at eps since D_up is non-increasing - so, per
   accountant object, the values it holds are non-increasing in epsilon (docs/accountant_edges.md
   section 5 states exactly what is monotone, and what is not: a value reported earlier at a
   larger epsilon is not lowered retroactively). Positive upper values are floored at 5e-324 and
   capped at 1 (delta <= 1); exactly 0 only where delta is exactly 0 (eps >= eps0 of an eps0-LDP
   randomizer, eps = inf).
K. a randomizer may provide ``privacy_amplification_surcharge(epsilon, adjacency) -> float``, a
   bound on a part of D_up that its laws leave out (e.g. a certified GeneralRandomizer's outputs
   outside its support), non-increasing in epsilon; it is added to every upper value (report,
   get_delta, get_epsilon; get_epsilon raises ValueError for a delta not above it).

Where each step lives (docs/code_map.md walks through one call): this package's ``__init__``
holds the public class (steps L, M, the loop over laws); :mod:`.driver` the one pipeline
``certify`` behind every value, in the modes ``Bracket`` and ``UpperOnly`` of :mod:`.plain`
(step I, the closed forms of :mod:`.closed_forms`, the E[L_+] cap; docs/accountant.md §6.0);
:mod:`.lattice` the engine (steps A-H, ``lattice_pass``) over the C++ kernels
``cpp/kernels/accountant.hpp`` and the one certified FFT convolution of :mod:`.fft`;
:mod:`.chernoff` the clamped cap; :mod:`.blocks` step J; :mod:`.far_tail` and :mod:`.jump` the
far-tail treatment; :mod:`.epsilon_route` and :mod:`.search` get_epsilon's route and search; :mod:`.memo` the monotone memos;
:mod:`.via_bottom` replace-one through bot; :mod:`.results` the typed results; :mod:`.limits`
every tolerance and size cap.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from sharpdp import _validation as V
from sharpdp.shuffle import contract
from sharpdp.shuffle.adjacency import DEFAULT_ADJACENCY, check_adjacency
from sharpdp.shuffle.accountant.call_heap import call_kept
from sharpdp.shuffle.accountant.closed_forms import jensen_lower, plus, trivial_cap
from sharpdp.shuffle.accountant.driver import certify, in_upper_first_sweep
from sharpdp.shuffle.accountant.epsilon_domain import by_sign, epsilon_array
from sharpdp.shuffle.accountant.limits import EPS_CAP, EPS_MAX, MEMO_MAX, TINY, XTOL_RANGE
from sharpdp.shuffle.accountant.law_settle import LawSettle
from sharpdp.shuffle.accountant.memo import envelope_put
from sharpdp.shuffle.accountant.mirror_law import Mirrors
from sharpdp.shuffle.accountant.plain import Bracket
from sharpdp.shuffle.accountant.results import AccountantReport, Grid
from sharpdp.shuffle.accountant.epsilon_route import route
from sharpdp.shuffle.accountant.via_bottom import ViaBottom
from sharpdp.shuffle.laws import laws_for


class ShuffleAccountant:
    """Certified (epsilon, delta) accountant for a shuffled local randomizer (the shuffle paper's appendix).

    Parameters
    ----------
    randomizer : BlanketMixedGaussian, GaussianRandomizer, or any object implementing
        ``privacy_amplification_laws(epsilon, adjacency)`` (protocol: :mod:`sharpdp.shuffle.laws`),
        optionally ``privacy_amplification_surcharge(epsilon, adjacency)`` (added to the upper
        value, module docstring step K).
    n : int
        Number of users, 1 <= n <= 1e9. An integer-valued float (``1e3``, as ``sharpdp account --n 1e3`` accepts)
        is taken as that integer; any other float (``1.5``, NaN) is refused.
    adjacency : {"zero_out", "replace"}, default "zero_out"
        Neighbouring relation. "replace" (one input replaced by another, |x| <= 1) uses the randomizer's own
        replace-one laws where a worst-case pair is proven (BlanketMixedGaussian with gamma > 0: an antipodal unit
        pair, proof in ``sharpdp.shuffle.laws.bmg.bmg_laws``; finite-output randomizers; PrivUnit;
        GeneralRandomizer). Otherwise (GaussianRandomizer, gamma = 0) it is bounded through bot (Notes;
        ``via_bottom`` is then True).
    rel_tol : float, default 1e-2
        Target (upper - lower)/lower, in (0, 1). The upper value is certified whatever the achieved accuracy;
        :meth:`report` shows the achieved one.
    threads : int or None
        Threads for scipy.fft, 1 <= threads <= 1024 (None: all cores). Does not change the values.
    workers : int or None
        Deprecated alias of ``threads`` (DeprecationWarning); same range.
    sampler_charge : bool, default True
        Certify the messages the randomizer's ``sample`` releases: add (1 + e^eps) n ``sampler_tv`` (its sampler's
        per-message total-variation distance to the certified law; about 1e-35 per coordinate for the grid samplers,
        0 for k-RR) to every upper value, and above ``eps_tau`` = ln(1/tau)/2 (tau = n ``sampler_tv``) report the
        value at ``eps_tau`` (docs/sampling.md §4). False certifies the mathematical mechanism (the laws) alone,
        e.g. to study the accountant at extreme epsilons or deltas; it is not a guarantee for released messages.

    Notes
    -----
    ``get_delta`` is a rigorous upper bound on the blanket divergence D_up(eps) of the shuffle paper's
    appendix (Balle et al. 2019, Lemma 5.3), maximised over both orders of the neighbouring pair (docs/papers.md
    §1.2), hence on the shuffled mechanism's delta(eps); algorithm, error terms: docs/accountant.md §3-§6.

    The accuracy target can be missed when the grid hits its size caps (FFT length N <= 2^24, per-user grid K <=
    2^21 / 4; n = 1e9 meets it at delta ~ 1e-6 and ~ 1e-12 in the tested cases): the upper value is still certified
    and :meth:`report` shows the achieved (upper - lower)/lower. Values below 1e-24 are certified upper bounds only
    (the clamps and grid are not refined for the relative target there). At n = 1 the value is the closed form D_up
    = E[L_+]. Heavy-tailed laws (the Gaussian randomizer or a BMG with sigma0 <~ 2) at small n or small delta are
    slow (tens of seconds per get_epsilon at sigma0 = 1, n = 2) and at large n their upper value can stay far above
    the lower one (clamp term E[(L - T)_+] at the largest grid): still certified, see :meth:`report`.

    Replace-one through bot (randomizers without a proven worst-case replace pair): the datasets D = (x1, ...) and
    D' = (x1', ...) are compared through D_bot = (bot, ...), bot reporting from the blanket. The hockey-stick
    divergence satisfies the weak triangle inequality delta_{P,R}(e1 + e2) <= delta_{P,Q}(e1) + e^{e1}
    delta_{Q,R}(e2) (P(S) <= e^{e1} Q(S) + d1 <= e^{e1}(e^{e2} R(S) + d2) + d1), and both legs are zero-out pairs
    (x1 vs bot, bot vs x1'), bounded by the zero-out laws of that order (A: x vs bot, B: bot vs x; for a randomizer
    whose laws are not listed in that order, each by the maximum over all its zero-out laws). The reported value is
    min(A(e1) + e^{e1} B(eps - e1), 1), rounded up, minimised over a few splits e1 = f eps (f in 0.35 ... 0.8 and
    two refinements; any split is valid), and ``get_delta_bounds`` brackets that quantity at the chosen split
    (``report().terms`` holds it). It is certified but looser than a direct replace law would be (at n = 1 and
    sigma0 = 4.6 it is several times the exact delta of the Gaussian mechanism with sensitivity 2), and each value
    costs up to 12 zero-out certifications.

    Raises
    ------
    ValueError
        n < 1 or > 1e9, unknown adjacency, rel_tol outside (0, 1), threads (or workers) not an
        integer in [1, 1024], GaussianRandomizer with dim > 1, a BlanketMixedGaussian with sigma0 < 1e-300.
    TypeError
        threads or workers not an integer, or both given.
    NotImplementedError
        adjacency "replace" with a randomizer that supports neither replace nor zero-out laws.
    """

    def __init__(self, randomizer: Any, n: int, adjacency: str = DEFAULT_ADJACENCY, *, rel_tol: float = 1e-2,
                 threads: int | None = None, workers: int | None = None, sampler_charge: bool = True) -> None:
        self.n = V.integer("n", n, lo=1, hi=10**9)
        self.adjacency = check_adjacency(adjacency)
        self.rel_tol = V.real("rel_tol", rel_tol, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        self.randomizer = randomizer
        if threads is not None:
            threads = V.integer("threads", threads, lo=1, hi=1024)
        if workers is not None:  # the former name of threads (validated first: the error names it)
            workers = V.integer("workers", workers, lo=1, hi=1024)
            if threads is not None:
                raise TypeError("workers: give threads only (workers is its deprecated alias), not both")
            warnings.warn("ShuffleAccountant(workers=...) is deprecated; use threads=...", DeprecationWarning,
                          stacklevel=2)
            threads = workers
        self.threads = -1 if threads is None else threads  # -1: scipy.fft's "all cores"
        self._memo_e: list[float] = []  # epsilons reported by get_delta_bounds, sorted (step M)
        self._memo_u: list[float] = []  # their reported upper values (non-increasing)
        self._emem_d: list[float] = []  # deltas answered by get_epsilon, sorted (step M)
        self._emem_e: list[float] = []  # their answers (non-increasing)
        self._bottom: ViaBottom | None = None  # the replace bound through bot (if used)
        self._reports: dict[tuple, AccountantReport] = {}  # certified reports by (eps, rel_tol, only, upper_first, negligible)
        self._settle = LawSettle(self.randomizer)  # laws' upper values along a profile's sweep (docs/accountant.md §7.5)
        self._closed_only = False  # closed forms only (the twin of closed_form_bounds, docs/accountant.md §6.9)
        self._closed: ShuffleAccountant | None = None  # that twin
        # the release sampler's total-variation charge (1 + e^eps) tau, tau = n eta (docs/sampling.md
        # §4); above eps_tau = ln(1/tau)/2 (public: the search uses it too; inf without a charge) the
        # value at eps_tau is reported (the sampled mechanism's delta is non-increasing in eps)
        if not isinstance(sampler_charge, (bool, np.bool_)):
            raise TypeError(f"sampler_charge must be a bool, got {type(sampler_charge).__name__}")
        self.sampler_tau = self.n * contract.sampler_tv(randomizer) if sampler_charge else 0.0
        tau = self.sampler_tau
        self.eps_tau = max(0.0, min(EPS_CAP, 0.5 * math.log(1.0 / tau))) if tau > 0.0 else math.inf
        try:
            laws_for(randomizer, 0.0, adjacency)  # validate the randomizer/adjacency early
        except NotImplementedError:
            if adjacency != "replace":
                raise
            laws_for(randomizer, 0.0, "zero_out")  # (raises when zero-out is unsupported too)
            zero_out = ShuffleAccountant(randomizer, n, "zero_out", rel_tol=rel_tol, threads=threads,
                                         sampler_charge=sampler_charge)
            self._bottom = ViaBottom(zero_out, contract.zero_out_legs(randomizer))

    def sampler_term(self, epsilon: float) -> float:
        """(1 + e^eps) tau rounded up, tau = :attr:`sampler_tau`: what the release sampler's total variation adds to
        delta(eps) (docs/sampling.md §4); 0.0 without a charge, inf beyond eps = 700.

        Raises
        ------
        TypeError, ValueError
            ``epsilon`` not a real number >= 0 (inf allowed).
        """
        epsilon = V.real("epsilon", epsilon, lo=0.0, allow_inf=True)
        if self.sampler_tau == 0.0:
            return 0.0
        if epsilon > EPS_MAX:
            return math.inf
        return self.sampler_tau * (1.0 + math.exp(epsilon)) * (1.0 + 1e-12)

    @property
    def via_bottom(self) -> bool:  # True when replace-one is bounded through bot (the class Notes), not its own law
        return self._bottom is not None

    def report(self, epsilon: float) -> AccountantReport:
        """Certified bracket and error budget at one epsilon (>= 0, nats)."""
        return self._report(epsilon, self.rel_tol)

    def _has_report(self, eps: float) -> bool:
        """Whether :meth:`report`'s value at eps (a float in [0, 60]) is cached (get_epsilon's probe,
        docs/accountant.md §8.7)."""
        return (eps, self.rel_tol, None, False, 0.0) in self._reports

    def _report(self, epsilon: float, rel_tol: float, only: tuple[int, ...] | None = None,
                upper_first: bool = False, negligible: float = 0.0, first: Any = None) -> AccountantReport:
        """Report over the laws with index in ``only`` (all when None); ``upper_first``: far-tail laws give their upper
        value alone where it comes first (driver ``certify``; docs/accountant_tail.md §15); ``negligible``:
        refinement stops once an upper value is below it (an absolute target, §9.4). ``first``: law 0's bracket,
        certified already as this report certifies it (get_epsilon's probe, docs/accountant.md §8.7; used only
        for the full report with ``upper_first`` and ``negligible`` off)."""
        eps = float(epsilon_array(V.real("epsilon", epsilon, lo=0.0, allow_inf=True)))
        if eps > self.eps_tau and self._bottom is None:
            # the sampled mechanism's delta is non-increasing in eps: its bound at eps_tau holds here,
            # where the sampler charge would exceed sqrt(tau) (docs/sampling.md §4)
            r = self._report(self.eps_tau, rel_tol, only, upper_first, negligible)
            return replace(r, epsilon=eps, terms=dict(r.terms, note=f"value at eps_tau = {self.eps_tau:.6g}"))
        if self._bottom is not None:  # (its own eps_tau rule, eps = inf included: docs/accountant.md §9.1)
            return self._bottom.report(eps, rel_tol)
        if math.isinf(eps):  # D_up(inf) = 0; only a surcharge (non-increasing in eps) remains
            s = contract.surcharge(self.randomizer, EPS_CAP, self.adjacency)
            return AccountantReport(eps, 0.0, plus(0.0, s), terms={"surcharge": s} if s else {})
        # per-accountant cache of certified reports (a report depends only on the accountant's randomizer, n and
        # adjacency, and on the key; threads do not change values): a repeated evaluation, e.g. get_delta at
        # get_epsilon's answer, returns the same values at once
        key: tuple = (eps, rel_tol, only, False, negligible)  # (a bracket's report serves an upper_first request too)
        uf = 2 if upper_first and in_upper_first_sweep() else int(upper_first)  # 2: a sweep's (docs/composition.md §2.5)
        rep = self._reports.get(key) or next(filter(None, (self._reports.get((eps, rel_tol, only, u, negligible))
                                                           for u in range(uf, 0, -1))), None)
        if rep is None:
            upper_first = upper_first and eps <= EPS_CAP
            rep = self._report_beyond_cap(eps, rel_tol) if eps > EPS_CAP and only is None else \
                self._report_laws(eps, rel_tol, only, upper_first, negligible,
                                  first if only is None and not upper_first and negligible <= 0.0 else None)
            key = (eps, rel_tol, only, uf if upper_first else 0, negligible)
            charge = self.sampler_term(eps)
            if charge > 0.0:  # the release sampler's total-variation charge (docs/sampling.md §4)
                rep = replace(rep, upper=min(1.0, plus(rep.upper, charge)), terms=dict(rep.terms, sampler=charge))
            if len(self._reports) >= MEMO_MAX:
                self._reports.clear()
            self._reports[key] = rep
        return replace(rep, terms=dict(rep.terms))  # (a copy: callers may edit theirs)

    def _report_laws(self, eps: float, rel_tol: float, only: tuple[int, ...] | None,
                     upper_first: bool = False, negligible: float = 0.0, first: Any = None) -> AccountantReport:
        """The report at eps <= 60 (or over the laws in ``only``), computed law by law (law 0's bracket ``first`` where
        given: :meth:`_report`)."""
        best, settle, mirrors = None, self._settle.applies(), Mirrors(self.n, rel_tol)  # (docs/accountant.md §8.22)
        lo_max, up_max = 0.0, max(negligible, 0.0)
        # D_up is non-increasing in epsilon (docs/accountant.md §1), so the value at EPS_CAP certifies any
        # larger epsilon (there it is already below ~1e-25 for every mechanism implemented).
        for i, (gamma, law) in enumerate(laws_for(self.randomizer, min(eps, EPS_CAP), self.adjacency)):
            if only is not None and i not in only:
                continue
            # a law whose certified upper value is already below the maximum so far cannot change
            # the reported (max) upper value: its refinement stops there
            if settle and best is not None and self._settle.settled(i, eps, best[1].upper):
                continue  # its upper value at a smaller eps of the sweep is already below the maximum (§7.5)
            r = first if i == 0 and first is not None else mirrors.bracket(float(gamma), law) or \
                certify(law, float(gamma), self.n, rel_tol, self.threads, Bracket(negligible=up_max),
                        closed_only=self._closed_only, upper_first=upper_first)
            mirrors.put(float(gamma), law, r)
            if settle:
                self._settle.put(i, eps, r.upper)
            lo_max, up_max = max(lo_max, r.lower), max(up_max, r.upper)
            if best is None or r.upper > best[1].upper:
                best = (i, r)
        if best is None:  # (laws_for returns at least one law; `only` selects among them)
            raise RuntimeError("accountant: no law to certify")
        i, r = best
        if upper_first and r.terms.get("lower_skipped"):
            # the largest upper value's law computed no lower value (docs/composition.md §2.5): another law's lower
            # value would be a loose one for the report; 0 = none computed (the profile's cache marks it NaN)
            lo_max = 0.0
        terms = dict(r.terms)
        upper = r.upper
        s = contract.surcharge(self.randomizer, min(eps, EPS_CAP), self.adjacency)
        if s > 0.0:
            upper, terms["surcharge"] = plus(upper, s), s
        g = r.grid if r.grid is not None else Grid(math.nan, 0, math.nan, math.nan)
        return AccountantReport(eps, lo_max, upper, g.h, g.N, g.T, g.B, g.theta, g.n_log_mgf, i, terms)

    def _cap_beyond(self, eps: float) -> tuple[float, float]:
        """(lower, upper) closed-form values at eps > 60 from the laws built at min(eps, 700) (step L): upper = max
        over laws of E[L_+] plus the surcharge, lower = max of the Jensen bounds; (0, inf) if they cannot be built."""
        e = min(eps, EPS_MAX)
        try:
            laws = laws_for(self.randomizer, e, self.adjacency)
            up = lo = 0.0
            for gamma, law in laws:
                if law.top_bound() <= 0:
                    continue
                up = max(up, trivial_cap(law))
                lo = max(lo, jensen_lower(law, float(gamma), self.n))
            up = plus(up, contract.surcharge(self.randomizer, e, self.adjacency))
            up = plus(up, self.sampler_term(e))
        except (ValueError, OverflowError, ArithmeticError, FloatingPointError):
            return 0.0, math.inf
        return (lo, up) if math.isfinite(up) else (0.0, math.inf)

    def _report_beyond_cap(self, eps: float, rel_tol: float) -> AccountantReport:
        """eps > 60 (step L): min(value at 60, E[L_+] at eps); D_up is non-increasing in eps."""
        r60 = self._report(EPS_CAP, rel_tol)
        lo, cap = self._cap_beyond(eps)
        if cap < r60.upper:
            return AccountantReport(eps, min(lo, cap), cap, terms={"note": "epsilon > 60: E[L_+] at epsilon"})
        return AccountantReport(eps, min(lo, r60.upper), r60.upper, r60.h, r60.N, r60.T, r60.B, r60.theta,
                                r60.n_log_mgf, r60.law_index, dict(r60.terms, note="epsilon > 60: value at 60"))

    @call_kept  # the heap kept over the call at n >= limits.BODY45_KEPT_HEAP_N (speed only): docs/accountant.md §8.27.1
    def get_delta_bounds(self, epsilon: Any, *, lower: bool = True, negligible: float = 0.0) -> tuple[Any, Any]:
        """Certified (lower, upper) bracket of the blanket divergence.

        Parameters
        ----------
        epsilon : float or array_like
            epsilon in nats, any sign (+-inf included), any shape; for epsilon < 0 the swap identity on the values
            at -epsilon (:func:`sharpdp.shuffle.privacy_profile_bounds`, docs/composition.md §1, §8).
        lower : bool, default True
            False: heavy-tailed laws skip their lower value (0) where the far-tail treatment's first round settles
            the upper one (docs/accountant_tail.md §15); the upper value is certified either way.
        negligible : float, default 0.0
            In [0, 1]: refinement stops once a certified upper value is below it (a cheap, looser value, still
            certified and below it; values above it are in practice the usual ones: docs/accountant_tail.md §16).

        Returns
        -------
        (lower, upper) : floats or float64 arrays of epsilon's shape.
            upper as :meth:`get_delta` (in [5e-324, 1], monotone per accountant object: module step M); lower <=
            upper is a lower value of the blanket bound (0 where none is computed, e.g. laws beyond the double
            range), not a lower bound on the mechanism's delta (that is :meth:`get_delta_lower_form`).

        Raises
        ------
        TypeError
            epsilon None, a string, complex or boolean; lower not a bool; negligible not a real number.
        ValueError
            epsilon NaN; negligible outside [0, 1].
        """
        if not isinstance(lower, (bool, np.bool_)):
            raise TypeError(f"lower must be a bool, got {type(lower).__name__} {lower!r}")
        neg = V.real("negligible", negligible, lo=0.0, hi=1.0)
        arr = epsilon_array(epsilon)
        if np.any(arr < 0):  # the swap identity on the values at -eps: privacy_profile's (docs/composition.md §8)
            from sharpdp.shuffle.profile import privacy_profile_bounds

            return by_sign(arr, lambda a: self.get_delta_bounds(a, lower=lower, negligible=neg),
                           lambda a: privacy_profile_bounds(self, a))
        flat = arr.ravel()
        lo = np.empty(flat.size)
        up = np.empty(flat.size)
        cap = self._local_epsilon()
        order = np.argsort(flat, kind="stable")
        for j in order:  # increasing epsilon: each value enters the memo before the larger ones
            e = float(flat[j])
            if (cap is not None and e >= cap) or (math.isinf(e) and math.isinf(self.eps_tau)):
                # eps0-LDP reports: the shuffled output is eps0-DP (exactly 0); eps = inf: only the
                # surcharge remains (report handles it)
                if math.isinf(e) and (cap is None or e < cap):
                    rep = self.report(e)
                    lo[j], up[j] = rep.lower, rep.upper
                else:
                    lo[j] = up[j] = 0.0
                continue
            rep = self._report(e, self.rel_tol, None, not lower, neg)  # (report(e) when lower and neg = 0)
            u = min(max(rep.upper, TINY), 1.0)  # a positive value below the double range: 5e-324
            u = self._memo_put(e, u)
            lo[j], up[j] = min(rep.lower, u), u
        return V.pair_like(arr, lo, up)

    def closed_form_bounds(self, epsilon: float) -> tuple[float, float]:
        """Certified (lower, upper) as :meth:`get_delta_bounds` at one epsilon >= 0 (nats), from each law's
        closed-form bracket alone (no lattice, far-tail work; docs/accountant.md §6.9): fast, possibly wide.
        upper <= target certifies, lower > target refutes (replace: the found split's lower; ValueError: bad eps)."""
        if self._closed is None:  # a twin accountant certifying by closed forms only (its own caches)
            twin = ShuffleAccountant(self.randomizer, self.n, self.adjacency, rel_tol=self.rel_tol,
                                     threads=None if self.threads == -1 else self.threads,
                                     sampler_charge=self.sampler_tau > 0.0)
            twin._closed_only = True
            if twin._bottom is not None:
                twin._bottom.bottom._closed_only = True  # (a ShuffleAccountant)
            self._closed = twin
        rep = self._closed.report(epsilon)  # (as get_delta_bounds, without its running minimum: not needed)
        up = min(max(rep.upper, TINY), 1.0)
        return float(min(rep.lower, up)), float(up)

    def _memo_put(self, e: float, u: float) -> float:
        """Monotone reporting (step M): the reported value min(u, memo values at eps' <= e); it is
        stored, and the stored values at eps'' > e are lowered to it (each stays an upper bound
        there: D_up is non-increasing), so the memo stays non-increasing in epsilon."""
        return envelope_put(self._memo_e, self._memo_u, e, u)

    def get_delta_lower_form(self, epsilon: Any) -> Any:
        """Certified lower value of the lower form D_lo(epsilon) (docs/accountant.md §1).

        D_lo is the exact hockey-stick divergence of the shuffled outputs on the datasets (x1, x0, ..., x0) vs (x1',
        x0, ..., x0), so ``get_delta_lower_form(eps) <= delta(eps) <= get_delta(eps)``: users see the band around
        the true delta. Needs a randomizer with ``lower_form()`` (e.g. :class:`RandomizedResponse`, :class:`PrivUnit`).

        Parameters
        ----------
        epsilon : float or array_like of float
            epsilon (nats), any sign (epsilon < 0: the swap identity on the lower values at -epsilon, still a lower
            value of the mechanism's delta: docs/composition.md §8).

        Returns
        -------
        float or numpy.ndarray of float64
            Same shape as ``epsilon``.

        Raises
        ------
        NotImplementedError
            If the randomizer has no lower form (e.g. the Gaussian types).
        ValueError
            If epsilon is NaN.
        """
        acc = ShuffleAccountant(contract.lower_form(self.randomizer), self.n, self.adjacency,
                                rel_tol=self.rel_tol, threads=None if self.threads == -1 else self.threads)
        return acc.get_delta_bounds(epsilon)[0]

    def __repr__(self) -> str:
        charge = "" if self.sampler_tau > 0.0 or contract.sampler_tv(self.randomizer) == 0.0 else ", sampler_charge=False"
        return (f"ShuffleAccountant({self.randomizer!r}, n={self.n}, adjacency={self.adjacency!r}, "
                f"rel_tol={self.rel_tol:g}{charge})")

    def get_delta(self, epsilon: Any) -> Any:
        """Certified upper bound on delta(epsilon) of the shuffled mechanism.

        Parameters
        ----------
        epsilon : float or array_like
            epsilon in nats, any sign (+-inf included); for epsilon < 0 the swap identity on the certified value at
            -epsilon, rounded up (:func:`sharpdp.shuffle.privacy_profile`'s value, docs/composition.md §1, §8).

        Returns
        -------
        float or ndarray
            Upper value in [5e-324, 1], max over both orders of the neighbouring pair; never below the true blanket
            divergence. A positive value below the double range is reported as 5e-324 (the smallest positive double,
            still an upper bound); exactly 0 only where delta is exactly 0 (epsilon >= eps0 of an eps0-LDP
            randomizer, or epsilon = inf without a surcharge). For epsilon > 60: the smaller of the value at 60 and
            E[L_+] at epsilon (docs/accountant.md §7.3). Values are monotone per accountant object (§7.2 there). The
            relative accuracy ``rel_tol`` is targeted for values >= 1e-24; below that the upper value is certified
            but may be loose (still below 1e-24).

        Raises
        ------
        TypeError
            epsilon None, a string, complex or boolean.
        ValueError
            epsilon NaN.
        """
        return self.get_delta_bounds(epsilon)[1]

    def _local_epsilon(self) -> float | None:
        """eps0 of a pure eps0-LDP randomizer (attribute ``local_epsilon``), else None.

        Replace-one only: each report is eps0-LDP, so the shuffled output (a post-processing of
        the one report that differs between neighbours) is (eps0, 0)-DP: delta(eps) = 0 for
        eps >= eps0. Under zero-out the removed user's report is drawn from the blanket, which
        need not lie within e^{+-eps0} of every R_x for a user-defined decomposition
        (docs/accountant.md §13, Q5): there the computed value is used (for k-RR and PrivUnit it
        is already exactly 0 at eps >= eps0, as L <= 0 everywhere).
        """
        if self.adjacency != "replace":
            return None
        return contract.local_epsilon(self.randomizer)

    @call_kept  # (docs/accountant.md §8.27.1)
    def get_epsilon(self, delta: float, *, xtol: float = 1e-3) -> float:
        """Smallest epsilon (up to a relative ``xtol``) whose certified upper delta is <= delta.

        Root search in two phases (docs/accountant.md §8): a first bracket from closed forms (the cap E[L_+] above;
        the Jensen and single-active-user lower values below, §8.1), then (1) a model of the root on the certified
        upper value alone at h = sd(L)/8 (the lower value is not needed to certify an answer): a safeguarded secant
        on log delta against log epsilon; (2) the same secant search on :meth:`get_delta` itself, started at the
        phase-1 root with its slope, down to a bracket of relative width ``xtol``, so that ``get_delta(answer) <=
        delta``. Returns the safe end of the final bracket (its lower end is a point where get_delta, or a
        closed-form lower value of the blanket bound, exceeds delta); exactly 0.0 if the target already holds at 0.
        For pure eps0-LDP randomizers the answer never exceeds eps0 (where delta = 0). Laws whose cap is below 1e-24
        (where get_delta reports the cap) are evaluated by their cap only, so tiny deltas (1e-100, 1e-300) take well
        under a second for the blanket-mixed Gaussian.
        Answers are monotone: non-increasing in delta for queries in increasing delta (an answer certified for a
        smaller delta certifies every larger one, docs/accountant.md §1.6).

        Parameters
        ----------
        delta : float
            Target, 0 < delta < 1.
        xtol : float, default 1e-3
            Relative width of the final bracket, in [1e-6, 0.5]. Every search loop is bounded (at most 200
            bracket-shrinking steps per phase, each loop of bracketing steps bounded); if a bound is reached the safe
            end of the current bracket is returned (certified, possibly less tight than ``xtol``).

        Returns
        -------
        float
            epsilon >= 0 in nats (finite, at most 700).

        Raises
        ------
        TypeError
            delta or xtol not a real number.
        ValueError
            delta outside (0, 1) or NaN, or not above the randomizer's surcharge (module docstring step K), or not met
            at epsilon = 700 (docs/accountant.md §7.3) or, with the release sampler's charge, at any epsilon tried (the reason
            given: docs/accountant.md §8.3; replace through bot: §9.9, certified refusals where no epsilon's value can
            be <= delta); xtol outside [1e-6, 0.5] or NaN.
        """
        delta = V.probability_open("delta", delta)
        xtol = V.real("xtol", xtol, lo=XTOL_RANGE[0], hi=XTOL_RANGE[1])
        return self._eps_memo_put(delta, self._epsilon_search(delta, xtol))

    def _eps_memo_put(self, delta: float, e: float) -> float:
        """Monotone get_epsilon (module step M): an answer e' for delta' <= delta is also one for delta (get_delta(e')
        <= delta' <= delta, and get_delta values only decrease over time), so min(e, answers for delta' <= delta)
        is returned and stored; stored answers for larger deltas are lowered to it (the memo stays monotone)."""
        return envelope_put(self._emem_d, self._emem_e, delta, e)

    def _epsilon_search(self, delta: float, xtol: float) -> float:
        """get_epsilon's search (validated delta and xtol), before the monotone memo (:func:`.epsilon_route.route`)."""
        return route(self, delta, xtol)

    def privacy_profile(self, epsilons: Any) -> np.ndarray:
        """Certified upper delta(eps) for eps of any sign (swap identity for eps < 0), one sweep;
        see :func:`sharpdp.shuffle.profile.privacy_profile`."""
        from sharpdp.shuffle.profile import privacy_profile

        return privacy_profile(self, epsilons)


__all__ = ["ShuffleAccountant", "AccountantReport"]
