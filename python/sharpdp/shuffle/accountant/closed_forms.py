"""Closed forms of the certified shuffle accountant: E[L_+] (the trivial cap), stop-loss brackets with
the law's rounding bound, the Jensen lower value and the law-shape closed forms (docs/accountant.md
§1.7, §3.2.2, §6.1; docs/accountant_edges.md §3); the binomial law of the number of active users with its
rounding bound and Chernoff tails (docs/accountant_tail.md §18 (h))."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from scipy.special import bdtr, gammaln, ndtri

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.limits import TINY, U
from sharpdp.shuffle.accountant.memo import object_memo
from sharpdp.shuffle.accountant.results import LawBracket
from sharpdp.shuffle.laws import Law


# law_closed_form sends a law with sd > SD_LATTICE_MAX and u sd above SD_BEYOND_LATTICE times E[L_+] to
# :func:`heavy` (docs/accountant.md §6.11)
SD_LATTICE_MAX = 1e100
SD_BEYOND_LATTICE = 1e3


def heavy(law: Law, gamma: float, n: int) -> LawBracket:
    """Bracket for a law whose spread leaves the double range (sd = inf: e.g. a BMG with sigma0 <
    ~0.0375, where L reaches e^{1/(2 sigma0^2)}): no lattice can hold it. Upper: the cap
    D_up <= E[L_+] ((sum x_i)_+ <= sum (x_i)_+), in closed form. Lower (docs/accountant_edges.md
    section 3): Jensen over the other n - 1 users, E[S_+] >= E[(B_1 L_1 + (n - 1) gamma mu)_+] with
    mu = E[L], so D_up >= E[(L - T0)_+] / n for any T0 >= max(-(n - 1) gamma mu, 0)."""
    up = max(trivial_cap(law), TINY)
    lower = jensen_lower(law, gamma, n)
    return LawBracket(min(lower, up), up, terms={"note": "sd overflow: E[L_+] (upper), Jensen (lower)"})


def trivial_cap(law: Law) -> float:
    """Certified E[L_+] (>= D_up at every n), in closed form."""
    up = stop_loss_bracket(law, 0.0)[1]
    return min(up, 1.0) if getattr(law, "trivial_bound", False) else up


def stop_loss_bracket(law: Law, T: float) -> tuple[float, float]:
    """Rigorous bracket of E[(L - T)_+] for the **exact** law, whose values are within
    err = ``law.value_error`` of the stored ones (docs/accountant.md §3.2.2):
    E[(L~ - (T + err))_+] <= E[(L - T)_+] <= E[(L~ - (T - err))_+], thresholds rounded outwards.
    With err = 0 this is ``law.tail_upper_bracket(T)`` (exact laws keep their values bit for bit)."""
    err = law.value_error
    if err == 0.0:
        return tail_bracket(law, T)
    return (tail_bracket(law, math.nextafter(T + err, math.inf))[0],
            tail_bracket(law, math.nextafter(T - err, -math.inf))[1])


def tail_bracket(law: Law, T: float) -> tuple[float, float]:
    """``law.tail_upper_bracket(T)``, kept per law object by T (docs/accountant_tail.md §17: a function of the law's
    parameters and T alone, the same floats): each value asks for E[L_+] twice (:func:`trivial_cap`,
    :func:`single_user_lower`) and the closed form of §18 for E[(L - T0)_+] at one clamp several times."""
    memo = object_memo(law, "_tail_memo")
    if memo is not None and (v := memo.get(T)) is not None:
        return v
    v = law.tail_upper_bracket(T)
    if memo is not None:
        memo[float(T)] = v
    return v


def jensen_lower(law: Law, gamma: float, n: int) -> float:
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
    err = law.value_error  # the true law: E[L] >= mu - err, E[(L - T0)_+] >= E[(L~ - T0)_+] - err
    T0 = (n - 1) * gamma * (max(-mu + err, 0.0) * (1.0 + 1e-6) + 1e-6)
    if not math.isfinite(T0):
        return 0.0
    return max(stop_loss_bracket(law, T0)[0] / n * (1.0 - 1e-12), 0.0)


def single_user_lower(law: Law, gamma: float, n: int) -> float:
    """Closed-form lower value of D_up (docs/accountant.md §8.1): (1 - gamma)^(n-1) E[L_+], the
    contribution of the disjoint events "user j alone is active"; certified (rounded down)."""
    if getattr(law, "trivial_bound", False) or law.top_bound() <= 0:
        return 0.0
    lo = stop_loss_bracket(law, 0.0)[0]  # certified lower end of E[L_+] (the law's value error included)
    if not (lo > 0.0 and math.isfinite(lo)):
        return 0.0
    p = math.exp((n - 1) * math.log1p(-gamma)) if gamma < 1.0 else (1.0 if n == 1 else 0.0)
    return max(lo * p * (1.0 - 1e-12), 0.0)


#: largest n for which :func:`small_n_bracket` is tried (its cost grows like n per threshold)
JUMP_N_MAX = 500
#: relative margin on the binomial weights (libm's exp/log1p within a few ulp, exact comb)
_W_MARGIN = 1e-9
#: cells of the two-user term's quadrature (:func:`_pair_term`)
PAIR_CELLS = 256


def _binomial_weights(m: int, gamma: float) -> np.ndarray:
    """P(Bin(m, gamma) = j), j = 0..m, each within a relative _W_MARGIN / 2 (comb exact, rounded
    once to float; j log(gamma) + (m - j) log1p(-gamma) within a few ulp of |value| <= ~1e5 before exp)."""
    j = np.arange(m + 1)
    logc = np.array([math.log(math.comb(m, int(i))) for i in j])
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        lg = j * math.log(gamma) + (m - j) * math.log1p(-gamma) if gamma < 1.0 else \
            np.where(j == m, 0.0, -np.inf)
        return np.exp(logc + lg)


def few_user_n_max() -> int:
    """The largest n for which :func:`small_n_bracket` is tried: ``JUMP_N_MAX`` (500), or
    ``limits.FEW_WIDE_N_MAX`` where ``limits.FEW_WIDE`` is on (docs/accountant.md §8.16)."""
    return max(JUMP_N_MAX, int(limits.FEW_WIDE_N_MAX)) if limits.FEW_WIDE else JUMP_N_MAX


def _wide_weights(m: int, gamma: float) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(j, w_j, lower w_j) for the j of Bin(m, gamma) within ``limits.FEW_WIDE_SD`` standard deviations (plus
    ``FEW_WIDE_SD``) of the mean, from :func:`log_binom` and its rounding bound (docs/accountant.md §8.16; the other
    terms stay at [0, E[L_+]]); None where that window holds more than ``limits.FEW_WIDE_TERMS`` terms (the cost
    gate: m > JUMP_N_MAX, whose exact weights :func:`_binomial_weights` cost O(m^2) big-integer work)."""
    if gamma >= 1.0:
        return np.array([m]), np.array([1.0]), np.array([1.0])
    k = float(limits.FEW_WIDE_SD)
    half = k * math.sqrt(m * gamma * (1.0 - gamma)) + k
    lo_j, hi_j = max(int(m * gamma - half), 0), min(int(math.ceil(m * gamma + half)), m)
    if hi_j - lo_j + 1 > int(limits.FEW_WIDE_TERMS):
        return None
    j = np.arange(lo_j, hi_j + 1)
    val, err = log_binom(m, j.astype(float), gamma)
    with np.errstate(under="ignore", over="ignore"):
        w = np.exp(val)
        w_lo = np.exp(val - err) * (1.0 - 1e-12)  # (libm's exp within a few ulp)
    w_lo = np.where(w_lo >= 1e-300, w_lo, 0.0)  # (subnormal results lose their relative precision: 0, a lower weight)
    ok = np.isfinite(w_lo)
    return j[ok], w[ok], np.minimum(w_lo[ok], 1.0)


