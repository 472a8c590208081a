"""Review rev44 (session 44): attack on eps44's docs/accountant.md §8.24 (``limits.EPS44_SHAPE_START``,
``EPS44_SHAPE_ONE``, ``EPS44_REFIT_STOP``: get_epsilon's phase 1 from the shape model's root; choices of points only)
and docs/calibration.md §16 (``limits.CAL44_SHAPE_START``: calibrate_gaussian's start from the shape model). Skipped
while the switches are absent (branch eps44).

Claims attacked: (1) get_epsilon's answer eps* is certified: delta(eps*) <= delta, so a fresh accountant's lower value
at eps* at rel_tol 1e-3 is <= delta (else an under-report); (2) the calibrated sigma0 is certified: a fresh
rel_tol-1e-3 lower value at sigma0 <= delta.
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch

pytestmark = pytest.mark.skipif(not hasattr(limits, "EPS44_SHAPE_START"), reason="rule of a branch not merged")


def _on(monkeypatch) -> None:
    for name in ("EPS44_SHAPE_START", "EPS44_SHAPE_ONE", "CAL44_SHAPE_START"):
        if hasattr(limits, name):
            switch(monkeypatch, name, True)


@pytest.mark.parametrize("make, n, delta", [("gauss1", 10**6, 1e-6), ("gauss2", 10**8, 1e-6),
                                            ("bmg", 10**7, 1e-8)])
def test_get_epsilon_answer_certified(monkeypatch, make, n, delta):
    _on(monkeypatch)
    rand = {"gauss1": lambda: GaussianRandomizer(1.0, 1), "gauss2": lambda: GaussianRandomizer(2.0, 1),
            "bmg": lambda: BlanketMixedGaussian(0.1, 0.6, 1)}[make]
    eps = float(ShuffleAccountant(rand(), n).get_epsilon(delta))
    clear_caches()
    lo, up = ShuffleAccountant(rand(), n, rel_tol=1e-3).get_delta_bounds(eps)
    clear_caches()
    assert lo <= delta, ("delta(eps*) above the target", eps, lo, delta)


@pytest.mark.parametrize("eps, delta", [(0.01, 1e-6), (0.003, 1e-7)])
def test_calibrated_sigma_certified(monkeypatch, eps, delta):
    from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian_report

    _on(monkeypatch)
    n = 10**8
    rep = calibrate_gaussian_report(n, eps, delta)
    s0 = rep.randomizer.sigma0
    assert float(rep.delta_bounds[1]) <= delta
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(s0, 1), n, rel_tol=1e-3).get_delta_bounds(eps)
    clear_caches()
    assert lo <= delta, ("the divergence at the calibrated sigma0 exceeds delta", s0, lo, delta)
