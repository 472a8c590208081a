"""The moments and Bennett bounds that the closed form given the number of active users is built from
(docs/accountant_tail.md §18): E min(L, T0) and the variance bound of V = min(L, T0) (one-term laws, the Gaussian
randomizer's x-vs-⊥ law §23, the BMG's two-term law §32 (a)), the density's sup on [s, inf) (§32 (b)), Bennett's
inequality, the numbers of active users kept near their mean (§18 (a)), and the body's upper values (§18 (e),
§20 (e)). Split out of :mod:`.concentrated`, which re-exports them under their former private names."""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle.accountant import limits, memo
from sharpdp.shuffle.accountant.closed_forms import binom_tail_up, log_binom, log_binom_sharp, tail_bracket
from sharpdp.shuffle.accountant.golden import golden_min
from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.accountant.mgf import dn, mgf_h_up, up
from sharpdp.shuffle.laws import Law

SDS = 12.0  # the number of active users m within this many sd of (n - 1) gamma; Chernoff bounds beyond
BODY_CELLS = 1024  # cells of the body's numerical mgf (§20 (e))
BODY_STEPS = 10  # golden-section steps of the body's lam (speed only)
M_MEMO: dict = memo.result_memo()  # (m_range's, by (N, gamma))


def remember(key, value, d: dict):
    """Store ``value`` under ``key`` in the bounded memo ``d`` (emptied at 256 entries) and return it."""
    if len(d) >= 256:
        d.clear()
    d[key] = value
    return value


def mean_v(law: Law, T0: float) -> tuple[float, float]:
    """[lo, hi] containing E min(L, T0) = E L - tau(T0), E L = a + G for the one-term law (E exp(r V - r^2/2) = 1 on
    the whole range), in [a + d_lo, a + d_hi] by the law's closed forms otherwise (§23)."""
    s_lo, s_hi, _ = law_moments(law)
    tl, tu = tail_bracket(law, T0)
    return float(dn(dn(s_lo) - tu)), float(up(up(s_hi) - tl))


def law_moments(law: Law) -> tuple[float, float, float]:
    """(lower, upper) values of E L and an upper value of E (L - a)^2 >= Var min(L, T0) for a law with a
    ``heavy_form`` (a + d_lo, a + d_hi, m2_up: the floats §18-§23 have always used); for a two-term law
    (``two_term_form``, docs/accountant_tail.md §32) its E L bracket and Var L >= Var min(L, T0) (§32 (a))."""
    f = law.heavy_form()
    if f is not None:
        return f.a + f.d_lo, f.a + f.d_hi, f.m2_up
    t = law.two_term_form()
    return t.mean_lo, t.mean_hi, t.var_up


def density_sup_up(law: Law, s):
    """Upper values of the sup of L's density over [s, inf), s >= T0 > 0: the law's own (``heavy_form``), or the
    dominant one-term law's for a two-term law (docs/accountant_tail.md §32 (b))."""
    t = law.two_term_form() if law.heavy_form() is None else None
    return law.density_up(s) if t is None else t.dominant.density_up(s)


def bennett_up(v, b, w):
    return np.exp(-bennett_exp(v, b, w)) * (1 + 1e-12) + limits.TINY  # upper value; never 0 past underflow: §18 (g)


def bennett_exp(v, b, w):
    """Lower value of (v / b^2) h(b w / v), h(u) = (1 + u) log(1 + u) - u (elementwise; v, b, w > 0):
    P(Z > w) <= exp(-it) and E(Z - w)_+ <= exp(-it) / (e lam), lam = log(1 + b w / v) / b, for a sum Z of
    centred terms each <= b with variances summing to at most v (Bennett's inequality)."""
    u = b * w / v
    hu = (1 + u) * np.log1p(u) * (1 - 8 * U) - u * (1 + 4 * U)
    return np.maximum(v / (b * b) * hu * (1 - 1e-12), 0.0)


def m_range(N: int, gamma: float, sharp: bool = False):
    """The numbers of active users m within SDS sd of the mean, their (upper, lower) probabilities and an upper bound
    on the probability of the others (Chernoff); kept by (N, gamma), read-only (docs/accountant_tail.md §17).
    ``sharp``: the probabilities by :func:`.closed_forms.log_binom_sharp` (docs/accountant_tail.md §38.2)."""
    key = (N, gamma, True) if sharp else (N, gamma)
    if (got := M_MEMO.get(key)) is not None:
        return got
    mean, sd = N * gamma, math.sqrt(N * gamma * (1 - gamma))
    m1, m2 = max(int(math.floor(mean - SDS * sd - 1)), 0), min(int(math.ceil(mean + SDS * sd + 1)), N)
    m = np.arange(m1, m2 + 1, dtype=float)
    lp, lerr = (log_binom_sharp if sharp else log_binom)(N, m, gamma)
    outside = binom_tail_up(N, m1 - 1, gamma, True) + binom_tail_up(N, m2 + 1, gamma, False)
    out = (m, np.exp(lp + lerr) * (1 + 8 * U), np.exp(lp - lerr) * (1 - 8 * U), outside)
    for a in out[:3]:
        a.flags.writeable = False
    return remember(key, out, M_MEMO)