def _pair_term(law: Law, e0_lo: float) -> tuple[float, float]:
    """Certified (lower, upper) of E[(L1 + L2)_+], L1, L2 i.i.d. of the law (docs/accountant.md §6.8).

    The stored law L~ is within err = ``value_error`` of the exact one, so
    (L~1 + L~2 - 2 err)_+ <= (L1 + L2)_+ <= (L~1 + L~2 + 2 err)_+. With phi(x) = E[(L~ + x)_+]
    (non-decreasing), E[(L~1 + L~2 +- 2 err)_+] = E[phi(L~1 +- 2 err)]; on the cells [x_i, x_{i+1}]
    of a grid of [a, b], phi(x_i - 2 err) <= phi(L~1 - 2 err) and phi(L~1 + 2 err) <= phi(x_{i+1} + 2 err)
    (whether ``prob_above`` counts an atom at a grid point or not). Outside: the mass at or below a
    costs at most phi(a + 2 err) each (upper value); above b, (L1 + L2)_+ <= (L~1 + err)_+ + (L~2 + err)_+
    gives E[(L~ - b)_+] + (b + err) P(L~ > b) + E[(L~ + err)_+] P(L~ > b). A finite end of the support
    is a grid end (a = the bottom - 2 err, b just above the top); an infinite one is cut at X, the first
    of 2^k where the outside terms are below 1e-6 E[L_+]."""
    lo_s, hi_s = law.support()
    err = law.value_error
    e2 = 2.0 * err
    sl0 = float(law.stop_loss(np.array([math.nextafter(-err, -math.inf)]))[1][0])  # E[(L~ + err)_+]
    tol = 1e-6 * e0_lo

    def p_above(v: float) -> tuple[float, float]:
        p, e = law.prob_above(v)
        return max(p - e, 0.0), min(p + e, 1.0)

    X = 1.0
    for _ in range(2100):  # (bounded: X reaches the double range)
        right = 0.0 if math.isfinite(hi_s) else \
            float(law.stop_loss(np.array([X]))[1][0]) + (X + err + sl0) * p_above(X)[1]
        left = 0.0 if math.isfinite(lo_s) else \
            (1.0 - p_above(-X)[0]) * float(law.stop_loss(np.array([math.nextafter(X - e2, -math.inf)]))[1][0])
        if right + left <= tol or not math.isfinite(2.0 * X):
            break
        X *= 2.0
    a = lo_s - e2 if math.isfinite(lo_s) else -X
    b = math.nextafter(hi_s + abs(hi_s) * 1e-15, math.inf) if math.isfinite(hi_s) else X
    if not (math.isfinite(a) and math.isfinite(b) and a < b and math.isfinite(b - a)):
        return 0.0, math.inf  # (a law spread over the whole double range: no useful grid)
    # uniform cells plus geometric ones around 0 (heavy tails: the value sits at all scales)
    g = np.geomspace(max(1e-9 * (b - a), 1e-300), b - a, PAIR_CELLS)
    x = np.unique(np.concatenate([np.linspace(a, b, PAIR_CELLS + 1), g, -g, [0.0]]))
    x = x[(x >= a) & (x <= b)]
    x[0], x[-1] = a, b
    slo = law.stop_loss(np.nextafter(-x + e2, np.inf))[0]  # phi(x_i - 2 err), threshold rounded up
    sup = law.stop_loss(np.nextafter(-x - e2, -np.inf))[1]  # phi(x_i + 2 err), threshold rounded down
    pa = np.array([p_above(float(v)) for v in x])  # certified (lower, upper) of P~(L~ > x_i)
    m_up = np.maximum(pa[:-1, 1] - pa[1:, 0], 0.0) * (1.0 + 1e-12)
    m_lo = np.maximum(pa[:-1, 0] - pa[1:, 1], 0.0) * (1.0 - 1e-12)
    lower = float(np.sum(m_lo * slo[:-1])) * (1.0 - 1e-12)
    upper = float(np.sum(m_up * sup[1:]))
    upper += (1.0 - pa[0, 0]) * sup[0]  # the mass at or below a (an atom at a finite bottom, or the cut tail)
    if not math.isfinite(hi_s):
        upper += float(law.stop_loss(np.array([b]))[1][0]) + (b + err + sl0) * pa[-1, 1]
    return lower, upper * (1.0 + 1e-12)


