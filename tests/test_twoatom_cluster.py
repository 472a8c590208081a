"""Two-atom laws listed with equal-but-for-rounding atoms apart (docs/accountant_atoms.md §12): clusters moved to
their largest (upper run) / smallest (lower run) value, against the exact sum of the merged law."""

from __future__ import annotations

import math

import numpy as np
import pytest

from _krr_reference import exact_two_atom
from sharpdp.shuffle.accountant import two_atom
from sharpdp.shuffle.laws.finite import FiniteLaw


def test_clusters_merge_to_their_extremes():
    a1, a2 = -1.25, 0.75
    law = FiniteLaw(np.array([a1 * (1 + 4e-16), a1, a2, a2 * (1 + 2e-16)]), np.array([0.25, 0.25, 0.3, 0.2]))
    up = two_atom.atoms_of(law, up=True)
    dn = two_atom.atoms_of(law, up=False)
    assert up[:2] == (a1, a2 * (1 + 2e-16)) and dn[:2] == (a1 * (1 + 4e-16), a2)
    assert up[2] <= 0.5 <= up[3] and up[3] - up[2] < 1e-15
    # a third value (spread > 1e-12) is not two-atom
    assert two_atom.atoms_of(FiniteLaw(np.array([-1.0, -0.9, 0.5]), np.array([0.3, 0.3, 0.4]))) is None


@pytest.mark.parametrize("n, gamma", [(50, 0.4), (3000, 0.2)])
def test_cluster_bracket_holds_the_merged_laws_value(n, gamma):
    a1, a2 = -1.3, 0.7
    split = FiniteLaw(np.array([a1, a1 * (1 + 1e-15), a2]), np.array([1 / 3, 1 / 3, 1 / 3]))
    br = two_atom.bracket(split, gamma, n)
    assert br is not None
    # the exact D_up of the law with the lower cluster at a1 and at a1 (1 + 1e-15): the split law lies between
    ref_lo = exact_two_atom(gamma, np.array([a1 * (1 + 1e-15), a2]), np.array([2 / 3, 1 / 3]), n)
    ref_up = exact_two_atom(gamma, np.array([a1, a2]), np.array([2 / 3, 1 / 3]), n)
    assert br.lower <= ref_up * (1 + 1e-9) and ref_lo * (1 - 1e-9) <= br.upper
    assert br.upper - br.lower <= 1e-8 * br.upper and math.isfinite(br.upper)
