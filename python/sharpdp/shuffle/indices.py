"""Shuffle indices and the asymptotic profile template (seed 001, Section 2.3 and Section 3).

Two kinds of objects live here:

* the public **asymptotic** helpers :func:`asymptotic_delta` (the template f_{n,eps}(chi) of
  the seed's Lemma "Privacy profile bounds") and :func:`mse_lower_bound` (d chi_up^2, the
  HCR-type bound of the seed's Theorem "hcr-chiup-lower-bound"). Neither is a certified privacy
  figure: the certified delta(eps) comes from :class:`sharpdp.shuffle.ShuffleAccountant`.
* shared machinery for randomizers whose output space is finite or has been reduced to a finite
  table of "output classes": the variance functionals that define chi_lo / chi_up and the atoms of
  the privacy-amplification variable l_eps(Y), Y ~ R_BG.

A *table* describes a randomizer through representative inputs: ``R[i, c]`` is the probability
(or density) of one output symbol of class ``c`` under input ``i``; ``w[c]`` is the number (or
quadrature weight / measure) of symbols in class ``c``, so that ``sum_c w[c] R[i, c] = 1``.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp import _validation as V

_ADJACENCIES = ("zero_out", "replace")


def check_adjacency(adjacency: str) -> str:
    """Validate the neighbouring relation name ("zero_out" or "replace")."""
    if adjacency not in _ADJACENCIES:
        raise ValueError(f"adjacency must be one of {_ADJACENCIES}, got {adjacency!r}")
    return adjacency


# --------------------------------------------------------------------------- asymptotic helpers
def _scalar_or_array(out: np.ndarray, *inputs):
    """A float when every input was a scalar, else the array."""
    if all(np.ndim(x) == 0 for x in inputs):
        return float(out.reshape(-1)[0])
    return out


def asymptotic_delta(n, epsilon, chi):
    """Asymptotic template f_{n,eps}(chi) of the shuffled privacy profile (an **estimate**, not a bound).

    Seed 001, Lemma "Privacy profile bounds" (Section 2.3)::

        f_{n,eps}(chi) = exp(-chi^2 eps^2 n / 2) / (sqrt(2 pi) chi^3 eps^2 n^(3/2)).

    The true profile delta(eps_n) lies between f(chi_up)(1 + o(1)) and f(chi_lo)(1 + o(1)) only
    **asymptotically** (eps_n = omega(n^-1/2), O(sqrt(log n / n))). At finite n the template can
    be far off in either direction (spec fft_accountant.md Section 6: 15-30 % above the finite-a
    form at practical delta, and for heavy-tailed l below the true value). Never use it as a
    privacy guarantee; use the certified accountant.

    Parameters
    ----------
    n : float or array_like
        Number of users, >= 1 (broadcast).
    epsilon : float or array_like
        Privacy parameter in nats, > 0.
    chi : float or array_like
        Shuffle index, > 0 (dimensionless).

    Returns
    -------
    float or numpy.ndarray
        The template value (float64; a float for scalar inputs). Computed in log space, so it
        underflows gracefully to 0.0 instead of producing NaN.

    Raises
    ------
    ValueError
        If any argument is NaN, infinite or out of range.
    """
    n_a = V.real_array("n", n, lo=1.0)
    e_a = V.real_array("epsilon", epsilon, lo=0.0)
    c_a = V.real_array("chi", chi, lo=0.0)
    if np.any(e_a == 0.0):
        raise ValueError("epsilon must be > 0")
    if np.any(c_a == 0.0):
        raise ValueError("chi must be > 0")
    n_b, e_b, c_b = np.broadcast_arrays(n_a, e_a, c_a)
    log_f = (-0.5 * (c_b * e_b) ** 2 * n_b - 0.5 * np.log(2 * np.pi) - 3 * np.log(c_b)
             - 2 * np.log(e_b) - 1.5 * np.log(n_b))
    return _scalar_or_array(np.exp(log_f), n, epsilon, chi)


def mse_lower_bound(chi_up, dim):
    """HCR-type lower bound d * chi_up^2 on the single-user error (seed 001, Theorem "hcr-chiup-lower-bound").

    For one user, every unbiased estimator x_hat of a randomizer with upper shuffle index chi_up
    has worst-case squared error Err_1 >= d chi_up^2. For the n-user shuffled protocol the value
    d chi^2 / n is the minimax MSE only **asymptotically** (seed Theorem "Gaussian Limit
    Correspondence", sigma-high privacy regime): read ``mse_lower_bound(chi, d) / n`` as an
    asymptotic estimate of the best achievable n-user MSE, not as a finite-n guarantee.

    Parameters
    ----------
    chi_up : float or array_like
        Upper shuffle index, >= 0 (dimensionless).
    dim : int
        Dimension d >= 1.

    Returns
    -------
    float or numpy.ndarray
        d chi_up^2, in squared data units (sum over the d coordinates).
    """
    c = V.real_array("chi_up", chi_up, lo=0.0)
    d = V.integer("dim", dim, lo=1)
    return _scalar_or_array(d * c**2, chi_up)


def gaussian_chua_variance(sigma0: float) -> float:
    """V(sigma0^2) = e^{4a} - 2 e^{2a} + e^{a}, a = 1/sigma0^2 (seed 001, Appendix "gaussian", eq. var-ell0-gauss).

    The variance of l_0(Y; e, 0, R_{-e}) for the Gaussian randomizer N(x, sigma0^2 I). Written
    as e^a (expm1(3a) - 2 expm1(a)) to avoid cancellation for large sigma0.
    """
    s = V.real("sigma0", sigma0, lo=0.0, lo_open=True)
    a = 1.0 / (s * s)
    return math.exp(a) * (math.expm1(3 * a) - 2 * math.expm1(a))


def gaussian_chi_chua(sigma0: float) -> float:
    """chi_chua of the Gaussian local randomizer N(x, sigma0^2 I_d) (seed 001, Section 4.3 / Appendix "gaussian").

    chi_chua = 1 / sqrt(V(sigma0^2)), V = e^{4/s^2} - 2 e^{2/s^2} + e^{1/s^2}; its series is
    chi_chua^2 = s^2 - 9/2 + (145/12)/s^2 - 27/s^4 + O(s^-6). Dimensionless, independent of d.
    chi_chua bounds the profile only under the (open) conjecture 3.2 of Chua et al. 2024, so it
    is an index for comparison, never a certified figure. (To be attached to
    ``GaussianRandomizer.chi_chua`` by the owner of mechanisms.py.)
    """
    return 1.0 / math.sqrt(gaussian_chua_variance(sigma0))


def bmg_chi_up(gamma: float, sigma0: float) -> float:
    """Upper shuffle index of the blanket-mixed Gaussian BMG(gamma, sigma0), zero-out (seed 001, Section 2.3).

    With R_⊥ = R_BG = N(0, s^2 I) = R_0, chi_up^-2 = sup over x1, x in the unit ball of
    (1 - gamma)^2 * integral (phi_x1 - phi_0)^2 / (gamma phi_0 + (1 - gamma) phi_x). The integrand
    depends on y only through span{x1, x}; this function evaluates the colinear extreme
    configurations x1 = e, x = -e and x = e by 1-D adaptive quadrature (scipy.integrate.quad,
    relative tolerance 1e-10) and returns the smaller index. That these configurations are the
    worst case is checked numerically on grids in the tests (not proven). gamma = 0 gives
    chi_chua (:func:`gaussian_chi_chua`). Dimensionless, independent of d. Also
    available as ``BlanketMixedGaussian.chi_up``.
    """
    g = V.real("gamma", gamma, lo=0.0, hi=1.0, hi_open=True)
    s = V.real("sigma0", sigma0, lo=0.0, lo_open=True)
    return 1.0 / math.sqrt(max(_bmg_up_variance(g, s, 1.0, x) for x in (-1.0, 1.0)))


def _bmg_up_variance(g: float, s: float, x1: float, x: float) -> float:
    """(1-g)^2 ∫ (phi(y-x1) - phi(y))^2 / (g phi(y) + (1-g) phi(y-x)) dy, phi = N(0, s^2) density (1-D)."""
    from scipy import integrate

    def f(y):
        # divide through by phi(y) in log space: (e^{u1} - 1)^2 phi(y) / (g + (1-g) e^{u})
        u1 = (2 * y * x1 - x1 * x1) / (2 * s * s)
        u = (2 * y * x - x * x) / (2 * s * s)
        if u1 == 0.0:
            return 0.0
        log_num = 2 * (u1 + math.log1p(-math.exp(-u1)) if u1 > 30 else math.log(abs(math.expm1(u1))))
        log_den = u if g == 0.0 else float(np.logaddexp(math.log(g), math.log1p(-g) + u))
        log_phi = -0.5 * (y / s) ** 2 - math.log(s * math.sqrt(2 * math.pi))
        return math.exp(log_num + log_phi - log_den)

    lim = 40 * s + 10  # the integrand is dominated by a N(2 x1 - x, s^2)-shaped bump
    val, _ = integrate.quad(f, -lim, lim, points=sorted({0.0, x1, x}), limit=500, epsabs=0, epsrel=1e-10)
    return (1 - g) ** 2 * val


# --------------------------------------------------------------------------- finite tables
def table_pairs(n_inputs: int, adjacency: str, bottom: int | None) -> list[tuple[int, int]]:
    """Neighbouring (x1, x1') row pairs of a table, both orders.

    ``bottom`` is the row index of the blanket / ⊥ row (zero-out), or None.
    """
    check_adjacency(adjacency)
    if adjacency == "zero_out":
        if bottom is None:
            raise ValueError("zero_out adjacency needs a blanket row for the symbol ⊥")
        return [p for i in range(n_inputs) for p in ((i, bottom), (bottom, i))]
    return [(i, j) for i in range(n_inputs) for j in range(n_inputs) if i != j]


def _pair_variance(ra: np.ndarray, rb: np.ndarray, ref: np.ndarray, w: np.ndarray) -> float:
    """sum_c w_c (ra - rb)^2 / ref = Var_{ref}[(R_a - R_b) / R_ref] when both are ≪ ref."""
    diff = ra - rb
    nz = diff != 0.0
    if np.any(ref[nz] <= 0.0):
        return math.inf  # not absolutely continuous: the index is 0
    return float(np.sum(w[nz] * diff[nz] ** 2 / ref[nz]))


def table_chi_lo(R: np.ndarray, w: np.ndarray, bg: np.ndarray, gamma: float,
                 pairs: list[tuple[int, int]]) -> float:
    """chi_lo = 1 / sup_pairs sqrt(Var_BG[l_0] / gamma) (seed 001, Definition "Shuffle index");
    inf when every pair has identical outputs (no pair is informative)."""
    var = max(_pair_variance(R[a], R[b], bg, w) for a, b in pairs)
    return 0.0 if math.isinf(var) else (math.sqrt(gamma / var) if var > 0 else math.inf)


def table_chi_up(R: np.ndarray, w: np.ndarray, pairs: list[tuple[int, int]], refs) -> float:
    """chi_up = 1 / sup_pairs sup_refs sqrt(Var_{R_x}[l_0(.; x1, x1', R_x)]) (seed 001, Definition "Shuffle index");
    inf when every pair has identical outputs."""
    var = max(_pair_variance(R[a], R[b], R[x], w) for a, b in pairs for x in refs)
    return 0.0 if math.isinf(var) else (1.0 / math.sqrt(var) if var > 0 else math.inf)


def merge_atoms(values: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted atoms with equal values merged and zero-probability atoms dropped."""
    keep = probs > 0.0
    v, p = values[keep], probs[keep]
    uv, inv = np.unique(v, return_inverse=True)
    return uv, np.bincount(inv, weights=p, minlength=uv.size)


def table_pav_atoms(ra: np.ndarray, rb: np.ndarray, bg: np.ndarray, w: np.ndarray,
                    epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Atoms of L = l_eps(Y) = (R_a(Y) - e^eps R_b(Y)) / R_BG(Y), Y ~ R_BG, on a finite table.

    Returns (values, probs), float64 arrays sorted by value. Raises ValueError when R_a or R_b
    is not absolutely continuous w.r.t. the blanket (spec Section 8, pitfall 4).
    """
    pos = bg > 0.0
    if np.any((ra[~pos] > 0.0) | (rb[~pos] > 0.0)):
        raise ValueError("the blanket does not dominate the output distributions (R_x not << R_BG)")
    vals = (ra[pos] - math.exp(epsilon) * rb[pos]) / bg[pos]
    return merge_atoms(vals, w[pos] * bg[pos])


def unique_laws(triples):
    """Drop (gamma, values, probs) triples identical to an earlier one (symmetric pairs)."""
    out = []
    for g, v, p in triples:
        if not any(g == g2 and np.array_equal(v, v2) and np.array_equal(p, p2) for g2, v2, p2 in out):
            out.append((g, v, p))
    return out


def finite_laws(atoms: list[tuple[float, np.ndarray, np.ndarray]]):
    """Wrap (gamma, values, probs) triples as ``(gamma, FiniteLaw)`` pairs for the accountant."""
    try:
        from sharpdp.shuffle._laws import FiniteLaw
    except ImportError as exc:  # pragma: no cover - only before the accountant is merged
        raise RuntimeError("privacy_amplification_laws needs sharpdp.shuffle._laws (the accountant)") from exc
    return [(g, FiniteLaw(v, p)) for g, v, p in atoms]


# --------------------------------------------------------------------------- hiding among the clones
def clones_delta(epsilon0: float, n: int, epsilon: float) -> float:
    """Numerical "hiding among the clones" bound on delta(eps) for any eps0-LDP randomizer, replace-one.

    Feldman, McMillan & Talwar (FOCS 2021, Theorem 3.1): the shuffled outputs on neighbouring
    datasets are post-processings of P and Q, with C ~ Bin(n - 1, e^-eps0), A ~ Bin(C, 1/2),
    P = (A + D, C - A + 1 - D), D ~ Bern(e^eps0 / (e^eps0 + 1)), and Q the same with
    D ~ Bern(1 / (e^eps0 + 1)). This returns D_{e^eps}(P || Q), a certified upper bound on the
    shuffled mechanism's delta(eps) under replace-one adjacency. Given C = c, P/Q increases in
    the first coordinate, so the positive part is a binomial tail (closed form); values of c
    outside a window around the mean are not summed but bounded by their probability (added).

    Parameters
    ----------
    epsilon0 : float
        Local privacy parameter in nats, > 0.
    n : int
        Number of users, >= 1.
    epsilon : float
        eps >= 0 in nats.

    Returns
    -------
    float
        Upper bound on delta(eps), in [0, 1]; exactly 0 for eps >= eps0.
    """
    from scipy.stats import binom

    e0 = V.real("epsilon0", epsilon0, lo=0.0, lo_open=True)
    nn = V.integer("n", n, lo=1)
    eps = V.real("epsilon", epsilon, lo=0.0)
    p = 1.0 / (1.0 + math.exp(-e0))  # e^eps0 / (e^eps0 + 1)
    ee = math.exp(eps)
    a_hi = p - ee * (1 - p)  # coefficient of P(A >= t - 1)
    if a_hi <= 0.0:
        return 0.0
    a_lo = (1 - p) - ee * p  # coefficient of P(A >= t), negative
    r_star = (ee * p - (1 - p)) / a_hi
    pc = math.exp(-e0)
    m, sd = (nn - 1) * pc, math.sqrt((nn - 1) * pc * (1 - pc))
    c_lo, c_hi = max(0, int(m - 13 * sd - 30)), min(nn - 1, int(m + 13 * sd + 30))
    c = np.arange(c_lo, c_hi + 1, dtype=np.float64)
    t = np.floor(r_star * (c + 1) / (1 + r_star)) + 1  # smallest a' with P > e^eps Q
    s_tm1 = binom.sf(t - 2, c, 0.5)  # P(A >= t - 1)
    s_t = binom.sf(t - 1, c, 0.5)  # P(A >= t)
    per_c = np.clip(a_hi * s_tm1 + a_lo * s_t, 0.0, 1.0)
    w = binom.pmf(c, nn - 1, pc)
    tail = (binom.cdf(c_lo - 1, nn - 1, pc) if c_lo > 0 else 0.0) + binom.sf(c_hi, nn - 1, pc)
    val = float(np.dot(w, per_c)) + tail
    return float(min(1.0, val * (1 + 1e-12) + 1e-300 + 4e-16 * c.size * float(w.max())))


def clones_epsilon(epsilon0: float, n: int, delta: float) -> float:
    """Smallest eps (safe end of a bisection bracket, relative width 1e-5) with clones_delta <= delta.

    Certified upper bound on the shuffled eps(delta) of any eps0-LDP randomizer, replace-one
    (Feldman, McMillan & Talwar 2021); never above eps0, exactly 0.0 if delta is met at 0.
    """
    e0 = V.real("epsilon0", epsilon0, lo=0.0, lo_open=True)
    d = V.probability_open("delta", delta)
    if clones_delta(e0, n, 0.0) <= d:
        return 0.0
    lo, hi = 0.0, e0
    while hi - lo > 1e-5 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if clones_delta(e0, n, mid) <= d else (mid, hi)
    return hi


def smallest_certified_delta(randomizer, n: int, epsilon: float, adjacency: str = "replace", *,
                             rel_tol: float = 1e-2) -> tuple[float, str]:
    """The smaller of two certified upper bounds on delta(eps), and which one it is.

    ``"blanket"``: :class:`sharpdp.shuffle.ShuffleAccountant` (spec fft_accountant.md);
    ``"clones"``: :func:`clones_delta` (Feldman, McMillan & Talwar 2021), used only for
    replace-one adjacency and randomizers with a pure-LDP level ``local_epsilon``. Both are valid
    upper bounds, so their minimum is one.

    Returns
    -------
    (float, str)
        delta upper bound in [0, 1] and its source, "blanket" or "clones".
    """
    from sharpdp.shuffle.accountant import ShuffleAccountant

    check_adjacency(adjacency)
    blanket = float(ShuffleAccountant(randomizer, n, adjacency=adjacency, rel_tol=rel_tol).get_delta(epsilon))
    eps0 = getattr(randomizer, "local_epsilon", None)
    if adjacency == "replace" and eps0 is not None:
        clones = clones_delta(eps0, n, epsilon)
        if clones < blanket:
            return clones, "clones"
    return blanket, "blanket"


# --------------------------------------------------------------------------- certified 1-D quadrature
# Relative margin covering floating-point rounding in the bounds below and in the user's density
# evaluations (assumed accurate to ~1e-13 relative). The one-ulp nudge of the points at piece
# ends is not covered by it: see certified_grid.
CERT_FP = 1e-11


def certified_grid(knots: np.ndarray, counts) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Uniform points on each piece [knots[i], knots[i+1]] (counts[i] intervals).

    Returns (points, left, length, shift): all points (a piece's two end points nudged one ulp
    inside, so one-sided limits are what a density with a jump at a knot returns), the index
    in ``points`` of each interval's left end (its right end is ``left + 1``), each interval's
    true length, and the total distance by which its two end points were nudged (0 inside a
    piece; float64 arrays of shape (sum(counts),)). See :func:`certified_log_error`.
    """
    pts, left, length, shift, off = [], [], [], [], 0
    for a, b, c in zip(knots[:-1], knots[1:], counts):
        p = np.linspace(a, b, int(c) + 1)
        length.append(np.diff(p))
        p[0], p[-1] = np.nextafter(a, b), np.nextafter(b, a)
        s = np.zeros(int(c))
        s[0] += p[0] - a  # exact: neighbouring floats
        s[-1] += b - p[-1]
        shift.append(s)
        pts.append(p)
        left.append(off + np.arange(int(c)))
        off += int(c) + 1
    return np.concatenate(pts), np.concatenate(left), np.concatenate(length), np.concatenate(shift)


def certified_log_error(G: np.ndarray, points: np.ndarray, left: np.ndarray, length: np.ndarray,
                        shift: np.ndarray, bound: float) -> np.ndarray:
    """Per interval, a bound kappa on |g - m| over the interval, for every row g of ``G``.

    m is the linear function over the true interval [a, a + h] taking the computed end values
    (at the possibly nudged points) at a and a + h; ``|g''| <= bound`` is assumed. The
    interpolation error is <= bound h^2 / 8; a nudge by u at an end moves m by at most
    |g'| u there, with |g'| <= |secant slope| + bound h on the interval (mean value theorem),
    and the extrapolation over the sliver adds <= bound h u. We take
    ``bound h^2 / 8 + 2 u (|d| / h' + bound h) + CERT_FP`` (d: computed end-value difference,
    h': distance of the evaluated points; the factor 2 covers rounding), maximised over rows.
    """
    kap = bound * length**2 / 8 + CERT_FP
    ends = shift > 0
    if np.any(ends):
        k = left[ends]
        slope = np.abs(G[:, k + 1] - G[:, k]).max(axis=0) / (points[k + 1] - points[k])
        kap[ends] += 2.0 * shift[ends] * (slope + bound * length[ends])
    return kap


def log_curvature_violation(G: np.ndarray, points: np.ndarray, left: np.ndarray, bound: float):
    """First (row, y, value) where a second divided difference of a row of ``G`` exceeds ``bound``.

    ``2 G[x0, x1, x2] = G''(xi)`` for some xi in [x0, x2] (mean value theorem), so a difference
    above the bound (beyond rounding) refutes ``|G''| <= bound``. Returns None if none does.
    """
    j = np.nonzero(left[1:] == left[:-1] + 1)[0]
    if j.size == 0:
        return None
    k = left[j]
    x0, x1, x2 = points[k], points[k + 1], points[k + 2]
    g0, g1, g2 = G[:, k], G[:, k + 1], G[:, k + 2]
    dd = 2.0 * ((g2 - g1) / (x2 - x1) - (g1 - g0) / (x1 - x0)) / (x2 - x0)
    scale = np.maximum(np.maximum(np.abs(g0), np.abs(g1)), np.abs(g2)) + 1.0
    tol = 1e-9 * bound + 64.0 * np.finfo(float).eps * scale / np.minimum(x1 - x0, x2 - x1) ** 2
    bad = np.abs(dd) > bound + tol
    if not np.any(bad):
        return None
    r, c = np.argwhere(bad)[0]
    return int(r), float(x1[c]), float(dd[r, c])


def certified_interval_integrals(T: np.ndarray, G: np.ndarray, left: np.ndarray,
                                 length: np.ndarray) -> np.ndarray:
    """∫ exp(linear interpolant of G) over each interval, per row: length * logmean(T_left, T_right).

    With ``|G''| <= K`` on an interval of length h, ``|G - interpolant| <= K h^2 / 8`` there, so
    the true integral of ``exp(G)`` is within the factor ``exp(±K h^2 / 8)`` of this value.
    """
    d = G[:, left + 1] - G[:, left]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(d == 0.0, 1.0, np.expm1(d) / np.where(d == 0.0, 1.0, d))
    return length * T[:, left] * ratio


def certified_two_point_atoms(lo_c, hi_c, p_lo, p_hi, m_hi, outside: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Atoms of a law that dominates the true law of L in the increasing convex order.

    Per cell c the true law of L = l(Y) 1{Y in S}, Y ~ R_BG, puts mass P_c in [p_lo, p_hi] on
    values in [lo_c, hi_c] with first moment M_c <= m_hi, and the rest, 1 - sum P_c <= ``outside``
    (the blanket mass outside the support S), at 0. The result keeps mass p_lo per cell on
    {lo_c, hi_c} with first moment >= the largest possible moment of a p_lo-part of the cell (a
    mean-preserving spread, then a shift up: both increase E[(sum of iid L)_+]), and puts the
    unassigned mass 1 - sum p_lo greedily on the largest candidate values, each up to its
    capacity: hi_c up to the slack p_hi - p_lo, and 0 up to ``outside`` (the stochastically
    largest way to place it); any rest (rounding) goes to the largest candidate. The probabilities
    sum to 1 (up to rounding).
    """
    lo_c, hi_c, p_lo, p_hi, m_hi = (np.asarray(a, float) for a in (lo_c, hi_c, p_lo, p_hi, m_hi))
    # largest first moment of a p_lo-sized part of the cell: p_lo * M_c / P_c
    m1 = np.where(m_hi >= 0.0, m_hi, m_hi * p_lo / p_hi)
    m1 = np.minimum(np.maximum(m1, lo_c * p_lo), hi_c * p_lo)
    width = hi_c - lo_c
    on_hi = np.where(width > 0, (m1 - lo_c * p_lo) / np.where(width > 0, width, 1.0), p_lo)
    on_hi = np.clip(on_hi, 0.0, p_lo)
    rest = 1.0 - float(np.sum(p_lo))
    cand = np.append(hi_c, 0.0)
    order = np.argsort(-cand, kind="stable")
    slack = np.append(np.maximum(p_hi - p_lo, 0.0), max(float(outside), 0.0))[order]
    before = np.cumsum(slack) - slack
    extra = np.clip(rest - before, 0.0, slack)
    left_over = max(rest - float(np.sum(extra)), 0.0)
    values = np.concatenate([lo_c, hi_c, cand[order], [cand.max()]])
    probs = np.concatenate([p_lo - on_hi, on_hi, extra, [left_over]])
    return merge_atoms(values, probs)


def certified_pair_variance(ra, rb, p_lo, p_hi) -> tuple[float, float]:
    """Enclosure of ∫ R_ref (r_a - r_b)^2 from per-cell ranges ra = (lo, hi), rb = (lo, hi) of
    r = R/R_ref and bounds [p_lo, p_hi] on the cell masses of R_ref."""
    dlo, dhi = ra[0] - rb[1], ra[1] - rb[0]
    sq_hi = np.maximum(dlo * dlo, dhi * dhi)
    sq_lo = np.where(dlo > 0, dlo * dlo, np.where(dhi < 0, dhi * dhi, 0.0))
    return float(np.sum(p_lo * sq_lo)) * (1 - 1e-9), float(np.sum(p_hi * sq_hi)) * (1 + 1e-9)


# --------------------------------------------------------------------------- spherical caps
# Measures of caps {u : <u, v> >= a} and of intersections of two or three caps under the uniform
# law mu on S^{k-1}. Used by PrivUnit's replace-one chi_up. All integrals are over pieces on which
# the integrand is smooth up to half-integer powers at the piece ends; the substitution
# s = mid - half cos(phi) turns those into analytic functions of phi, so Gauss-Legendre in phi
# converges fast. Extra cuts at +-6/sqrt(k) follow the bulk of the density for large k, and the
# log map of _cos_nodes handles a cap centre lying near another cap's boundary. Accuracy (an
# a-posteriori estimate, tests/test_shuffle_privunit_replace.py): against the tripled rule the
# relative error is below 1e-7 (largest seen 1.2e-8, median 1e-14) over random configurations
# with k = 3 ... 1000.


def _cap_nodes(k: int, nodes: int | None) -> int:
    """Default nodes per piece: 24 + sqrt(k) (the densities narrow like 1/sqrt(k))."""
    return nodes if nodes is not None else 24 + int(math.sqrt(k))


def _bulk_cuts(k: int) -> list[float]:
    """Extra cuts at t = +-6/sqrt(k) for k >= 36: the density of <U, e> lives in |t| < 6/sqrt(k)."""
    return [-6.0 / math.sqrt(k), 6.0 / math.sqrt(k)] if k >= 36 else []


def sphere_tail(k: int, z):
    """P(<U, e> >= z) for U uniform on S^{k-1} (k >= 1), vectorised in z (float64 array out).

    k = 1: U = +-1. k >= 2: (1 - T)/2 ~ Beta((k-1)/2, (k-1)/2), so the tail is I_{(1-z)/2}.
    Returns float64 of z's shape, values in [0, 1]. Raises ValueError for k < 1.
    """
    k = V.integer("k", k, lo=1)
    from scipy.special import betainc

    z = np.asarray(z, dtype=np.float64)
    if k == 1:
        return np.where(z <= -1.0, 1.0, np.where(z <= 1.0, 0.5, 0.0))
    a = 0.5 * (k - 1)
    return betainc(a, a, 0.5 * (1.0 - np.clip(z, -1.0, 1.0)))


def _sphere_density(k: int, t):
    """Density of T = <U, e> on (-1, 1), U uniform on S^{k-1}, k >= 2."""
    from scipy.special import betaln

    log_c = -float(betaln(0.5, 0.5 * (k - 1)))
    return np.exp(log_c + 0.5 * (k - 3) * np.log1p(-np.minimum(t * t, 1.0 - 2.0**-52)))


def _cos_nodes(lo, hi, n: int):
    """Nodes and weights of the cosine-substituted Gauss-Legendre rule on [lo, hi] (broadcast).

    Pieces ending just below 1 (1 - hi < hi - lo) are mapped through tau = log(1 - s) first: a
    cap centre near another cap's boundary puts a boundary layer just beyond such a piece (at
    s -> 1, of width ~ the distance to the boundary squared), a smooth O(1) feature in tau. Returns (s, w)
    with a trailing axis of length n; a piece with hi <= lo gets zero weights.
    """
    x, wx = np.polynomial.legendre.leggauss(n)
    phi = 0.5 * np.pi * (x + 1.0)
    lo = np.asarray(lo, dtype=np.float64)[..., None]
    hi = np.asarray(hi, dtype=np.float64)[..., None]
    half = 0.5 * np.maximum(hi - lo, 0.0)
    s = 0.5 * (lo + hi) - half * np.cos(phi)
    w = 0.5 * np.pi * wx * half * np.sin(phi)
    inner = (hi < 1.0) & (1.0 - hi < hi - lo)  # s = 1 within one piece length beyond the end
    with np.errstate(divide="ignore", invalid="ignore"):
        t_lo, t_hi = np.log1p(-lo), np.log1p(-np.minimum(hi, 1.0 - 2.0**-53))
        t_half = 0.5 * (t_lo - t_hi)
        tau = 0.5 * (t_lo + t_hi) + t_half * np.cos(phi)  # tau from t_lo (s = lo) down to t_hi
        e = np.exp(tau)
        w_log = 0.5 * np.pi * wx * t_half * np.sin(phi) * e
    return np.where(inner, 1.0 - e, s), np.where(inner, w_log, w)


def _circle_overlap(r1, r2, delta):
    """Normalised length of the intersection of two arcs of half-widths r1, r2 in [0, pi] whose
    centres are delta in [0, pi] apart on the circle (vectorised)."""
    r1, r2, delta = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (r1, r2, delta)))
    tot = np.zeros(r1.shape)
    for shift in (-2 * np.pi, 0.0, 2 * np.pi):  # the second arc's copies around the circle
        c = delta + shift
        tot += np.maximum(0.0, np.minimum(r1, c + r2) - np.maximum(-r1, c - r2))
    return np.minimum(tot, 2 * np.minimum(r1, r2)) / (2 * np.pi)


def two_cap_measure(k: int, a, b, rho: float, nodes: int | None = None):
    """mu({<U, e1> >= a} ∩ {<U, e2> >= b}) for U uniform on S^{k-1}, <e1, e2> = rho.

    Vectorised in the thresholds ``a`` and ``b`` (any reals; |a| >= 1 etc. handled exactly);
    ``rho`` is a scalar in [-1, 1]. k = 1, 2 and |rho| = 1 are closed forms; k >= 3 conditions on
    T = <U, e1>: the integral of f_k(t) P(<W, w> >= (b - rho t) / sqrt((1 - rho^2)(1 - t^2))) over
    t >= a, W uniform on S^{k-2}, split where the cap boundaries touch (t = cos(arccos b -+ arccos rho)).
    Used by PrivUnit's replace-one chi_up (seed 001, Definition "Shuffle index", Section 2.3).

    Parameters
    ----------
    k : int
        Sphere dimension + 1 (the ambient dimension d of PrivUnit), k >= 1.
    a, b : float or array_like of float
        Cap thresholds (inner products), broadcast together.
    rho : float
        Cosine of the angle between the two cap centres, in [-1, 1] (clipped).
    nodes : int, optional
        Gauss-Legendre nodes per piece (default from k).

    Returns
    -------
    numpy.ndarray of float64, the broadcast shape of (a, b)
        Measures in [0, 1]; relative quadrature error about 1e-7 or below (a-posteriori estimate).

    Raises
    ------
    ValueError
        k < 1, NaN arguments, or k = 1 with |rho| < 1.
    """
    k = V.integer("k", k, lo=1)
    rho = V.real("rho", rho)
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    nodes = _cap_nodes(k, nodes)
    rho = float(min(1.0, max(-1.0, rho)))
    if rho >= 1.0:
        return sphere_tail(k, np.maximum(a, b))
    if rho <= -1.0:
        return np.maximum(0.0, sphere_tail(k, a) - sphere_tail(k, -b))
    if k == 1:
        raise ValueError("two distinct non-antipodal directions need k >= 2")
    if k == 2:
        ra = np.arccos(np.clip(a, -1.0, 1.0))
        rb = np.arccos(np.clip(b, -1.0, 1.0))
        out = _circle_overlap(ra, rb, math.acos(rho))
        return np.where((a > 1.0) | (b > 1.0), 0.0, out)
    # condition on the pole lying farther from the other cap's boundary (|b - rho| the larger):
    # a pole near that boundary puts a thin boundary layer at t -> 1 into the integrand
    swap = np.abs(a - rho) > np.abs(b - rho)
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    lo = np.clip(a, -1.0, 1.0)
    bc = np.clip(b, -1.0, 1.0)
    root = math.sqrt(1.0 - rho * rho) * np.sqrt(1.0 - bc * bc)
    cuts = [rho * bc - root, rho * bc + root] + [np.full(lo.shape, c) for c in _bulk_cuts(k)]
    cuts = np.clip(np.stack(cuts, axis=-1), lo[..., None], 1.0)
    edges = np.concatenate([lo[..., None], np.sort(cuts, axis=-1), np.ones(lo.shape + (1,))], axis=-1)
    s, w = _cos_nodes(edges[..., :-1], edges[..., 1:], nodes)  # shape (..., pieces, n)
    den = math.sqrt(1.0 - rho * rho) * np.sqrt(np.maximum(1.0 - s * s, 1e-300))
    z = (b[..., None, None] - rho * s) / den
    val = np.sum(w * _sphere_density(k, s) * sphere_tail(k - 1, z), axis=(-2, -1))
    val = np.where(b >= 1.0, 0.0, np.where(b <= -1.0, sphere_tail(k, a), val))
    return np.where(a >= 1.0, 0.0, val)


def three_cap_measure(k: int, theta: float, alpha: float, beta: float, psi: float,
                      nodes: int | None = None) -> float:
    """mu(C(v1) ∩ C(v2) ∩ C(v3)), caps C(v) = {u : <u, v> >= theta} on S^{k-1}, k >= 2.

    The configuration is v1 = e1, v2 = (cos alpha, sin alpha, 0, ...), v3 = (cos beta,
    sin beta cos psi, sin beta sin psi, 0, ...), angles in [0, pi] (any Gram matrix of three unit
    vectors; k = 2 needs psi in {0, pi}). Conditioning on T = <U, v1> = t leaves two caps on the
    sphere S^{k-2} of v1's complement, with thresholds a_j(t) = (theta - t cos)/(sqrt(1 - t^2) sin)
    and inner product cos(psi) (:func:`two_cap_measure`); the t-integral is split where a_j(t) = +-1
    and where the two conditional caps touch (a quadratic in t), and each piece integrated with
    the cosine-substituted Gauss-Legendre rule. Used by PrivUnit's replace-one chi_up (seed 001,
    Section 2.3).

    Returns
    -------
    float
        The measure in [0, 1] (relative quadrature error about 1e-7 or below, an a-posteriori
        estimate).

    Raises
    ------
    ValueError
        k < 2, NaN angles or theta, or k = 2 with psi not in {0, pi}.
    """
    k = V.integer("k", k, lo=2)
    theta, alpha, beta, psi = (V.real(nm, v) for nm, v in
                               (("theta", theta), ("alpha", alpha), ("beta", beta), ("psi", psi)))
    ca, sa, cb, sb = math.cos(alpha), math.sin(alpha), math.cos(beta), math.sin(beta)
    nodes = _cap_nodes(k, nodes)
    cp = math.cos(psi)
    if k == 2:
        if min(abs(math.sin(psi)), 1.0) > 1e-12:
            raise ValueError("on the circle (k = 2) psi must be 0 or pi")
        return _circle_three(theta, alpha, beta if cp > 0 else -beta)
    # v2 or v3 = +-v1 (within 1e-12 rad): two caps, and {theta <= T1 <= -theta} for -v1
    for s_j, c_j, c_other in ((sa, ca, math.cos(beta)), (sb, cb, ca)):
        if abs(s_j) <= 1e-12:
            both = float(two_cap_measure(k, theta, theta, c_other, nodes))
            if c_j > 0:
                return both
            return 0.0 if theta >= 0 else both - float(two_cap_measure(k, -theta, theta, c_other, nodes))
    r1 = math.acos(theta)
    cuts = [math.cos(r1 + alpha), math.cos(r1 - alpha), math.cos(r1 + beta), math.cos(r1 - beta)] + _bulk_cuts(k)
    # touching of the conditional caps: det of the Gram of (w2, w3, point) = 0, times (1 - t^2) sa^2 sb^2
    def touch(t):
        return ((1 - t * t) * sa * sa * sb * sb * (1 - cp * cp) - (theta - t * ca) ** 2 * sb * sb
                - (theta - t * cb) ** 2 * sa * sa + 2 * sa * sb * cp * (theta - t * ca) * (theta - t * cb))
    coef = np.polyfit([-1.0, 0.0, 1.0], [touch(-1.0), touch(0.0), touch(1.0)], 2)
    if np.any(coef != 0):
        cuts += [float(r.real) for r in np.roots(coef) if abs(r.imag) <= 1e-12 * max(1.0, abs(r.real))]
    edges = np.unique(np.clip(np.array([theta, 1.0] + cuts), theta, 1.0))
    t, w = _cos_nodes(edges[:-1], edges[1:], nodes)
    t, w = t.reshape(-1), w.reshape(-1)
    st = np.sqrt(np.maximum(1.0 - t * t, 1e-300))
    a2 = (theta - t * ca) / (st * sa)
    a3 = (theta - t * cb) / (st * sb)
    inner = two_cap_measure(k - 1, a2, a3, cp, nodes)
    return float(np.sum(w * _sphere_density(k, t) * inner))


def _circle_three(theta: float, a2: float, a3: float) -> float:
    """Normalised length of the intersection of three arcs of half-width arccos(theta) centred at
    angles 0, a2, a3 on the circle (exact interval arithmetic)."""
    r = math.acos(theta)
    segs = [(-r, r)]
    for c in (a2, a3):
        arcs = [(c + m - r, c + m + r) for m in (-2 * np.pi, 0.0, 2 * np.pi)]
        segs = [(max(x0, y0), min(x1, y1)) for x0, x1 in segs for y0, y1 in arcs if min(x1, y1) > max(x0, y0)]
    return sum(x1 - x0 for x0, x1 in segs) / (2 * np.pi)