def _jump_uppers(law: Law, j: np.ndarray, cs, p_ups, e0_up: float, up_j: np.ndarray) -> np.ndarray:
    """``up_j`` lowered by the one-user-jump upper form of docs/accountant.md §6.8 (b) at each depth c of ``cs``:
    E[(S_{j+1})_+] / (j + 1) <= q E[(L - jc)_+] + (1 - q) E[L_+], q = (1 - P(L > -c))^j, ``p_ups`` upper values of
    P(L > -c) (at -c - err rounded down), E[(L - jc)_+] at jc - err rounded down, q rounded down."""
    if not len(cs):
        return up_j
    err = law.value_error
    t_ups = [np.nextafter(j * c * (1.0 - 1e-15) - err, -np.inf) for c in cs]  # (rounded down)
    sl_ups = np.split(law.stop_loss(np.concatenate(t_ups))[1], len(cs))
    best, at = np.full(j.size, np.inf), np.full(j.size, -1)  # (each term's best depth: the multi-jump form's, §8.19)
    for ic, (p_up_c, sl_up) in enumerate(zip(p_ups, sl_ups)):
        p_up = min(float(p_up_c), 1.0)
        with np.errstate(divide="ignore", under="ignore"):
            q = np.exp(j * math.log1p(-p_up)) * (1.0 - 1e-12) if p_up < 1.0 else np.zeros(j.size)
        e1_up = np.minimum(sl_up, e0_up)
        form = (q * e1_up + (1.0 - q) * e0_up) * (1.0 + 1e-12)  # (decreasing in q)
        better = form < best
        best, at = np.where(better, form, best), np.where(better, ic, at)
        up_j = np.minimum(up_j, form)
    if limits.FEW_MULTI_JUMP and 0 < j.size <= int(limits.FEW_MULTI_TERMS):
        up_j = np.minimum(up_j, _multi_jump_uppers(law, j, np.asarray(cs, float), np.asarray(p_ups, float), at, e0_up))
    return up_j


