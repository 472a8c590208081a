"""Mechanism-independent lower bounds on count-dependent zCDP budgets.

Source: "Better Privacy Guarantees for Larger Groups", Section 6.

Every function bounds v(n) from below for *any* mechanism whose estimate Y satisfies
E_m|Y - m| <= r m at every positive count m and count-dependent group-wise zCDP with a finite
nonincreasing budget v. Budgets are in nats. Lower bounds are returned as computed (they are
not inflated); the many-count bounds (19), (23) are identically 0 for r >= 1/e
(`docs/papers.md` §2.2 item 3).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import erfinv, xlogy

from sharpdp import _validation as V
from sharpdp.histogram.mechanism import validate_counts
from sharpdp.histogram.renyi import gaussian_renyi, released_renyi, renyi_finite

__all__ = [
    "gaussian_renyi",
    "many_count",
    "released_renyi",
    "renyi_finite",
    "small_error_constants",
    "truncated_gaussian_prior",
    "truncnorm_entropy_var",
    "two_count",
    "two_count_limit",
    "uniform_prior",
    "uniform_prior_best_K",
]


def _r(r: Any) -> float:
    return V.real("r", r, lo=0.0, hi=1.0, lo_open=True, hi_open=True)


def _n(n: Any) -> np.ndarray:
    arr = validate_counts("n", n)
    if arr.size and arr.min() < 1:
        raise ValueError(f"n must be >= 1, found {arr.min()}")
    return arr


def _out(arr: np.ndarray, like: Any) -> Any:
    return float(arr.reshape(-1)[0]) if np.ndim(like) == 0 else arr


# ---------------------------------------------------------------- two counts (section 6.1)
def _r_exact(r: Any) -> Fraction:
    """r as an exact rational: a Fraction as given, a float as the decimal it prints as.

    A float is read as its shortest round-tripping decimal (``repr``), i.e. the number the
    caller typed: 0.9 is 9/10, not the binary double 0.9000000000000000222... (whose
    C_r is above 1369 and moves the ceiling of eq. 14 by one).
    """
    if isinstance(r, Fraction):
        if not 0 < r < 1:
            raise ValueError(f"r must be in (0, 1), got {r}")
        return r
    return Fraction(repr(_r(r)))


def _round_down(q: Fraction) -> float:
    """The largest double <= q (directed rounding of an exact rational; q >= 0)."""
    f = float(q)
    if Fraction(f) > q:
        f = math.nextafter(f, -math.inf)
    return f


def two_count(n: Any, r: Any) -> Any:
    """Two-count lower bound, Proposition 6.2, eq. (14) of *Better Privacy Guarantees for Larger Groups*.

    v(n) >= (1 - r)^2 / (2 (ceil(C_r n) - n)^2) with C_r = ((1 + 3r)/(1 - r))^2. The ceiling
    and the bound are evaluated in exact rational arithmetic: with r = a/b,
    C_r n = (b + 3a)^2 n / (b - a)^2 is a ratio of integers, so ceil(C_r n) is exact (in double
    precision C_r at r = 0.9 lands one ulp above 1369 and the ceiling moves by one); the
    exact bound is then rounded down to a double.

    Parameters
    ----------
    n : int or array_like of int
        Counts >= 1.
    r : float or fractions.Fraction
        Relative error, 0 < r < 1. A float is read as the decimal it prints as (0.9 is 9/10);
        pass a ``Fraction`` for any other rational.

    Returns
    -------
    float or numpy.ndarray of float64
        The bound (nats), same shape as ``n``; the largest double not above the exact value.

    Raises
    ------
    ValueError
        r not in (0, 1), or n not integers >= 1.
    """
    q = _r_exact(r)
    arr = _n(n)
    a, b = q.numerator, q.denominator
    num, den = (b + 3 * a) ** 2, (b - a) ** 2  # C_r = num / den
    uniq, inv = np.unique(arr, return_inverse=True)
    vals = []
    for k in uniq.tolist():
        k = int(k)
        gap = -((-num * k) // den) - k  # ceil(C_r k) - k, exact
        vals.append(_round_down(Fraction((b - a) ** 2, 2 * b * b * gap * gap)))
    return _out(np.array(vals, dtype=float)[inv].reshape(arr.shape), n)


def two_count_limit(r: Any) -> float:
    """liminf_n n^2 v(n) >= (1 - r)^6 / (128 r^2 (1 + r)^2), Proposition 6.2, eq. (15).

    Of *Better Privacy Guarantees for Larger Groups*; evaluated exactly and rounded down.

    Parameters
    ----------
    r : float or fractions.Fraction
        0 < r < 1 (a float is read as the decimal it prints as, as in :func:`two_count`).

    Returns
    -------
    float
        The asymptotic constant (nats).
    """
    q = _r_exact(r)
    return _round_down((1 - q) ** 6 / (128 * q * q * (1 + q) ** 2))


# ---------------------------------------------------------------- many counts (section 6.3)
def _many_count_from_stats(n: np.ndarray, r: float, entropy: float, mean_j: float, spread: float) -> np.ndarray:
    """Eq. (19) from H(J), E J and E (J - j_star)^2."""
    num = entropy - np.log(2.0 * math.e * (r * (n + mean_j) + 0.25))
    return np.maximum(num, 0.0) / spread


def many_count(n: Any, r: float, pmf: Any, j_star: int) -> Any:
    """Many-count inequality, Theorem 6.4, eq. (19).

    v(n) >= [H(J) - log(2e (r (n + E J) + 1/4))]_+ / E (J - j_star)^2 for the prior
    P(J = j) = pmf[j], j = 0, 1, ..., len(pmf) - 1.

    Parameters
    ----------
    n : int or array_like of int
        Base counts >= 1.
    r : float
        0 < r < 1.
    pmf : array_like of float, shape (K,)
        Non-negative probabilities summing to 1 (within 1e-9; renormalised).
    j_star : int
        Reference offset >= 0 with E (J - j_star)^2 > 0.

    Returns
    -------
    float or numpy.ndarray of float64
        The bound (nats), same shape as ``n``.

    Raises
    ------
    ValueError
        Bad r, n, pmf (negative, NaN, empty, not summing to 1) or j_star (negative, or J = j_star
        almost surely).
    """
    r = _r(r)
    arr = _n(n)
    p = V.real_array("pmf", pmf, ndim=1, lo=0.0)
    tot = math.fsum(p)
    if abs(tot - 1.0) > 1e-9:
        raise ValueError(f"pmf must sum to 1, got {tot}")
    p = p / tot
    j_star = V.integer("j_star", j_star, lo=0)
    j = np.arange(p.size, dtype=float)
    spread = float(np.dot(p, (j - j_star) ** 2))
    if not spread > 0.0:
        raise ValueError("j_star: E (J - j_star)^2 must be > 0 (J equals j_star almost surely)")
    entropy = float(-np.sum(xlogy(p, p)))
    return _out(_many_count_from_stats(arr, r, entropy, float(np.dot(p, j)), spread), n)


def _uniform_bound(n: float, r: float, K: np.ndarray) -> np.ndarray:
    K = np.asarray(K, dtype=float)
    return _many_count_from_stats(n, r, np.log(K), (K - 1.0) / 2.0, (K * K - 1.0) / 12.0)


def _best_odd_K(n: float, r: float) -> tuple[float, int]:
    """Maximise eq. (23) over odd K >= 3: geometric grid, then every odd K in the best bracket."""
    kmax = min(2.0**53 - 1.0, 1e3 * (n + 10.0) / max(1.0 - math.e * r, 1e-3))  # odd K exact in float64
    grid = np.unique(2 * np.floor(np.geomspace(3.0, kmax, 4000) / 2) + 1)
    vals = _uniform_bound(n, r, grid)
    i = int(np.argmax(vals))
    if vals[i] <= 0.0:
        return 0.0, 3
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    if hi - lo > 4e5:  # huge n: locate the continuous optimum first, then scan odd K around it
        res = minimize_scalar(lambda k: -float(_uniform_bound(n, r, k)), bounds=(lo, hi), method="bounded",
                              options={"xatol": 1.0})
        mid = 2.0 * math.floor(res.x / 2.0) + 1.0
        lo, hi = max(lo, mid - 2000.0), min(hi, mid + 2000.0)
    cand = np.arange(lo, hi + 1.0, 2.0)
    cv = _uniform_bound(n, r, cand)
    k = int(np.argmax(cv))
    return float(cv[k]), int(cand[k])


def uniform_prior(n: Any, r: float, K: int | None = None) -> Any:
    """Uniform-prior many-count bound, Corollary 6.5, eq. (23).

    v(n) >= 12/(K^2 - 1) [log(K / (2e (r (n + (K - 1)/2) + 1/4)))]_+ for odd K >= 3. With
    ``K=None`` the best odd K is searched (geometric grid, then exhaustively inside the best
    bracket; the bound is unimodal in K) among K < 2^53 (so for n beyond ~1e15 the result is
    a valid but possibly suboptimal bound). The bound is 0 for every K when r >= 1/e.

    Parameters
    ----------
    n : int or array_like of int
        Counts >= 1.
    r : float
        0 < r < 1.
    K : int or None
        Odd prior size >= 3, or None to optimise.

    Returns
    -------
    float or numpy.ndarray of float64
        The bound (nats), same shape as ``n``.

    Raises
    ------
    ValueError
        Bad r or n, or K not an odd integer >= 3.
    """
    r = _r(r)
    arr = _n(n)
    if K is not None:
        K = V.integer("K", K, lo=3)
        if K % 2 == 0:
            raise ValueError(f"K must be odd, got {K}")
        return _out(_uniform_bound(arr, r, np.full(arr.shape, float(K))), n)
    out = np.array([_best_odd_K(float(k), r)[0] for k in arr.reshape(-1)]).reshape(arr.shape)
    return _out(out, n)


def uniform_prior_best_K(n: int, r: float) -> int:
    """The odd K >= 3 maximising eq. (23) at count n (3 when the bound is 0 for every K)."""
    return _best_odd_K(float(_n(n).reshape(-1)[0]), _r(r))[1]


# ---------------------------------------------------------------- truncated Gaussian (6.5)
def _kernels():
    from sharpdp._kernels import histogram as K

    return K


def _tg_bound(n: float, r: float, L: float, x: float) -> float:
    K = _kernels()
    S = x * r * n
    H, m1, m2, _ = K.quantised_truncnorm_stats(S, L, K._GL_X, K._GL_W)
    if not m2 > 0.0:
        return 0.0
    B = math.ceil(Fraction(L) * Fraction(S)) + 1  # exact ceiling of the product of the doubles used
    return float(_many_count_from_stats(np.array(n), r, H, B + m1, m2))


def truncnorm_entropy_var(L: float) -> tuple[float, float]:
    """(h_L, tau_L^2): differential entropy (nats) and variance of N(0,1) conditioned on [-L, L].

    Computed by Gauss-Legendre quadrature (Corollary 6.7's h_L and tau_L^2).
    """
    L = V.real("L", L, lo=0.0, lo_open=True)
    K = _kernels()
    h, v = K.truncnorm_entropy_var(L, K._GL_X, K._GL_W)
    return float(h), float(v)


def _tg_limit(r: float, L: float, x: float) -> float:
    """Right side of eq. (30): the n -> infinity limit of r^2 n^2 times the prior's bound."""
    h, tau2 = truncnorm_entropy_var(L)
    return max(math.log(x) + h - math.log(2.0 * math.e) - math.log1p(L * x * r), 0.0) / (x * x * tau2)


def truncated_gaussian_prior(n: Any, r: float, L: float | None = None, x: float | None = None) -> Any:
    """Truncated-Gaussian-prior bound: the construction of Corollary 6.7 at finite n.

    The prior is J = B + Q_S with Q_S = S Z_L rounded to the nearest integer, Z_L a standard
    Gaussian conditioned on [-L, L], S = x r n, B = ceil(L S) + 1 and j_star = B; its entropy
    and moments come from Numba Gauss-Legendre quadrature of the cell masses, and eq. (19)
    (Theorem 6.4) is applied. As n -> infinity, r^2 n^2 times this tends to eq. (30).

    With ``L`` and/or ``x`` None they are optimised numerically for this (n, r) (Nelder-Mead
    on their logs, started from the optimum of eq. (30)); the paper's r -> 0 choice
    x = 2 e^(3/2 - h_L) already gives 0 at r = 0.1 for finite n (`docs/papers.md` §2.2 item 4). Cost grows like
    L x r n per evaluation; during the optimisation, points with L x r n > 2e4 are first
    screened with the large-n limit (30) and points above 5e6 are skipped.

    Parameters
    ----------
    n : int or array_like of int
        Counts >= 1.
    r : float
        0 < r < 1.
    L, x : float or None
        Truncation level > 0 and scale > 0, or None to optimise.

    Returns
    -------
    float or numpy.ndarray of float64
        The bound (nats), same shape as ``n``.
    """
    r = _r(r)
    arr = _n(n)
    if L is not None:
        L = V.real("L", L, lo=0.0, lo_open=True)
    if x is not None:
        x = V.real("x", x, lo=0.0, lo_open=True)
    if L is not None and x is not None and arr.size and L * x * r * arr.max() > 5e7:
        raise ValueError("n: the prior has more than 5e7 cells (L x r n > 5e7); use a smaller n, L or x")
    out = [_tg_optimised(float(k), r, L, x) for k in arr.reshape(-1)]
    return _out(np.array(out).reshape(arr.shape), n)


def _tg_optimised(n: float, r: float, L: float | None, x: float | None) -> float:
    if L is not None and x is not None:
        return _tg_bound(n, r, L, x)

    def unpack(p: np.ndarray) -> tuple[float, float]:
        return (L if L is not None else math.exp(p[0])), (x if x is not None else math.exp(p[-1]))

    def fin(p: np.ndarray) -> float:
        LL, xx = unpack(p)
        if LL > 50.0 or xx > 1e6 or xx * r * n * LL > 5e6:
            return 0.0
        return -_tg_bound(n, r, LL, xx)

    # coarse grid (finite-n bound where cheap, else the large-n limit (30)), then Nelder-Mead
    Ls = [L] if L is not None else [0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0]
    xs = [x] if x is not None else list(np.geomspace(0.2, 50.0, 30))
    best, p_best = -1.0, None
    for LL in Ls:
        for xx in xs:
            cheap = xx * r * n * LL < 2e4
            val = _tg_bound(n, r, LL, xx) if cheap else _tg_limit(r, LL, xx) / (r * n) ** 2
            if val > best:
                best, p_best = val, (LL, xx)
    if best <= 0.0:
        return 0.0
    p0 = np.array(([math.log(p_best[0])] if L is None else []) + ([math.log(p_best[1])] if x is None else []))
    res = minimize(fin, p0, method="Nelder-Mead", options={"xatol": 1e-4, "fatol": 1e-15, "maxfev": 300})
    return max(0.0, -float(res.fun), -fin(p0))


# ---------------------------------------------------------------- Table 2
def small_error_constants() -> dict[str, float]:
    """Table 2 of "Better Privacy Guarantees for Larger Groups": small-r leading coefficients, each from its
    defining optimisation.

    - ``"two_count"`` (lower, = 1/128): max over (a, theta) of 2/a^2 [1 - 1/(a theta (1 - theta))]_+^2
      (section 8, "Why the two-count proof stops at 1/128").
    - ``"uniform_prior"`` (lower, = 3/(2e^3)): max over a of 12/a^2 [log(a/(2e))]_+, the r -> 0
      limit of eq. (24).
    - ``"truncated_gaussian_prior"`` (lower, = pi/(4e^2)): max over (x, L) of
      [log x + h_L - log(2e)]_+ / (x^2 tau_L^2), the r -> 0 limit of eq. (30), with h_L, tau_L^2 by
      quadrature (L searched on [1, 12]; the supremum is the L -> infinity limit).
    - ``"shifted_log_gaussian"`` (upper, = 1/pi): lim_{r -> 0} inf over r0 < r, c > 0 of
      r^2 / (2 sigma^2) (the large-count coefficient of r^2 n^2 v(n), eq. 7), with
      sigma = Phi^-1(1/2 + r0/(2(1 + c))) = sqrt(2) erfinv(r0/(1 + c)); the infimum over
      s = r0/(1 + c) in (0, r) is the limit s -> r (the coefficient decreases in s), and
      r -> 0 is taken by Richardson extrapolation from r = 1e-3, 2e-3.

    Returns
    -------
    dict of str to float
        The four constants (nats), in Table 2's order.
    """
    def two(p: np.ndarray) -> float:
        a, th = math.exp(p[0]), 1.0 / (1.0 + math.exp(-p[1]))
        return -2.0 / a**2 * max(1.0 - 1.0 / (a * th * (1.0 - th)), 0.0) ** 2

    c1 = -minimize(two, np.array([math.log(6.0), 0.3]), method="Nelder-Mead",
                   options={"xatol": 1e-12, "fatol": 1e-18, "maxiter": 4000}).fun

    def uni(u: float) -> float:
        a = math.exp(u)
        return -12.0 / a**2 * max(math.log(a / (2.0 * math.e)), 0.0)

    c2 = -minimize_scalar(uni, bounds=(math.log(2.0 * math.e), 5.0), method="bounded",
                          options={"xatol": 1e-12}).fun

    def tg_x(L: float) -> float:
        h, tau2 = truncnorm_entropy_var(L)

        def f(u: float) -> float:
            return -max(u + h - math.log(2.0 * math.e), 0.0) / (math.exp(2.0 * u) * tau2)

        return minimize_scalar(f, bounds=(math.log(2.0 * math.e) - h, 5.0), method="bounded",
                               options={"xatol": 1e-12}).fun

    c3 = -minimize_scalar(tg_x, bounds=(1.0, 12.0), method="bounded", options={"xatol": 1e-10}).fun

    def upper(r: float) -> float:
        # r^2/(4 erfinv(s)^2) decreases in s = r0/(1 + c), so the infimum over the open set
        # s in (0, r) is its limit at s = r (approached as r0 -> r, c -> 0; not attained)
        return r * r / (4.0 * erfinv(r) ** 2)

    r = 1e-3
    c4 = (4.0 * upper(r) - upper(2.0 * r)) / 3.0
    return {"two_count": float(c1), "uniform_prior": float(c2), "truncated_gaussian_prior": float(c3),
            "shifted_log_gaussian": float(c4)}
