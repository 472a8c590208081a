"""Certified FFT accountant for shuffled local randomizers (design and proofs: docs/accountant.md).

The quantity is the privacy-blanket bound of *Shuffling-Aware Optimization for Private Vector Mean
Estimation* (appendix "Computing the shuffled
(eps, delta) guarantee", Lemma 5.3 of Balle et al. 2019)::

    D_up(eps) = E[(sum_{i<=n} B_i L_i)_+] / (n gamma),  B_i ~ Bern(gamma), L_i ~ l_eps(Y), Y ~ R_BG,

maximised over the neighbouring pairs and both orders (the paper's appendix covers x vs bot only: docs/papers.md §1.2).
:class:`ShuffleAccountant` returns a certified upper value ``Up >= D_up`` and a certified lower
value ``Lo <= D_up``. Steps and the bound each one contributes (docs/accountant.md §3-§6):

A. clamp L to [-B, T]: Up adds ``E[(L - T)_+]`` (clamping below is free); Lo subtracts
   ``E[(-B - L)_+]``. Both tails are closed forms with error bounds (:mod:`._laws`). Continuous
   laws with a heavy tail use a moderate clamp T0 and a single-big-jump term instead
   (:mod:`._bigjump`, proof in docs/accountant_tail.md); the plain steps remain its body.
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
G. Up = e^{n Lambda} (E + wrap_low + fp) / (n gamma) + E[(L - T)_+], multiplied by 1 + 1e-9.
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
   Chernoff bound with the upper law's tilt (_unblock). Any randomizer's Up is also capped by
   E[L_+] ((sum x_i)_+ <= sum (x_i)_+).
L. epsilon > 60: the value at 60 holds (D_up is non-increasing in epsilon), and so does the cap
   E[L_+] of the laws built at epsilon itself (up to 700 nats, e^eps finite); the smaller is
   reported. A lower value there is the Jensen bound E[(L - T0)_+]/n (docs/accountant_edges.md
   section 3).
M. monotone reporting: ``get_delta_bounds`` reports min(computed(eps), values reported before at
   any eps' <= eps) - each an upper bound at eps since D_up is non-increasing - so, per
   accountant object, the values it holds are non-increasing in epsilon (docs/accountant_edges.md
   section 5 states exactly what is monotone, and what is not: a value reported earlier at a
   larger epsilon is not lowered retroactively). Positive
   upper values are floored at 5e-324 and capped at 1 (delta <= 1); exactly 0 only where delta
   is exactly 0 (eps >= eps0 of an eps0-LDP randomizer, eps = inf).
K. a randomizer may provide ``privacy_amplification_surcharge(epsilon, adjacency) -> float``, a
   bound on a part of D_up that its laws leave out (e.g. a certified GeneralRandomizer's outputs
   outside its support), non-increasing in epsilon; it is added to every upper value (report,
   get_delta, get_epsilon; get_epsilon raises ValueError for a delta not above it).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from sharpdp import _validation as V
from sharpdp.shuffle import _bigjump
from sharpdp.shuffle._laws import FiniteLaw, Law, laws_for

from sharpdp.shuffle._lattice import (  # noqa: F401 - the engine, re-exported for the driver and tests
    _U,
    _FFT_C,
    _N_MAX,
    _K_MAX,
    _TINY,
    _EPS_CAP,
    _EPS_MAX,
    _XTOL_RANGE,
    _SHRINK_ITERS,
    _MEMO_MAX,
    _VALUE_FLOOR,
    _J_LO,
    _DFT_WORK,
    _core,
    AccountantReport,
    _choose_T,
    _choose_B,
    _logsum,
    _engine,
    _shift_bound,
    _check_mass,
    _lower_pmf,
    _one_pass,
    _Coarsen,
)


def _heavy(law: Law, gamma: float, n: int) -> dict:
    """Bracket for a law whose spread leaves the double range (sd = inf: e.g. a BMG with sigma0 <
    ~0.0375, where L reaches e^{1/(2 sigma0^2)}): no lattice can hold it. Upper: the cap
    D_up <= E[L_+] ((sum x_i)_+ <= sum (x_i)_+), in closed form. Lower (docs/accountant_edges.md
    section 3): Jensen over the other n - 1 users, E[S_+] >= E[(B_1 L_1 + (n - 1) gamma mu)_+] with
    mu = E[L], so D_up >= E[(L - T0)_+] / n for any T0 >= max(-(n - 1) gamma mu, 0)."""
    up = max(_trivial_cap(law), _TINY)
    lower = _jensen_lower(law, gamma, n)
    return dict(lower=min(lower, up), upper=up, terms={"note": "sd overflow: E[L_+] (upper), Jensen (lower)"})


def _trivial_cap(law: Law) -> float:
    """Certified E[L_+] (>= D_up at every n), in closed form."""
    up = law.tail_upper_bracket(0.0)[1]
    return min(up, 1.0) if getattr(law, "trivial_bound", False) else up


def _jensen_lower(law: Law, gamma: float, n: int) -> float:
    """Jensen lower value of D_up (docs/accountant_edges.md section 3): E[(L - T0)_+] / n with
    T0 >= max(-(n - 1) gamma E[L], 0) (rounded up); 0 when E[L] is not available."""
    if getattr(law, "trivial_bound", False):
        return 0.0
    try:
        mu = law.mean()
    except (OverflowError, ZeroDivisionError, FloatingPointError):
        return 0.0
    if not math.isfinite(mu):
        return 0.0
    T0 = (n - 1) * gamma * (max(-mu, 0.0) * (1.0 + 1e-6) + 1e-6)
    if not math.isfinite(T0):
        return 0.0
    return max(law.tail_upper_bracket(T0)[0] / n * (1.0 - 1e-12), 0.0)


def _certify_law(law: Law, gamma: float, n: int, rel_tol: float, workers, max_rounds: int = 6,
                 h0: float | None = None, negligible: float = 0.0) -> dict:
    """Certified bracket for one law; stops refining once upper <= negligible (the caller's
    maximum over laws is already certified to be larger by a wide margin)."""
    lo_s, hi_s = law.support()
    if hi_s <= 0:
        return dict(lower=0.0, upper=0.0, terms={"note": "L <= 0 almost surely"})
    sd = law.std()
    if lo_s == hi_s:
        c = lo_s  # a single atom: D_up = E[(c M)_+]/(n gamma) = c_+
        return dict(lower=max(c, 0.0), upper=max(c, 0.0) * (1 + 1e-12), terms={"note": "degenerate law"})
    if not sd > 0.0:  # spread lost to cancellation against a huge |mean|: the trivial cap E[L_+]
        return dict(lower=0.0, upper=max(law.tail_upper(0.0), _TINY), terms={"note": "sd underflow: E[L_+]"})
    if not math.isfinite(sd):
        return _heavy(law, gamma, n)
    # a coarse first round (cheap) estimates the value; the clamp and h are then set from it
    h = sd / 4.0 if h0 is None else min(h0, sd / 4.0)
    tgt = 1e-4 * rel_tol * sd  # moderate first clamp; tightened below once the value is known
    T, B = _choose_T(law, tgt), _choose_B(law, tgt)
    best = None
    for rnd in range(max_rounds + 1):
        Tmax = 0.5 * _K_MAX * h / _J_LO
        T, B = min(T, Tmax), min(B, Tmax)
        try:
            res = _one_pass(law, gamma, n, h, T, B, rel_tol, workers)
        except _Coarsen as exc:
            h_fit = exc.args[0]
            if best is None:
                h = max(2.0 * h, h_fit)
                continue
            if h_fit >= 0.9 * best["h"]:
                break  # the size caps stop the refinement: keep the certified values so far
            h = h_fit  # the finest grid that fits
            continue
        if best is None:
            best = res
        else:
            lower = max(best["lower"], res["lower"])
            if res["upper"] < best["upper"]:
                best = res
            best = dict(best, lower=lower)
        est = max(res["lower"], 0.5 * res["main"], _VALUE_FLOOR)
        tgt = 0.05 * rel_tol * est
        redo = False
        if res["terms"]["tail_T"] > tgt and T < Tmax:
            T, redo = _choose_T(law, tgt), True
        if res["terms"]["tail_B"] > tgt and B < Tmax:
            B, redo = _choose_B(law, tgt), True
        if best["lower"] > 0 and best["upper"] - best["lower"] <= rel_tol * best["lower"]:
            break
        if best["upper"] < max(_VALUE_FLOOR, negligible):
            break  # far below any delta of interest: keep the certified value, skip refinement
        lo, up = res["lower"], res["upper"]
        if lo > 0 and up - lo <= 0.8 * rel_tol * lo:
            if not redo:
                break
            # grid fine enough; only the clamp changes
        else:
            # both discretisation biases are second order in h (the clamp terms excluded)
            disc = up - res["terms"]["tail_T"] - lo - res["terms"]["tail_B"]
            ratio = disc / (0.7 * rel_tol * lo) if lo > 0 else 16.0
            h /= min(max(1.05 * math.sqrt(ratio), 1.3), 4.0)
    if best is None:
        raise RuntimeError("accountant: no grid fits the size limits")
    best["upper"] = max(best["upper"], _TINY)
    best["h_ratio"] = best["h"] / sd
    return best


class _BlockLaw(FiniteLaw):
    """Exact law of the sum of t users' B_i L_i for an atom law (step J), as computed in floating
    point: probabilities with relative error <= ``rel_p`` (plus 1e-300 absolute), values exact as
    stored (their own rounding, <= u |v| each, is charged by :func:`_unblock`)."""

    def __init__(self, values, probs, rel_p):
        # values sorted and distinct (np.unique), probs >= 0 summing to 1 (checked by _block):
        # FiniteLaw's own merge would only sort them again
        self.values, self.probs = values, probs
        self.rel_p = rel_p
        self._sorted = True
        self._support = FiniteLaw.support(self)  # (asked for many times per pass)
        # (plain numpy sums, not np.dot: multithreaded BLAS costs milliseconds under load)
        self._mean = float(np.sum(self.values * self.probs))
        self._std = math.sqrt(max(float(np.sum((self.values - self._mean) ** 2 * self.probs)), 0.0))

    def support(self):
        return self._support

    def mean(self):
        return self._mean

    def std(self):
        return self._std

    def cells(self, x0, h, K):
        m, w, em, ew = super().cells(x0, h, K)
        return m, w, em + self.rel_p * m + 1e-300, ew + self.rel_p * w + 1e-300

    def prob_below(self, x):
        p, e = super().prob_below(x)
        return p, e + self.rel_p * p + 1e-290

    def prob_above(self, x):
        p, e = super().prob_above(x)
        return p, e + self.rel_p * p + 1e-290

    def tail_upper(self, T):
        i = int(np.searchsorted(self.values, T, side="right"))  # the atoms above T only
        s = float(np.sum((self.values[i:] - T) * self.probs[i:]))
        return s * (1.0 + 1e-12) * (1.0 + self.rel_p)

    def tail_lower(self, B):
        i = int(np.searchsorted(self.values, -B, side="left"))  # the atoms below -B only
        s = float(np.sum((-B - self.values[:i]) * self.probs[:i]))
        return s * (1.0 + 1e-12) * (1.0 + self.rel_p)


_BLOCK_MU = 48.0  # target mean number of active users (B_i = 1) per block
_BLOCK_ATOMS = 60_000
_TRUNC = 1e-40  # truncation of the number of active users per block: its cost in D units


def _split(v):
    """v = hi + lo with hi carrying 26 significant bits (so c hi is exact for integers c < 2^26)."""
    c = v * 134217729.0  # 2^27 + 1 (Dekker)
    hi = c - (c - v)
    return hi, v - hi


def _compositions(total: int, parts: int) -> np.ndarray:
    """All count vectors c >= 0 of length ``parts`` with sum(c) <= total (int64, one per row)."""
    counts = np.zeros((1, 0), dtype=np.int64)
    for _ in range(parts):
        used = counts.sum(axis=1)
        reps = total - used + 1
        idx = np.repeat(np.arange(counts.shape[0]), reps)
        cj = np.concatenate([np.arange(r) for r in reps])
        counts = np.column_stack([counts[idx], cj])
    return counts


_LOG_COMB: dict = {}


def _log_comb(d: int, Mmax: int):
    """log C(d, k) for k <= Mmax by the compensated running sum of _log_binom_pmf, and its error
    bound; memoised per d (a longer table has the same prefix: the sum runs in the same order)."""
    hit = _LOG_COMB.get(d)
    if hit is not None and hit[0].size > Mmax:
        return hit[0][:Mmax + 1], hit[1][:Mmax + 1]
    i = np.arange(Mmax, dtype=float)
    terms = np.log((d - i) / (i + 1.0))
    lc = np.zeros(Mmax + 1)
    s_, c_ = 0.0, 0.0
    for k, x in enumerate(terms.tolist()):
        y = x - c_
        tt = s_ + y
        c_ = (tt - s_) - y
        s_ = tt
        lc[k + 1] = s_
    abs_cum = np.concatenate([[0.0], np.cumsum(np.abs(terms))]) * (1.0 + 1e-12)
    k = np.arange(Mmax + 1)
    eterm = abs_cum * 4.0 * _U + k * _U + 2.0 * _U * np.abs(lc) + 2.0 * (k * _U) ** 2 * abs_cum
    if len(_LOG_COMB) >= 8:
        _LOG_COMB.pop(next(iter(_LOG_COMB)))
    _LOG_COMB[d] = (lc, eterm)
    return lc, eterm


def _log_binom_pmf(d: int, g: float, M: np.ndarray):
    """log P(Bin(d, g) = M) for integer arrays M, and an absolute error bound: log C(d, M) as a
    compensated running sum of log((d - i)/(i + 1)) (each term within u + 4u|term|: one rounded
    ratio, log within 2 ulp; Kahan's sum within 2u|sum| + 2 M^2 u^2 sum|terms|), plus
    (d - M) log1p(-g) + M log g (within 5u of each product, 2u for the additions)."""
    lc, eterm = _log_comb(d, int(M.max()))
    l1 = math.log1p(-g) if g < 1.0 else 0.0
    lg = math.log(g)
    Mf = M.astype(float)
    val = lc[M] + (d - Mf) * l1 + Mf * lg
    err = eterm[M] + 7.0 * _U * (np.abs(lc[M]) + (d - Mf) * abs(l1) + Mf * abs(lg))
    return val, err


@functools.lru_cache(maxsize=32)
def _divisors_desc(n: int, top: int) -> tuple[int, ...]:
    """Divisors d of n with 2 <= d <= top, largest first (trial division up to sqrt n)."""
    small = np.arange(1, math.isqrt(n) + 1, dtype=np.int64)
    small = small[n % small == 0].tolist()
    out = set(small) | {n // d for d in small}
    return tuple(sorted((d for d in out if 2 <= d <= top), reverse=True))


_WEIGHTS_CACHE: dict = {}


def _block_weights(t: int, ms: int, gamma: float, pa: np.ndarray):
    """Count vectors, probabilities, their relative error bound and P(M > M*) of a block (see
    _block); they do not depend on the atom values, so get_epsilon's calls share them."""
    key = (t, ms, gamma, pa.tobytes())
    hit = _WEIGHTS_CACHE.get(key)
    if hit is not None:
        return hit
    m1 = pa.size
    counts = _compositions(ms, m1)
    M = counts.sum(axis=1)
    if gamma >= 1.0:  # every user active: M = t exactly
        counts, M = counts[M == t], M[M == t]
    # probabilities
    if gamma < 1.0:
        if ms < t:
            _log_comb(t, min(t, ms + 4000))  # one table for both calls below
        lb, eb = _log_binom_pmf(t, gamma, M)
    else:
        lb, eb = np.zeros(M.size), np.zeros(M.size)
    binom = np.zeros((ms + 1, ms + 1))  # Pascal's triangle in floats: relative error <= x u in row x
    binom[:, 0] = 1.0
    for x in range(1, ms + 1):
        binom[x, 1:x + 1] = binom[x - 1, 1:x + 1] + binom[x - 1, 0:x]
    pw = np.ones((m1, ms + 1))
    for c in range(1, ms + 1):
        pw[:, c] = pw[:, c - 1] * pa
    prob = np.exp(lb)
    rest = M.copy()
    for j in range(m1):
        prob *= binom[rest, counts[:, j]] * pw[j, counts[:, j]]
        rest -= counts[:, j]
    rel = float(np.max(np.expm1(eb * 1.01))) + ((4 + m1) * ms + 3 * m1 + 14) * _U
    p_tr, lp_out = 0.0, -math.inf
    if ms < t:  # P(M > M*): the same log-domain terms, summed up to where they are negligible
        Mt = np.arange(ms + 1, min(t, ms + 4000) + 1)
        lt, et = _log_binom_pmf(t, gamma, Mt)
        p_tr = float(np.sum(np.exp(lt)))
        rel = max(rel, float(np.max(np.expm1(et * 1.01))) + Mt.size * _U)
        if Mt[-1] < t:  # M > M* + 4000 is left out (a sub-probability law): its Chernoff bound
            x = Mt[-1] / t
            lp_out = -t * (x * math.log(x / gamma) + (1 - x) * math.log1p(-x) - (1 - x) * math.log1p(-gamma)) + 1e-9
    # counts as float columns (exact: < 2^26) for _block_law's products
    out = (np.asfortranarray(counts, dtype=float), prob, rel, p_tr, lp_out)
    if len(_WEIGHTS_CACHE) >= 8:
        _WEIGHTS_CACHE.pop(next(iter(_WEIGHTS_CACHE)))
    _WEIGHTS_CACHE[key] = out
    return out


_BLOCK_CACHE: dict = {}


def _block(gamma: float, law: Law, n: int):
    """_block_law, memoised on (gamma, atoms, n): get_epsilon's phases revisit the same epsilons."""
    if not isinstance(law, FiniteLaw) or n < 2:
        return None
    key = (gamma, law.values.tobytes(), law.probs.tobytes(), n)
    if key in _BLOCK_CACHE:
        return _BLOCK_CACHE[key]
    out = _block_law(gamma, law, n)
    if len(_BLOCK_CACHE) >= 16:
        _BLOCK_CACHE.pop(next(iter(_BLOCK_CACHE)))
    _BLOCK_CACHE[key] = out
    return out


def _block_law(gamma: float, law: Law, n: int):
    """Blocks of t users for an atom law (step J): (block law, t, value error, truncation error in
    D units), or None when not applicable.

    t is the largest divisor of n with t gamma <= _BLOCK_MU (at least 2) whose block has at most
    _BLOCK_ATOMS atoms. The block law is the law of V' = (B_1 L_1 + ... + B_t L_t) 1{M <= M*},
    M = B_1 + ... + B_t the active users, M* such that P(M > M*) <= 1e-40 gamma / max|L|
    (binomial Chernoff bound): multinomial weights C(t, M) g^M (1-g)^(t-M) M!/prod c_j! prod p_j^c_j
    (log-domain binomial part, multinomial coefficients from Pascal's triangle, powers by repeated
    multiplication), the event M > M* as an atom at 0 (its probability summed the same way),
    values as compensated sums of exact products. E|S - S'| <= (n/t) t max|L| P(M > M*) gives
    the truncation term, charged in D units (divided by n gamma).
    """
    if not isinstance(law, FiniteLaw) or n < 2:
        return None
    keep = law.probs > 0
    a, pa = law.values[keep], law.probs[keep]
    m1 = a.size
    if m1 < 1 or not (0.0 < gamma <= 1.0):
        return None
    amax = float(np.max(np.abs(a)))
    lp_tr = math.log(_TRUNC * gamma / max(amax, 1e-300))

    def mstar(d):
        if gamma >= 1.0:
            return d
        M = int(math.ceil(d * gamma))
        while M < d:
            x = M / d  # Chernoff: P(Bin > M) <= exp(-d KL(x || gamma)) for x > gamma
            if x >= 1:
                return d
            kl = x * math.log(x / gamma) + (1 - x) * (math.log1p(-x) - math.log1p(-gamma))
            if -d * kl <= lp_tr:
                break
            M += max(1, M // 50)
        return min(M, d)

    t_hi = max(2, int(_BLOCK_MU / gamma))
    best = None
    for d in _divisors_desc(n, min(n, t_hi)):
        ms = mstar(d)
        if math.comb(ms + m1, m1) <= _BLOCK_ATOMS:
            best = (d, ms)
            break
    if best is None:
        return None
    t, ms = best
    counts, prob, rel, p_tr, lp_out = _block_weights(t, ms, gamma, pa)
    # values: sum_j c_j a_j with every product exact (Dekker split), compensated summation (Sum2):
    # error <= u |v| + gamma_{2 m1}^2 sum |terms|
    hi, lo = _split(a)
    cols = [(j, x) for x in (hi, lo) for j in range(m1)]  # terms c_j hi_j, then c_j lo_j
    acc = counts[:, 0] * hi[0]
    comp = np.zeros(acc.size)
    for j, x in cols[1:]:
        col = counts[:, j] * x[j]
        tot = acc + col
        z = tot - acc
        comp += (acc - (tot - z)) + (col - z)
        acc = tot
    value = acc + comp
    g2 = (2 * m1 * _U / (1 - 2 * m1 * _U)) ** 2
    ev = 1.01 * (_U * float(np.max(np.abs(value))) + g2 * ms * float(np.sum(np.abs(a))))
    value = np.concatenate([value, [0.0]])
    prob = np.concatenate([prob, [p_tr]])
    uv, inv = np.unique(value, return_inverse=True)
    dup = int(np.bincount(inv).max())
    pp = np.bincount(inv, weights=prob, minlength=uv.size)
    if abs(pp.sum() - 1.0) > 1e-9:
        return None  # (not expected) fall back to the per-user law
    rel_p = (rel + (dup + 2) * _U) * 1.01
    # coupling V' = 0 on {M > M*}: (n/t) t max|L| P(M > M*) / (n gamma) <= max|L| exp(lp_tr) / gamma
    # = _TRUNC (1.01: rounding); the mass left out beyond M* + 4000 (probability p per block) can
    # change E[S'_+] by at most (n/t) p n max|L|, i.e. (n/t) p max|L| / gamma in delta units
    trunc = 1.01 * _TRUNC if ms < t else 0.0
    if lp_out > -math.inf:
        trunc += math.exp(min(lp_out + math.log(n / t * amax / gamma), 700.0))
    return _BlockLaw(uv, pp, rel_p), t, ev, trunc


def _unblock(r: dict, gamma: float, n: int, t: int, ev: float, trunc: float = 0.0) -> dict:
    """Bracket of the blocked problem (n/t blocks, gamma = 1) in the units of D_up (step J).

    E[S_+]/(n gamma) = (n/t) E[S_+]/(n/t) / (n gamma): a factor 1/(t gamma). Each computed block
    value is within ev of the exact one, so |E[S_+] - E[S~_+]| <= (n/t) ev P(S~ >= -2 (n/t) ev)
    (the indicator of the kink needs S~ within the total error of 0), and the Chernoff bound with
    the tilt of the upper law (whose log-mgf dominates: hat rounding is a convex-order spread)
    gives P(S~ >= -c) <= exp(n Lambda + theta c), n Lambda raised by the pmf-error bound
    n log(mass + tau) of the engine (0.01 covers the rounding of n Lambda).
    ``trunc``: the truncation term of :func:`_block` (D units), added as is.
    """
    f = 1.0 / (t * gamma)
    q = n // t
    c = 2.0 * q * ev
    # the computed log-mgf plus the bound of its pmf errors: n log(tilted mass + tau) >= the gap to
    # the exact law's n Lambda
    lam = r.get("n_log_mgf", math.nan) + max(r.get("log_mgf_err", math.nan), 0.0)
    th = r.get("theta", math.nan)
    # (valid only if the engine's law was not clamped from above: finite laws use T = max atom)
    chern = math.isfinite(lam) and math.isfinite(th) and r.get("T", -math.inf) >= r.get("top", math.inf)
    if chern:
        shift = q * ev * math.exp(min(lam + th * c + 0.01, 0.0)) / (n * gamma)
    else:
        shift = q * ev / (n * gamma)
    shift += trunc
    out = dict(r)
    out["upper"] = r["upper"] * f * (1 + 1e-12) + shift
    out["lower"] = max(r["lower"] * f * (1 - 1e-12) - shift, 0.0)
    if "main" in r:
        out["main"] = r["main"] * f
    out["terms"] = {k: (v * f if isinstance(v, float) and not k.startswith("N") else v)
                    for k, v in r.get("terms", {}).items()}
    out["terms"]["block_t"] = t
    out["terms"]["block_value_rounding"] = shift
    return out


def _certify(law: Law, gamma: float, n: int, rel_tol: float, workers, negligible: float = 0.0) -> dict:
    """_certify_law, on blocks of t users when the law has few atoms (step J). The upper value
    is also capped by E[L_+] ((sum x_i)_+ <= sum (x_i)_+ gives D_up <= E[L_+])."""
    if n == 1 and law.support()[1] > 0:
        lo, up = law.tail_upper_bracket(0.0)  # D_up = E[(B L)_+] / gamma = E[L_+] exactly
        return dict(lower=lo, upper=max(up, _TINY), terms={"note": "n = 1: E[L_+] in closed form"})
    if law.support()[1] > 0 and (cap := law.tail_upper(0.0)) < max(_VALUE_FLOOR, negligible):
        # the trivial cap D_up <= E[L_+] is already below the value floor (or the maximum so far)
        return dict(lower=0.0, upper=max(cap, _TINY), terms={"note": "E[L_+] below the value floor"})
    blk = _block(gamma, law, n) if law.support()[1] > 0 else None
    if blk is None:
        # heavy-tailed continuous laws: far-tail treatment (docs/accountant_tail.md); None: plain engine
        r = _bigjump.try_certify(law, gamma, n, rel_tol, workers, negligible=negligible)
        if r is None:
            r = _certify_law(law, gamma, n, rel_tol, workers, negligible=negligible)
    else:
        bl, t, ev, trunc = blk
        r = _certify_law(bl, 1.0, n // t, rel_tol, workers, negligible=negligible * t * gamma)
        r = _unblock(dict(r, top=bl.support()[1]), gamma, n, t, ev, trunc)
    cap = max(law.tail_upper(0.0), _TINY) if law.support()[1] > 0 else 0.0
    if cap < r["upper"]:
        r = dict(r, upper=cap)
    return r


def _pass_fit(law: Law, gamma: float, n: int, h: float, T: float, B: float, rel_tol: float, workers,
              lower: bool) -> dict:
    """_one_pass at step h, or at the finest step that fits the size caps."""
    for _ in range(60):
        Tmax = 0.5 * _K_MAX * h / _J_LO
        try:
            return _one_pass(law, gamma, n, h, min(T, Tmax), min(B, Tmax), rel_tol, workers, lower)
        except _Coarsen as exc:
            h = max(2.0 * h, exc.args[0]) if exc.args[0] <= h else exc.args[0]
    raise RuntimeError("accountant: no grid fits the size limits")


def _certify_upper(law: Law, gamma: float, n: int, rel_tol: float, workers, scale: float, h_ratio: float) -> dict:
    """Certified upper value of one law at h = h_ratio sd(L), without the lower law (get_epsilon's
    search); the clamps are set for an absolute accuracy 0.05 rel_tol ``scale``."""
    if law.support()[1] <= 0:
        return dict(upper=0.0)
    sd = law.std()
    lo_s, hi_s = law.support()
    if lo_s == hi_s:
        return dict(upper=max(lo_s, 0.0) * (1 + 1e-12))
    if not sd > 0.0:
        return dict(upper=max(law.tail_upper(0.0), _TINY))
    if not math.isfinite(sd):
        return _heavy(law, gamma, n)
    tgt = 0.05 * rel_tol * scale
    return _pass_fit(law, gamma, n, sd * h_ratio, _choose_T(law, tgt), _choose_B(law, tgt), rel_tol, workers, False)


def _surcharge(randomizer, epsilon: float, adjacency: str) -> float:
    """The randomizer's optional additive term of the upper value (step K; 0 without the method)."""
    fn = getattr(randomizer, "privacy_amplification_surcharge", None)
    return 0.0 if fn is None else float(fn(epsilon, adjacency))


def _plus(up: float, s: float) -> float:
    """up + s rounded up (s >= 0)."""
    return up if s == 0.0 else math.nextafter(up + s, math.inf)


def _upper_value(law: Law, gamma: float, n: int, rel_tol: float, workers, scale: float, h_ratio: float) -> float:
    """Certified upper value only (blocks for atom laws, step J; capped by E[L_+], exact at n = 1)."""
    if law.support()[1] <= 0:
        return _TINY
    cap = law.tail_upper(0.0)
    if n == 1:
        return max(cap, _TINY)
    blk = _block(gamma, law, n)
    if blk is None:
        r = _bigjump.try_certify(law, gamma, n, rel_tol, workers, lower=False)  # docs/accountant_tail.md
        if r is None:
            r = _certify_upper(law, gamma, n, rel_tol, workers, scale, h_ratio)
        return max(min(r["upper"], cap), _TINY)
    bl, t, ev, trunc = blk
    r = _certify_upper(bl, 1.0, n // t, rel_tol, workers, scale * t * gamma, h_ratio)
    r = _unblock(dict(r, lower=0.0, top=bl.support()[1]), gamma, n, t, ev, trunc)
    return max(min(r["upper"], cap), _TINY)


def _shrink(fun, delta: float, lo, ulo, hi, uhi, tol):
    """Root search of get_epsilon: secant on log delta (aimed a little past the root, then a
    probe just below it) with bisection when it stalls, until hi - lo <= tol hi; fun(hi) <=
    delta < fun(lo).
    Stops at hi <= 1e-15 nats (a verified answer; only reached when fun drops below delta
    right after 0, e.g. a coarse upper value below get_delta(0))."""
    ld = math.log(delta)
    slow = 0
    for _ in range(_SHRINK_ITERS):  # (bounded: the safe end hi is returned in any case)
        if not (hi - lo > tol * hi and hi > 1e-15):
            break
        width = hi - lo
        if slow >= 2 or not (ulo > 0 and uhi > 0):
            x, slow = 0.5 * (lo + hi), 0
        else:
            flo, fhi = math.log(ulo) - ld, math.log(uhi) - ld
            x = hi - fhi * (hi - lo) / (fhi - flo) if fhi < flo else 0.5 * (lo + hi)
            x = min(max(x + 0.3 * tol * hi, lo + 0.01 * width), hi - 0.01 * width)
        u = fun(x)
        if u <= delta:
            hi, uhi = x, u
            x2 = x * (1.0 - 0.7 * tol)
            if x2 > lo and hi - lo > tol * hi:
                u2 = fun(x2)
                if u2 > delta:
                    lo, ulo = x2, u2
                else:
                    hi, uhi = x2, u2
        else:
            lo, ulo = x, u
        slow = slow + 1 if hi - lo > 0.5 * width else 0
    return lo, ulo, hi, uhi


def _envelope_put(keys: list, vals: list, k: float, v: float) -> float:
    """Insert (k, v) into a sorted non-increasing envelope (module step M) and return the reported
    value min(v, value at the largest key <= k); values at larger keys are lowered to it, so the
    envelope stays non-increasing. At most _MEMO_MAX points (then it restarts: forgetting
    points only loosens later reports)."""
    import bisect

    i = bisect.bisect_right(keys, k)
    if i > 0:
        v = min(v, vals[i - 1])
    if i > 0 and keys[i - 1] == k:
        vals[i - 1] = v
    else:
        if len(keys) >= _MEMO_MAX:
            keys.clear()
            vals.clear()
            i = 0
        keys.insert(i, k)
        vals.insert(i, v)
        i += 1
    for j in range(i, len(vals)):
        if vals[j] <= v:
            break
        vals[j] = v
    return v


class ShuffleAccountant:
    """Certified (epsilon, delta) accountant for a shuffled local randomizer (the shuffle paper's appendix).

    Parameters
    ----------
    randomizer : BlanketMixedGaussian, GaussianRandomizer, or any object implementing
        ``privacy_amplification_laws(epsilon, adjacency)`` (protocol: :mod:`sharpdp.shuffle._laws`),
        optionally ``privacy_amplification_surcharge(epsilon, adjacency)`` (added to the upper
        value, module docstring step K).
    n : int
        Number of users, 1 <= n <= 1e9.
    adjacency : {"zero_out", "replace"}, default "zero_out"
        Neighbouring relation. "replace" (one input replaced by another, |x| <= 1) uses the
        randomizer's own replace-one laws where a worst-case pair is proven (BlanketMixedGaussian
        with gamma > 0: an antipodal unit pair, proof in ``sharpdp.shuffle._laws._bmg_laws``;
        finite-output randomizers; PrivUnit; GeneralRandomizer). Otherwise (GaussianRandomizer,
        gamma = 0) it is bounded through bot (Notes; ``via_bottom`` is then True).
    rel_tol : float, default 1e-2
        Target (upper - lower)/lower, in (0, 1). The upper value is certified whatever the
        achieved accuracy; :meth:`report` shows the achieved one.
    workers : int or None
        Threads for scipy.fft, 1 <= workers <= 1024 (None: all cores). Does not change the values.

    Notes
    -----
    ``get_delta`` is a rigorous upper bound on the blanket divergence D_up(eps) of the shuffle paper's
    appendix (Balle et al. 2019, Lemma 5.3), maximised over both orders of the neighbouring
    pair (docs/papers.md §1.2), hence on the shuffled mechanism's delta(eps). Algorithm and error terms:
    module docstring and docs/accountant.md §3-§6.

    The accuracy target can be missed when the grid hits its size caps (FFT length N <= 2^24,
    per-user grid K <= 2^21 / 4; n = 1e9 meets it at delta ~ 1e-6 and ~ 1e-12 in the tested
    cases): the upper value is still certified and :meth:`report` shows the achieved
    (upper - lower)/lower. Values below 1e-24 are certified upper bounds only (the clamps and
    grid are not refined for the relative target there). At n = 1 the value is the closed form
    D_up = E[L_+]. Heavy-tailed laws (the Gaussian randomizer or a BMG with sigma0 <~ 2) at
    small n or small delta are slow (tens of seconds per get_epsilon at sigma0 = 1, n = 2) and
    at large n their upper value can stay far above the lower one (clamp term E[(L - T)_+] at
    the largest grid): still certified, see :meth:`report`.

    Replace-one through bot (randomizers without a proven worst-case replace pair): the datasets
    D = (x1, ...) and D' = (x1', ...) are compared through D_bot = (bot, ...), bot reporting from
    the blanket. The hockey-stick divergence satisfies the weak triangle inequality
    delta_{P,R}(e1 + e2) <= delta_{P,Q}(e1) + e^{e1} delta_{Q,R}(e2) (P(S) <= e^{e1} Q(S) + d1 <=
    e^{e1}(e^{e2} R(S) + d2) + d1), and both legs are zero-out pairs (x1 vs bot, bot vs x1'),
    bounded by the zero-out laws of that order (A: x vs bot, B: bot vs x; for a randomizer
    whose laws are not listed in that order, each by the maximum over all its zero-out laws).
    The reported value is min(A(e1) + e^{e1} B(eps - e1), 1), rounded up, minimised over a
    few splits e1 = f eps (f in 0.35 ... 0.8 and two refinements; any split is valid), and
    ``get_delta_bounds`` brackets that quantity at the chosen split (``report().terms``
    holds it). It is certified but looser than a direct replace law would be (at n = 1 and
    sigma0 = 4.6 it is several times the exact delta of the Gaussian mechanism with
    sensitivity 2), and each value costs up to 12 zero-out certifications.

    Raises
    ------
    ValueError
        n < 1 or > 1e9, unknown adjacency, rel_tol outside (0, 1), workers not an integer in
        [1, 1024], GaussianRandomizer with dim > 1, a BlanketMixedGaussian with sigma0 < 1e-300.
    NotImplementedError
        adjacency "replace" with a randomizer that supports neither replace nor zero-out laws.
    """

    def __init__(self, randomizer, n, adjacency: str = "zero_out", *, rel_tol: float = 1e-2, workers=None):
        self.n = V.integer("n", n, lo=1, hi=10**9)
        if adjacency not in ("zero_out", "replace"):
            raise ValueError(f"adjacency must be 'zero_out' or 'replace', got {adjacency!r}")
        self.adjacency = adjacency
        self.rel_tol = V.real("rel_tol", rel_tol, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        self.randomizer = randomizer
        if workers is not None:
            workers = V.integer("workers", workers, lo=1, hi=1024)
        self.workers = -1 if workers is None else workers
        self._memo_e: list = []  # epsilons reported by get_delta_bounds, sorted (step M)
        self._memo_u: list = []  # their reported upper values (non-increasing)
        self._emem_d: list = []  # deltas answered by get_epsilon, sorted (step M)
        self._emem_e: list = []  # their answers (non-increasing)
        self._bottom = None  # zero-out accountant of the replace bound through bot (if used)
        self._leg_cache: dict = {}
        try:
            laws_for(randomizer, 0.0, adjacency)  # validate the randomizer/adjacency early
        except NotImplementedError:
            if adjacency != "replace":
                raise
            laws_for(randomizer, 0.0, "zero_out")  # (raises when zero-out is unsupported too)
            self._bottom = ShuffleAccountant(randomizer, n, "zero_out", rel_tol=rel_tol, workers=workers)
            # the two legs' laws: the BMG family lists (x vs bot, bot vs x); otherwise all laws bound both
            from sharpdp.shuffle.mechanisms import BlanketMixedGaussian

            ordered = isinstance(randomizer, BlanketMixedGaussian)
            self._legs = ((0,), (1,)) if ordered else (None, None)

    @property
    def via_bottom(self) -> bool:
        """True when replace-one is bounded through bot (see the class Notes), not by its own law."""
        return self._bottom is not None

    @staticmethod
    def _eps(epsilon):
        if epsilon is None or isinstance(epsilon, (str, bytes)):
            raise TypeError(f"epsilon must be a real number or an array of them, got {type(epsilon).__name__}")
        arr = np.asarray(epsilon)
        if arr.dtype.kind not in "iuf":  # complex, bool, object, strings
            raise TypeError(f"epsilon must be real (int or float), got dtype {arr.dtype}")
        arr = arr.astype(float)
        if np.any(np.isnan(arr)):
            raise ValueError("epsilon must not be NaN")
        if np.any(arr < 0):
            raise ValueError(f"epsilon must be >= 0, got {arr.min()}")
        return arr

    def report(self, epsilon: float) -> AccountantReport:
        """Certified bracket and error budget at one epsilon (>= 0, nats)."""
        return self._report(epsilon, self.rel_tol)

    def _report(self, epsilon, rel_tol, only=None) -> AccountantReport:
        """Report over the laws with index in ``only`` (all when None)."""
        eps = float(self._eps(V.real("epsilon", epsilon, lo=0.0, allow_inf=True)))
        if math.isinf(eps):  # D_up(inf) = 0; only a surcharge (non-increasing in eps) remains
            s = _surcharge(self.randomizer, _EPS_CAP, self.adjacency)
            return AccountantReport(eps, 0.0, _plus(0.0, s), terms={"surcharge": s} if s else {})
        if self._bottom is not None:
            return self._report_via_bottom(eps, rel_tol)
        if eps > _EPS_CAP and only is None:
            return self._report_beyond_cap(eps, rel_tol)
        best = None
        lo_max = up_max = 0.0
        # D_up is non-increasing in epsilon (docs/accountant.md §1), so the value at _EPS_CAP certifies any
        # larger epsilon (there it is already below ~1e-25 for every mechanism implemented).
        for i, (gamma, law) in enumerate(laws_for(self.randomizer, min(eps, _EPS_CAP), self.adjacency)):
            if only is not None and i not in only:
                continue
            # a law whose certified upper value is already below the maximum so far cannot change
            # the reported (max) upper value: its refinement stops there
            r = _certify(law, float(gamma), self.n, rel_tol, self.workers, negligible=up_max)
            lo_max, up_max = max(lo_max, r["lower"]), max(up_max, r["upper"])
            if best is None or r["upper"] > best[1]["upper"]:
                best = (i, r)
        i, r = best
        s = _surcharge(self.randomizer, min(eps, _EPS_CAP), self.adjacency)
        if s > 0.0:
            r = dict(r, upper=_plus(r["upper"], s), terms=dict(r.get("terms", {}), surcharge=s))
        return AccountantReport(eps, lo_max, r["upper"], r.get("h", math.nan), r.get("N", 0), r.get("T", math.nan),
                                r.get("B", math.nan), r.get("theta", math.nan), r.get("n_log_mgf", math.nan), i,
                                r.get("terms", {}))

    def _cap_beyond(self, eps: float):
        """(lower, upper) closed-form values at eps > 60 from the laws built at min(eps, 700) (step L):
        upper = max over laws of E[L_+] plus the surcharge, lower = max of the Jensen bounds; (0, inf)
        when the laws cannot be built there."""
        e = min(eps, _EPS_MAX)
        try:
            laws = laws_for(self.randomizer, e, self.adjacency)
            up = lo = 0.0
            for gamma, law in laws:
                if law.support()[1] <= 0:
                    continue
                up = max(up, _trivial_cap(law))
                lo = max(lo, _jensen_lower(law, float(gamma), self.n))
            up = _plus(up, _surcharge(self.randomizer, e, self.adjacency))
        except (ValueError, OverflowError, ArithmeticError, FloatingPointError):
            return 0.0, math.inf
        return (lo, up) if math.isfinite(up) else (0.0, math.inf)

    def _report_beyond_cap(self, eps: float, rel_tol) -> AccountantReport:
        """eps > 60 (step L): min(value at 60, E[L_+] at eps); D_up is non-increasing in eps."""
        r60 = self._report(_EPS_CAP, rel_tol)
        lo, cap = self._cap_beyond(eps)
        if cap < r60.upper:
            return AccountantReport(eps, min(lo, cap), cap, terms={"note": "epsilon > 60: E[L_+] at epsilon"})
        return AccountantReport(eps, min(lo, r60.upper), r60.upper, r60.h, r60.N, r60.T, r60.B, r60.theta,
                                r60.n_log_mgf, r60.law_index, dict(r60.terms, note="epsilon > 60: value at 60"))

    # fractions of epsilon given to the first leg (x1 vs bot) in the split search
    _SPLITS = (0.35, 0.5, 0.65, 0.8)

    def _leg(self, j: int, e: float, rel_tol) -> AccountantReport:
        """Zero-out report of leg j (0: x vs bot, 1: bot vs x) at e, cached."""
        key = (j, e, rel_tol)
        if key not in self._leg_cache:
            if len(self._leg_cache) > 4096:
                self._leg_cache.clear()
            self._leg_cache[key] = self._bottom._report(e, rel_tol, only=self._legs[j])
        return self._leg_cache[key]

    def _split(self, eps: float, f: float, rel_tol):
        """(f, upper, lower, e1, leg A report, leg B report) of A(e1) + e^{e1} B(eps - e1), e1 = f eps."""
        e1 = f * eps
        e2 = eps - e1
        if e1 + e2 > eps:  # (rounding) certify at e1 + e2 <= eps: delta is non-increasing
            e2 = math.nextafter(e2, 0.0)
        ra, rb = self._leg(0, e1, rel_tol), self._leg(1, e2, rel_tol)
        w = math.exp(e1)
        return f, (ra.upper + w * rb.upper) * (1 + 8 * _U), (ra.lower + w * rb.lower) * (1 - 8 * _U), e1, ra, rb

    def _report_via_bottom(self, eps, rel_tol) -> AccountantReport:
        """Replace-one through bot (class Notes): min over the split e1 + e2 = eps of
        A(e1) + e^{e1} B(e2), rounded outwards, capped at 1."""
        eps_in, eps = eps, min(eps, _EPS_CAP)  # delta is non-increasing: the value there holds beyond
        def split(f):
            return self._split(eps, f, rel_tol)

        cands = [split(f) for f in self._SPLITS]
        f0 = min(cands, key=lambda c: c[1])[0]
        cands += [split(min(f0 + 0.06, 1.0)), split(max(f0 - 0.06, 0.0))]
        best = min(cands, key=lambda c: c[1])
        f, up, lo, e1, ra, rb = best
        r = ra if ra.upper >= rb.upper else rb
        terms = dict(r.terms, via_bottom=True, epsilon_split=e1, leg_upper=(ra.upper, rb.upper))
        return AccountantReport(eps_in, min(lo, 1.0), min(up, 1.0), r.h, r.N, r.T, r.B, r.theta, r.n_log_mgf,
                                r.law_index, terms)

    def _epsilon_via_bottom(self, delta: float, xtol: float) -> float:
        """get_epsilon through bot: an upper end from the even split with both legs bounded by the
        zero-out value D0 (the fixed point of e -> eps0(delta / (1 + e^e)), approached from
        below), then the search on get_delta itself."""
        zo, margin = self._bottom, 1.0 - 1e-12  # margin: the rounding of the target and of f
        e = zo.get_epsilon(0.5 * delta * margin, xtol=xtol)  # 1 + e^e >= 2: a lower end
        for _ in range(100):
            # aim at a slightly larger e than the current one, so one more round usually suffices
            e_aim = e * (1.0 + xtol) + 1e-15
            e_new = zo.get_epsilon(delta * margin / (1.0 + math.exp(e_aim)), xtol=xtol)
            if e_new <= e_aim:
                break  # D0(e_new) (1 + e^{e_new}) <= delta
            e = e_new
        else:
            raise RuntimeError("get_epsilon: the replace bound through bot did not converge")
        if self.get_delta(0.0) <= delta:
            return 0.0
        hi = min(2.0 * e_new, _EPS_MAX)
        uhi = self.get_delta(hi)
        step = max(xtol, 1e-3)
        while uhi > delta:  # (the legs refine apart from the max: rarely a hair above)
            if hi >= _EPS_MAX:
                return _EPS_MAX  # get_delta(700) <= delta was checked by get_epsilon
            hi = min(hi * (1.0 + step), _EPS_MAX)
            step *= 2.0  # (bounded: at most ~20 steps to 700)
            uhi = self.get_delta(hi)
        lo = 0.5 * hi
        ulo = self.get_delta(lo)
        while ulo <= delta:
            if lo <= 1e-15:
                return lo
            hi, uhi, lo = lo, ulo, 0.5 * lo
            ulo = self.get_delta(lo)
        return _shrink(self.get_delta, delta, lo, ulo, hi, uhi, xtol)[2]

    def get_delta_bounds(self, epsilon):
        """Certified (lower, upper) bracket of the blanket divergence.

        Parameters
        ----------
        epsilon : float or array_like
            epsilon >= 0 in nats, any shape.

        Returns
        -------
        (lower, upper) : floats or float64 arrays of epsilon's shape.
            upper as :meth:`get_delta` (in [5e-324, 1], monotone per accountant object: module
            step M); lower <= upper is a lower value of the blanket bound (0 where none is
            computed, e.g. laws beyond the double range), not a lower bound on the mechanism's
            delta (that is :meth:`get_delta_lower_form`).

        Raises
        ------
        TypeError
            epsilon None, a string, complex or boolean.
        ValueError
            epsilon < 0 or NaN.
        """
        arr = self._eps(epsilon)
        flat = arr.ravel()
        lo = np.empty(flat.size)
        up = np.empty(flat.size)
        cap = self._local_epsilon()
        order = np.argsort(flat, kind="stable")
        for j in order:  # increasing epsilon: each value enters the memo before the larger ones
            e = float(flat[j])
            if (cap is not None and e >= cap) or math.isinf(e):
                # eps0-LDP reports: the shuffled output is eps0-DP (exactly 0); eps = inf: only the
                # surcharge remains (report handles it)
                if math.isinf(e) and (cap is None or e < cap):
                    rep = self.report(e)
                    lo[j], up[j] = rep.lower, rep.upper
                else:
                    lo[j] = up[j] = 0.0
                continue
            rep = self.report(e)
            u = min(max(rep.upper, _TINY), 1.0)  # a positive value below the double range: 5e-324
            u = self._memo_put(e, u)
            lo[j], up[j] = min(rep.lower, u), u
        if arr.ndim == 0:
            return float(lo[0]), float(up[0])
        return lo.reshape(arr.shape), up.reshape(arr.shape)

    def _memo_put(self, e: float, u: float) -> float:
        """Monotone reporting (step M): the reported value min(u, memo values at eps' <= e); it is
        stored, and the stored values at eps'' > e are lowered to it (each stays an upper bound
        there: D_up is non-increasing), so the memo stays non-increasing in epsilon."""
        return _envelope_put(self._memo_e, self._memo_u, e, u)

    def get_delta_lower_form(self, epsilon):
        """Certified lower value of the lower form D_lo(epsilon) (docs/accountant.md §1).

        D_lo is the exact hockey-stick divergence of the shuffled outputs on the datasets
        (x1, x0, ..., x0) vs (x1', x0, ..., x0), so ``get_delta_lower_form(eps) <= delta(eps) <=
        get_delta(eps)``: users see the band around the true delta. Requires a randomizer with
        ``lower_form()`` (e.g. :class:`RandomizedResponse`, :class:`PrivUnit`).

        Parameters
        ----------
        epsilon : float or array_like of float
            epsilon >= 0 (nats).

        Returns
        -------
        float or numpy.ndarray of float64
            Same shape as ``epsilon``.

        Raises
        ------
        NotImplementedError
            If the randomizer has no lower form (e.g. the Gaussian types).
        ValueError
            If epsilon < 0 or NaN.
        """
        if not hasattr(self.randomizer, "lower_form"):
            raise NotImplementedError(f"{type(self.randomizer).__name__} has no lower form (D_lo) yet")
        acc = ShuffleAccountant(self.randomizer.lower_form(), self.n, self.adjacency,
                                rel_tol=self.rel_tol, workers=None if self.workers == -1 else self.workers)
        return acc.get_delta_bounds(epsilon)[0]

    def get_delta(self, epsilon):
        """Certified upper bound on delta(epsilon) of the shuffled mechanism.

        Parameters
        ----------
        epsilon : float or array_like
            epsilon >= 0 in nats.

        Returns
        -------
        float or ndarray
            Upper value in [5e-324, 1], max over both orders of the neighbouring pair; never
            below the true blanket divergence. A positive value below the double range is
            reported as 5e-324 (the smallest positive double, still an upper bound); exactly 0
            only where delta is exactly 0 (epsilon >= eps0 of an eps0-LDP randomizer, or
            epsilon = inf without a surcharge). For epsilon > 60: the smaller of the value at 60
            and E[L_+] at epsilon (module step L). Values are monotone per accountant object
            (module step M). The relative accuracy ``rel_tol`` is targeted for values >= 1e-24;
            below that the upper value is certified but may be loose (still below 1e-24).

        Raises
        ------
        TypeError
            epsilon None, a string, complex or boolean.
        ValueError
            epsilon < 0 or NaN.
        """
        return self.get_delta_bounds(epsilon)[1]

    def _guess_epsilon(self, delta: float) -> float:
        """Starting point only (asymptotics of docs/accountant.md §11, not a bound).

        Solves phi(a)/a^2 = delta chi sqrt(n).
        """
        from scipy.optimize import brentq

        try:
            pairs = laws_for(self.randomizer, 0.0, self.adjacency)
            chi = min(math.sqrt(g) / law.std() for g, law in pairs)
            lt = math.log(delta * chi * math.sqrt(self.n))
            f = lambda a: -0.5 * a * a - 0.5 * math.log(2 * math.pi) - 2 * math.log(a) - lt  # noqa: E731
            a = brentq(f, 1e-3, 60.0) if f(1e-3) > 0 > f(60.0) else 1.0
            return max(a / (chi * math.sqrt(self.n)), 1e-8)
        except (ValueError, ZeroDivisionError, ArithmeticError):
            return 0.1

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
        cap = getattr(self.randomizer, "local_epsilon", None)
        return float(cap) if cap is not None else None

    def get_epsilon(self, delta: float, *, xtol: float = 1e-3) -> float:
        """Smallest epsilon (up to a relative ``xtol``) whose certified upper delta is <= delta.

        Root search in three phases (docs/accountant.md §8), each a bracket shrunk by secant steps on log delta
        (aimed just past the root, then a probe just below it; bisection if they stall):
        (1) on the certified upper value alone at h = sd(L)/8, to 1 % (the lower value is not
        needed to certify an answer); (2) on the upper value alone at the grid that one full
        report (with the lower value, as :meth:`get_delta` computes it) settles on at the phase-1
        answer, to ``xtol``; (3) on :meth:`get_delta` itself, from the phase-2 bracket, so that
        ``get_delta(answer) <= delta``. Returns the safe end of the final bracket; exactly 0.0 if
        the target already holds at 0. For pure eps0-LDP randomizers the answer never exceeds
        eps0 (where delta = 0). The first bracket comes from closed forms (the cap E[L_+] above,
        the Jensen lower value below; docs/accountant_edges.md section 6), and laws whose cap is
        below 1e-24 (where get_delta reports the cap) are evaluated by their cap only, so tiny
        deltas (1e-100, 1e-300) take well under a second for the blanket-mixed Gaussian.
        Answers are monotone: non-increasing in delta for queries in increasing delta (module
        step M).

        Parameters
        ----------
        delta : float
            Target, 0 < delta < 1.
        xtol : float, default 1e-3
            Relative width of the final bracket, in [1e-6, 0.5]. Every search loop is bounded
            (at most 200 bracket-shrinking steps per phase, each loop of bracketing steps
            bounded); if a bound is reached the safe end of the current bracket is returned
            (certified, possibly less tight than ``xtol``).

        Returns
        -------
        float
            epsilon >= 0 in nats (finite, at most 700).

        Raises
        ------
        TypeError
            delta or xtol not a real number.
        ValueError
            delta outside (0, 1) or NaN, or not above the randomizer's surcharge (module
            docstring step K), or not met at epsilon = 700 (the largest epsilon certified:
            module step L); xtol outside [1e-6, 0.5] or NaN.
        """
        delta = V.probability_open("delta", delta)
        xtol = V.real("xtol", xtol, lo=_XTOL_RANGE[0], hi=_XTOL_RANGE[1])
        return self._eps_memo_put(delta, self._epsilon_search(delta, xtol))

    def _eps_memo_put(self, delta: float, e: float) -> float:
        """Monotone get_epsilon (module step M): an answer e' for delta' <= delta is also an answer
        for delta (get_delta(e') <= delta' <= delta, and get_delta values only decrease over
        time), so min(e, answers for delta' <= delta) is returned and stored; stored answers for
        larger deltas are lowered to it, keeping the memo non-increasing in delta."""
        return _envelope_put(self._emem_d, self._emem_e, delta, e)

    def _epsilon_search(self, delta: float, xtol: float) -> float:
        """get_epsilon's search (validated delta and xtol), before the monotone memo."""
        s_min = _surcharge(self.randomizer, _EPS_CAP, self.adjacency)  # non-increasing in epsilon
        if s_min >= delta:
            raise ValueError(f"delta: {delta!r} is not above the randomizer's surcharge {s_min!r} (e.g. output "
                             f"mass outside a GeneralRandomizer's support), which no epsilon removes")
        cap0 = self._local_epsilon()
        if cap0 is None:
            d_max = self.get_delta(_EPS_MAX)
            if d_max > delta:
                raise ValueError(f"delta: {delta!r} is not met at epsilon = {_EPS_MAX} nats, the largest epsilon the "
                                 f"accountant certifies (certified delta there: {d_max!r})")
        if self._bottom is not None:
            return self._epsilon_via_bottom(delta, xtol)
        ratios: dict[int, float] = {}
        rel = self.rel_tol
        up_cache: dict = {}

        def up(e: float) -> float:
            if e > _EPS_CAP:  # module step L: min(value at 60, E[L_+] at e)
                return min(up(_EPS_CAP), self._cap_beyond(e)[1])
            key = (e, tuple(sorted(ratios.items())))
            if key in up_cache:
                return up_cache[key]
            # the laws in decreasing order of their cap E[L_+] (>= their value): a law whose cap is
            # below the maximum so far cannot change it, and one whose cap is far below delta or
            # below the value floor only needs the cap (get_delta itself reports the cap below the
            # floor, _certify; the search needs no more there)
            items = []
            for i, (gamma, law) in enumerate(laws_for(self.randomizer, e, self.adjacency)):
                items.append((_trivial_cap(law) if law.support()[1] > 0 else 0.0, i, float(gamma), law))
            m = 0.0
            for c, i, gamma, law in sorted(items, key=lambda t: -t[0]):
                if c <= m:
                    continue
                if c <= max(1e-6 * delta, _VALUE_FLOOR):
                    m = max(m, c)
                else:
                    m = max(m, _upper_value(law, gamma, self.n, rel, self.workers, delta, ratios.get(i, 0.125)))
            u = _plus(max(m, _TINY), _surcharge(self.randomizer, e, self.adjacency))
            if len(up_cache) < 512:
                up_cache[key] = u
            return u

        def jensen_at(e: float) -> float:
            """max over laws of the Jensen lower value at e (<= D_up <= every upper value)."""
            if e > _EPS_CAP:
                return self._cap_beyond(e)[0]
            return max((_jensen_lower(law, float(gamma), self.n) for gamma, law in
                        laws_for(self.randomizer, e, self.adjacency) if law.support()[1] > 0), default=0.0)

        def cap_at(e: float) -> float:
            """max over laws of E[L_+] at e plus the surcharge: a cheap certified upper value."""
            if e > _EPS_CAP:
                return self._cap_beyond(e)[1]
            c = max((_trivial_cap(law) for _, law in laws_for(self.randomizer, e, self.adjacency)
                     if law.support()[1] > 0), default=0.0)
            return _plus(c, _surcharge(self.randomizer, e, self.adjacency))

        ld = math.log(delta)

        def shrink(fun, lo, ulo, hi, uhi, tol):
            return _shrink(fun, delta, lo, ulo, hi, uhi, tol)

        def rebracket(fun, lo, hi, tol):
            """Re-establish fun(hi) <= delta < fun(lo) near an old bracket (steps of twice its
            width, doubling: the root moves little between grids), then shrink it."""
            w = max(hi - lo, 1e-3 * hi)
            uhi = fun(hi)
            while uhi > delta:  # (w doubles: at most ~60 steps to reach cap)
                w *= 2.0
                lo, ulo, hi = hi, uhi, min(hi + w, cap)
                uhi = fun(hi)
                if uhi > delta and hi >= cap:
                    return None
            ulo = fun(lo) if lo > 0 else u0
            while ulo <= delta:  # (lo halves at least, and is 0 below 1e-6 hi: bounded)
                hi, uhi = lo, ulo
                w *= 2.0
                lo = max(lo - w, 0.5 * lo) if lo > 1e-6 * hi else 0.0
                ulo = fun(lo) if lo > 0 else u0
            return shrink(fun, lo, ulo, hi, uhi, tol)

        # exactly 0 iff the published value get_delta(0) meets the target
        d0 = self.get_delta(0.0)
        if d0 <= delta:
            return 0.0
        # phase 1: bracket and shrink to 1% on a coarse grid (h = sd/8, upper value only); the
        # value at 0 is taken as d0 (> delta), so no bracket ever closes at 0
        u0 = d0
        # the search never goes beyond cap: eps0 (delta = 0 there) or 700 (get_delta(700) <= delta
        # was checked above, so cap itself is a certified answer)
        cap = cap0 if cap0 is not None else _EPS_MAX
        if up(cap) > delta:
            return cap  # the blanket bound is no better than the local guarantee (or than 700)
        # a first upper end from the closed-form cap E[L_+] (up <= cap): bisection on the cheap
        # closed forms (at most 40 steps) instead of certified evaluations
        c_lo, c_hi = 0.0, cap
        if cap_at(cap) <= delta:
            for _ in range(40):
                mid = 0.5 * (c_lo + c_hi)
                if cap_at(mid) <= delta:
                    c_hi = mid
                else:
                    c_lo = mid
                if c_hi - c_lo <= 1e-3 * c_hi:
                    break
            cap_end, cap_u = c_hi, cap_at(c_hi)
        else:
            cap_end, cap_u = cap, up(cap)
        # a first lower end from the closed-form Jensen lower value (<= D_up <= up): the largest
        # epsilon found (at most 40 bisection steps) where it still exceeds delta
        j_lo, j_hi, j_u = 0.0, cap_end, u0
        if jensen_at(0.0) > delta:
            for _ in range(40):
                mid = 0.5 * (j_lo + j_hi)
                v = jensen_at(mid)
                if v > delta:
                    j_lo, j_u = mid, v
                else:
                    j_hi = mid
                if j_hi - j_lo <= 1e-3 * j_hi:
                    break
        g = min(self._guess_epsilon(delta), cap_end)
        lo, ulo = 0.0, u0
        u = None
        if j_lo > 0.0:  # bracket [Jensen end, cap end] without certified evaluations
            lo, ulo, hi, uhi = j_lo, j_u, cap_end, cap_u
        else:
            u = up(g) if g < cap_end else cap_u
        if u is None:
            pass
        elif u <= delta:
            hi, uhi = g, u
            while hi > 1e-12 * g:  # walk down to a bracket
                u = up(0.5 * hi)
                if u > delta:
                    lo, ulo = 0.5 * hi, u
                    break
                hi, uhi = 0.5 * hi, u
        else:
            lo, ulo = g, u
            for _ in range(200):
                e = min(2.0 * lo, cap_end)
                u = up(e) if e < cap_end else cap_u
                if u <= delta:
                    hi, uhi = e, u
                    break
                lo, ulo = e, u
            else:
                raise RuntimeError("get_epsilon: could not bracket the target")
        lo, ulo, hi, uhi = shrink(up, lo, ulo, hi, uhi, max(xtol, 1e-2))
        # phase 2: each law's grid from one full report (the grid get_delta settles on there),
        # then the same search on that grid (upper value only)
        for i, (gamma, law) in enumerate(laws_for(self.randomizer, min(hi, _EPS_CAP), self.adjacency)):
            r = _certify(law, float(gamma), self.n, rel, self.workers)
            if "h_ratio" in r:
                ratios[i] = r["h_ratio"]
        res = rebracket(up, lo, hi, xtol)
        if res is None:
            return cap
        lo, ulo, hi, uhi = res
        # phase 3: the final bracket with get_delta itself (the full report; its grid may still
        # differ slightly), so that get_delta(answer) <= delta
        res = rebracket(self.get_delta, max(lo, hi * (1.0 - 2.0 * xtol)), hi, xtol)
        if res is None:
            return cap
        lo, ulo, hi, uhi = res
        return min(hi, cap)

    def privacy_profile(self, epsilons):
        """Certified upper delta(eps) for eps of any sign (swap identity for eps < 0), one sweep;
        see :func:`sharpdp.shuffle.profile.privacy_profile`."""
        from sharpdp.shuffle.profile import privacy_profile

        return privacy_profile(self, epsilons)


__all__ = ["ShuffleAccountant", "AccountantReport"]
