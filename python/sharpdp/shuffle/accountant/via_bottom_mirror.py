"""A lower value of leg B (bot vs x) of replace-one through bot from leg A's law at the negative epsilon -e2
(docs/accountant.md §9.15): for the blanket-mixed Gaussian family's zero-out pair (the Gaussian randomizer's), with
r = R_x / R_BG the two orders' amplification variables are l^B_e = 1 - e^e r and l^A_e = r - e^e, so
S^B(e) = -e^e S^A(-e) and D_up^B(e) = 1 - e^e (1 - D_up^A(-e)) exactly. The engine's lower value of D_up^A(-e2) (a law
with an unbounded right tail and a bounded left end, the far tail's jump term) then bounds leg B from below where leg
B's own lower value is 0 (the lattice caps at n >= 1e8: docs/accountant_tail.md §11.2, mirrored). Only the lower
value of the reported split moves (raised; its upper value and split are the search's)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.driver import certify
from sharpdp.shuffle.accountant.limits import EPS_CAP, U, VALUE_FLOOR
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.via_bottom_budget import chain
from sharpdp.shuffle.accountant.via_bottom_cliff import Split
from sharpdp.shuffle.laws import bmg_laws, laws_for

#: the law builder whose zero-out pair (x vs bot, bot vs x) is the mirror pair of §9.15 (the randomizer's method that
#: returns ``bmg_laws(self.gamma, self.sigma0, epsilon, adjacency)`` unchanged)
_BMG_METHOD = ("sharpdp.shuffle.randomizers.bmg", "BlanketMixedGaussian.privacy_amplification_laws")


def mirror_law(randomizer: Any, legs: tuple[Any, Any], e2: float) -> tuple[float, Any] | None:
    """(gamma, law) of leg A (x vs bot) at the epsilon -e2, built as the randomizer builds its zero-out laws, where
    §9.15's identity holds for its legs: the Gaussian randomizer (the blanket-mixed Gaussian with gamma = 0, dim 1,
    whose ``privacy_amplification_laws`` is the family's, unchanged) with legs ((0,), (1,)), and 0 <= e2 <= 60. None
    elsewhere (another randomizer, or the family's degenerate pair of unit-bound laws below its smallest blanket
    mass, whose gamma is 1: docs/accountant_edges.md §2)."""
    fn = getattr(type(randomizer), "privacy_amplification_laws", None)
    if fn is None or (getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)) != _BMG_METHOD:
        return None
    if tuple(legs) != ((0,), (1,)) or getattr(randomizer, "gamma", None) != 0.0 or \
            getattr(randomizer, "dim", None) != 1 or not 0.0 <= e2 <= EPS_CAP:
        return None
    try:
        pair = laws_for(randomizer, e2, "zero_out")
        gamma, law = bmg_laws(0.0, float(randomizer.sigma0), -e2, "zero_out")[0]
    except (ValueError, ArithmeticError, NotImplementedError, TypeError):
        return None
    if not (gamma < 1.0 and len(pair) == 2 and pair[1][0] == gamma):
        return None
    return gamma, law


def leg_b_lower(a_neg: float, e2: float) -> float:
    """1 - e^{e2} (1 - a_neg) rounded down (a_neg a lower value of D_up^A(-e2), so the result is one of
    D_up^B(e2), §9.15), floored at 0: the product's factors rounded up by 16 u (one exp within 2 ulp, assumption
    F4, one subtraction, one product), the last subtraction's error and the margin within 4 u absolute."""
    p = math.exp(e2) * (1.0 - a_neg) * (1.0 + 16.0 * U)
    return max((1.0 - p) - 4.0 * U, 0.0)


def raise_lower(vb: Any, rep: AccountantReport, best: Split | None, rel_tol: float) -> AccountantReport:
    """``rep`` (the report of the split ``best``) with leg B's lower value raised by §9.15 where its bracket
    misses rel_tol for want of leg B's lower value (leg B's share of the chain's gap more than half of it), at a
    split below the cap and above the value floor, within the legs' eps_tau, where the mirror can resolve leg B
    (e^{e1 + e2} VIA_BOTTOM_MIRROR_RESOLVE times an estimate of D_up^A(-e2) within half the gap; a choice of steps only): D_up^A(-e2)
    certified at rel_tol (one certification). The upper value and the split stay; the lower value only rises
    (the larger of the two certified lower values of leg B). ``rep`` unchanged elsewhere and with
    ``limits.VIA_BOTTOM_MIRROR`` False."""
    if not limits.VIA_BOTTOM_MIRROR or best is None or rep.terms.get("epsilon_split") != best.e1:
        return rep
    ra, rb = best.leg_a, best.leg_b
    if not (VALUE_FLOOR <= rep.upper < 1.0 and rep.upper == min(best.upper, 1.0) and rep.lower == min(best.lower, 1.0)
            and rep.upper - rep.lower > rel_tol * rep.lower):
        return rep
    raised = _raised(vb, best.e1, rb.epsilon, rb, rel_tol, rep.upper - rep.lower)
    if raised is None:
        return rep
    out = chain(best.f, best.e1, ra, raised)
    terms = dict(rep.terms, leg_b_mirror=out.leg_b.lower)
    return replace(rep, lower=min(max(out.lower, rep.lower), rep.upper), terms=terms)


