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

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch

pytestmark = pytest.mark.skipif(not hasattr(limits, "EPS44_SHAPE_START"), reason="rule of a branch not merged")


def _on(monkeypatch) -> None:
    for name in ("EPS44_SHAPE_START", "EPS44_SHAPE_ONE", "CAL44_SHAPE_START"):
        if hasattr(limits, name):
            switch(monkeypatch, name, True)
    if hasattr(limits, "EPS44_REFIT_STOP"):
        switch(monkeypatch, "EPS44_REFIT_STOP", 0.3)  # (the value §8.24.2 measured)


@pytest.mark.parametrize("make, n, delta", [("gauss05", 10**5, 1e-6), ("gauss46", 10**5, 1e-6),
                                            ("gauss2", 10**4, 1e-6)])
def test_get_epsilon_answer_certified(monkeypatch, make, n, delta):
    """The cells of §8.24.4 whose answers moved or whose passes fell (GaussianRandomizer(0.5) and (4.6), n = 1e5;
    GaussianRandomizer(2), n = 1e4: the refit's stop): a fresh get_delta at the answer <= delta (§8's contract) and a
    fresh rel_tol-1e-3 lower value there <= delta (else the divergence at the answer exceeds delta)."""
    _on(monkeypatch)
    sig = {"gauss05": 0.5, "gauss46": 4.6, "gauss2": 2.0}[make]
    eps = float(ShuffleAccountant(GaussianRandomizer(sig, 1), n).get_epsilon(delta))
    clear_caches()
    up = ShuffleAccountant(GaussianRandomizer(sig, 1), n).get_delta(eps)
    clear_caches()
    lo, _ = ShuffleAccountant(GaussianRandomizer(sig, 1), n, rel_tol=1e-3).get_delta_bounds(eps)
    clear_caches()
    assert up <= delta, ("a fresh get_delta at the answer above delta", eps, up, delta)
    assert lo <= delta, ("delta(eps*) above the target", eps, lo, delta)


@pytest.mark.parametrize("eps, delta", [(0.001, 1e-6)])
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
