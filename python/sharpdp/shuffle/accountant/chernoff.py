"""Chernoff bounds on n-fold sums of certified lattice laws, and the clamped Chernoff cap
(docs/accountant.md §6.3, docs/accountant_tail.md §4-§6); the far-tail treatment's Chernoff terms
(:func:`body_chernoff`, :func:`lower_tail_penalty`).

:class:`Chernoff` bounds tails and excesses of the sum of the EXACT lattice law whose computed pmf
and error bounds are given; :func:`clamped_chernoff_cap` is the driver's cheap certified upper
value for laws far below the value floor.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.special import erfcx

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.fft import kernels
from sharpdp.shuffle.accountant.golden import golden_min
from sharpdp.shuffle.accountant.lattice import LatticeLaws, choose_B, choose_T, lattice_laws
from sharpdp.shuffle.accountant.limits import CAP_NODES, TINY, U
from sharpdp.shuffle.accountant.results import Coarsen, Grid, LawBracket
from sharpdp.shuffle.laws import Law


def capped_exp(x: float) -> float:
    """e^x, +inf from x >= 709 (no OverflowError)."""
    return math.exp(x) if x < 709 else math.inf


def log_mgf_up(gp: np.ndarray, k0: int, h: float, lam: float, margin: float) -> float:
    """An upper bound on log sum_k gp_k e^{lam (k0 + k) h} for gp >= 0 already rounded up (``margin`` >= (K + 8) 4u:
    the kernel's own rounding of K terms; :class:`Chernoff`'s)."""
    L = kernels().log_mgf(gp, k0, h, lam)[0]
    return L + margin + 1e-12 * abs(L)


def log_newton_t(lam: float, d1: float, d2: float, q0: float, excess: bool) -> float:
    """The next t = log lam of Newton's method in t on log P(lam) - log Q(lam) = 0, the root of F'(lam) = P - Q written with
    P = nn side Lambda'(side lam) (increasing in lam) and Q = side b [+ 1/lam for an excess], where both are positive:
    P = d1 + Q, P' = d2 [- 1/lam^2], Q' = [-1/lam^2]. Where P grows exponentially or faster (a heavy law's tilted
    mean), Newton's step on F' itself creeps by about the growth's scale per step; on the logarithms it does not
    (docs/accountant_tail.md §62.1). NaN where P or Q is not positive. Plain floats: it only chooses the next lam of
    :meth:`Chernoff.search_lam`."""
    q, dq = (q0 + 1.0 / lam, -1.0 / (lam * lam)) if excess else (q0, 0.0)
    p = d1 + q
    dp = d2 + dq
    if not (p > 0.0 and q > 0.0 and lam > 0.0):
        return math.nan
    slope = dp / p - dq / q
    if not (slope > 0.0 and math.isfinite(slope)):
        return math.nan
    return math.log(lam) - (math.log(p) - math.log(q)) / (lam * slope)  # (Newton in t = log lam)


class Chernoff:
    """Chernoff bounds for the nn-fold sum S of the EXACT lattice law whose computed pmf is g with
    absolute error bounds eta: log E e^{lam X} <= log sum_k (g_k + eta_k) e^{lam x_k}."""

    def __init__(self, g: np.ndarray, eta: np.ndarray, k0: int, h: float, nn: int) -> None:
        self.C = kernels()
        # an upper pmf: (g + eta) rounded up; log_mgf's own rounding (K terms) is covered by the margin
        self.gp = (g + eta) * (1 + 4 * U)
        self.k0, self.h, self.nn = k0, h, float(nn)
        self.margin = (g.size + 8) * 4 * U
        _, mu, var = self.C.log_mgf(g, k0, h, 0.0)
        self.scale = 1.0 / (math.sqrt(max(nn * var, h * h)))
        self._lg: np.ndarray | None = None  # (log pmf, nodes) of the upper pmf's support, for _approx
        self._x: np.ndarray | None = None
        self._steer: dict[float, tuple[float, float, float]] = {}  # _approx by lam
        self._buf: tuple[np.ndarray, np.ndarray] = (np.empty(0), np.empty(0))  # _approx's work arrays
        # the bounds by (kind, b): a function of the object's law and b alone, so a repeated question (the jump term's
        # excess above its window, asked again by the hat body, docs/accountant_tail.md §45.4) gets the same float
        self._vals: dict[tuple[str, float], float] = {}

    def log_mgf(self, lam: float) -> float:
        return log_mgf_up(self.gp, self.k0, self.h, lam, self.margin)

    def _approx(self, lam: float) -> tuple[float, float, float]:
        """(Lambda, Lambda', Lambda'') of the upper pmf at lam in plain floats (no error bound): it only steers
        the choice of lam in :meth:`_search`; the value returned there is :meth:`log_mgf`'s."""
        r = self._steer.get(lam)  # (the searches of one side start from the same bracket ends and midpoint)
        if r is not None:
            return r
        if self._lg is None or self._x is None:
            k = np.nonzero(self.gp > 0)[0]
            self._lg, self._x = np.log(self.gp[k]), (self.k0 + k).astype(float) * self.h
            self._buf = (np.empty(k.size), np.empty(k.size))
        lg, x = self._lg, self._x
        if lg.size == 0:
            return math.nan, math.nan, math.nan
        # the floating-point operations of lg + lam x, exp(max(z - m, -700)) (no subnormals: slow, and negligible
        # here), e x, e x x, in two reused buffers (fresh temporaries of this size cost several times the arithmetic)
        z, w = self._buf
        np.multiply(x, lam, out=z)
        np.add(lg, z, out=z)
        m = float(z.max())
        np.subtract(z, m, out=z)
        np.maximum(z, -700.0, out=z)
        e = np.exp(z, out=z)
        s0 = float(e.sum())
        ex = np.multiply(e, x, out=z)
        m1 = float(ex.sum()) / s0
        r = self._steer[lam] = (m + math.log(s0), m1, max(float(np.multiply(ex, x, out=w).sum()) / s0 - m1 * m1, 0.0))
        return r

    def _search(self, b: float, side: int, excess: bool) -> float:
        """min over lam > 0 of F(lam) = -side lam b + nn Lambda(side lam) [- 1 - log lam when ``excess``], a convex
        function of lam: safeguarded Newton on F' in t = log lam over the bracket of :meth:`_min` (the same range
        of lam), steered by :meth:`_approx` (:meth:`search_lam`), then F at the lam found by the certified
        :meth:`log_mgf`. Every lam > 0 gives a valid bound (Chernoff, Markov with e^{lam x}/(e lam) >= x_+): the search
        only chooses a good one. NaN when the plain-float steering fails (NaN, empty law): :meth:`_min` then runs."""
        lam = self.search_lam(b, side, excess, self.nn)
        if math.isnan(lam):
            return math.nan
        val = -lam * b + self.nn * self.log_mgf(lam) if side > 0 else lam * b + self.nn * self.log_mgf(-lam)
        if excess:
            val += -1.0 - math.log(lam)
        return val

    def search_lam(self, b: float, side: int, excess: bool, nn: float) -> float:
        """The lam > 0 of :meth:`_search`'s Newton steering for ``nn`` summands (plain floats: it only chooses where a
        certified bound is evaluated); NaN where the steering fails."""
        t_lo, t_hi = math.log(self.scale) - 25.0, math.log(self.scale) + 12.0

        def deriv(t):  # (F'(lam), F''(lam)) at lam = e^t
            lam = math.exp(t)
            _, m1, var = self._approx(side * lam)
            d1 = -side * b + nn * side * m1
            d2 = nn * var
            if excess:
                d1, d2 = d1 - 1.0 / lam, d2 + 1.0 / (lam * lam)
            return d1, d2

        d_lo, _ = deriv(t_lo)
        if not math.isfinite(d_lo):
            return math.nan
        if d_lo >= 0.0:
            t = t_lo  # F non-decreasing on the bracket: its left end
        else:
            d_hi, _ = deriv(t_hi)
            if not math.isfinite(d_hi):
                return math.nan
            if d_hi <= 0.0:
                t = t_hi  # F non-increasing on the bracket: its right end
            else:
                lo, hi = t_lo, t_hi
                t = 0.5 * (lo + hi)
                log_ok, from_log = limits.CHERNOFF_LOG_STEP, False
                for _ in range(60):
                    d1, d2 = deriv(t)
                    if not math.isfinite(d1):
                        return math.nan
                    if d1 < 0.0:
                        lo = t
                    else:
                        hi = t
                    # Newton in t: dF/dt = lam F', d2F/dt2 = lam F' + lam^2 F''
                    lam = math.exp(t)
                    g1, g2 = lam * d1, lam * d1 + lam * lam * d2
                    tn = t - g1 / g2 if g2 > 0 else 0.5 * (lo + hi)
                    if from_log and d1 < 0.0:
                        log_ok = False  # the logarithms' step crossed the root: Newton's steps from here on
                    from_log = False
                    if log_ok and d1 > 0.0:  # (from above the root only: docs/accountant_tail.md §62.1)
                        te = log_newton_t(lam, d1, d2, side * b, excess)
                        if lo < te < hi:
                            tn, from_log = te, True
                    if not lo < tn < hi:
                        tn = 0.5 * (lo + hi)
                    if abs(tn - t) <= 1e-3 or hi - lo <= 2e-3:
                        t = tn
                        break
                    t = tn
        return math.exp(t)

    def _min(self, f: Callable[[float], float], sign: str) -> float:
        """min over lam > 0 of f(lam) (convex in lam): golden section on log lam (the fallback of :meth:`_search`)."""
        a, b = math.log(self.scale) - 25.0, math.log(self.scale) + 12.0
        best = golden_min(lambda x: f(math.exp(x)), a, b, 70, tol=0.02, left_on_tie=False)
        return min(best, 0.0 if sign == "p" else math.inf)

    def _kept(self, kind: str, b: float, fn: Callable[[], float]) -> float:
        """``fn()``, computed once per (kind, b) (the same float on a repeated question)."""
        if not limits.CHERNOFF_KEEP:
            return fn()
        key = (kind, float(b))
        v = self._vals.get(key)
        if v is None:
            v = self._vals[key] = fn()
        return v

    def log_p_above(self, b: float) -> float:
        """log of an upper bound on P(S >= b) (<= 0)."""
        def fn() -> float:
            v = self._search(b, +1, False)
            if math.isnan(v):
                return self._min(lambda lam: -lam * b + self.nn * self.log_mgf(lam), "p")
            return min(v, 0.0)
        return self._kept("above", b, fn)

    def log_p_below(self, a: float) -> float:
        """log of an upper bound on P(S <= a) (<= 0)."""
        def fn() -> float:
            v = self._search(a, -1, False)
            if math.isnan(v):
                return self._min(lambda lam: lam * a + self.nn * self.log_mgf(-lam), "p")
            return min(v, 0.0)
        return self._kept("below", a, fn)

    def log_excess(self, b: float) -> float:
        """log of an upper bound on E[(S - b)_+]  ((x)_+ <= e^{lam x} / (e lam))."""
        def fn() -> float:
            v = self._search(b, +1, True)
            if math.isnan(v):
                return self._min(lambda lam: -lam * b + self.nn * self.log_mgf(lam) - 1.0 - math.log(lam), "e")
            return v
        return self._kept("excess", b, fn)


def saddle_excess_estimate(g: np.ndarray, k0: int, h: float, nn: int, b: float = 0.0) -> float:
    """An ESTIMATE (no error bound; it only steers choices of speed) of E[(S - b)_+], S the nn-fold sum of the
    lattice law with pmf ``g`` on the nodes (k0 + k) h: the saddle point of the tilted normal approximation
    (docs/accountant_tail.md §34.1). With K(lam) = nn log E e^{lam X} and lam the root of K'(lam) = b (Newton),
    E[(S - b)_+] = e^{K(lam) - lam b} E_lam[(S - b)_+ e^{-lam (S - b)}], and S - b normal with variance
    s^2 = K''(lam) under the tilt gives s (1/sqrt(2 pi) - u e^{u^2/2} P(Z > u)), u = lam s (exact for a normal
    sum; the normal approximation at lam = 0). NaN where the root is not found (an empty or one-point law)."""
    C = kernels()
    lam = 0.0
    for _ in range(40):
        _, m1, var = C.log_mgf(g, k0, h, lam)
        if not (var > 0.0 and math.isfinite(m1)):
            return math.nan
        step = (b / nn - m1) / var
        lam += step
        if abs(step) * math.sqrt(nn * var) <= 1e-6:
            break
    else:
        return math.nan
    L, _, var = C.log_mgf(g, k0, h, lam)
    s = math.sqrt(nn * var)
    u = lam * s
    f = 1.0 / math.sqrt(2.0 * math.pi) - u * 0.5 * float(erfcx(u / math.sqrt(2.0)))
    return capped_exp(nn * L - lam * b) * s * max(f, 0.0)


def clamped_chernoff_cap(law: Law, gamma: float, n: int, thr: float) -> LawBracket | None:
    """The clamped Chernoff cap (docs/accountant.md §6.3): a certified upper value of D_up from one
    coarse hat lattice law (with lower value 0), its clamp T set for a term 1e-3 ``thr``; None where it
    is not tried (the one-jump estimate is not below ``thr``, or the law is not of the far-tail module).

    With clamps T, B (multiples of a power-of-two step h), A = sum_i clamp(G_i, -B, T) and
    J = sum_i (G_i - T)_+: S <= A + J, so E[S_+] <= E[A_+] + n gamma tau(T); E[A_+] <= E[Â_+]
    (the hat law, larger in the increasing convex order) <= e^{n M(lam)} / (e lam) for every
    lam > 0 (x_+ <= e^{lam x - 1} / lam), M the log-mgf of the hat law's upper pmf. The same
    bound as the far-tail body's Chernoff value (docs/accountant_tail.md §6) plus its jump mean.
    With a rounding bound err on the law's values (docs/accountant.md §3.2.2) and the lattice positions'
    c_pos (§3.2.1) the true sum is at most S~ + n (err + c_pos), so E[A_+] is taken there.
    Only for the continuous laws of the far-tail module; a speed shortcut: None sends the law to the
    usual path."""
    if n < 2 or not law.continuous:
        return None
    err = law.value_error  # the true values are within err of the stored ones: S <= S~ + n err
    sd, mean = law.std(), law.mean()
    lo_s, hi_s = law.support()
    if not (0.0 < sd < math.inf and math.isfinite(mean)) or mean >= 0.0:
        return None
    # screen: the one-jump value tau(|m|), m = (n - 1) gamma E[L], estimates delta (it is ~ n x Jensen's
    # lower value, docs/accountant_edges.md section 3): no test where it is not below the threshold
    if law.stop_loss([-(n - 1) * gamma * mean])[1][0] >= thr:
        return None
    T = choose_T(law, 1e-3 * thr)  # (a clamp term well below the threshold: the value stays near the truth)
    B = max(-lo_s, 0.0) if math.isfinite(lo_s) else choose_B(law, 0.01 * max(-mean, sd))
    if not (math.isfinite(T) and math.isfinite(B)) or T <= 0.0:
        return None
    h = 2.0 ** math.ceil(math.log2(max(sd / 4.0, (T + B) / CAP_NODES, 1e-300)))
    T, B = math.ceil(T / h) * h, max(math.ceil(B / h), 1) * h  # exact multiples: every node k h is exact
    lat = lattice_laws(law, gamma, h, T, B, lower=False)
    if isinstance(lat, Coarsen):
        return None
    ch = Chernoff(lat.g, lat.eta, lat.k0, h, n)
    # per-user shift: the value error and the lattice positions' c_pos (docs/accountant.md §3.2.1; 0 here, the
    # nodes being exact multiples of a power of two, but charged anyway)
    shift = math.nextafter(n * (err + 4.0 * U * (T + B + h)) * (1 + 1e-12), math.inf)
    body = capped_exp(ch.log_excess(-shift)) / (n * gamma) * (1 + 1e-9)
    jump = float(law.stop_loss([T])[1][0]) if math.isinf(hi_s) or hi_s > T else 0.0
    up = (body + jump) * (1 + 1e-9)
    return LawBracket(0.0, max(up, TINY), grid=Grid(h=h, N=0, T=T, B=B),
                      terms={"note": "clamped Chernoff cap", "chernoff_body": body,
                             "tail_T": jump})


def lower_tail_penalty(law: Law, gamma: float, n: int, T0: float, B: float, ch_hat) -> float:
    """Upper bound on tau_low(B) P(S_B^{(n-1)} > B), the lower value's price of the lower clamp -B
    of the far-tail treatment (docs/accountant_tail.md §5): S_B^{(n-1)} = A'_B + J' and
    P(A'_B + J' > B) <= P(A'_B > B/2) + (n-1) gamma P(L > T0 + B/4) + ((n-1) gamma P(L > T0))^3 / 6.
    ``ch_hat``: Chernoff bounds of the (n-1)-fold hat law (its mgf dominates that of A'_B)."""
    tl = law.tail_lower(B)
    if tl <= 0.0:
        return 0.0
    p = gamma * float(law.prob_above_up([T0])[0])
    q = (capped_exp(ch_hat.log_p_above(0.5 * B)) + (n - 1) * gamma * float(law.prob_above_up([T0 + 0.25 * B])[0])
         + ((n - 1) * p) ** 3 / 6.0)
    return tl * min(q, 1.0) * (1 + 1e-9)


def body_chernoff(lat: LatticeLaws, h: float, n: int, gamma: float) -> float:
    """The far-tail treatment's upper value of its body E[A_+]/(n gamma) by Chernoff (x_+ <= e^{lam x}/(e lam)) on
    the hat law ``lat`` of step ``h`` (docs/accountant_tail.md §6)."""
    return capped_exp(Chernoff(lat.g, lat.eta, lat.k0, h, n).log_excess(0.0)) / (n * gamma) * (1 + 1e-9)


__all__ = ["Chernoff", "body_chernoff", "capped_exp", "clamped_chernoff_cap", "log_mgf_up", "lower_tail_penalty",
           "saddle_excess_estimate"]
