"""Laws of the blanket-mixed Gaussian and of the Gaussian randomizer (docs/worst_case_pairs.md §2-§4)."""

from __future__ import annotations

import math
from fractions import Fraction

from scipy.special import ndtr

from sharpdp.shuffle.laws.base import U, UnitBoundLaw
from sharpdp.shuffle.laws.finite import SubFinite
from sharpdp.shuffle.laws.lognormal import LognormalLaw, ndtr_rel
from sharpdp.shuffle.laws.sum import SumLaw

_SIGMA0_MIN = 1e-300  # smallest sigma0 the accountant accepts (r = 1/sigma0 <= 1e300)
_G_MIN = 1e-280  # smallest blanket mass of the gamma = 0 law computed in closed form


def _with_error(law, err: float):
    """``law`` with its ``value_error`` set (the builders' rounding of its location, §3.2.2)."""
    law.value_error = float(err)
    return law


def _loc_error(a: float, exact: Fraction, d_exp: float) -> float:
    """Bound on |a - exact location| (docs/accountant.md §3.2.2): the arithmetic after exp measured
    exactly (``exact`` in rational arithmetic on the stored doubles and fl(e^eps)), plus ``d_exp``,
    the propagated error of fl(e^eps); twice their sum."""
    return 2.0 * (abs(float(Fraction(a) - exact)) + d_exp)


