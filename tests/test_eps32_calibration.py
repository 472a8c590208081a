"""Session 32 (eps32): the calibration's start at n >= 1e7, eps > 0.01 aims on the big jump with its second-order
Jensen correction (docs/calibration.md §10, ``estimates.big_jump_jensen``).

Checked: the correction against an independent reference (the single-big-jump stop-loss smoothed by a centred normal of
variance V, by quadrature: its excess over tau(T) tends to V f_L(T) / 2 as V -> 0, f_L the density of L, here by a
difference quotient of the stop-loss); the calibrations it speeds up return a point whose fresh certified delta (a new
accountant at rel_tol 1e-3) is <= delta, after one certifying evaluation where main needed two.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.calibration.bmg import calibrate_bmg_report
from sharpdp.shuffle.calibration.estimates import big_jump_estimate, big_jump_jensen
from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian_report
from sharpdp.shuffle.calibration.search import jensen_start

DELTA = 1e-6


def _tau(gamma: float, sigma0: float, n: int, eps: float, shift: float = 0.0) -> float:
    """The big jump's stop-loss tau(T + shift) by quadrature over Z (independent of the closed form)."""
    ee1 = math.expm1(eps)
    if gamma > 0.0:
        r = 1.0 / sigma0
        k = (n - 1) * gamma * ee1 - gamma + ee1 + 1.0 + shift
        f = lambda z: max((1.0 - gamma) * math.exp(r * z - 0.5 * r * r) - k, 0.0) * math.exp(-0.5 * z * z)  # noqa: E731
        z0 = (math.log(k / (1.0 - gamma)) + 0.5 * r * r) / r
        return integrate.quad(f, z0, z0 + 40.0, epsabs=0.0, epsrel=1e-12, limit=200)[0] / math.sqrt(2 * math.pi)
    g = 2.0 * 0.5 * math.erfc(1.0 / sigma0 / math.sqrt(2.0))
    r = 2.0 / sigma0
    k = (n - 1) * g * ee1 + ee1 + 1.0 + shift
    f = lambda z: max(g * math.exp(r * z - 0.5 * r * r) - k, 0.0) * math.exp(-0.5 * z * z)  # noqa: E731
    z0 = max((math.log(k / g) + 0.5 * r * r) / r, 1.0 / sigma0)
    return integrate.quad(f, z0, z0 + 40.0, epsabs=0.0, epsrel=1e-12, limit=200)[0] / math.sqrt(2 * math.pi) / g


@pytest.mark.parametrize("gamma, sigma0, n, eps", [
    (0.020104468458158786, 0.45659017565152327, 10**8, 0.1),
    (0.013286438947208885, 0.39542028612923635, 10**8, 1.0),
    (0.01424190084729267, 0.4049056344211431, 10**9, 0.1),
    (0.0, 0.7311865240802866, 10**8, 0.1),
    (0.0, 0.644573498338116, 10**8, 1.0),
])
def test_jensen_correction_is_the_second_order_smoothing(gamma, sigma0, n, eps):
    tau = _tau(gamma, sigma0, n, eps)
    assert tau == pytest.approx(big_jump_estimate(gamma, sigma0, n, eps), rel=1e-6)
    ee1 = math.expm1(eps)
    w = gamma if gamma > 0.0 else 2.0 * 0.5 * math.erfc(1.0 / sigma0 / math.sqrt(2.0))
    t = (n - 1) * w * ee1
    # f_L(T) = tau''(T) by a central difference of the quadrature
    h = 1e-3 * t
    dens = (_tau(gamma, sigma0, n, eps, h) - 2.0 * tau + _tau(gamma, sigma0, n, eps, -h)) / (h * h)
    # V from the model's own definition is checked through the ratio: corr / (V f / (2 tau)) with V recomputed here
    if gamma > 0.0:
        var_l = (1.0 - gamma) ** 2 * math.expm1(sigma0 ** -2)
    else:
        r, z_lo = 2.0 / sigma0, 1.0 / sigma0
        m1 = 0.5 * math.erfc((z_lo - r) / math.sqrt(2.0))
        var_l = w * math.exp(r * r) * 0.5 * math.erfc((z_lo - 2.0 * r) / math.sqrt(2.0)) - m1 * m1
    var_y = (n - 1) * (w * (var_l + ee1 * ee1) - w * w * ee1 * ee1)
    corr = big_jump_jensen(gamma, sigma0, n, eps)
    assert corr == pytest.approx(0.5 * var_y * dens / tau, rel=2e-3)
    # ... and it is the small-V limit of the Gaussian smoothing E[(L - T - Y)_+], Y ~ N(0, s^2), by quadrature
    for s in (0.02 * t, 0.01 * t):
        ys, wts = np.polynomial.hermite_e.hermegauss(40)
        smooth = sum(wt * _tau(gamma, sigma0, n, eps, s * y) for y, wt in zip(ys, wts)) / math.sqrt(2.0 * math.pi)
        excess = smooth / tau - 1.0
        assert excess == pytest.approx(corr * s * s / var_y, rel=0.05), (s / t, excess, corr * s * s / var_y)


def test_jensen_start_gate():
    assert jensen_start(10**7, 0.02) and jensen_start(10**9, 8.0)
    assert not jensen_start(10**7, 0.01) and not jensen_start(10**6, 1.0)


@pytest.mark.parametrize("kind, n, eps", [("bmg", 10**8, 0.1), ("gauss", 10**7, 0.05)])
def test_one_certifying_evaluation_and_certified(kind, n, eps):
    clear_caches()
    if kind == "bmg":
        rep = calibrate_bmg_report(n, eps, DELTA, 1)
        r = BlanketMixedGaussian(rep.randomizer.gamma, rep.randomizer.sigma0, 1)
    else:
        rep = calibrate_gaussian_report(n, eps, DELTA)
        r = GaussianRandomizer(rep.randomizer.sigma0, 1)
    assert rep.evaluations == 1  # (main 15710f7: 2, the start certified above delta: docs/calibration.md §10)
    assert rep.delta_bounds[1] <= DELTA
    clear_caches()
    _, up = ShuffleAccountant(r, n, rel_tol=1e-3).get_delta_bounds(eps)
    assert float(up) <= DELTA, float(up) / DELTA
