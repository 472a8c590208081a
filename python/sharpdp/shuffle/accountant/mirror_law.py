"""A law's mirror image certified from the law's own bracket (docs/accountant.md §8.22).

Where law b is the mirror image of law a (L_b = -L_a in law, the same gamma), S_b = -S_a in law and
E[(-S)_+] = E[S_+] - E S, so D_up^b = D_up^a - E L_a (§1.5: D_up = E[S_+] / (n gamma), E S = n gamma E L): the two
orders of a pair at eps = 0 (l = R_x/R_BG - 1 and 1 - R_x/R_BG, §1.4) are mirror images, and E L_a = 0 for the exact
law, so the ⊥-vs-x law (a heavy lower tail: seconds per far-tail run at n >= 1e8) takes the x-vs-⊥ law's bracket.

The mirror is recognised on the stored laws' defining parameters alone (the ones ``zero_moments`` reads: atoms; a
lognormal part's a, G, S, r, weight, (v_lo, v_hi)), bit for bit: an estimate never decides it. The stored laws are
within ``value_error`` of the exact ones (per value), which moves each D_up by at most that; both are charged."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.results import LawBracket
from sharpdp.shuffle.accountant.zero_moments import LOGNORMAL_PARAMS as _LOGNORMAL, law_moments_up

_U = float(np.finfo(float).eps)


def _atoms_mirrored(p: Any, q: Any) -> bool:
    """Whether atom (sub-)law q is p with every value negated (same masses), bit for bit."""
    (v, w), (x, y) = (tuple(np.asarray(t, float) for t in part.atoms()) for part in (p, q))
    if v.shape != x.shape:
        return False
    i, j = np.argsort(-v, kind="stable"), np.argsort(x, kind="stable")
    return bool(np.array_equal(-v[i], x[j]) and np.array_equal(w[i], y[j]))


def _lognormal_mirrored(p: Any, q: Any) -> bool:
    """Whether lognormal part q is the mirror of p: -(a + G e^{rV - r^2/2} - S e^{-rV - r^2/2}) on v_lo < V < v_hi is
    (V' = -V, again N(0, 1)) -a + S e^{rV' - r^2/2} - G e^{-rV' - r^2/2} on -v_hi < V' < -v_lo, the same weight."""
    a, g, s, r, w, lo, hi = (float(getattr(p, k)) for k in _LOGNORMAL)
    a2, g2, s2, r2, w2, lo2, hi2 = (float(getattr(q, k)) for k in _LOGNORMAL)
    return (a2, g2, s2, r2, w2, lo2, hi2) == (-a, s, g, r, w, -hi, -lo) and type(p) is type(q)


def mirrored(law_a: Any, law_b: Any) -> bool:
    """Whether the stored law_b is the mirror image of the stored law_a (part by part, in order; docstring above)."""
    pa, pb = getattr(law_a, "parts", None) or [law_a], getattr(law_b, "parts", None) or [law_b]
    if len(pa) != len(pb) or bool(getattr(law_a, "parts", None)) != bool(getattr(law_b, "parts", None)):
        return False
    if any(float(getattr(x, "moved_by", 0.0)) != 0.0 for x in (law_a, law_b, *pa, *pb)):
        return False  # (a law moved by a constant carries its own charge: not compared here)
    for p, q in zip(pa, pb):
        if (p.atoms() is None) != (q.atoms() is None):
            return False
        if p.atoms() is not None:
            if not _atoms_mirrored(p, q):
                return False
        elif not (all(hasattr(x, k) for x in (p, q) for k in _LOGNORMAL) and _lognormal_mirrored(p, q)):
            return False
    return True


def mirror_bracket(r: LawBracket, law_a: Any, law_b: Any) -> LawBracket | None:
    """The bracket of D_up^b from law a's certified bracket ``r`` (law b the mirror of law a, the same gamma):
    D^b_exact <= D^b_stored + ve_b = D^a_stored - mu_stored + ve_b <= r.upper + ve_a + ve_b - mu_lo, and likewise
    from below (mu = E L_a of the stored law, bracketed in closed form by ``zero_moments.law_moments_up``; docs/
    accountant.md §8.22). None where no closed form of the mean is at hand."""
    got = law_moments_up(law_a)
    if got is None:
        return None
    mu_lo, mu_hi = got[0], got[1]
    ve = float(getattr(law_a, "value_error", 0.0)) + float(getattr(law_b, "value_error", 0.0))
    if not (math.isfinite(ve) and math.isfinite(r.upper)):
        return None
    # (two additions each: within u of their operands' absolute sum each, charged as 4 u of it)
    up = min(max((r.upper + ve - mu_lo) + 4 * _U * (r.upper + ve + abs(mu_lo)), 0.0), 1.0)
    lo = max((r.lower - ve - mu_hi) - 4 * _U * (r.lower + ve + abs(mu_hi)), 0.0) if r.lower > 0.0 else 0.0
    return replace(r, lower=min(lo, up), upper=up, cap=math.inf, terms=dict(r.terms, mirror=(r.lower, r.upper, mu_lo, mu_hi, ve)))


class Mirrors:
    """The laws of one report (n users, target ``rel_tol``) certified so far: :meth:`bracket` answers a later law that is
    the mirror image of one of them (the same gamma) from its bracket (switch ``limits.EPS42_MIRROR``), else None: also
    at n < ``limits.MIRROR_N`` (the driver's run is cheap there) and where the moved bracket's charges exceed
    ``limits.MIRROR_CHARGE`` rel_tol of its lower value (docs/accountant.md §8.22.3 (iii))."""

    def __init__(self, n: int = 2, rel_tol: float = 1e-2) -> None:
        self._done: list[tuple[float, Any, LawBracket]] = []
        self.n, self.rel_tol = n, rel_tol

    def put(self, gamma: float, law: Any, r: LawBracket) -> None:
        if limits.EPS42_MIRROR:
            self._done.append((gamma, law, r))

    def bracket(self, gamma: float, law: Any) -> LawBracket | None:
        if not limits.EPS42_MIRROR:
            return None
        if self.n < limits.MIRROR_N:
            return None
        for g, a, r in self._done:
            if g == gamma and mirrored(a, law):
                m = mirror_bracket(r, a, law)
                if m is None or (m.upper - m.lower) - (r.upper - r.lower) > limits.MIRROR_CHARGE * self.rel_tol * m.lower:
                    return None  # (its charges would widen the bracket beyond a trace of the target: the driver runs)
                return m
        return None


def __getattr__(name: str) -> Any:
    """``MIRROR_N``, ``MIRROR_CHARGE``: read from ``limits`` (moved to ``limits_rules.py`` in session 43, docs/
    accountant.md §8.23.1; set them with ``limits``, not here)."""
    if name in ("MIRROR_N", "MIRROR_CHARGE"):
        return getattr(limits, name)
    raise AttributeError(name)


__all__ = ["Mirrors", "mirror_bracket", "mirrored"]
