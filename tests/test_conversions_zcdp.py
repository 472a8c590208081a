"""zCDP -> (epsilon, delta) conversions: mpmath ground truth, dp-accounting, safety."""

import json
import math
from pathlib import Path

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _golden import golden_min
from sharpdp.conversions import gaussian_mechanism_epsilon, zcdp_to_epsilon, zcdp_to_epsilon_bun_steinke

REF = json.loads((Path(__file__).parent / "data" / "zcdp_to_approx_dp_reference.json").read_text())["rows"]
IDS = [f"rho={r['rho']}-delta={r['delta']}" for r in REF]


def _cks20_mpmath(rho, delta):
    """Independent 40-digit minimisation of the CKS20 bound over alpha (golden section on log(alpha-1))."""
    mpmath.mp.dps = 40
    rho, delta = mpmath.mpf(rho), mpmath.mpf(delta)

    def f(t):
        a = 1 + mpmath.e**t
        return a * rho + mpmath.log(1 - 1 / a) - (mpmath.log(delta) + mpmath.log(a)) / (a - 1)

    return max(golden_min(f, -30, 30, 250), mpmath.mpf(0))


@pytest.mark.parametrize("row", REF, ids=IDS)
def test_cks20_matches_mpmath_and_never_below(row):
    eps = zcdp_to_epsilon(row["rho"], row["delta"])
    truth = float(mpmath.mpf(row["cks20_continuous_mpmath"]))
    assert eps >= truth  # safe side: never below the exact optimum
    assert eps <= truth * (1 + 1e-12)
    # no valid conversion can beat the Gaussian mechanism with sigma = 1/sqrt(2 rho)
    assert eps >= float(mpmath.mpf(row["gaussian_lower_bound"]))
    # opendp implements the same bound with outward rounding: agree to ~1e-14
    assert eps == pytest.approx(row["opendp_zcdp_to_approxdp"], rel=1e-13)


@pytest.mark.parametrize("row", REF, ids=IDS)
def test_bun_steinke_matches_reference(row):
    eps = zcdp_to_epsilon_bun_steinke(row["rho"], row["delta"])
    exact = row["rho"] + 2 * math.sqrt(row["rho"] * math.log(1 / row["delta"]))
    assert exact <= eps <= exact * (1 + 1e-14)
    assert eps == pytest.approx(row["bun_steinke"], rel=1e-14)
    assert eps >= zcdp_to_epsilon(row["rho"], row["delta"])


@pytest.mark.parametrize("rho,delta", [(1e-6, 1e-10), (3e-4, 1e-6), (2.5, 0.3), (50.0, 1e-12)])
def test_cks20_against_independent_mpmath(rho, delta):
    truth = float(_cks20_mpmath(rho, delta))
    eps = zcdp_to_epsilon(rho, delta)
    assert truth <= eps <= truth * (1 + 1e-11) + 1e-300


@pytest.mark.parametrize("rho,delta", [(0.01, 1e-5), (0.1, 1e-8), (1.0, 1e-5), (5.0, 1e-8)])
def test_dp_accounting_rdp_agrees(rho, delta):
    from dp_accounting import ZCDpEvent
    from dp_accounting.rdp import RdpAccountant

    eps = zcdp_to_epsilon(rho, delta)
    default = RdpAccountant().compose(ZCDpEvent(rho)).get_epsilon(delta)
    assert eps <= default  # continuous alpha is at least as tight as dp-accounting's grid
    # with a fine order grid the peer converges to our value from above
    orders = np.concatenate([1 + np.geomspace(1e-3, 1e3, 20000)])
    fine = RdpAccountant(orders=list(orders)).compose(ZCDpEvent(rho)).get_epsilon(delta)
    assert eps <= fine <= eps * (1 + 1e-5)


def test_zero_rho_and_arrays():
    assert zcdp_to_epsilon(0.0, 1e-5) == 0.0
    out = zcdp_to_epsilon(np.array([0.01, 0.1]), 1e-5)
    assert out.shape == (2,) and out[0] < out[1]
    assert zcdp_to_epsilon_bun_steinke(np.array([[0.01]]), 1e-5).shape == (1, 1)


@pytest.mark.parametrize("fn", [zcdp_to_epsilon, zcdp_to_epsilon_bun_steinke])
@pytest.mark.parametrize("rho,delta,name", [(-0.1, 1e-5, "rho"), (float("nan"), 1e-5, "rho"), (math.inf, 1e-5, "rho"),
                                            (0.1, 0.0, "delta"), (0.1, 1.0, "delta"), (0.1, float("nan"), "delta")])
def test_bad_input_names_parameter(fn, rho, delta, name):
    with pytest.raises(ValueError, match=name):
        fn(rho, delta)


@settings(max_examples=40, deadline=None)
@given(rho=st.floats(1e-6, 20.0), delta=st.floats(1e-12, 0.5))
def test_conversion_ordering(rho, delta):
    cks = zcdp_to_epsilon(rho, delta)
    assert cks <= zcdp_to_epsilon_bun_steinke(rho, delta)
    # a Gaussian with sigma = 1/sqrt(2 rho) is rho-zCDP: its exact epsilon is a floor
    assert cks >= gaussian_mechanism_epsilon(delta, 1.0 / math.sqrt(2 * rho)) * (1 - 1e-9)
    assert zcdp_to_epsilon(rho * 1.5, delta) >= cks
    assert zcdp_to_epsilon(rho, delta / 10) >= cks


@settings(max_examples=25, deadline=None)
@given(log_rho=st.floats(-14.0, 4.0), log_delta=st.floats(-30.0, -0.5))
def test_cks20_never_below_mpmath_optimum(log_rho, log_delta):
    rho, delta = math.exp(log_rho), math.exp(log_delta)
    truth = float(_cks20_mpmath(rho, delta))
    eps = zcdp_to_epsilon(rho, delta)
    assert eps >= truth
    assert eps <= truth * (1 + 1e-10) + 1e-15