def bmg_laws(gamma: float, sigma0: float, epsilon: float, adjacency: str):
    """Laws of l_eps for the BMG (gamma > 0) or the 1-D Gaussian randomizer (gamma = 0).

    Zero-out (the shuffle paper's appendix, and docs/papers.md §1.2): x vs bot and bot vs x with |x| = 1.

    Replace-one, gamma > 0: one law, of the antipodal unit pair x1' = -x1, |x1| = 1::

        L = gamma (1 - e^eps) + (1 - gamma) exp(rZ - r^2/2) - (1 - gamma) e^eps exp(-rZ - r^2/2),

    r = 1/sigma0, Z ~ N(0, 1) (increasing in Z). Proof that this pair attains the supremum of
    D_up over all pairs in the unit ball, in any dimension d >= 1 (our derivation; the papers
    treat zero-out only). With A_x = dN(x, s^2 I)/dN(0, s^2 I) and R_BG = N(0, s^2 I),
    l_eps = gamma (1 - e^eps) + (1 - gamma)(A_x1 - e^eps A_x1').

    1. D_up = E[(sum_i B_i L_i)_+]/(n gamma) is a convex functional of the law of the ratio
       vector (A_x1, A_x1') under N(0, s^2 I) (L is affine in it). If the experiment
       {N(0), N(x1), N(x1')} is a garbling (Markov kernel) of a 3-point experiment {N(0), N(y1),
       N(y1')}, its ratio vector is a conditional expectation of the other's, so by conditional
       Jensen its D_up is not larger.
    2. A Gaussian shift experiment's law depends only on the Gram matrix G of (x1, x1'), and
       G is a garbling of G' whenever G <= G' (Loewner): in R^2, y -> M y + N(0, I - M M^T)
       with M = G^{1/2} G'^{-1/2}, M M^T <= I. A pair with norms a, b <= 1 and inner product
       c has G = [[a^2, c], [c, b^2]] <= [[1, c], [c, 1]] (difference diag(1 - a^2, 1 - b^2)),
       the Gram matrix of a unit pair with the same c (if |c| = 1 then a = b = 1 already).
       Only laws are compared, so the intermediate experiment need not live in R^d (d = 1
       included).
    3. For a unit pair, (U, V) = (<x1, Y>/s, <x1', Y>/s) is standard bivariate normal with
       correlation c and L = kappa + beta (e^{rU} - e^eps e^{rV}) e^{-r^2/2}, beta = 1 - gamma > 0.
       For convex f, f(L) is submodular in (u, v) (an increasing minus an increasing function
       inside a convex one), and bivariate normals with fixed marginals increase in the
       supermodular order with c (Slepian; Tchen 1980; Mueller & Scarsini 2000), so E f(L_c) is
       non-increasing in c: L_c <=_cx L_{-1}. The convex order is preserved by the Bern(gamma)
       mixture and by independent sums, hence D_up(c) <= D_up(-1).
    4. Both orders of the antipodal pair have the same law (Z -> -Z swaps x1 and x1'), so one
       law covers them. Zero-out is the pair (x, 0), G = diag(1, 0) <= I, so the replace value
       is >= the zero-out value (x1' = 0 gives exactly the zero-out law x vs bot).

    Replace-one, gamma = 0 (inf-blanket phi_s(|y| + 1), not a member of the experiment): not
    implemented, see the error message.
    """
    if not sigma0 >= _SIGMA0_MIN:
        raise ValueError(f"sigma0: {sigma0!r} is below the accountant's smallest supported scale {_SIGMA0_MIN!r} "
                         "(1/sigma0 must stay far inside the double range)")
    r = 1.0 / sigma0
    ee = math.exp(epsilon)
    # fl(e^eps) within 4u (F4); exp(0) = 1 exactly (C99 Annex F.9.3.1)
    EE, G, de = Fraction(ee), Fraction(gamma), (0.0 if epsilon == 0.0 else 4.0 * U * ee * (1.0 + 1e-9))
    if adjacency == "replace":
        if gamma > 0:
            a = gamma * (1.0 - ee)
            return [(gamma, _with_error(LognormalLaw(a, 1.0 - gamma, r, b_minus=-(1.0 - gamma) * ee),
                                        _loc_error(a, G * (1 - EE), gamma * de)))]
        raise NotImplementedError(
            "adjacency='replace' is not implemented for GaussianRandomizer (gamma = 0): its blanket is "
            "the pointwise infimum phi_s(|y| + 1) of the outputs, which is not one of the experiment's "
            "measures, so the garbling argument that makes the antipodal pair the worst case for the "
            "blanket-mixed Gaussian does not apply and no worst-case pair is proven (ShuffleAccountant "
            "bounds replace-one through bot instead)")
    if adjacency != "zero_out":
        raise ValueError(f"adjacency must be 'zero_out' or 'replace', got {adjacency!r}")
    if gamma > 0:
        # the shuffle paper's appendix: x vs bot, and (docs/papers.md §1.2) bot vs x; |x| = 1 is the worst case.
        a1, a2 = gamma - ee, 1.0 - ee * gamma
        return [(gamma, _with_error(LognormalLaw(a1, 1.0 - gamma, r), _loc_error(a1, G - EE, de))),
                (gamma, _with_error(LognormalLaw(a2, -ee * (1.0 - gamma), r), _loc_error(a2, 1 - EE * G, gamma * de)))]
    # gamma = 0: blanket = pointwise infimum phi_s(|y| + 1) over the unit ball (dim 1),
    # mass g = 2 Phibar(1/s). For y < 0 the ratio R_1/inf = 1 (atom, mass 1/2); for y > 0 it
    # is exp(2y/s^2) = exp(rZ - r^2/2) with y = -1 + s Z, Z > 1/s, r = 2/s (weight 1/g).
    s = sigma0
    g = 2.0 * float(ndtr(-1.0 / s))
    if g < _G_MIN:
        # blanket mass below 1e-280 (sigma0 < ~0.028): the weight 1/g of the closed forms leaves
        # the double range. Every zero-out law of this family has E[L_+] <= 1 (docs/accountant_edges.md
        # section 2), hence D_up <= 1: the accountant reports the trivial certified bracket [0, 1],
        # within 1e-100 of the exact n = 1 value 1 - O(e^{-0.28/sigma0^2}) for epsilon <= 60.
        return [(1.0, UnitBoundLaw()), (1.0, UnitBoundLaw())]
    r2, zl, wt = 2.0 / s, 1.0 / s, 1.0 / g
    dg = g * float(ndtr_rel(-1.0 / s))  # g's own error (F5)
    a1, a2, Gg = g - ee, 1.0 - ee * g, Fraction(g)
    xb = SumLaw([SubFinite([a1], [0.5], _loc_error(a1, Gg - EE, de + dg)),
                 _with_error(LognormalLaw(-ee, g, r2, zl, wt), 2.0 * de)])
    bx = SumLaw([SubFinite([a2], [0.5], _loc_error(a2, 1 - EE * Gg, (de * g + ee * dg) * (1.0 + 1e-9))),
                 LognormalLaw(1.0, -ee * g, r2, zl, wt)])
    return [(g, xb), (g, bx)]


__all__ = ["bmg_laws"]
