"""The three-cap measure of a coplanar configuration, and PrivUnit's a-posteriori-checked replace-one variance.

Used by :meth:`sharpdp.shuffle.PrivUnit.replace_up_configuration` (d >= 3) behind the switch
``limits.PRIVUNIT_COPLANAR_CHECKED``; the method and its accuracy: ``docs/worst_case_pairs.md`` §6.1-§6.3.

Why a second rule. :func:`sharpdp.shuffle.sphere.three_cap_measure` conditions on T = <U, v1> and cuts its
t-integral where the two conditional caps touch (the roots of a quadratic). When v1, v2, v3 are coplanar
(psi in {0, pi}) that quadratic has a double root, which rounding turns into a complex pair; the cut is dropped,
the integrand keeps a kink inside a piece and the rule converges like n^-2 only (1.3e-4 relative at the default
nodes for PrivUnit(0.6, -0.3, 3)'s search point, docs/worst_case_pairs.md §6.1). Here the coplanar measure is
computed by conditioning on the radius r = |P U| of U's projection onto the plane instead: for fixed r the three
caps cut the circle of radius r in three arcs of the same half-width arccos(theta / r), whose intersection is
exact interval arithmetic, and the r-integrand is smooth between radii known in closed form.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle import sphere as S

__all__ = ["checked_replace_variance", "coplanar_kink_radii", "coplanar_three_cap_measure"]


def coplanar_kink_radii(theta: float, centres) -> list[float]:
    """Radii r in (|theta|, 1) where two of the arcs {phi : r cos(phi - c_j) >= theta} (equal half-widths
    w(r) = arccos(theta / r)) get a common end point: 2 w = D or 2 w = 2 pi - D, D the angle between two centres;
    between these radii the arc-intersection length is an analytic function of r (docs/worst_case_pairs.md §6.2)."""
    out = []
    c = list(centres)
    for i in range(len(c)):
        for j in range(i + 1, len(c)):
            dd = abs(c[i] - c[j]) % (2.0 * math.pi)
            dd = min(dd, 2.0 * math.pi - dd)
            for w2 in (0.5 * dd, math.pi - 0.5 * dd):  # the half-widths w with 2w = D, 2w = 2 pi - D
                cw = math.cos(w2)
                if cw != 0.0 and theta / cw > abs(theta) and theta / cw < 1.0:
                    out.append(theta / cw)
    return out


def coplanar_three_cap_measure(k: int, theta: float, alpha: float, beta: float, psi: float,
                               nodes: int | None = None) -> float:
    """mu(C(v1) ∩ C(v2) ∩ C(v3)) on S^{k-1}, k >= 3, for a coplanar configuration (psi = 0 or pi exactly).

    Same configuration and caps as :func:`sharpdp.shuffle.sphere.three_cap_measure`; here v3 = (cos beta,
    +-sin beta, 0, ...). With r = |P U| (P the projection onto span(e1, e2)), r^2 ~ Beta(1, (k - 2)/2), i.e.
    density (k - 2) r (1 - r^2)^{(k-4)/2} on (0, 1), and given r the angle of P U is uniform, so

        mu = P(r <= -theta) [theta < 0] + integral_{|theta|}^1 f(r) g(theta / r) dr,

    g(c) the normalised length of the intersection of three arcs of half-width arccos(c) centred at 0, alpha,
    +-beta (:func:`~sharpdp.shuffle.sphere.three_cap_measure` at k = 2: exact interval arithmetic). The integral
    is split at |theta|, at :func:`coplanar_kink_radii` and (k >= 36) at 1/sqrt(k) ... 8/sqrt(k), and each piece
    integrated with the cosine-substituted Gauss-Legendre rule (``nodes`` per piece, default 24 + sqrt(k)), which
    absorbs the end-point square roots (of arccos at r = |theta|, of the density at r = 1 for k = 3).

    Returns
    -------
    float
        The measure in [0, 1]; accuracy an a-posteriori estimate (docs/worst_case_pairs.md §6.2: against the
        doubled rule, Monte Carlo and mpmath quadrature in the tests).

    Raises
    ------
    ValueError
        k < 3, or psi not 0 / pi (sin psi != 0).
    """
    if k < 3:
        raise ValueError(f"coplanar_three_cap_measure needs k >= 3, got {k}")
    if math.sin(psi) != 0.0 and abs(math.sin(psi)) > 1e-12:
        raise ValueError(f"psi must be 0 or pi (a coplanar configuration), got {psi}")
    b3 = beta if math.cos(psi) > 0 else -beta
    psi3 = 0.0 if math.cos(psi) > 0 else math.pi

    def g(c):  # the arc intersection on the circle (k = 2), arcs of half-width arccos(c)
        return S.three_cap_measure(2, min(1.0, max(-1.0, c)), alpha, beta, psi3)

    if theta == 0.0:  # every arc is a half circle, for every r > 0
        return g(0.0)
    n = S._cap_nodes(k, nodes)
    a = abs(theta)
    cuts = coplanar_kink_radii(theta, (0.0, alpha, b3))
    if k >= 36:
        cuts += [m / math.sqrt(k) for m in (1.0, 2.0, 3.0, 4.0, 6.0, 8.0)]
    edges = np.unique(np.clip(np.array([a, 1.0] + cuts), a, 1.0))
    r, w = S._cos_nodes(edges[:-1], edges[1:], n)
    r, w = r.reshape(-1), w.reshape(-1)
    gr = np.array([g(theta / x) for x in r])
    log_f = math.log(k - 2) + np.log(r) + 0.5 * (k - 4) * np.log1p(-np.minimum(r * r, 1.0 - 2.0**-53))
    val = float(np.sum(w * np.exp(log_f) * gr))
    if theta < 0:  # r <= -theta: the three caps cover the whole circle of radius r
        val += -math.expm1(0.5 * (k - 2) * math.log1p(-theta * theta))
    return min(1.0, max(0.0, val))


def checked_replace_variance(pu, cfg, tol: float = 1e-8, max_doublings: int = 4):
    """V at the configuration ``cfg`` with an a-posteriori check: the rule with n, 2n, 4n, ... nodes per piece
    (n the default) until two successive values agree to ``tol`` relative; returns V (float) at the last rule.

    An estimate of the quadrature error, not a bound (the search it serves is uncertified,
    docs/worst_case_pairs.md §6.3). Raises RuntimeError if ``max_doublings`` doublings do not agree.
    """
    n0 = S._cap_nodes(pu.dim, None)
    prev = pu.replace_up_variance(*cfg)
    for j in range(1, max_doublings + 1):
        cur = pu.replace_up_variance(*cfg, nodes=n0 << j)
        if abs(cur - prev) <= tol * abs(cur):
            return cur
        prev = cur
    raise RuntimeError(f"PrivUnit replace-one variance at {cfg} (dim={pu.dim}, theta={pu.theta}): the cap quadrature "
                       f"did not settle to {tol:g} relative within {max_doublings} doublings of its nodes "
                       f"(last two: {prev!r}); docs/worst_case_pairs.md §6.3")
