"""Exact blocks for atom laws (module step J of :mod:`sharpdp.shuffle.accountant`; docs/accountant.md §5).

For a law with few atoms (k-RR, binary RR, lower forms) the lattice engine runs on blocks of t
users (t | n): V = B_1 L_1 + ... + B_t L_t has an exact multinomial law, computed here with
certified error bounds (:func:`block`), and :func:`unblock` converts the blocked bracket back
to the units of D_up, charging the block values' rounding. When one block holds all n users,
:func:`one_block` gives the bracket in closed form (§5.4). Imports only the laws and the
engine's constants.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sharpdp.shuffle.accountant.block_runs import runs as _runs
from sharpdp.shuffle.accountant.block_weights import (WEIGHTS_CACHE as _WEIGHTS_CACHE,  # noqa: F401 (for the tests)
                                                      compositions as _compositions)
from sharpdp.shuffle.accountant.block_weights import block_weights as _block_weights
from sharpdp.shuffle.accountant.lattice import perturbation_charge
from sharpdp.shuffle.accountant.memo import result_memo
from sharpdp.shuffle.accountant.limits import (BLOCK_ATOMS_MAX, BLOCK_ATOMS_MIN, BLOCK_MU, EST_FLOOR, LOG_PW_MIN, MS_MAX,
                                               ONE_BLOCK_ATOMS, TRUNC, TRUNC_REL, U)
from sharpdp.shuffle.accountant.results import LawBracket
from sharpdp.shuffle.accountant.spacing import spacing_of
from sharpdp.shuffle.laws import FiniteLaw, Law


def _kernels() -> Any:
    """The compiled block kernels (in ``sharpdp._core.accountant``; cpp/kernels/blocks.hpp): each repeats
    the numpy expression it replaces operation by operation, so the doubles are the same
    (docs/accountant_atoms.md §3)."""
    from sharpdp._core_loader import core

    return core.accountant


class _BlockLaw(FiniteLaw):
    """Exact law of the sum of t users' B_i L_i for an atom law (step J), as computed in floating
    point: probabilities with relative error <= ``rel_p`` (plus 1e-300 absolute), values exact as
    stored (their own rounding, <= u |v| each, is charged by :func:`unblock`). The atoms are in
    count-vector order, neither sorted nor merged (equal values are separate atoms: one law; every
    method sums over atoms in any order within its bound, docs/accountant_atoms.md §3)."""

    #: the user law's atom spacing (:func:`~.spacing.spacing_of`), or None: the block's values lie at or just below
    #: its multiples (a choice of refine's steps only, docs/accountant_tail.md §46.2)
    spacing: float | None = None

    def __init__(self, values: np.ndarray, probs: np.ndarray, rel_p: float) -> None:
        # probs >= 0 summing to 1 (checked by block); FiniteLaw's own merge (a sort) is skipped
        self.values, self.probs = values, probs
        self.rel_p = rel_p
        self._sorted = False
        # (one native pass, cpp/kernels/blocks.hpp law_stats: the doubles of the numpy expressions below, numpy's
        # pairwise sums repeated in their order, docs/composition.md §2.32; ok False: numpy's own expressions)
        ok, vmin, vmax, smin, smax, mean, var_sum = _kernels().law_stats(values, probs)
        if not ok:
            smin, smax = FiniteLaw.support(self)
            vmin, vmax = float(np.min(values)), float(np.max(values))
            # (plain numpy sums, not np.dot: multithreaded BLAS costs milliseconds under load)
            mean = float(np.sum(self.values * self.probs))
            var_sum = float(np.sum((self.values - mean) ** 2 * self.probs))
        self._support = (smin, smax)  # (asked for many times per pass)
        # the extreme stored values, atoms of probability 0 included: thresholds beyond them select
        # no atom, and the methods below return what their sums over no atom give
        self._vmin, self._vmax = vmin, vmax
        self._mean = mean
        self._std = math.sqrt(max(var_sum, 0.0))

    def support(self) -> tuple[float, float]:
        return self._support

    def mean(self) -> float:
        return self._mean

    def std(self) -> float:
        return self._std

    def cells(self, x0: float, h: float, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if K >= 1:  # FiniteLaw.cells plus the terms below, in one native pass (the same doubles as numpy's)
            return _kernels().atom_cells(self.values, self.probs, float(x0), float(h), int(K), self.rel_p)
        m, w, em, ew = super().cells(x0, h, K)
        return m, w, em + self.rel_p * m + 1e-300, ew + self.rel_p * w + 1e-300

    def prob_below(self, x: float) -> tuple[float, float]:
        if x <= self._vmin:  # (no atom below x: FiniteLaw's sum is 0.0 with error 0.0)
            return 0.0, 1e-290
        p, e = super().prob_below(x)
        return p, e + self.rel_p * p + 1e-290

    def prob_above(self, x: float) -> tuple[float, float]:
        if x > self._vmax:  # (no atom at or above x)
            return 0.0, 1e-290
        p, e = super().prob_above(x)
        return p, e + self.rel_p * p + 1e-290

    def tail_upper(self, T: float) -> float:
        if T >= self._vmax:  # (no atom above T: the sum below is 0.0)
            return 0.0
        # the atoms above T only, numpy's pairwise sum of (v - T) p over them in their order (native: the same
        # double as np.sum((values[sel] - T) * probs[sel]), docs/composition.md §2.32), within 1e-12 relative
        s = float(_kernels().tail_sum(self.values, self.probs, float(T)))
        return s * (1.0 + 1e-12) * (1.0 + self.rel_p)

    def tail_lower(self, B: float) -> float:
        if -B <= self._vmin:  # (no atom below -B)
            return 0.0
        sel = self.values < -B  # the atoms below -B only
        s = float(np.sum((-B - self.values[sel]) * self.probs[sel]))
        return s * (1.0 + 1e-12) * (1.0 + self.rel_p)




def _atom_cap(n: int) -> int:
    """Largest number of count vectors of a block for n users (docs/accountant.md §5.2): the
    engine's FFT length at a given accuracy falls like 1/t for atom laws whose values cluster
    (the lower law's loss is first order in h, times the cluster spacing over the block variance),
    so larger n affords larger blocks."""
    return int(min(BLOCK_ATOMS_MAX, max(BLOCK_ATOMS_MIN, 20.0 * math.sqrt(n))))


#: the two-atom laws' cap at small n (binary RR): see :func:`_law_atom_cap`
_TWO_ATOMS_MIN = 10_000


def _law_atom_cap(n: int, m1: int) -> int:
    """:func:`_atom_cap` for a law of m1 atoms; for two atoms at most max(10 000, 20 sqrt(n))
    (docs/accountant_atoms.md §7): their block values c1 a1 + c2 a2 form no clusters, so
    below n ~ 1e7 the FFTs stay short at any block size and the per-atom work of the block laws
    (values, cells: ~1000 instructions per count vector per get_epsilon) decides the cost."""
    cap = _atom_cap(n)
    return min(cap, max(_TWO_ATOMS_MIN, int(20.0 * math.sqrt(n)))) if m1 == 2 else cap


def _log_value_estimate(gamma: float, a: np.ndarray, pa: np.ndarray, n: int) -> float:
    """log of an estimate (not a bound) of D_up for n users of the atom law (a, pa) with blanket
    mass gamma (docs/accountant.md §5.2): the Chernoff bound E[S_+] <= e^{n Lambda(theta) - 1}/theta
    at its minimiser theta* (n Lambda'(theta*) = 1/theta*), Lambda(theta) = log(1 - gamma + gamma
    E[e^{theta L}]), divided by 1 + theta* sqrt(n Lambda''(theta*)) (the saddle-point factor) and by
    n gamma. It only sizes the truncation of _block_law; -inf when it cannot be formed."""
    amax = float(np.max(np.abs(a)))
    if not (amax > 0.0 and math.isfinite(amax)) or float(np.max(a)) <= 0.0:
        return -math.inf
    # (native, cpp/kernels/blocks.hpp: n Lambda'(th) - 1/th increases, the derivative of a convex
    # function; doubling from 1e-3/(n max|a|), then 60 geometric bisection steps)
    return float(_kernels().log_value_estimate(a, pa, float(gamma), float(n)))


def _split(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """v = hi + lo with hi carrying 26 significant bits (so c hi is exact for integers c < 2^26)."""
    c = v * 134217729.0  # 2^27 + 1 (Dekker)
    hi = c - (c - v)
    return hi, v - hi


@functools.lru_cache(maxsize=32)
def _divisors_desc(n: int, top: int) -> tuple[int, ...]:
    """Divisors d of n with 2 <= d <= top, largest first (trial division up to sqrt n)."""
    small = np.arange(1, math.isqrt(n) + 1, dtype=np.int64)
    small = small[n % small == 0].tolist()
    out = set(small) | {n // d for d in small}
    return tuple(sorted((d for d in out if 2 <= d <= top), reverse=True))


_BLOCK_CACHE: dict = result_memo()


@dataclass(frozen=True)
class Blocks:
    """Blocks of t users for an atom law (step J): the block law and its error terms."""

    law: _BlockLaw  # exact law of V' = (B_1 L_1 + ... + B_t L_t) 1{M <= M*}, as computed
    t: int  # users per block (t | n)
    value_err: float  # bound on each computed block value's error (absolute)
    trunc: float  # truncation term of the active users, in D units (delta)
    #: one_block's sums correctly rounded (math.fsum); False for a block of all users admitted by
    #: ONE_BLOCK_ATOMS above the cap of §5.2 (then numpy's sums with their error factor, docs/accountant_atoms.md §13)
    fsum: bool = True


def block(gamma: float, law: Law, n: int) -> Blocks | None:
    """_block_law, memoised on (gamma, atoms, n): get_epsilon's phases revisit the same epsilons."""
    at = law.atoms()
    if at is None or n < 2:
        return None
    key = (gamma, at[0].tobytes(), at[1].tobytes(), n, law.value_error)
    if key in _BLOCK_CACHE:
        return _BLOCK_CACHE[key]
    out = _block_law(gamma, law, n)
    if len(_BLOCK_CACHE) >= 16:
        _BLOCK_CACHE.pop(next(iter(_BLOCK_CACHE)))
    _BLOCK_CACHE[key] = out
    return out


def _block_law(gamma: float, law: Law, n: int) -> Blocks | None:
    """Blocks of t users for an atom law (step J), or None when not applicable.

    t is the largest divisor of n (at least 2) whose block has at most :func:`_law_atom_cap` (n, m1)
    count vectors, with M* <= MS_MAX and p_min^M* >= e^LOG_PW_MIN (every product in the normal
    range); when the estimated value is below 1e-34, t = n if it fits, else the largest divisor
    with t gamma <= BLOCK_MU and at most BLOCK_ATOMS_MIN count vectors (docs/accountant.md §5.2).
    The block law is the law of V' = (B_1 L_1 + ... + B_t L_t) 1{M <= M*},
    M = B_1 + ... + B_t the active users, M* such that P(M > M*) <= tau gamma / max|L|
    (binomial Chernoff bound), tau = min(1e-40, 1e-6 est), est = :func:`_log_value_estimate`
    (floored at 1e-300): multinomial weights C(t, M) g^M (1-g)^(t-M) M!/prod c_j! prod p_j^c_j
    (log-domain binomial part, multinomial coefficients from Pascal's triangle, powers by repeated
    multiplication), the event M > M* as an atom at 0 (its probability summed the same way),
    values as compensated sums of exact products. E|S - S'| <= (n/t) t max|L| P(M > M*) gives
    the truncation term, charged in D units (divided by n gamma).
    """
    at = law.atoms()
    if at is None or n < 2:
        return None
    keep = at[1] > 0
    a, pa = at[0][keep], at[1][keep]
    m1 = a.size
    if m1 < 1 or not (0.0 < gamma <= 1.0):
        return None
    amax = float(np.max(np.abs(a)))
    # the truncation's cost tau (D units): 1e-40, or less when D_up itself is smaller (§5.2)
    l_est = max(_log_value_estimate(gamma, a, pa, n), math.log(EST_FLOOR))
    lp_tau = min(math.log(TRUNC), math.log(TRUNC_REL) + l_est)
    # a value below 1e-34: one block of all users, else the former small blocks (t gamma <= 48
    # active users on average, 60 000 count vectors), whose laws keep their mass at V >= 0 within
    # the engine's reach (§5.2)
    small = lp_tau < math.log(TRUNC)
    lp_tr = lp_tau + math.log(gamma / max(amax, 1e-300))

    def stop(M: int, d: int) -> bool:
        """M ends the scan of mstar: M >= d, or the Chernoff bound P(Bin(d, gamma) > M) <=
        exp(-d KL(M/d || gamma)) (M/d > gamma) is at most exp(lp_tr)."""
        x = M / d
        if M >= d or x >= 1:
            return True
        kl = x * math.log(x / gamma) + (1 - x) * (math.log1p(-x) - math.log1p(-gamma))
        return -d * kl <= lp_tr

    def mstar(d: int, top: int) -> int | None:
        """The first M of the scan ceil(d gamma), then M += max(1, M // 50), at which ``stop`` holds,
        capped at d, when that M is at most ``top`` (the largest block size that fits); else None.
        ``stop`` is monotone along the scan (KL(x || gamma) increases for x > gamma), so one
        evaluation of ``stop`` at the last M <= top rejects d, and else bisection over the scan's
        indices finds the first M (what the linear scan returns); the M returned satisfies ``stop``
        as evaluated, the only property the truncation term uses (docs/accountant_atoms.md §9)."""
        if gamma >= 1.0:
            return d if d <= top else None
        seq = [int(math.ceil(d * gamma))]
        if min(seq[0], d) > top:
            return None
        # (below 100 the scan's step max(1, M // 50) is 1: those M appended at once, the same list
        # as the loop below builds: M0 + 1, M0 + 2, ... up to d, 100, or top when d > top)
        end = min(d, 100, top) if d > top else min(d, 100)
        if seq[0] < end:
            seq.extend(range(seq[0] + 1, end + 1))
        while seq[-1] < d:
            nxt = seq[-1] + max(1, seq[-1] // 50)
            if min(nxt, d) > top:
                break
            seq.append(nxt)
        hi = len(seq) - 1  # the last M of the scan that fits
        if seq[hi] < d and not stop(seq[hi], d):
            return None  # the first M that stops lies beyond every M that fits
        lo = -1  # stop(seq[lo]) fails (lo >= 0)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if stop(seq[mid], d):
                hi = mid
            else:
                lo = mid
        return min(seq[hi], d)

    def fits(m: int, cap: int) -> bool:
        """A block of M* = m: ms <= MS_MAX, p_min^ms >= e^LOG_PW_MIN, at most cap count vectors."""
        return m <= MS_MAX and m * lpmin >= LOG_PW_MIN and math.comb(m + m1, m1) <= cap

    tops: dict[int, int] = {}

    def top_for(cap: int) -> int:
        """The largest m in [0, MS_MAX] that fits (-1 if none): ``fits`` is non-increasing in m."""
        if cap not in tops:
            lo, hi = -1, MS_MAX + 1  # fits(lo) (or lo = -1), not fits(hi)
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if fits(mid, cap):
                    lo = mid
                else:
                    hi = mid
            tops[cap] = lo
        return tops[cap]

    # (one block of all users needs no engine, §5.4: it is tried first in either case)
    cands = (n,) + _divisors_desc(n, min(n - 1, max(2, int(BLOCK_MU / gamma)))) if small else _divisors_desc(n, n)
    # the block's probabilities stay in the normal double range (no overflow in Pascal's triangle,
    # no underflow in the powers): ms <= MS_MAX and p_min^ms >= e^LOG_PW_MIN
    lpmin = math.log(float(np.min(pa)))
    best = None
    cap_law = _law_atom_cap(n, m1)
    for d in cands:
        # (values below 1e-34 keep the caps of §5.2: one block of all users up to A(n), else small blocks)
        cap = (BLOCK_ATOMS_MIN if d < n else _atom_cap(n)) if small else cap_law
        cap0 = cap
        if d == n and m1 >= 3:
            # one block of all users is a closed form (no engine): up to ONE_BLOCK_ATOMS count vectors
            # (docs/accountant_atoms.md §13)
            cap = max(cap, ONE_BLOCK_ATOMS)
        if d * gamma > MS_MAX or math.comb(int(math.ceil(d * gamma)) + m1, m1) > cap:
            continue  # M* >= d gamma: too large already
        ms = mstar(d, top_for(cap))
        if ms is not None:
            best = (d, ms, math.comb(ms + m1, m1) <= cap0)
            break
    if best is None:
        return None
    t, ms, within = best
    counts, pp, rel, p_tr, lp_out = _block_weights(t, ms, gamma, pa)
    if pp is None:
        return None  # (not expected) fall back to the per-user law
    # values: sum_j c_j a_j with every product exact (Dekker split), compensated summation (Sum2):
    # error <= u |v| + gamma_{2 m1}^2 sum |terms|
    # (native, cpp/kernels/blocks.hpp: terms c_j hi_j, then c_j lo_j, summed by Sum2 in that order)
    hi, lo = _split(a)
    g2 = (2 * m1 * U / (1 - 2 * m1 * U)) ** 2
    if t == n:  # one block of all users: only its atoms that can be positive are computed (§13)
        got = _one_block_atoms(counts, pp, a, hi, lo, ms, g2, law.value_error)
        if got is None:
            return None
        uv, pp, ev = got
    else:
        uv, vmax, finite = _kernels().block_values(counts, hi, lo, 1)  # (the values, then the atom at 0 below)
        if not finite:
            return None  # (not expected: |a| ms overflows) fall back to the per-user law
        ev = _value_err(vmax, g2, ms, a, law.value_error)
        # the event M > M* as an atom at 0; the atoms stay in count-vector order, unsorted and unmerged
        # (every probability is then a computed product with relative error rel: no merging sums): the kernel's
        # padded output, np.append(values, 0.0) without the copy (docs/composition.md §2.34.4)
    rel_p = (rel + 3 * U) * 1.01
    # coupling V' = 0 on {M > M*}: (n/t) t max|L| P(M > M*) / (n gamma) <= max|L| exp(lp_tr) / gamma
    # = tau = exp(lp_tau) (1.01: rounding; at least the smallest double); the mass left out beyond
    # M* + 4000 (probability p per block) can
    # change E[S'_+] by at most (n/t) p n max|L|, i.e. (n/t) p max|L| / gamma in delta units
    # (max|L| of the exact atoms is at most amax + value_error, docs/accountant.md §3.2.2)
    a_true = amax + law.value_error * (1.0 + 1e-6)
    trunc = max(1.01 * math.exp(lp_tau) * (a_true / max(amax, 1e-300)), 5e-324) if ms < t else 0.0
    if lp_out > -math.inf:
        trunc += math.exp(min(lp_out + math.log(n / t * a_true / gamma), 700.0))
    bl = _BlockLaw(uv, pp, rel_p)
    bl.spacing = spacing_of(a, pa)  # (the user law's spacing: refine's choice of steps, docs/accountant_tail.md §46.2)
    return Blocks(bl, t, ev, trunc, fsum=within)


def _value_err(vmax: float, g2: float, ms: int, a: np.ndarray, value_error: float) -> float:
    """The bound on each computed block value's error: the compensated sum's u |v| + gamma_{2 m1}^2 sum |terms|
    (``vmax`` the largest |value|), plus ms times the atoms' own ``value_error`` (the stored atoms are within it of
    the exact ones, docs/accountant.md §3.2.2: a block value sums at most ms of them)."""
    ev = 1.01 * (U * vmax + g2 * ms * float(np.sum(np.abs(a))))
    return ev + ms * value_error * (1.0 + 1e-6)


def _one_block_atoms(counts: np.ndarray, pp: np.ndarray, a: np.ndarray, hi: np.ndarray, lo: np.ndarray, ms: int,
                     g2: float, value_error: float) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The atoms of one block of all users that :func:`one_block` reads (docs/accountant_atoms.md §13): the values
    as :func:`_block_law` computes them (the same kernel, the same doubles) of the count vectors whose value can
    exceed -ev, the event M > M* as an atom at 0, and every other count vector merged into one atom (its
    probability the rest of the law's) at the threshold below, which is below -ev; and ev, the
    same bound as over every count vector. None where a value is not finite (as :func:`_block_law`).

    The estimate e = sum_j c_j a_j in plain float arithmetic (products and m1 - 1 additions, no FMA) is within
    m1 u sum_j c_j |a_j| (1 + 1e-6) <= m1 u ms max|a| (1 + 1e-6) of the exact sum, and the computed value within ev
    of it, so a count vector with e <= -(2 ev + 2 m1 u ms max|a|) has a computed value v <= -ev - (a margin):
    v + ev < 0 and v - ev < 0, the terms one_block takes as 0. ev needs the largest |computed value| vmax: a
    computed value is within dev = (m1 + 3) u ms max|a| 1.01 of its estimate (the estimate's error plus the
    compensated sum's), so vmax is attained at a count vector whose |e| is at least max|e| - 2 dev, and those are
    computed too (vmax is then the same double as over every count vector)."""
    m1 = a.size
    amax = float(np.max(np.abs(a)))
    e_est = m1 * U * ms * amax * (1.0 + 1e-6)  # |estimate - exact sum|, at most
    # |computed value - estimate| <= e_est + 1.01 (u vmax + g2 ms sum|a|) <= dev (vmax <= ms amax (1 + m1 u))
    dev = (m1 + 3) * U * ms * amax * 1.01
    runs = _runs(counts)
    if runs is None:  # the estimates of every count vector
        est = counts[:, 0] * a[0]
        for j in range(1, m1):
            est += counts[:, j] * a[j]
        emax = max(float(np.max(est)), -float(np.min(est)))
        if not math.isfinite(emax):
            return None
        top = np.flatnonzero(np.abs(est) >= emax - 2.0 * dev)
    else:
        got = runs.extremes(a)
        if got is None:
            return None
        emax, top = got
        top = runs.rows_where_abs_at_least(a, emax - 2.0 * dev, top)
    _, vmax, finite = _kernels().block_values(np.asfortranarray(counts[top]), hi, lo)
    if not finite:
        return None
    ev = _value_err(vmax, g2, ms, a, value_error)
    thr = -(2.0 * ev + 2.0 * e_est)
    keep = np.flatnonzero(est > thr) if runs is None else runs.rows_above(a, thr)
    value, _, finite = _kernels().block_values(np.asfortranarray(counts[keep]), hi, lo)
    if not finite:
        return None
    p_keep = pp[keep]
    # (the merged atom: its count vectors' estimates are at most thr < -ev, so thr is an upper end of their
    # values' estimates; its probability is the rest of the computed law's, read by nothing of one_block)
    uv = np.concatenate([value, [0.0, thr]])
    probs = np.concatenate([p_keep, [pp[-1], max(1.0 - float(np.sum(p_keep)) - float(pp[-1]), 0.0)]])
    probs.flags.writeable = False
    return uv, probs, ev


def unblock(r: LawBracket, gamma: float, n: int, t: int, ev: float, trunc: float = 0.0,
             top: float = math.inf) -> LawBracket:
    """Bracket of the blocked problem (n/t blocks, gamma = 1) in the units of D_up (step J).

    E[S_+]/(n gamma) = (n/t) E[S_+]/(n/t) / (n gamma): a factor 1/(t gamma). Each computed block
    value is within ev of the exact one, so |E[S_+] - E[S~_+]| <= (n/t) ev P(S~ >= -2 (n/t) ev)
    (the indicator of the kink needs S~ within the total error of 0), and the Chernoff bound with
    the tilt of the upper law (whose log-mgf dominates: hat rounding is a convex-order spread)
    gives P(S~ >= -c) <= exp(n Lambda + theta c), n Lambda raised by the pmf-error bound
    n log(mass + tau) of the engine (:func:`sharpdp.shuffle.accountant.lattice.perturbation_charge`; its
    allowance for the rounding of the exponent is proved in docs/accountant.md §3.5.1).
    ``trunc``: the truncation term of :func:`block` (D units), added as is; ``top``: the block
    law's largest value (the Chernoff bound needs an engine law not clamped from above).
    """
    f = 1.0 / (t * gamma)
    q = n // t
    c = 2.0 * q * ev
    g = r.grid
    # (the Chernoff bound is valid only if the engine's law was not clamped from above: finite laws
    # use T = max atom); the computed log-mgf plus the bound of its pmf errors, n log(tilted mass +
    # tau), bounds the exact law's n Lambda
    if g is not None and g.T >= top:
        shift = perturbation_charge(q * ev, g, n * gamma, c)
    else:
        shift = q * ev / (n * gamma)
    shift += trunc
    terms: dict[str, Any] = {k: (v * f if isinstance(v, float) and not k.startswith("N") else v)
                             for k, v in r.terms.items()}
    terms["block_t"] = t
    terms["block_value_rounding"] = shift
    return replace(r, upper=r.upper * f * (1 + 1e-12) + shift, lower=max(r.lower * f * (1 - 1e-12) - shift, 0.0),
                   terms=terms)


#: :func:`_sum_nonneg` sums up to this many terms correctly rounded (math.fsum), more by numpy's sum
_FSUM_TERMS = 2_000


def _sum_nonneg(x: np.ndarray, side: int, exact: bool = True) -> float:
    """A sum of the non-negative doubles ``x``: correctly rounded (math.fsum) when ``exact`` or for up to
    _FSUM_TERMS terms; else numpy's sum (any order of m - 1 additions: within (m - 1) u / (1 - (m - 1) u) <= 1.01 m u
    of the exact sum, all terms >= 0) times 1 + 2 m u (``side`` = 1: an upper value) or 1 - 2 m u (``side`` = -1: a
    lower value) (docs/accountant_atoms.md §13)."""
    m = x.size
    if exact or m <= _FSUM_TERMS:
        return math.fsum(x.tolist())
    return float(np.sum(x)) * (1.0 + side * 2.0 * m * U)


def one_block(blk: Blocks, gamma: float, n: int) -> LawBracket:
    """Bracket of D_up when one block holds all users (t = n, docs/accountant.md §5.4).

    S = V is the block's sum itself, so D_up = E[V_+]/(n gamma) up to the truncation term, in
    closed form: each exact value lies within ``value_err`` of the stored one and each exact
    probability within rel_p p + 1e-300 of the stored p, so E[V_+] lies between
    sum p (v - ev)_+ (1 - rel_p) - 1e-300 sum (v - ev)_+ and sum p (v + ev)_+ (1 + rel_p) + 1e-300
    sum (v + ev)_+ ((.)_+ is increasing); the sums are correctly rounded (math.fsum) and each term
    carries at most 3 roundings, covered by the factors 1 -+ 1e-12 with the conversion to delta
    units. The truncation term ``blk.trunc`` (delta units) is added to the upper value and
    subtracted from the lower one.
    """
    law = blk.law
    if blk.t != n:
        raise ValueError("one_block: the block must hold all n users")
    v, p, ev, rel = law.values, law.probs, blk.value_err, law.rel_p
    up_v = np.maximum(v + ev, 0.0)
    lo_v = np.maximum(v - ev, 0.0)
    su, sl = up_v > 0.0, lo_v > 0.0  # (the other terms are 0: the sums below run over these)
    up_v, p_u, lo_v, p_l = up_v[su], p[su], lo_v[sl], p[sl]
    ex = blk.fsum
    up = (_sum_nonneg(p_u * up_v, 1, ex) * (1.0 + rel) + 1e-300 * _sum_nonneg(up_v, 1, ex)) / (n * gamma)
    lo = (_sum_nonneg(p_l * lo_v, -1, ex) * (1.0 - rel) - 1e-300 * _sum_nonneg(lo_v, 1, ex)) / (n * gamma)
    up = up * (1.0 + 1e-12) + blk.trunc
    lo = max(lo * (1.0 - 1e-12) - blk.trunc, 0.0)
    return LawBracket(lo, up, terms={"note": "one block of all n users: exact law, closed form",
                                     "block_t": blk.t, "block_value_rounding": ev / (n * gamma),
                                     "block_truncation": blk.trunc})
