"""Properties and input validation of the certified shuffle accountant."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, privacy_profile

BMG = BlanketMixedGaussian(0.9, 3.0, 1)


@settings(max_examples=6, deadline=None)
@given(eps=st.floats(0.0, 0.02), n=st.sampled_from([10, 100, 1000]))
def test_lower_le_upper(eps, n):
    lo, up = ShuffleAccountant(BMG, n).get_delta_bounds(eps)
    assert 0.0 <= lo <= up and math.isfinite(up)


def test_delta_non_increasing_in_epsilon():
    acc = ShuffleAccountant(BMG, 1000)
    eps = np.linspace(0.0, 0.012, 4)
    up = acc.get_delta(eps)
    assert up.shape == eps.shape
    assert np.all(np.diff(up) <= 0)


def test_get_epsilon_round_trip():
    acc = ShuffleAccountant(BMG, 100)
    delta = 1e-6
    e = acc.get_epsilon(delta)
    assert e > 0 and acc.get_delta(e) <= delta
    assert acc.get_delta(e * (1 - 3e-3)) > delta  # bracket width is xtol = 1e-3


def test_get_epsilon_zero_when_met():
    acc = ShuffleAccountant(BMG, 100)
    assert acc.get_epsilon(0.9) == 0.0


def test_tiny_delta_and_huge_n():
    acc = ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**9)
    lo, up = acc.get_delta_bounds(1e-5)
    # the grid cap (N <= 2^22) can keep lo at 0 at n = 1e9: up stays certified
    assert 0 <= lo <= up < 1 and math.isfinite(up) and up > 0
    e = ShuffleAccountant(BMG, 100).get_epsilon(1e-15)
    assert 0 < e < 10


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="n"):
        ShuffleAccountant(BMG, 0)
    with pytest.raises(ValueError, match="adjacency"):
        ShuffleAccountant(BMG, 10, "swap")
    with pytest.raises(ValueError, match="rel_tol"):
        ShuffleAccountant(BMG, 10, rel_tol=0.0)
    acc = ShuffleAccountant(BMG, 10)
    d = acc.get_delta(-0.1)  # eps < 0 is answered, not refused: the swap identity (docs/composition.md §8)
    assert d == privacy_profile(acc, -0.1) and -math.expm1(-0.1) < d <= 1.0
    with pytest.raises(ValueError, match="epsilon"):
        acc.get_delta(float("nan"))
    with pytest.raises(ValueError, match="delta"):
        acc.get_epsilon(1.0)
    with pytest.raises(ValueError, match="delta"):
        acc.get_epsilon(0.0)


def test_huge_epsilon_is_finite_and_positive():
    acc = ShuffleAccountant(BMG, 1000, sampler_charge=False)  # the laws alone (docs/sampling.md §4)
    for e in (50.0, 1000.0):
        lo, up = acc.get_delta_bounds(e)
        assert 0.0 <= lo <= up and 0.0 < up < 1e-280  # true value > 0 (unbounded L), tiny (error terms)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(-3, 3), st.floats(0.01, 1)), min_size=1, max_size=8),
       st.floats(0.05, 1.0), st.booleans())
def test_lower_lattice_law_is_below_in_convex_order(atoms, h, down):
    """The lattice law of step H is dominated in convex order: E[(Lt - c)_+] <= E[(L - c)_+] for
    every c (checked at the atoms and lattice nodes), same total mass, mean not above."""
    from sharpdp._core_loader import core
    from sharpdp.shuffle import FiniteLaw

    v = np.array([a for a, _ in atoms])
    p = np.array([b for _, b in atoms])
    p /= p.sum()
    law = FiniteLaw(v, p)
    J = 4
    x0 = math.floor(v.min() / h) * h - h
    K = int(math.ceil((v.max() - x0) / h)) + 1
    m, w, em, ew = law.cells(x0, h / J, K * J)
    psi, eta, mom_err = core.accountant.lower_lattice(m, w, em, ew, J, 0.0, 0.0, 0.0, 0.0, down)
    mom_err = mom_err.sum()  # per-node bounds; their total bounds the overall overshoot
    x = x0 + h * np.arange(K + 1)
    assert psi.min() >= 0 and abs(psi.sum() - 1) < 1e-12 and np.all(eta >= 0) and np.all(mom_err >= 0)
    for c in np.concatenate([v, x]):
        assert psi @ np.maximum(x - c, 0) <= p @ np.maximum(v - c, 0) + mom_err * h + 1e-12
    assert psi @ x <= p @ v + mom_err * h + 1e-12


@pytest.mark.parametrize("bmg,adjacency,n", [(BlanketMixedGaussian(0.5, 2.0, 1), "zero_out", 100),
                                             (BlanketMixedGaussian(0.3, 1.5, 1), "replace", 1000)])
def test_get_epsilon_zero_iff_get_delta_at_zero_meets_target(bmg, adjacency, n):
    # regression: a coarser internal upper value at 0 once decided "eps = 0" on its own
    acc = ShuffleAccountant(bmg, n, adjacency)
    d0 = acc.get_delta(0.0)
    assert acc.get_epsilon(d0 * (1 + 1e-9)) == 0.0
    below = d0 * (1 - 2e-3)
    e = acc.get_epsilon(below)
    assert e > 0.0 and acc.get_delta(e) <= below