def moments(law: Law, T0: float):
    """(mu_lo, mu_hi, sig2, b): E V in [mu_lo, mu_hi], Var V <= sig2, V - E V <= b for V = min(L, T0)."""
    mu_lo, mu_hi = mean_v(law, T0)
    sig2 = float(up(law_moments(law)[2] * (1 + 1e-12)))  # Var min(L, T0) <= E (L - a)^2 (= G^2 e^{r^2}: one term)
    return mu_lo, mu_hi, sig2, float(up(T0 - mu_lo))


def body_up(law: Law, gamma: float, n: int, T0: float) -> float:
    """Upper value of E[A_+] / (n gamma), A = sum_i B_i min(L_i, T0), by Bennett's exponential moment (§18 (e))."""
    mu_lo, mu_hi = mean_v(law, T0)
    if not mu_hi < 0:
        return math.inf
    sig2 = law_moments(law)[2] * (1 + 1e-12)  # >= E (L - a)^2 (§23), Var L (§32)
    v1 = float(up(gamma * (sig2 + max(mu_lo * mu_lo, mu_hi * mu_hi)) * (1 + 1e-12)))  # >= Var(B min(L, T0))
    b1 = float(up(T0 - gamma * mu_lo))
    ea = -float(dn(n * gamma * -mu_hi))  # >= E A (negative)
    nv = n * v1 * (1 + 4 * U)
    lam = math.log1p(b1 * -ea / nv) / b1
    e = float(bennett_exp(np.array(nv), b1, -ea))
    return exp_quot_up(-e, math.e * lam * n * gamma * (1 - 4 * U)) * (1 + 1e-12) if lam > 0 else math.inf


def exp_quot_up(x: float, den: float) -> float:
    """Upper value of e^x / den (den > 0 a lower value of the denominator) in the log domain, so that neither an
    underflow of e^x nor a small den makes it 0 or too small: 1e-299 where x - log den < -690 (e^{-690} < 3e-300;
    docs/accountant_tail.md §18 (e)), else exp(x - log den) with 1e-11 relative for the roundings of log, the
    difference and exp (each within a few ulp of |x - log den| <= 690, or of the result)."""
    lv = x - math.log(den)
    if not lv >= -690.0:
        return 1e-299 if lv == lv else math.inf
    return math.exp(lv) * (1 + 1e-11)


def body_lam(law: Law, gamma: float, n: int, T0: float) -> float:
    """Bennett's optimal lam for the body (§18 (e)): the start of :func:`body_mgf_up`'s search (speed only)."""
    mu_lo, mu_hi = mean_v(law, T0)
    v1 = gamma * (law_moments(law)[2] + max(mu_lo * mu_lo, mu_hi * mu_hi))
    b1 = T0 - gamma * mu_lo
    return math.log1p(b1 * n * gamma * abs(mu_hi) / (n * v1)) / b1 if mu_hi < 0 else 1.0 / max(T0, 1.0)


def body_mgf_up(law: Law, gamma: float, n: int, T0: float, lam0: float, enough: float = 0.0) -> float:
    """Upper value of E[A_+] / (n gamma) by Chernoff with the numerical mgf of V (docs/accountant_tail.md §20 (e)):
    E e^{lam A} <= exp(n gamma expm1(lam mu_hi + log1p H(lam))), the smallest over a golden-section search of lam
    around ``lam0``, stopped once at most ``enough`` (every lam > 0 is valid)."""
    _, mu_hi = mean_v(law, T0)
    ng = n * gamma * (1 - 4 * U)  # (a lower value: the exponent's factor is rounded up separately)
    ng_up = n * gamma * (1 + 4 * U)

    def val(lam: float) -> float:
        if not lam > 0:
            return math.inf
        h = mgf_h_up(law, T0, lam, mu_hi, BODY_CELLS)
        w = float(up(lam * mu_hi + math.log1p(h) * (1 + 4 * U)))
        e = math.expm1(w)
        e = e + 64 * U * abs(e) + 1e-300  # (expm1 within 64 ulp, assumed)
        ex = float(up(ng_up * e)) if e >= 0 else float(up(ng * e))
        if not ex < 700:
            return math.inf
        return exp_quot_up(ex, math.e * lam * ng * (1 - 4 * U)) * (1 + 128 * U) * (1 + 1e-9)

    # golden-section search of log lam in [lam0 / 8, 8 lam0] (the bound is log-convex in lam: speed only)
    return golden_min(lambda x: val(math.exp(x)), math.log(lam0 / 8.0), math.log(lam0 * 8.0), BODY_STEPS,
                      enough=enough)
