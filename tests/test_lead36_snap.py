"""docs/accountant_tail.md §46.5: a step far above an atom law's spacing is not snapped down to it."""

from __future__ import annotations

import pytest
from _main_floats34 import switch

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import spacing


def test_snap_leaves_a_coarse_step_alone(monkeypatch):
    assert spacing.snap(159.0, 0.954) == 159.0
    assert spacing.snap(2.5821, 2.3541) == 2.3541  # between s and 2 s: still s (PrivUnit at n >= 1e8, §46.2)
    assert spacing.snap(0.3, 1.0) == pytest.approx(1.0 / 4)
    assert spacing.snap(0.3, None) == 0.3
    switch(monkeypatch, "SNAP_COARSE", False)
    assert spacing.snap(159.0, 0.954) == 0.954


def test_gaussian_half_at_1e9_zero_out_has_a_tight_bracket(monkeypatch):
    # the cell that session 35's snap made slow and loose (13 s, 52 % wide): now the same floats as with the end-atom
    # snap off, a bracket within the default rel_tol 1e-2
    acc = ShuffleAccountant(GaussianRandomizer(0.5, 1.0), 10**9, adjacency="zero_out")
    lo, up = acc.get_delta_bounds(0.001)
    assert 0 < lo <= up <= 1.01 * lo
    switch(monkeypatch, "END_ATOM_SNAP", False)
    ref = ShuffleAccountant(GaussianRandomizer(0.5, 1.0), 10**9, adjacency="zero_out").get_delta_bounds(0.001)
    assert (lo, up) == ref