def _multi_jump_uppers(law: Law, j: np.ndarray, cs: np.ndarray, p_ups: np.ndarray, at: np.ndarray,
                       e0_up: float) -> np.ndarray:
    """Upper values of E[(S_{j+1})_+] / (j + 1) from the multi-jump form of docs/accountant.md §8.19 at the depth
    ``cs[at]`` of each term (``at`` < 0: none, E[L_+]): with B ~ Bin(j, p), p = P(L > -c) (an upper value: the form is
    non-decreasing in p), t_m = (j + 1 - m) c / m and M = ``limits.FEW_MULTI_M``,
    E[(S_{j+1})_+] / (j + 1) <= sum_{i < M} P(B = i) E[(L - t_{i+1})_+] + P(B >= M) E[L_+], evaluated as
    E_up - sum_{i < M} P_lo(B = i) (E_up - min(E_up, phi_up(t_{i+1}))) with lower values of the binomial
    probabilities and thresholds rounded down."""
    err = law.value_error
    k_m = int(limits.FEW_MULTI_M)
    ok = at >= 0
    c = np.where(ok, cs[np.maximum(at, 0)], 0.0)
    p = np.minimum(np.where(ok, p_ups[np.maximum(at, 0)], 1.0), 1.0)
    jf = j.astype(float)
    i_all = np.arange(k_m, dtype=float)[:, None]  # (i other users high: m = i + 1 high users)
    t = np.nextafter((jf - i_all) * c / (i_all + 1.0) * (1.0 - 1e-15) - err, -np.inf)  # (rounded down)
    phi = np.minimum(law.stop_loss(np.maximum(t, -err).ravel())[1].reshape(t.shape), e0_up)
    with np.errstate(divide="ignore", under="ignore", invalid="ignore"):
        # P(B = i) = C(j, i) p^i (1 - p)^(j - i): C(j, i) by its exact product for i < M (integers below 2^53), the
        # powers through log1p and exp (relative error below 1e-12 where the result is >= 1e-300, docs §8.19)
        comb = np.ones_like(t)
        for r in range(1, k_m):
            comb[r:] *= (jf - (r - 1)) / r
        ex = np.exp((jf - i_all) * np.log1p(-np.minimum(p, 1.0 - 1e-16)) + i_all * np.log(np.maximum(p, 1e-320)))
        prob = comb * ex * (1.0 - 1e-11)
    # (0 where exp's value is below 1e-300: subnormals lose their relative precision)
    prob = np.where((i_all <= jf) & (ex >= 1e-300) & (p < 1.0) & ok & np.isfinite(prob), prob, 0.0)
    s = np.sum(prob * (e0_up - phi), axis=0) * (1.0 - 1e-12)
    return np.where(ok, (e0_up - s) * (1.0 + 1e-12), e0_up)


def _open_depths(law: Law) -> tuple[list[float], np.ndarray]:
    """Depths c > 0 for the upper form of docs/accountant.md §6.8 (b) on a law not bounded below (§8.17 (c), a choice
    only: the form holds at every c > 0): of the grid S 2^(-i/2), i = 0 .. 119, S = |E[L]| + sd(L), the
    ``limits.FEW_OPEN_DEPTHS`` largest whose upper value of P(L > -c) is at most 1/2, with those values."""
    try:
        with np.errstate(all="ignore"):
            S = abs(float(law.mean())) + float(law.std())
    except NotImplementedError:  # (a law without its moments: no depths, main's terms)
        return [], np.zeros(0)
    if not (math.isfinite(S) and S > 0.0):
        return [], np.zeros(0)
    cs_all = S * 2.0 ** (-0.5 * np.arange(120))
    p_all = np.asarray(law.prob_above_up(np.nextafter(-cs_all - law.value_error, -np.inf)), float)
    keep = np.nonzero(p_all <= 0.5)[0][: int(limits.FEW_OPEN_DEPTHS)]
    return [float(c) for c in cs_all[keep]], p_all[keep]


def _term_brackets(law: Law, j: np.ndarray, e0_up: float) -> tuple[np.ndarray, np.ndarray]:
    """Certified (lower, upper) of E[(S_{j+1})_+] / (j + 1) for each j >= 1 of ``j`` from the one-user-jump and
    bounded-above forms of docs/accountant.md §6.8 (b), (c) (element by element: a term's values do not depend on the
    other elements of ``j``); ``e0_up`` the certified upper value of E[L_+]."""
    lo_s, hi_s = law.support()
    err = law.value_error
    lo_j = np.zeros(j.size)
    up_j = np.full(j.size, e0_up)
    A = math.nextafter(-lo_s + err, math.inf) * (1.0 + 1e-12) if math.isfinite(lo_s) else math.inf
    if j.size and 0.0 < A < math.inf:  # bounded below: one user jumps
        t_lo = np.nextafter(j * A * (1.0 + 1e-15) + err, np.inf)  # (rounded up: a smaller value)
        sl_lo = law.stop_loss(t_lo)[0]
        pa = np.minimum(law.prob_above_up(np.nextafter(j * A * (1.0 - 1e-15) - err, -np.inf)), 1.0)
        with np.errstate(divide="ignore", under="ignore"):
            q_lo = np.exp(j * np.log1p(-np.minimum(pa, 0.5))) * (1.0 - 1e-12)
        lo_j = np.maximum(lo_j, np.where(pa <= 0.5, q_lo * sl_lo, 0.0))
        cs = [c for c in (A * (1.0 - 2.0 ** -i) * (1.0 - 1e-15) for i in (1, 2, 3, 4, 6, 8, 11, 14, 18, 23, 30, 40))
              if c > 0.0]
        # P(L > -c) and E[(L - t)_+] at every depth c in one call each (the law's vectorised bounds act element
        # by element: the same values as a call per depth)
        p_ups = law.prob_above_up(np.array([math.nextafter(-c - err, -math.inf) for c in cs])) if cs else []
        up_j = _jump_uppers(law, j, cs, p_ups, e0_up, up_j)
    elif j.size and A == math.inf and limits.FEW_OPEN_JUMP:  # not bounded below: the same upper form (§8.17 (c))
        cs, p_ups = _open_depths(law)
        up_j = _jump_uppers(law, j, cs, p_ups, e0_up, up_j)
    top = math.nextafter(hi_s + err, math.inf) * (1.0 + 1e-12) if math.isfinite(hi_s) else math.inf
    if j.size and 0.0 < top < math.inf:  # bounded above: E[(S_{j+1})_+] <= E[(L + j top)_+]
        t = np.nextafter(-j * top * (1.0 + 1e-15) - err, -np.inf)
        up_j = np.minimum(up_j, law.stop_loss(t)[1] / (j + 1) * (1.0 + 1e-12))
    return lo_j, up_j


