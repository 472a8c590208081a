"""The release sampler's total-variation charge in the accountant (docs/sampling.md §4).

A release of n messages sampled within total variation eta of the certified law satisfies
delta_released(eps) <= delta(eps) + (1 + e^eps) n eta; above eps_tau = ln(1/(n eta))/2 the
accountant reports its value at eps_tau (delta is non-increasing in eps).
"""

from __future__ import annotations

import math

import pytest

from sharpdp.shuffle import (BlanketMixedGaussian, GaussianRandomizer, PrivUnit, RandomizedResponse,
                             ShuffleAccountant, calibrate_bmg)

BMG = BlanketMixedGaussian(0.95, 4.6, 1)


def test_charge_is_added_exactly_and_rounded_up():
    n = 10**6
    tau = n * BMG.sampler_tv
    assert ShuffleAccountant(BMG, n).sampler_tau == tau and 1e-30 < tau < 1e-27
    assert ShuffleAccountant(BMG, n, sampler_charge=False).sampler_tau == 0.0
    for eps in (1e-5, 0.5, 3.0, 10.0):  # fresh accountants: no monotone memo from smaller eps
        charged, laws = ShuffleAccountant(BMG, n), ShuffleAccountant(BMG, n, sampler_charge=False)
        up, up0 = charged.get_delta(eps), laws.get_delta(eps)
        assert up >= up0 + tau * (1 + math.exp(eps))  # never below the laws plus the charge
        assert up <= (up0 + tau * (1 + math.exp(eps))) * (1 + 1e-9)  # and nothing more
        assert charged.report(eps).terms["sampler"] >= tau * (1 + math.exp(eps))
    # one accountant: values stay non-increasing in eps (the charge grows, the memo keeps the smaller)
    acc = ShuffleAccountant(BMG, n)
    ups = [acc.get_delta(e) for e in (0.5, 3.0, 10.0)]
    assert ups[0] >= ups[1] >= ups[2] > 0


def test_above_eps_tau_the_value_at_eps_tau_and_monotone():
    acc = ShuffleAccountant(BMG, 10**4)
    tau = 10**4 * BMG.sampler_tv
    assert acc.eps_tau == pytest.approx(0.5 * math.log(1 / tau))
    at_tau = acc.get_delta(acc.eps_tau)
    assert at_tau >= tau * (1 + math.exp(acc.eps_tau))
    ups = [acc.get_delta(e) for e in (acc.eps_tau + 1, 100.0, 700.0, math.inf)]
    assert all(0 < u <= at_tau for u in ups)  # finite, positive, never above the value at eps_tau


def test_exact_samplers_carry_no_charge_and_unsafe_ones_are_the_laws_only():
    rr = ShuffleAccountant(RandomizedResponse(3, 1.0), 1000, adjacency="replace")
    assert RandomizedResponse(3, 1.0).sampler_tv == 0.0 and rr.sampler_tau == 0.0 and math.isinf(rr.eps_tau)
    assert rr.get_delta(math.inf) == 0.0
    pu = PrivUnit(0.7, 0.3, 3)
    assert pu.sampler_tv is None and pu.floating_point_safe is False
    assert ShuffleAccountant(pu, 100).sampler_tau == 0.0  # certifies the mathematical mechanism only


def test_get_epsilon_and_calibration_respect_the_charge():
    acc = ShuffleAccountant(BMG, 10**6)
    e = acc.get_epsilon(1e-6)
    assert acc.get_delta(e) <= 1e-6
    with pytest.raises(ValueError, match="sampler"):  # below the charge at eps = 0 (2.3e-29): refused, with the reason
        ShuffleAccountant(BMG, 10**6).get_epsilon(1e-29)
    # (1e-20, refused before fix23c, is certified at a small eps: tests/test_fix23c_tiny_delta.py)
    b = calibrate_bmg(10**4, 1.0, 1e-6, 1)
    assert ShuffleAccountant(b, 10**4).get_delta(1.0) <= 1e-6


@pytest.mark.usefixtures("session33_floats")  # (**) session 34, lead: un-nested rules off, the charged and uncharged calls compared at the same split: §9.11's loose search may pick another split for each
def test_replace_through_bottom_charges_its_legs():
    g = GaussianRandomizer(4.6, 1)
    charged = ShuffleAccountant(g, 10**4, adjacency="replace")
    laws = ShuffleAccountant(g, 10**4, adjacency="replace", sampler_charge=False)
    assert charged.via_bottom and laws.via_bottom
    assert charged.get_delta(0.05) >= laws.get_delta(0.05)


def test_sampler_charge_must_be_a_bool():
    with pytest.raises(TypeError, match="sampler_charge"):
        ShuffleAccountant(BMG, 10, sampler_charge="yes")
