"""Closed forms of the certified shuffle accountant: E[L_+] (the trivial cap), stop-loss brackets with
the law's rounding bound, the Jensen lower value and the law-shape closed forms (docs/accountant.md
§1.7, §3.2.2, §6.1; docs/accountant_edges.md §3)."""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle.accountant.limits import TINY
from sharpdp.shuffle.accountant.results import LawBracket
from sharpdp.shuffle.laws import Law


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
        return law.tail_upper_bracket(T)
    return (law.tail_upper_bracket(math.nextafter(T + err, math.inf))[0],
            law.tail_upper_bracket(math.nextafter(T - err, -math.inf))[1])


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


#: largest n for which :func:`big_jump_bracket` is tried (its cost grows like n per threshold)
JUMP_N_MAX = 500
#: relative margin on the binomial weights (libm's exp/log1p within a few ulp, exact comb)
_W_MARGIN = 1e-9


def _binomial_weights(m: int, gamma: float) -> np.ndarray:
    """P(Bin(m, gamma) = j), j = 0..m, each within a relative _W_MARGIN / 2 (comb exact, rounded
    once to float; j log(gamma) + (m - j) log1p(-gamma) within a few ulp of |value| <= ~1e5 before exp)."""
    j = np.arange(m + 1)
    logc = np.array([math.log(math.comb(m, int(i))) for i in j])
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        lg = j * math.log(gamma) + (m - j) * math.log1p(-gamma) if gamma < 1.0 else \
            np.where(j == m, 0.0, -np.inf)
        return np.exp(logc + lg)


def big_jump_bracket(law: Law, gamma: float, n: int) -> tuple[float, float] | None:
    """Certified (lower, upper) of D_up for a law bounded below, from the "one user jumps" split
    (docs/accountant.md §6.8); None when it does not apply (n > JUMP_N_MAX, no finite lower end).

    With k active users (weights P(Bin(n - 1, gamma) = k - 1) of D_up's per-user form), L >= -A
    a.s. and, for a threshold 0 < c <= A, q = P(L <= -c)^(k - 1) and q' = P(L <= (k - 1) A)^(k - 1):
    q' E[(L - (k - 1) A)_+] <= E[(S_k)_+] / k <= q E[(L - (k - 1) c)_+] + (1 - q) E[L_+].
    The upper value is minimised over a few c; every term uses the law's certified stop-loss
    bracket (its value error included) and rounds to the safe side.
    """
    if n < 2 or n > JUMP_N_MAX or not (0.0 < gamma <= 1.0) or getattr(law, "trivial_bound", False):
        return None
    lo_s = law.support()[0]
    err = law.value_error
    if not math.isfinite(lo_s) or law.top_bound() <= 0:
        return None
    A = math.nextafter(-lo_s + err, math.inf) * (1.0 + 1e-12)  # L >= -A for the exact law
    if not (A > 0.0 and math.isfinite(A)):
        return None
    e0_lo, e0_up = stop_loss_bracket(law, 0.0)
    if not (e0_up > 0.0 and math.isfinite(e0_up)):
        return None
    w = _binomial_weights(n - 1, gamma)
    j = np.nonzero(w > 1e-300)[0]
    j = j[j >= 1]  # j = k - 1 other active users (j = 0: E[L_+] exactly, below)
    w_lo, w_up = w * (1.0 - _W_MARGIN), w * (1.0 + _W_MARGIN)
    lower = w_lo[0] * e0_lo
    upper = e0_up  # sum_j w_j u_j with u_j <= E[L_+] and sum_j w_j = 1: E[L_+] - sum_j w_j (E[L_+] - u_j)
    if j.size == 0:
        return max(lower, 0.0), e0_up
    # thresholds for the exact law (value error err): E[(L - t)_+] in [E~[(L~ - t - err)_+], E~[(L~ - t + err)_+]]
    t_lo = np.nextafter(j * A * (1.0 + 1e-15) + err, np.inf)  # (rounded up: a larger threshold, a smaller value)
    sl_lo = law.stop_loss(t_lo)[0]
    # the lower value's event "user i above jA, the j others at most jA": P(L > jA) <= P~(L~ > jA - err)
    pa = np.minimum(law.prob_above_up(np.nextafter(j * A * (1.0 - 1e-15) - err, -np.inf)), 1.0)
    with np.errstate(divide="ignore", under="ignore"):
        q_lo = np.where(pa < 1.0, np.exp(j * np.log1p(-np.minimum(pa, 0.5))) * (1.0 - 1e-12), 0.0)
    q_lo = np.where(pa <= 0.5, q_lo, 0.0)
    best_lo = float(np.sum(w_lo[j] * q_lo * sl_lo))
    best_red = 0.0
    for i in (1, 2, 3, 4, 6, 8, 11, 14, 18, 23, 30, 40):
        c = A * (1.0 - 2.0 ** -i) * (1.0 - 1e-15)
        if not c > 0.0:
            continue
        x = math.nextafter(-c - err, -math.inf)  # P(L > -c) <= P~(L~ > -c - err)
        p_up = min(float(law.prob_above_up(np.array([x]))[0]), 1.0)
        with np.errstate(divide="ignore", under="ignore"):
            q = np.exp(j * math.log1p(-p_up)) * (1.0 - 1e-12) if p_up < 1.0 else np.zeros(j.size)
        t_up = np.maximum(np.nextafter(j * c * (1.0 - 1e-15) - err, -np.inf), 0.0)  # rounded down
        e1_up = np.minimum(law.stop_loss(t_up)[1], e0_up)
        u = q * e1_up + (1.0 - q) * e0_up  # (decreasing in q: q rounded down)
        red = float(np.sum(w_lo[j] * np.maximum(e0_up - u, 0.0)))
        best_red = max(best_red, red)
    lower = (lower + best_lo) * (1.0 - 1e-12)
    upper = max(e0_up - best_red * (1.0 - 1e-12), 0.0) * (1.0 + 1e-12)
    upper = max(upper, TINY)
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
    return None


def plus(up: float, s: float) -> float:
    """up + s rounded up (s >= 0)."""
    return up if s == 0.0 else math.nextafter(up + s, math.inf)


__all__ = ["JUMP_N_MAX", "big_jump_bracket", "heavy", "jensen_lower", "law_closed_form", "plus", "single_user_lower", "stop_loss_bracket",
           "trivial_cap"]