def pair_split_upper(j: np.ndarray, u1: float, e0_up: float) -> np.ndarray:
    """Upper values of E[(S_{j+1})_+] / (j + 1) from the pairs' form of docs/accountant.md §8.17: with k = j + 1 users
    split into floor(k / 2) pairs and (k mod 2) single users, E[(S_k)_+] <= floor(k / 2) E[(L_1 + L_2)_+]
    + (k mod 2) E[L_+], so the term is at most (2 floor(k / 2) u1 + (k mod 2) e0_up) / k, ``u1`` an upper value of
    E[(L_1 + L_2)_+] / 2 (the j = 1 term) and ``e0_up`` one of E[L_+] (rounded up by 1e-12 relative)."""
    k = np.asarray(j, float) + 1.0
    h = np.floor(0.5 * k)
    return (h * (2.0 * u1) + (k - 2.0 * h) * e0_up) / k * (1.0 + 1e-12)


def _may_meet(law: Law, m: int, gamma: float, e0: tuple[float, float], rel_tol: float) -> float | None:
    """Whether the few-user bracket at n = m + 1 > JUMP_N_MAX may meet ``rel_tol`` (an estimate choosing only,
    docs/accountant.md §8.16): the term brackets of :func:`_term_brackets` at ``limits.FEW_WIDE_SAMPLES`` points s_g of
    Bin(m, gamma) (its normal quantiles g / k) stand for the terms s_g <= j < s_{g+1}, weighted by their binomial mass
    (``bdtr``); None where that estimate's gap, without the j = 1 term (the two-user quadrature may narrow it),
    exceeds ``limits.FEW_WIDE_PRE`` rel_tol times its lower value, else a smaller estimate of the lower value (each
    group at its last term); inf at once for windows of at most 4k terms (the bracket itself is then about as
    cheap)."""
    k = int(limits.FEW_WIDE_SAMPLES)
    sd = math.sqrt(m * gamma * (1.0 - gamma))
    if gamma >= 1.0 or 2.0 * (float(limits.FEW_WIDE_SD) * (sd + 1.0)) <= 4 * k:
        return math.inf
    with np.errstate(divide="ignore"):
        z = ndtri(np.arange(k) / k)  # (-inf at 0)
    s = np.unique(np.clip(np.floor(m * gamma + sd * z), 0, m).astype(np.int64))
    edges = np.append(s, m + 1).astype(float)
    cdf = np.where(edges > 0, bdtr(np.maximum(edges - 1.0, 0.0), m, gamma), 0.0)
    cdf[-1] = 1.0
    mass = np.maximum(np.diff(cdf), 0.0)
    ends = np.append(s[1:] - 1, m)  # (each group's last j)
    pts = np.unique(np.concatenate([s, ends]))
    lo_t, up_t = np.full(pts.size, e0[0]), np.full(pts.size, e0[1])
    pos = pts >= 1
    lo_t[pos], up_t[pos] = _term_brackets(law, pts[pos], e0[1])
    i0, i1 = np.searchsorted(pts, s), np.searchsorted(pts, ends)
    gap = float(np.sum(np.where(s == 1, 0.0, mass * (up_t[i0] - lo_t[i0]))))
    if gap > float(limits.FEW_WIDE_PRE) * rel_tol * float(np.sum(mass * lo_t[i0])):
        return None
    # the value returned: each group at its last term's lower value (the terms' lower values fall with j where one
    # user's jump makes D_up: a smaller value, so a smaller cut of the tails in small_n_bracket)
    est = float(np.sum(mass * lo_t[i1]))
    return est


def _gate_tol(rel_tol: float | None) -> float | None:
    """The rel_tol that :func:`small_n_bracket`'s two cost gates read (whether the bracket is formed beyond
    JUMP_N_MAX, whether the two-user quadrature runs): ``rel_tol``, or with ``limits.FEW_FINER`` on at least
    ``limits.FEW_FINER_TOL`` (the default request's), so that a finer request forms the bracket, and runs the
    quadrature, wherever the default request would (docs/accountant.md §8.18; a choice only)."""
    if rel_tol is None or not limits.FEW_FINER:
        return rel_tol
    return max(rel_tol, float(limits.FEW_FINER_TOL))


