"""Finite tables of output classes: shuffle indices and laws of the privacy-amplification variable.

Shared machinery for randomizers whose output space is finite or has been reduced to a finite
table of "output classes" (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
Definition 2.5 (Section 2.4)): the variance functionals that define
chi_lo / chi_up and the atoms of the privacy-amplification variable l_eps(Y), Y ~ R_BG.

A *table* describes a randomizer through representative inputs: ``R[i, c]`` is the probability
(or density) of one output symbol of class ``c`` under input ``i``; ``w[c]`` is the number (or
quadrature weight / measure) of symbols in class ``c``, so that ``sum_c w[c] R[i, c] = 1``.
:func:`merge_atoms` is the one helper that merges equal atoms of a finite law.
"""

from __future__ import annotations

import math

import numpy as np

from fractions import Fraction

from sharpdp.shuffle.laws import COMBO_ULPS, U, FiniteLaw
from sharpdp.shuffle.adjacency import check_adjacency

__all__ = ["finite_laws", "merge_atoms", "table_chi_lo", "table_chi_up", "table_pairs", "table_pav_atoms",
           "table_pav_law", "table_pav_value_error", "unique_laws"]


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
    """chi_lo = 1 / sup_pairs sqrt(Var_BG[l_0] / gamma) (*Shuffling-Aware Optimization for Private Vector Mean
    Estimation*,
    Definition 2.5); inf when every pair has identical outputs (no pair is informative)."""
    var = max(_pair_variance(R[a], R[b], bg, w) for a, b in pairs)
    return 0.0 if math.isinf(var) else (math.sqrt(gamma / var) if var > 0 else math.inf)


def table_chi_up(R: np.ndarray, w: np.ndarray, pairs: list[tuple[int, int]], refs) -> float:
    """chi_up = 1 / sup_pairs sup_refs sqrt(Var_{R_x}[l_0(.; x1, x1', R_x)])
    (*Shuffling-Aware Optimization for Private Vector Mean Estimation*, Definition 2.5); inf when every pair has
    identical outputs."""
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
    is not absolutely continuous w.r.t. the blanket (`docs/accountant.md` §1.2, absolute continuity).
    """
    pos = bg > 0.0
    if np.any((ra[~pos] > 0.0) | (rb[~pos] > 0.0)):
        raise ValueError("the blanket does not dominate the output distributions (R_x not << R_BG)")
    vals = (ra[pos] - math.exp(epsilon) * rb[pos]) / bg[pos]
    return merge_atoms(vals, w[pos] * bg[pos])


def table_pav_value_error(ra: np.ndarray, rb: np.ndarray, bg: np.ndarray, w: np.ndarray, epsilon: float) -> float:
    """Bound on |computed - exact| of every atom of :func:`table_pav_atoms` (``docs/accountant.md`` §3.2.2).

    The exact atom is (R_a - e^eps R_b) / R_BG in real arithmetic on the stored table entries; the
    computed one rounds e^eps (F4: 2 ulp = 4 u), the product, the difference and the quotient, so
    it is within 8 u (R_a + e^eps R_b) / R_BG of it (a few u of the **terms**, not of the atom, which may
    cancel to 0). Returned: twice the largest such bound over the atoms of positive probability
    (float, units of L, >= 0).
    """
    pos = (bg > 0.0) & (w * bg > 0.0)
    if not np.any(pos):
        return 0.0
    ee = math.exp(epsilon)
    return float(COMBO_ULPS * U * np.max((ra[pos] + ee * rb[pos]) / bg[pos]))


def _table_pav_nonpositive(ra: np.ndarray, rb: np.ndarray, bg: np.ndarray, w: np.ndarray, epsilon: float,
                           err: float) -> bool:
    """True when every exact atom of positive probability is provably <= 0: R_a <= e_lo R_b in exact
    rational arithmetic, e_lo = fl(e^eps)(1 - 512 u) <= e^eps (F4, even at its 64-ulp figure). Atoms computed at or below
    -err need no check."""
    pos = (bg > 0.0) & (w * bg > 0.0)
    ee = math.exp(epsilon)
    vals = (ra[pos] - ee * rb[pos]) / bg[pos]
    near = vals > -err
    e_lo = Fraction(ee * (1.0 - 512.0 * U))
    return all(Fraction(float(a)) <= e_lo * Fraction(float(b)) for a, b in zip(ra[pos][near], rb[pos][near]))


def table_pav_law(ra: np.ndarray, rb: np.ndarray, bg: np.ndarray, w: np.ndarray, epsilon: float) -> FiniteLaw:
    """The atoms of :func:`table_pav_atoms` as a :class:`~sharpdp.shuffle.laws.FiniteLaw` whose
    ``value_error`` is :func:`table_pav_value_error` (``docs/accountant.md`` §3.2.2).

    When every exact atom is provably <= 0 (exact rational test, see §3.2.2), the law is stored
    with its values clipped to <= 0 and ``value_error`` 0: L <= 0 almost surely, and the
    accountant's value is exactly 0 (e.g. k-RR and PrivUnit under replace-one at eps > eps0).
    """
    v, p = table_pav_atoms(ra, rb, bg, w, epsilon)
    err = table_pav_value_error(ra, rb, bg, w, epsilon)
    if v.size and v.max() + err > 0.0 and _table_pav_nonpositive(ra, rb, bg, w, epsilon, err):
        return FiniteLaw(np.minimum(v, 0.0), p)
    return FiniteLaw(v, p, value_error=err)


def unique_laws(triples):
    """Drop (gamma, values, probs) triples identical to an earlier one (symmetric pairs)."""
    out = []
    for g, v, p in triples:
        if not any(g == g2 and np.array_equal(v, v2) and np.array_equal(p, p2) for g2, v2, p2 in out):
            out.append((g, v, p))
    return out


def finite_laws(atoms: list[tuple[float, np.ndarray, np.ndarray]]):
    """Wrap (gamma, values, probs) triples as ``(gamma, FiniteLaw)`` pairs for the accountant."""
    return [(g, FiniteLaw(v, p)) for g, v, p in atoms]
