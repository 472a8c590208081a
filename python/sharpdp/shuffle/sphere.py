"""Sphere geometry: measures of spherical caps and of their intersections on S^{k-1}.

Used by :class:`sharpdp.shuffle.PrivUnit` (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
Definition A.5 and Appendix A.4; replace-one chi_up, Definition 2.5 (Section 2.4)).
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp import _validation as V
from sharpdp._quadrature import gauss_legendre
from sharpdp.shuffle.accountant import limits

__all__ = ["cap_quantities", "canonical_angles", "sphere_tail", "three_cap_measure", "two_cap_measure"]


def cap_quantities(theta: float, d: int) -> tuple[float, float, float]:
    """(q, s = 1 - q, alpha) for T = <U, v>, U uniform on S^{d-1}.

    Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Appendix A.4.

    (T + 1)/2 ~ Beta((d-1)/2, (d-1)/2) for d >= 2; E[T; T >= theta] =
    (1 - theta^2)^{(d-1)/2} / ((d-1) B(1/2, (d-1)/2)). For d = 1 (S^0) T = +-1: q = 1/2, alpha = 1.
    """
    if d == 1:
        return 0.5, 0.5, 1.0
    from scipy.special import betainc, betaln

    a = 0.5 * (d - 1)
    q = float(betainc(a, a, 0.5 * (1.0 + theta)))
    s = float(betainc(a, a, 0.5 * (1.0 - theta)))
    if not (q > 0.0 and s > 0.0):  # a cap below the double range: nothing downstream is finite
        raise ValueError(f"theta={theta} leaves a cap of measure 0 (below the double range) in dim={d}")
    log_num = a * math.log1p(-theta * theta) - math.log(d - 1) - float(betaln(0.5, a))
    return q, s, math.exp(log_num) / s


def canonical_angles(alpha: float, beta: float, psi: float) -> tuple[float, float, float]:
    """Any angles -> the same configuration's (alpha, beta, psi) in [0, pi]^3 (same Gram matrix).

    Uses atan2 throughout, so angles near 0 and pi keep full precision (coplanar stays coplanar).
    """
    s2 = math.sin(alpha)
    x1, x2 = math.sin(beta) * math.cos(psi), math.sin(beta) * math.sin(psi)
    a = math.atan2(abs(s2), math.cos(alpha))
    b = math.atan2(math.hypot(x1, x2), math.cos(beta))
    y, z = s2 * x1, abs(s2 * x2)
    return a, b, (math.atan2(z, y) if (y or z) else 0.0)


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
    x, wx = gauss_legendre(n)
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
    Used by PrivUnit's replace-one chi_up (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
    Definition 2.5 (Section 2.4)).

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
    the cosine-substituted Gauss-Legendre rule. Used by PrivUnit's replace-one chi_up
    (*Shuffling-Aware Optimization for Private Vector Mean Estimation*, Definition 2.5 (Section 2.4)).

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
    if limits.SPHERE44_KINK_CUT and abs(math.sin(psi)) <= max(limits.SPHERE45_KINK_BAND, 1e-12):
        cuts += coplanar_kink(theta, ca, sa, cb, sb, cp)
    edges = np.unique(np.clip(np.array([theta, 1.0] + cuts), theta, 1.0))
    t, w = _cos_nodes(edges[:-1], edges[1:], nodes)
    t, w = t.reshape(-1), w.reshape(-1)
    st = np.sqrt(np.maximum(1.0 - t * t, 1e-300))
    a2 = (theta - t * ca) / (st * sa)
    a3 = (theta - t * cb) / (st * sb)
    inner = two_cap_measure(k - 1, a2, a3, cp, nodes)
    return float(np.sum(w * _sphere_density(k, t) * inner))


def coplanar_kink(theta: float, ca: float, sa: float, cb: float, sb: float, cp: float) -> list[float]:
    """The kink t* of :func:`three_cap_measure`'s t-integrand at coplanar configurations (cos psi = cp = +-1, both
    sines > 0): where the two conditional caps' thresholds a2(t) = (theta - t ca) / (sqrt(1 - t^2) sa) and a3(t) meet,
    a2 + a3 = 0 at psi = pi (antipodal inner caps) or a2 = a3 at psi = 0: t* = theta (sb + s sa) / (ca sb + s cb sa),
    s = -cp. The touching quadratic is minus a square there (its double root t*), which ``np.roots`` returns as a
    complex pair and the cut was lost (docs/worst_case_pairs.md §6.1; the exact cut, docs/accountant_tail.md §67.4).
    [] where the denominator vanishes (no kink: a2 = a3 identically at psi = 0, alpha = beta) or t* is not finite."""
    s = -1.0 if cp > 0 else 1.0
    den = ca * sb + s * cb * sa
    if den == 0.0:
        return []
    t = theta * (sb + s * sa) / den
    return [t] if math.isfinite(t) else []


def _circle_three(theta: float, a2: float, a3: float) -> float:
    """Normalised length of the intersection of three arcs of half-width arccos(theta) centred at
    angles 0, a2, a3 on the circle (exact interval arithmetic)."""
    r = math.acos(theta)
    segs = [(-r, r)]
    for c in (a2, a3):
        arcs = [(c + m - r, c + m + r) for m in (-2 * np.pi, 0.0, 2 * np.pi)]
        segs = [(max(x0, y0), min(x1, y1)) for x0, x1 in segs for y0, y1 in arcs if min(x1, y1) > max(x0, y0)]
    return sum(x1 - x0 for x0, x1 in segs) / (2 * np.pi)
