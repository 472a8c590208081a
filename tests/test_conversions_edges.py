"""Edges of the Gaussian mechanism's certified profile (docs/accountant_edges.md section 4)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from sharpdp.conversions import gaussian_mechanism_delta, gaussian_mechanism_epsilon, gaussian_mechanism_sigma


def _exact(eps, sigma):
    """delta(eps) of the Gaussian mechanism (Balle & Wang 2018, Thm 8) in mpmath, enough digits for
    the cancellation between the two terms."""
    mu = mp.mpf(1) / mp.mpf(sigma)
    e = mp.mpf(eps)
    with mp.workdps(60 + int(3 * float(mp.log10(1 + e / mu + mu)))):
        return mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu)


@pytest.mark.parametrize("eps,sigma", [(10000.0, 1e4), (1.25e7, 1.0)])
def test_issue_nan_examples(eps, sigma):
    d = gaussian_mechanism_delta(eps, sigma=sigma)
    assert d == 5e-324  # true value positive, far below the double range: the floor, never 0 or NaN


def test_grid_finite_certified_and_in_unit_interval():
    eps = np.concatenate([[0.0], np.logspace(-6, 8, 24)])
    sig = np.logspace(-4, 6, 21)
    out = np.array([gaussian_mechanism_delta(eps, sigma=s) for s in sig])
    assert np.all(np.isfinite(out)) and np.all(out >= 5e-324) and np.all(out <= 1.0)
    # spot checks against the exact value (the grid's every 7th point)
    worst = []
    for i, s in enumerate(sig):
        for j in range(i % 7, eps.size, 7):
            ref = _exact(eps[j], s)
            v = out[i, j]
            assert mp.mpf(v) >= ref, (eps[j], s, v, ref)
            if ref > mp.mpf("1e-290"):
                worst.append(float(mp.mpf(v) / ref - 1))
    assert max(worst) <= 1e-6  # relative excess (the error bound of the cancelling two-term form)


def test_small_mu_eps0_accurate():
    # delta(0) = erf(mu / (2 sqrt 2)) ~ mu / sqrt(2 pi): the old two-term form never went below ~2e-14
    for s in (1e6, 1e12, 1e100):
        v = gaussian_mechanism_delta(0.0, sigma=s)
        ref = mp.erf(1 / (mp.mpf(s) * 2 * mp.sqrt(2)))  # 2 Phi(mu/2) - 1 without cancellation
        assert ref <= v <= ref * (1 + 1e-9)


@pytest.mark.parametrize("delta", [1e-13, 2e-14, 1e-15, 1e-100, 1e-300])
def test_sigma_at_eps0_finishes(delta):
    s = gaussian_mechanism_sigma(0.0, delta)
    assert gaussian_mechanism_delta(0.0, s) <= delta
    assert s == pytest.approx(1.0 / (delta * math.sqrt(2 * math.pi)), rel=1e-6)


def test_sigma_impossible_target_is_refused():
    with pytest.raises(ValueError, match="delta"):
        gaussian_mechanism_sigma(0.0, 5e-324)


def test_epsilon_tiny_delta_finishes():
    e = gaussian_mechanism_epsilon(1e-300, 1.0)
    assert gaussian_mechanism_delta(e, 1.0) <= 1e-300 and gaussian_mechanism_delta(e * 0.999, 1.0) > 1e-300


@pytest.mark.parametrize("bad,exc", [(None, TypeError), (1j, TypeError), ([1 + 1j], TypeError), ("a", TypeError),
                                     (True, TypeError), ([], ValueError), (-1.0, ValueError), (math.nan, ValueError)])
def test_bad_epsilon_names_parameter(bad, exc):
    with pytest.raises(exc, match="epsilon"):
        gaussian_mechanism_delta(bad, 1.0)