def small_n_bracket(law: Law, gamma: float, n: int, rel_tol: float | None = None) -> tuple[float, float] | None:
    """Certified (lower, upper) of D_up at small n from few-user terms (docs/accountant.md §6.8);
    None when nothing applies (n outside 2..JUMP_N_MAX, L <= 0, trivial laws). ``rel_tol``: the
    two-user quadrature is computed only where the other terms' gap is within 0.5 rel_tol of the value
    (None: always, for a law bounded above).

    D_up = sum_j P(Bin(n - 1, gamma) = j) E[(S_{j+1})_+] / (j + 1), S_k the sum of k i.i.d. copies of
    L. Each term is bracketed on its own: j = 0 is E[L_+]; every term is at most E[L_+]; for a law
    bounded below (L >= -A) and 0 < c <= A, with q = P(L <= -c)^j and q' = P(L <= jA)^j,
    q' E[(L - jA)_+] <= E[(S_{j+1})_+] / (j + 1) <= q E[(L - jc)_+] + (1 - q) E[L_+] (one user jumps);
    for a law bounded above (L <= t), E[(S_{j+1})_+] <= E[(L + jt)_+], and the two-user term
    E[(L1 + L2)_+] by a cell quadrature of E[phi(L1)]. Every term uses the law's certified stop-loss
    and probability brackets (its value error included) and rounds to the safe side.
    """
    if n < 2 or n > few_user_n_max() or not (0.0 < gamma <= 1.0) or getattr(law, "trivial_bound", False):
        return None
    if law.top_bound() <= 0:
        return None
    e0_lo, e0_up = stop_loss_bracket(law, 0.0)
    if not (e0_up > 0.0 and math.isfinite(e0_up)):
        return None
    # the gates' rel_tol: a finer request forms the bracket wherever the default's would (docs/accountant.md §8.18)
    gate_tol = _gate_tol(rel_tol)
    if n <= JUMP_N_MAX:
        w_all = _binomial_weights(n - 1, gamma)
        jj, w_all_lo = np.arange(n), w_all * (1.0 - _W_MARGIN)
    else:  # beyond JUMP_N_MAX: the window of terms that matter, log-gamma weights (docs/accountant.md §8.16)
        est = _may_meet(law, n - 1, gamma, (e0_lo, e0_up), gate_tol) if gate_tol is not None else math.inf
        if est is None:
            return None  # (the cost gate's second part, docs/accountant.md §8.16: an estimate, choosing only)
        wide = _wide_weights(n - 1, gamma)
        if wide is None:
            return None
        jj, w_all, w_all_lo = wide
        if math.isfinite(est) and rel_tol is not None:  # the tails of mass <= FEW_WIDE_DROP rel_tol est / E[L_+] each
            cut, c = float(limits.FEW_WIDE_DROP) * rel_tol * est / e0_up, np.cumsum(w_all)
            keep = (c > cut) & (c[-1] - c + w_all > cut)
            jj, w_all, w_all_lo = jj[keep], w_all[keep], w_all_lo[keep]
    w0, w0_lo = (float(w_all[0]), float(w_all_lo[0])) if jj.size and jj[0] == 0 else (0.0, 0.0)
    sel = (w_all > 1e-300) & (jj >= 1)
    j, w, w_lo = jj[sel], w_all[sel], w_all_lo[sel]  # j other active users (j = 0: E[L_+] itself)
    lo_j, up_j = _term_brackets(law, j, e0_up)
    # the two-user quadrature (~0.1-0.3 s for a lognormal law) only where the bracket could then meet
    # rel_tol: the gap of the other terms is already within it
    if j.size and j[0] == 1 and e0_lo > 0.0:
        split = bool(limits.FEW_PAIR_SPLIT)
        if split:  # the pairs' form with the two-user term's current upper value (docs/accountant.md §8.17)
            up_j[1:] = np.minimum(up_j[1:], pair_split_upper(j[1:], float(up_j[0]), e0_up))
        gap = float(np.sum(w[1:] * (up_j[1:] - lo_j[1:])))
        # (the gate's gap: with the pairs' form at the two-user term's lower value, the best the quadrature can give
        # (docs/accountant.md §8.17: an estimate choosing only whether the quadrature runs)
        gate = float(np.sum(w[1:] * (np.minimum(up_j[1:], pair_split_upper(j[1:], float(lo_j[0]), e0_up))
                                     - lo_j[1:]))) if split else gap
        est = w0 * e0_lo + float(np.sum(w * lo_j))
        # (met already: within 0.5 rel_tol on main, 0.9 FEW_PAIR_GATE rel_tol with §8.17 on)
        fac = float(limits.FEW_PAIR_GATE) if split else 0.5
        done = rel_tol is not None and gap + w[0] * (up_j[0] - lo_j[0]) <= (0.9 * fac if split else fac) * rel_tol * est
        if not done and (gate_tol is None or gate <= fac * gate_tol * est):
            p_lo, p_up = _pair_term(law, e0_lo)
            lo_j[0] = max(lo_j[0], 0.5 * p_lo)
            up_j[0] = min(up_j[0], 0.5 * p_up * (1.0 + 1e-12))
            if split:
                up_j[1:] = np.minimum(up_j[1:], pair_split_upper(j[1:], float(up_j[0]), e0_up))
    lower = (w0_lo * e0_lo + float(np.sum(w_lo * lo_j))) * (1.0 - 1e-12)
    # sum_j w_j u_j with u_j <= E[L_+] and sum_j w_j = 1: E[L_+] - sum_j w_j (E[L_+] - u_j) (lower weights)
    upper = max(e0_up - float(np.sum(w_lo * np.maximum(e0_up - up_j, 0.0))) * (1.0 - 1e-12), 0.0)
    upper = max(upper * (1.0 + 1e-12), TINY)
    return max(min(lower, upper), 0.0), upper


