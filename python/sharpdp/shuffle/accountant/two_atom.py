"""Two-atom laws in O(sqrt n): the certified bracket of D_up without the lattice (docs/accountant_atoms.md §12).

A law with exactly two atoms a1 < 0 < a2 (binary RR under both adjacencies, k-RR under zero-out) has
D_up = (a2 - a1)/(n gamma) sum_M P(N = M) G(M, M beta), N ~ Bin(n, gamma), beta = -a1/(a2 - a1),
G(M, t) = E[(Bin(M, p2) - t)_+]; the C++ kernel ``_core.accountant.two_atom_bracket`` sums it by
recurrences in M with outward-rounded intervals (§12.2-§12.4). The law's rounding (``value_error``) is
handled by :meth:`~sharpdp.shuffle.laws.base.Law.shifted` (the upper value from the law shifted up, the
lower one from the law shifted down, docs/accountant_tail.md §12), and stored probabilities that do not
sum to 1 exactly by the monotonicity of D_up in p2 (§12.5).
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp._core_loader import core as _core
from sharpdp.shuffle.accountant.memo import result_memo
from sharpdp.shuffle.accountant.results import LawBracket
from sharpdp.shuffle.laws import Law

_NOTE = "two-atom law: exact O(sqrt n) sum (docs/accountant_atoms.md §12)"


def atoms_of(law: Law, up: bool = True) -> tuple[float, float, float, float] | None:
    """(a1, a2, p2_lo, p2_hi) of a law with exactly two atoms of positive mass, a1 < 0 < a2 (asked of the law:
    ``atomic`` and its ``values``/``probs``), else None. [p2_lo, p2_hi] holds both the stored p2 and 1 minus
    the stored p1, outward-rounded (§12.5)."""
    if not law.atomic:
        return None
    v, p = getattr(law, "values", None), getattr(law, "probs", None)
    if v is None or p is None or len(v) != len(p) or len(v) < 2:
        return None
    if len(v) > 2:  # atoms equal up to rounding listed apart (a finite randomizer's law: one atom per output)
        return _merged_atoms(np.asarray(v, dtype=float), np.asarray(p, dtype=float), up)
    a1, a2, p1, p2 = float(v[0]), float(v[1]), float(p[0]), float(p[1])
    if not (a1 < 0.0 < a2 and p1 > 0.0 and p2 > 0.0 and math.isfinite(a1) and math.isfinite(a2)):
        return None
    if math.fsum((p1, p2, -1.0)) == 0.0:  # (exact: fsum rounds the exact sum once)
        return a1, a2, p2, p2
    c = 1.0 - p1  # one rounding: the exact 1 - p1 lies between its neighbours
    lo, hi = min(p2, math.nextafter(c, 0.0)), max(p2, math.nextafter(c, 1.0))
    if not 0.0 < lo <= hi < 1.0:
        return None
    return a1, a2, lo, hi


#: the kernel's results by argument (a process-wide memo: the search, get_delta at its answer and the
#: lower check revisit the same laws; the results are deterministic functions of the arguments)
_MEMO: dict[tuple[float, float, float, float, int], tuple] = result_memo()


def _kernel(a1: float, a2: float, p2: float, gamma: float, n: int) -> tuple:
    key = (a1, a2, p2, gamma, n)
    hit = _MEMO.get(key)
    if hit is None:
        hit = _core.accountant.two_atom_bracket(a1, a2, p2, gamma, n)
        if len(_MEMO) >= 256:
            _MEMO.clear()
        _MEMO[key] = hit
    return hit


def _merged_atoms(v: np.ndarray, p: np.ndarray, up: bool) -> tuple[float, float, float, float] | None:
    """:func:`atoms_of` of a law whose positive-mass atoms form two clusters, one below 0 and one above, each
    of relative spread <= 1e-12 (values equal but for their rounding): every atom of a cluster moved to the
    cluster's largest value (``up``: a law above the given one user by user, so its D_up is larger, D_up being
    non-decreasing in every value) or smallest (below it), the masses summed (math.fsum: the exact sum rounded
    once, between the neighbours of the result), [p2_lo, p2_hi] holding both that sum at a2 and 1 minus the
    one at a1, outward-rounded (docs/accountant_atoms.md §12.5)."""
    keep = p > 0.0
    v, p = v[keep], p[keep]
    neg, pos = v < 0.0, v > 0.0
    if not (np.all(np.isfinite(v)) and neg.any() and pos.any() and np.all(neg | pos)):
        return None
    for side in (v[neg], v[pos]):
        if side.max() - side.min() > 1e-12 * np.abs(side).max():
            return None
    pick = np.max if up else np.min
    a1, a2 = float(pick(v[neg])), float(pick(v[pos]))
    s1, s2 = math.fsum(p[neg].tolist()), math.fsum(p[pos].tolist())
    lo = min(math.nextafter(s2, 0.0), math.nextafter(1.0 - math.nextafter(s1, 1.0), 0.0))
    hi = max(math.nextafter(s2, 1.0), math.nextafter(1.0 - math.nextafter(s1, 0.0), 1.0))
    if not 0.0 < lo <= hi < 1.0:
        return None
    return a1, a2, lo, hi


def is_two_atom(law: Law) -> bool:
    """The law has exactly two atoms of positive mass, one below 0 and one above (§12)."""
    return atoms_of(law) is not None


def bracket(law: Law, gamma: float, n: int, *, lower: bool = True, upper: bool = True) -> LawBracket | None:
    """Certified bracket of D_up of a two-atom law (§12); None when the law is not one or the kernel
    declines (an unbounded start sum: the caller uses the lattice engine). ``lower`` / ``upper`` False:
    that end is not computed (0 and inf)."""
    if atoms_of(law) is None:
        return None
    lo_v, up_v = 0.0, math.inf
    terms: dict[str, object] = {"note": _NOTE}
    if upper:
        hi_law = law.shifted(True)  # values at least the true ones, user by user
        at = atoms_of(hi_law, up=True)
        if at is None:
            return None
        a1, a2, _, p2 = at
        r = _kernel(a1, a2, p2, float(gamma), int(n))
        if not r[6]:
            return None
        up_v = r[1]
        # (upper_run_lower: the same run's lower end, whose gap to up_v is the rounding and truncation width)
        terms.update(charge=r[2], m_window=(r[3], r[4]), start_terms=r[5], upper_run_lower=r[0])
    if lower:
        lo_law = law.shifted(False)
        at = atoms_of(lo_law, up=False)
        if at is not None:
            a1, a2, p2, _ = at
            r = _kernel(a1, a2, p2, float(gamma), int(n))
            if not r[6]:
                return None
            lo_v = r[0]
        elif lo_law.support()[1] > 0.0:
            return None  # (two atoms above 0: not a case of the kernel)
    return LawBracket(lo_v, up_v, terms=terms)


__all__ = ["atoms_of", "bracket", "is_two_atom"]
