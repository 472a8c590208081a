"""Certified 1-D quadrature: grids, log-linear interpolation bounds and two-point atoms.

Used by the certified mode of :class:`sharpdp.shuffle.GeneralRandomizer` (seed 001, Section 2:
the laws of the privacy-amplification variable from output densities with a declared bound on
the curvature of their logarithm).
"""

from __future__ import annotations

import numpy as np

from sharpdp.shuffle.tables import merge_atoms

__all__ = ["CERT_FP", "certified_grid", "certified_interval_integrals", "certified_log_error",
           "certified_pair_variance", "certified_two_point_atoms", "log_curvature_violation"]

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