def law_closed_form(law: Law, gamma: float, n: int) -> LawBracket | None:
    """Closed forms for the law's shape (any n), or None when the lattice engine is needed."""
    lo_s, hi_s = law.support()
    if law.top_bound() <= 0:
        return LawBracket(0.0, 0.0, terms={"note": "L <= 0 almost surely"})
    if lo_s == hi_s:
        c = lo_s  # a single atom: D_up = E[(c M)_+]/(n gamma) = c_+ (= E[L_+]: with a rounding bound,
        # its bracket over the exact atom)
        lo, up = (max(c, 0.0), max(c, 0.0)) if law.value_error == 0.0 else stop_loss_bracket(law, 0.0)
        return LawBracket(lo, up * (1 + 1e-12), terms={"note": "degenerate law"})
    sd = law.std()
    if not sd > 0.0:  # spread lost to cancellation against a huge |mean|: the trivial cap E[L_+]
        return LawBracket(0.0, max(trivial_cap(law), TINY), terms={"note": "sd underflow: E[L_+]"})
    if not math.isfinite(sd):
        return heavy(law, gamma, n)
    if sd > SD_LATTICE_MAX and sd * U > SD_BEYOND_LATTICE * trivial_cap(law):
        # finite spread beyond what a double-precision lattice resolves against E[L_+] (docs/accountant.md
        # §6.11): every pass's position and round-off charges exceed the cap, so the lattice would only
        # return the cap after its passes (seconds each); the same certified bracket as for sd = inf
        return replace(heavy(law, gamma, n), terms={"note": "sd beyond the lattice's resolution: E[L_+] (upper), "
                                                            "Jensen (lower)"})
    return None


def plus(up: float, s: float) -> float:
    """up + s rounded up (s >= 0)."""
    return up if s == 0.0 else math.nextafter(up + s, math.inf)


