"""Review rev42 (session 42): the Gauss-Legendre error claims of the lognormal cells (cpp/kernels/lognormal_cells.hpp,
docs/accountant.md §2.3) and of g05's §62.2 (``limits.CELLS_TWO_NODE``: the narrowest cells, D (|v*| + r + 1) <= 1/500,
by the 2-point rule, claimed within 4e-18 (mass) and 3.1e-15 (moment) relative, inside kGlRel = 1e-14 + 64 ulp).

Reference: mpmath (40 digits) on the kernel's two integrands over a cell u in [u0, u1] = [u0, D] (u = v - v*, the cell
starting at its anchor where u0 = 0, the usual case): the mass e(u) = exp(-v* u - u^2/2) and the moment
(e^{ru} - 1) e(u) (and (1 - e^{-ru}) e(u), the two-term law's other part), integrated exactly by mpmath.quad, against
the rule with the kernel's nodes and weights (doubles) evaluated in 40 digits (so only the rule's own error is seen).

Finding: Trefethen's Theorem 19.3 (Approximation Theory and Approximation Practice) bounds the (n+1)-point Gauss rule
by (64/15) M rho^(-2n) / (rho^2 - 1); the kernel's comments take rho^(-2m) for the m-point rule (one power of rho^2
short). For the 8-point rule (main) the true errors stay far inside kGlRel (measured <= 7.6e-17 over 1500 random narrow
cells): :func:`test_eight_point_rule_within_kglrel` holds. For the 2-point rule (g05's §62.2) the mass stays within
kGlRel (<= 1.1e-14) but the moment's true relative error is 5e-13 - 1.4e-11 at cells of the rule's boundary (|v*| <= 37,
r in [0.2, 5]), 20-570 times the kGlRel the proof charges for it: :func:`test_two_point_rule_within_kglrel` is the
reproducer (xfail strict while the claim is broken). Measured in units of P times the cell's mass, that error is at
most 3.4e-15 (|v*| <= 37, r <= 40), below the cell's other allowance e_d >= 64 ulp (P + M) (the exponentials' rounding
charge): so the cell's total bound ew is not seen exceeded, but only by borrowing another term's allowance, which the
proof does not do."""

from __future__ import annotations

import numpy as np
import pytest
from mpmath import expm1, mp, mpf, quad
from mpmath import exp as mexp

K_GL_REL = 1e-14 + 64.0 * 2.220446049250313e-16  # (the kernel's kGlRel)
X2 = (0.21132486540518711775, 0.78867513459481288225)  # (the kernel's kGl2X, weights 1/2)
_x8, _w8 = np.polynomial.legendre.leggauss(8)
X8 = tuple(float((x + 1) / 2) for x in _x8)
W8 = tuple(float(w / 2) for w in _w8)


def _rel_errors(vs: float, r: float, u0: float, u1: float, xs, ws) -> list[float]:
    """The rule's relative error on the mass and the two moment integrands over [u0, u1] (40 digits)."""
    mp.dps = 40
    v, rr, a, b = mpf(vs), mpf(r), mpf(u0), mpf(u1)

    def e(u):
        return mexp(-v * u - u * u / 2)

    out = []
    for f in (e, lambda u: expm1(rr * u) * e(u), lambda u: -expm1(-rr * u) * e(u)):
        exact = quad(f, [a, (a + b) / 2, b])
        rule = (b - a) * sum(mpf(w) * f(a + (b - a) * mpf(x)) for x, w in zip(xs, ws))
        out.append(float(abs(rule - exact) / exact))
    return out


CELLS = [(vs, r) for vs in (-37.0, -10.0, -2.0, 0.0, 5.0) for r in (0.2, 1.0, 5.0)]


@pytest.mark.parametrize("vs, r", CELLS)
def test_eight_point_rule_within_kglrel(vs, r):
    """main's 8-point rule at the narrow cells' boundary D (|v*| + r + 1) = 1/4 (u0 = 0 and u0 = D / 3): every
    relative error below kGlRel (measured <= 1e-16)."""
    D = 0.25 / (abs(vs) + r + 1.0)
    for u0 in (0.0, D / 3):
        assert max(_rel_errors(vs, r, u0, D, X8, W8)) <= K_GL_REL


@pytest.mark.xfail(strict=True, reason="g05's docs/accountant_tail.md §62.2: the 2-point rule's moment error is "
                   "5e-13 - 1.4e-11 relative at its cells' boundary (Trefethen's Thm 19.3 read one power of rho^2 "
                   "short), above the kGlRel = 2.4e-14 the proof charges for it")
@pytest.mark.parametrize("vs, r", [(-10.0, 1.0), (0.0, 0.2), (5.0, 5.0)])
def test_two_point_rule_within_kglrel(vs, r):
    """The claim of §62.2: at D (|v*| + r + 1) <= 1/500 the 2-point rule is within kGlRel (mass and moment)."""
    D = (1.0 / 500.0) / (abs(vs) + r + 1.0)
    assert max(_rel_errors(vs, r, 0.0, D, X2, (0.5, 0.5))) <= K_GL_REL
