"""The count vectors of a block and their multinomial weights (step J; docs/accountant.md §5.2).

A block of t users with at most M* active ones has the count vectors c >= 0 of the law's m1 atoms with
sum(c) <= M* (:func:`compositions`), each of probability C(t, M) gamma^M (1-gamma)^(t-M) M!/prod c_j! prod p_j^c_j:
the binomial part in the log domain (:func:`_log_binom_pmf`, a compensated running sum of log C), the multinomial
part by the native kernel (Pascal's triangle, powers by repeated products, cpp/kernels/blocks.hpp), with their
relative error bound, P(M > M*) and the bound of the mass left out beyond M* + 4000 (:func:`block_weights`). They
depend on the atoms' probabilities only, not their values, so get_epsilon's calls share them (memoised in
``WEIGHTS_CACHE``). Moved from :mod:`.blocks` (which imports them under their former private names): the same
doubles.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp._core_loader import core as _core
from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.accountant.memo import result_memo


def compositions(total: int, parts: int) -> np.ndarray:
    """All count vectors c >= 0 of length ``parts`` with sum(c) <= total (int64, one per row)."""
    # column by column, each row of the prefix repeated once per value of the next column; the
    # parent of every final row is tracked instead of copying the growing matrix at every step
    cols = []
    used = np.zeros(1, dtype=np.int64)  # row sums so far (numpy's axis-1 sum is slow)
    parents = []
    for _ in range(parts):
        reps = total - used + 1
        idx = np.repeat(np.arange(used.size), reps)
        cj = np.arange(idx.size) - np.repeat(np.cumsum(reps) - reps, reps)  # 0 .. reps - 1 per row
        parents.append(idx)
        cols.append(cj)
        used = used[idx] + cj
    counts = np.empty((used.size, parts), dtype=np.int64)
    rows = np.arange(used.size)
    for j in range(parts - 1, -1, -1):  # the last column first, then up through the parents
        counts[:, j] = cols[j][rows]
        rows = parents[j][rows]
    return counts


_LOG_COMB: dict = {}


def _log_comb(d: int, Mmax: int) -> tuple[np.ndarray, np.ndarray]:
    """log C(d, k) for k <= Mmax by the compensated running sum of _log_binom_pmf, and its error
    bound; memoised per d (a longer table has the same prefix: the sum runs in the same order)."""
    hit = _LOG_COMB.get(d)
    if hit is not None and hit[0].size > Mmax:
        return hit[0][:Mmax + 1], hit[1][:Mmax + 1]
    i = np.arange(Mmax, dtype=float)
    terms = np.log((d - i) / (i + 1.0))
    lc = _core.accountant.kahan_prefix(terms)  # Kahan's running sum, lc[0] = 0
    abs_cum = np.concatenate([[0.0], np.cumsum(np.abs(terms))]) * (1.0 + 1e-12)
    k = np.arange(Mmax + 1)
    eterm = abs_cum * 4.0 * U + k * U + 2.0 * U * np.abs(lc) + 2.0 * (k * U) ** 2 * abs_cum
    if len(_LOG_COMB) >= 8:
        _LOG_COMB.pop(next(iter(_LOG_COMB)))
    _LOG_COMB[d] = (lc, eterm)
    return lc, eterm


def _log_binom_pmf(d: int, g: float, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log P(Bin(d, g) = M) for integer arrays M, and an absolute error bound: log C(d, M) as a
    compensated running sum of log((d - i)/(i + 1)) (each term within u + 4u|term|: one rounded
    ratio, log within 2 ulp; Kahan's sum within 2u|sum| + 2 M^2 u^2 sum|terms|), plus
    (d - M) log1p(-g) + M log g (within 5u of each product, 2u for the additions)."""
    lc, eterm = _log_comb(d, int(M.max()))
    l1 = math.log1p(-g) if g < 1.0 else 0.0
    lg = math.log(g)
    Mf = M.astype(float)
    val = lc[M] + (d - Mf) * l1 + Mf * lg
    err = eterm[M] + 7.0 * U * (np.abs(lc[M]) + (d - Mf) * abs(l1) + Mf * abs(lg))
    return val, err


WEIGHTS_CACHE: dict = result_memo()


def block_weights(t: int, ms: int, gamma: float,
                   pa: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, float, float, float]:
    """Count vectors, probabilities (P(M > M*) appended last; None when they fail the sanity
    check), their relative error bound, P(M > M*) and the log-bound of the mass left out beyond
    M* + 4000 of a block (see .blocks.block); they do not depend on the atom values, so get_epsilon's
    calls share them."""
    key = (t, ms, gamma, pa.tobytes())
    hit = WEIGHTS_CACHE.get(key)
    if hit is not None:
        return hit
    m1 = pa.size
    counts = compositions(ms, m1)
    M = counts[:, 0].copy()  # row sums, column by column (exact integers)
    for j in range(1, m1):
        M += counts[:, j]
    if gamma >= 1.0:  # every user active: M = t exactly
        counts, M = counts[M == t], M[M == t]
    # probabilities
    if gamma < 1.0:
        if ms < t:
            _log_comb(t, min(t, ms + 4000))  # one table for both calls below
        lb, eb = _log_binom_pmf(t, gamma, M)
    else:
        lb, eb = np.zeros(M.size), np.zeros(M.size)
    # the multinomial part first (native: Pascal's triangle in floats, relative error <= x u in row
    # x; powers p_j^c by repeated products; prob *= binom[rest, c_j] p_j^c_j column after column):
    # its running products lie in [p_min^ms, 2^ms] (normal doubles by the guards of .blocks._block_law),
    # then the binomial weight exp(lb) in one last product (an underflow there costs at most
    # 2e-323 absolute per atom, inside the 1e-300 of .blocks._BlockLaw)
    prob = _core.accountant.multinomial(np.asfortranarray(counts, dtype=np.int64), pa, int(ms))
    prob *= np.exp(lb)
    rel = float(np.max(np.expm1(eb * 1.01))) + ((4 + m1) * ms + 3 * m1 + 14) * U
    p_tr, lp_out = 0.0, -math.inf
    if ms < t:  # P(M > M*): the same log-domain terms, summed up to where they are negligible
        Mt = np.arange(ms + 1, min(t, ms + 4000) + 1)
        lt, et = _log_binom_pmf(t, gamma, Mt)
        p_tr = float(np.sum(np.exp(lt)))
        rel = max(rel, float(np.max(np.expm1(et * 1.01))) + Mt.size * U)
        if Mt[-1] < t:  # M > M* + 4000 is left out (a sub-probability law): its Chernoff bound
            x = Mt[-1] / t
            lp_out = -t * (x * math.log(x / gamma) + (1 - x) * math.log1p(-x) - (1 - x) * math.log1p(-gamma)) + 1e-9
    # counts as float columns (exact: < 2^26) for .blocks._block_law's products; the probabilities with the
    # event M > M* appended (its atom at 0), the same for every epsilon of a search
    pp = np.append(prob, p_tr)
    pp.flags.writeable = False  # (shared by the block laws of every epsilon)
    ok = bool(np.all(np.isfinite(pp))) and abs(float(pp.sum()) - 1.0) <= 1e-9  # (else: not expected)
    out = (np.asfortranarray(counts, dtype=float), pp if ok else None, rel, p_tr, lp_out)
    if len(WEIGHTS_CACHE) >= 8:
        WEIGHTS_CACHE.pop(next(iter(WEIGHTS_CACHE)))
    WEIGHTS_CACHE[key] = out
    return out