def _mirror_lower(vb: Any, e2: float, rel_tol: float) -> float | None:
    """The engine's lower value of D_up^A(-e2) (the mirror law of :func:`mirror_law` certified at rel_tol, once per
    (e2, rel_tol) and ViaBottom: §9.17 may ask for it before :func:`raise_lower` does); None where there is no mirror
    law or the engine refuses it."""
    cache = vb.__dict__.setdefault("_mirror_cache", {})
    if (e2, rel_tol) not in cache:
        ml = mirror_law(getattr(vb.bottom, "randomizer", None), vb.legs, e2)
        try:
            cache[(e2, rel_tol)] = None if ml is None else \
                float(certify(ml[1], ml[0], vb.bottom.n, rel_tol, vb.bottom.threads).lower)
        except RuntimeError:
            cache[(e2, rel_tol)] = None
    out: float | None = cache[(e2, rel_tol)]
    return out


def mirror_b(vb: Any, e1: float, e2: float, rb: AccountantReport, rel_tol: float, width: float) -> AccountantReport | None:
    """Leg B ``rb`` (bot vs x at e2, the reported split's e1 + e2 <= eps) with its lower value raised by §9.15's
    mirror, for the budget step of §9.12 (docs/accountant.md §9.17, ``limits.VIA_BOTTOM_MIRROR_BUDGET``): where leg B
    has no lower value of its own (0: the lattice caps at n = 1e8, §9.15), its bracket e^{e1} (B_up - B_lo) exceeds
    half the chain's bracket width ``width`` asked for, e2 <= eps_tau, and the mirror can resolve leg B to it (e^{e1 + e2} VIA_BOTTOM_MIRROR_RESOLVE times the estimate of D_up^A(-e2)
    within half of ``width``: a choice of steps only). The raised lower value is :func:`leg_b_lower` of the mirror law's
    certified lower value (a lower value of D_up^B(e2), Lemma 9.15.1), capped at B_up. None elsewhere (and where
    it does not raise leg B's lower value)."""
    if not (limits.VIA_BOTTOM_MIRROR and limits.VIA_BOTTOM_MIRROR_BUDGET and rb.lower <= 0.0):
        return None  # (leg B with a lower value of its own: a tighter leg B may narrow it, §9.12 as before)
    return _raised(vb, e1, e2, rb, rel_tol, width)


def _raised(vb: Any, e1: float, e2: float, rb: AccountantReport, rel_tol: float, width: float) -> AccountantReport | None:
    """Leg B ``rb`` at e2 with its lower value raised by the mirror (capped at B_up) where e^{e1} (B_up - B_lo) > width /
    2 (leg B's bracket the larger part of the width), e2 <= eps_tau (the leg is then a bracket at e2 itself, §9.1) and
    the mirror resolves leg B to that width (a choice of steps, below), and where it raises it; None elsewhere."""
    w = math.exp(e1)
    if not (width > 0.0 and math.isfinite(w) and rb.upper < 1.0 and w * (rb.upper - rb.lower) > 0.5 * width
            and e2 <= float(getattr(vb.bottom, "eps_tau", math.inf))):
        return None
    # (a choice of steps: the mirror's absolute error on leg B is e^{e2} times its own on D_up^A(-e2), about
    # 1 - (1 - B_up) e^{-e2}; where even VIA_BOTTOM_MIRROR_RESOLVE relative (the engine's lower values, measured within
    # ~1e-5 - 1e-3 of the value at rel_tol 1e-2) leaves it above half the width, the identity's cancellation loses
    # leg B, e.g. B ~ 1e-15 against 1 - e^{-e2} ~ 0.5, and nothing is run)
    a_est = 1.0 - (1.0 - rb.upper) * math.exp(-e2)
    if not w * math.exp(e2) * limits.VIA_BOTTOM_MIRROR_RESOLVE * a_est <= 0.5 * width:
        return None
    a_neg = _mirror_lower(vb, e2, rel_tol)
    if a_neg is None:
        return None
    b_lo = leg_b_lower(a_neg, e2)
    return replace(rb, lower=min(b_lo, rb.upper)) if b_lo > rb.lower else None


__all__ = ["leg_b_lower", "mirror_b", "mirror_law", "raise_lower"]
