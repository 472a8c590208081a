"""Central Gaussian mechanism baseline (Balle & Wang 2018), re-exported from sharpdp.shuffle.

Ground truth: 60-digit mpmath values in tests/data/gaussian_reference.json (extract of the
shared reference file), dp-accounting, and mpmath evaluated here.
"""

import json
import math
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import gaussian_mechanism_delta, gaussian_mechanism_epsilon, gaussian_mechanism_sigma

REF = json.loads((Path(__file__).parent / "data" / "gaussian_reference.json").read_text())

# Relative excess allowed over the truth. 1e-9, except where the two terms of the
# profile cancel (sigma = 5, eps = 4: e^eps Phi(B)/Phi(A) = 0.99, condition number ~100),
# where the certified error inflation of conversions.py reaches 1.2e-9.
REL = 1e-9
REL_CANCEL = 2e-9


def _mp_delta(eps, sigma, sens=1.0):
    mp.mp.dps = 60
    mu = mp.mpf(sens) / mp.mpf(sigma)
    e = mp.mpf(eps)
    return mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu)


@pytest.mark.parametrize("row", REF["profile"], ids=lambda r: f"s{r['sigma']}-e{r['eps']}")
def test_profile_against_mpmath_reference(row):
    ours = gaussian_mechanism_delta(row["eps"], row["sigma"])
    truth = mp.mpf(row["delta_true"])
    assert mp.mpf(ours) >= truth  # never below the truth
    tol = REL_CANCEL if (row["sigma"], row["eps"]) == (5.0, 4.0) else REL
    assert (mp.mpf(ours) - truth) / truth <= tol


@pytest.mark.parametrize("row", REF["epsilon_for_delta"], ids=lambda r: f"s{r['sigma']}-d{r['delta']}")
def test_epsilon_against_mpmath_reference(row):
    ours = gaussian_mechanism_epsilon(row["delta"], row["sigma"])
    truth = mp.mpf(row["eps_true"])
    assert mp.mpf(ours) >= truth
    assert (mp.mpf(ours) - truth) / truth <= 1e-9
    # the peer library's bisection agrees to its own tolerance (1e-12)
    assert ours == pytest.approx(row["dp_accounting_get_epsilon_gaussian"], rel=1e-9)


@pytest.mark.parametrize("sigma,delta", [(0.7, 1e-3), (1.0, 1e-5), (3.0, 1e-8), (10.0, 1e-10)])
def test_epsilon_and_sigma_against_dp_accounting(sigma, delta):
    dp_accounting = pytest.importorskip("dp_accounting")
    eps_peer = dp_accounting.get_epsilon_gaussian(sigma, delta)
    assert gaussian_mechanism_epsilon(delta, sigma) == pytest.approx(eps_peer, rel=1e-9)
    sig_peer = dp_accounting.get_sigma_gaussian(eps_peer, delta)
    assert gaussian_mechanism_sigma(eps_peer, delta) == pytest.approx(sig_peer, rel=1e-8)


@pytest.mark.parametrize("eps", [710.0, 1000.0, 5000.0])
@pytest.mark.parametrize("c", [1.0, 5.0, 20.0])
def test_profile_finite_and_accurate_beyond_exp_overflow(eps, c):
    # mu chosen so that eps/mu - mu/2 = c: delta ~ Phi(-c) is representable although e^eps overflows
    sigma = 1.0 / (-c + math.sqrt(c * c + 2.0 * eps))
    ours = gaussian_mechanism_delta(eps, sigma)
    truth = _mp_delta(eps, sigma)
    assert math.isfinite(ours) and ours > 0.0
    assert mp.mpf(ours) >= truth
    assert (mp.mpf(ours) - truth) / truth <= 1e-9


def test_profile_vectorised_and_sensitivity_scaling():
    eps = np.array([[0.0, 0.5], [1.0, 2.0]])
    out = gaussian_mechanism_delta(eps, 2.0, sensitivity=0.5)
    assert out.shape == (2, 2)
    # only sensitivity/sigma matters
    assert np.allclose(out, gaussian_mechanism_delta(eps, 4.0), rtol=1e-14)
    assert gaussian_mechanism_delta(math.inf, 1.0) == 0.0
    for e, d in zip(eps.ravel(), out.ravel()):
        t = _mp_delta(e, 4.0)
        assert mp.mpf(d) >= t and (mp.mpf(d) - t) / t <= 1e-9


@pytest.mark.parametrize("eps,delta,sens", [(1.0, 1e-6, 1.0), (0.3, 1e-5, 1e-3), (5.0, 1e-12, 2.0), (0.0, 0.1, 1.0)])
def test_sigma_round_trip(eps, delta, sens):
    sigma = gaussian_mechanism_sigma(eps, delta, sens)
    assert gaussian_mechanism_delta(eps, sigma, sens) <= delta  # safe
    assert gaussian_mechanism_delta(eps, sigma * (1 - 1e-9), sens) > delta * (1 - 1e-6)  # and smallest
    if eps > 0:
        e_back = gaussian_mechanism_epsilon(delta, sigma, sens)
        assert e_back <= eps * (1 + 1e-9) and e_back == pytest.approx(eps, rel=1e-8)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.05, 50.0), st.floats(0.0, 20.0), st.floats(0.0, 5.0))
def test_profile_monotone(sigma, eps, deps):
    d1 = gaussian_mechanism_delta(eps, sigma)
    assert 0.0 <= d1 <= 1.0
    assert 0.0 <= gaussian_mechanism_delta(eps + deps, sigma) <= d1 * (1 + 1e-12)
    assert gaussian_mechanism_delta(eps, sigma * 1.5) <= d1 * (1 + 1e-12)


@pytest.mark.parametrize("call,name", [
    (lambda: gaussian_mechanism_delta(-0.1, 1.0), "epsilon"),
    (lambda: gaussian_mechanism_delta(float("nan"), 1.0), "epsilon"),
    (lambda: gaussian_mechanism_delta(1.0, 0.0), "sigma"),
    (lambda: gaussian_mechanism_sigma(1.0, 0.0), "delta"),
    (lambda: gaussian_mechanism_sigma(1.0, 1.0), "delta"),
    (lambda: gaussian_mechanism_sigma(-1.0, 0.1), "epsilon"),
    (lambda: gaussian_mechanism_sigma(1.0, 0.1, 0.0), "sensitivity"),
    (lambda: gaussian_mechanism_epsilon(float("nan"), 1.0), "delta"),
])
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()
