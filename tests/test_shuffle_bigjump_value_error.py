"""The far-tail treatment charges the stored law's rounding (``Law.value_error``): docs/accountant_tail.md §12.

Reference: the same law with its location raised by hand (value_error 0), whose values dominate every
law within value_error of the stored one; the certified upper value must be at least its certified lower
value, and the lower value at most the unraised law's upper value.
"""

from __future__ import annotations

import copy

import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle.accountant import far_tail as bj
from sharpdp.shuffle.laws import LognormalLaw, laws_for

N = 327_346


def _law():
    gamma, law = laws_for(sh.BlanketMixedGaussian(0.056, 0.52, 1), 1.0, "zero_out")[0]
    assert isinstance(law, LognormalLaw) and bj.applicable(law, N, 1e-2, gamma)
    return gamma, law


@pytest.mark.parametrize("c", [1e-4, 1e-3, 1e-2])
def test_upper_value_covers_the_raised_law(c):
    gamma, law = _law()
    stated = copy.copy(law)
    stated.value_error = c
    r = bj.try_certify(stated, gamma, N, 1e-2, 1)
    raised = LognormalLaw(law.a + c, law.b, law.r, law.z_lo, law.weight, law.b_minus)
    rr = bj.try_certify(raised, gamma, N, 1e-2, 1)
    exact = copy.copy(law)
    exact.value_error = 0.0
    r0 = bj.try_certify(exact, gamma, N, 1e-2, 1)
    assert r.upper >= rr.lower
    if c >= 1e-3:  # a raise this large moves the value by more than the bracket's width
        assert rr.lower > r0.upper  # without the charge the upper value would be below it
    lowered = LognormalLaw(law.a - c, law.b, law.r, law.z_lo, law.weight, law.b_minus)
    assert r.lower <= bj.try_certify(lowered, gamma, N, 1e-2, 1).upper


def test_the_builders_rounding_costs_nothing_visible():
    """The real value_error (~2.5e-15) moves the bracket by far less than its width (grids may differ)."""
    gamma, law = _law()
    assert 0 < law.value_error < 1e-14
    exact = copy.copy(law)
    exact.value_error = 0.0
    r, r0 = bj.try_certify(law, gamma, N, 1e-2, 1), bj.try_certify(exact, gamma, N, 1e-2, 1)
    assert r.upper == pytest.approx(r0.upper, rel=1e-6)
    assert r.lower == pytest.approx(r0.lower, rel=1e-6) and r.lower <= r.upper