def log_binom(N: int, m: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """log P(M = m), M ~ Bin(N, gamma), and a bound on its rounding: 64 ulp of the magnitudes combined (assumed:
    gammaln within 8 ulp of its magnitude, Stirling's series at large arguments; the logs and products 2 ulp, the
    four sums 1 ulp each of the running magnitude; docs/accountant_tail.md §18 (h)), plus 1e-13."""
    lg, l1 = math.log(gamma), math.log1p(-gamma) if gamma < 1 else 0.0
    a, b, c = gammaln(N + 1.0), gammaln(m + 1.0), gammaln(N - m + 1.0)
    val = a - b - c + m * lg + (N - m) * l1
    err = 64 * U * (abs(a) + b + c + m * abs(lg) + (N - m) * abs(l1)) + 1e-13
    return val, err


BINOM_SHARP_MIN = 100.0  # log_binom_sharp: the saddle-point form where min(m, N - m) is at least this


def log_binom_sharp(N: int, m: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """log P(M = m), M ~ Bin(N, gamma), and a bound on its error, by the saddle-point form (docs/accountant_tail.md
    §38.2): log P = 1/2 log(N / (2 pi m (N - m))) + s(N) - s(m) - s(N - m) - bd0(m, N gamma) - bd0(N - m, N (1 - gamma)),
    s Stirling's remainder (between its partial sums 1/(12 k) - 1/(360 k^3) and that plus 1/(1260 k^5)), bd0(x, M) =
    x log(x / M) + M - x = (x - M)^2 / (x + M) + 2 x sum_j v^(2j+1) / (2j + 1), v = (x - M) / (x + M), whose magnitudes
    are those of the result (not of log N!, as :func:`log_binom`'s). Elements with min(m, N - m) below
    ``BINOM_SHARP_MIN`` or |v| > 0.1 take :func:`log_binom`'s values."""
    m = np.asarray(m, float)
    k2 = N - m  # (exact: integers below 2^53)
    ok = (np.minimum(m, k2) >= BINOM_SHARP_MIN) & (N < 2.0 ** 52)
    if not np.all(ok):
        val, err = log_binom(N, m, gamma)
    else:
        val, err = np.empty(m.shape), np.full(m.shape, np.inf)
    if not np.any(ok):
        return val, err
    x1, x2 = m[ok], k2[ok]
    g1 = 1.0 - gamma
    M1, M2 = N * gamma, N * g1  # (M1 within U of N gamma; M2 within 2.1 U of N (1 - gamma): 1 - gamma rounded)
    b1, e1 = _bd0(x1, M1, 1.01 * U * M1)
    b2, e2 = _bd0(x2, M2, 2.1 * U * M2)
    l2p = math.log(2 * math.pi)
    lN, l1, l2 = math.log(N), np.log(x1), np.log(x2)
    half = 0.5 * (lN - l2p - l1 - l2)
    e_half = 8 * U * (abs(lN) + l2p + np.abs(l1) + np.abs(l2))
    sN, eN = _stirling_rem(float(N))
    s1, es1 = _stirling_rem(x1)
    s2, es2 = _stirling_rem(x2)
    v = half + sN - s1 - s2 - b1 - b2
    e = e_half + eN + es1 + es2 + e1 + e2 + 8 * U * (np.abs(half) + sN + s1 + s2 + b1 + b2) + 1e-13
    better = e < err[ok]
    val[ok] = np.where(better, v, val[ok])
    err[ok] = np.where(better, e, err[ok])
    if not np.all(np.isfinite(err)):  # (|v| > 0.1 somewhere: those take log_binom's values)
        bad = ~np.isfinite(err)
        val[bad], err[bad] = log_binom(N, m[bad], gamma)
    return val, err


def _stirling_rem(k):
    """(c, e): log k! - ((k + 1/2) log k - k + 1/2 log 2 pi) lies in [c - e, c + e] for k >= 1 (the series'
    enveloping partial sums: between 1/(12k) - 1/(360k^3) and that plus 1/(1260k^5); roundings 8 U of 1/(12k))."""
    k = np.asarray(k, float)
    inv = 1.0 / k
    i2 = inv * inv
    r5 = (0.5 / 1260.0) * (i2 * i2 * inv) * (1 + 8 * U)
    c = inv / 12.0 - i2 * inv / 360.0 + r5
    return c, r5 + 8 * U * inv / 12.0 + 1e-300


def _bd0(x, M: float, eta: float):
    """(b, e): bd0(x, M*) = x log(x / M*) + M* - x lies in [b - e, b + e] for every M* within ``eta`` of M (x >= 1,
    |x - M| <= 0.1 (x + M)): (x - M)^2 / (x + M) + 2 x sum_{j=1..J} v^(2j+1) / (2j + 1), v = (x - M) / (x + M), the
    series' rest below 2 x |v|^(2J+3) / ((2J + 3)(1 - v^2)); |d bd0 / dM| = |x - M| / M."""
    d = x - M
    v = d / (x + M)
    t1 = d * v
    v2 = v * v
    vm = float(np.max(np.abs(v))) if np.size(v) else 0.0
    # (terms j = 1 .. J: J the least with |v|^(2J + 1) below 1e-18, at most 8; the rest is bounded below)
    J = 8 if not 0.0 < vm < 0.1 else min(8, max(1, math.ceil((math.log(1e-18) / math.log(vm) - 1.0) / 2.0)))
    term = v * v2
    ser = term / 3.0
    for j in range(2, J + 1):
        term = term * v2
        ser += term / (2 * j + 1)
    av3 = np.abs(v * v2)
    g = 1.0 / (1.0 - v2)  # (sum_j |v|^(2j+1) / (2j+1) <= |v|^3 / (3 (1 - v^2)); the rest likewise from j = J + 1)
    rest = 2 * x * av3 * v2 ** J * g / (2 * J + 3)
    b = t1 + 2 * x * ser
    e = (8 * U * np.abs(t1) + 128 * U * 2 * x * av3 * g / 3.0 + rest + 2 * U * np.abs(b)
         + eta * (np.abs(d) + eta) / (M - eta) + 1e-300)
    bad = ~(np.abs(v) <= 0.1)
    return b, np.where(bad, np.inf, e)


def binom_tail_up(N: int, k: float, gamma: float, below: bool) -> float:
    """Upper bound on P(M <= k) (``below``) or P(M >= k), M ~ Bin(N, gamma), by Chernoff: exp(-N KL(k/N || gamma))
    when k lies on that side of the mean, else 1."""
    if below and k < 0 or not below and k > N:
        return 0.0
    p = k / N
    if (below and p >= gamma) or (not below and p <= gamma):
        return 1.0
    t1 = p * math.log(p / gamma) if p > 0 else 0.0
    t2 = (1 - p) * math.log((1 - p) / (1 - gamma)) if p < 1 else 0.0
    # (the terms cancel near the mean: the margin is taken on their magnitudes, 16 ulp, not on the sum)
    e = N * (t1 + t2) - 16 * U * N * (abs(t1) + abs(t2) + 1.0) - 1e-10
    return min(math.exp(-e) * (1 + 1e-12) if e > -700 else 1.0, 1.0) + 1e-300


__all__ = ["BINOM_SHARP_MIN", "JUMP_N_MAX", "few_user_n_max", "PAIR_CELLS", "SD_BEYOND_LATTICE", "SD_LATTICE_MAX", "binom_tail_up", "heavy", "jensen_lower",
           "law_closed_form", "log_binom", "log_binom_sharp", "pair_split_upper", "plus", "single_user_lower", "small_n_bracket", "stop_loss_bracket",
           "tail_bracket", "trivial_cap"]
