"""Review rev43 (session 43): attack on eps43's docs/calibration.md §15 (``calibration/cheap_cert.py``,
``limits.CAL43_CHEAP_CERT``, off: calibrate_gaussian's certifying evaluation tried first at rel_tol 0.1 at n = 1e8).
Skipped while the module is absent (branch eps43).

Claims attacked, with the switch on (Lemma 15.1): the calibrated sigma0 is certified at (eps, delta): a fresh accountant
at the report's rel_tol reproduces the report's bracket bit for bit, its upper value <= delta, and a fresh accountant
at ANOTHER rel_tol (0.02, the usual certifying one) has its lower value <= delta (else the blanket divergence at sigma0
would exceed delta: an under-report); the rule ran (a call at rel_tol 0.1 decided the point) on the (1e8, 0.01) cell.
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches

from _main_floats34 import switch

cc = pytest.importorskip("sharpdp.shuffle.calibration.cheap_cert")


@pytest.mark.parametrize("eps, ran", [(0.01, True), (0.003, False)])
def test_cheap_certified_sigma(monkeypatch, eps, ran):
    from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian_report
    from sharpdp.shuffle.accountant import limits

    switch(monkeypatch, "CAL43_CHEAP_CERT", True)
    n, delta = 10**8, 1e-6
    rep = calibrate_gaussian_report(n, eps, delta)
    s0 = rep.randomizer.sigma0
    rel = float(rep.rel_tol)
    if ran:
        assert rel == float(limits.CAL43_CHEAP_REL)
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(s0, 1), n, rel_tol=rel).get_delta_bounds(eps)
    assert up <= delta
    assert (lo, up) == tuple(rep.delta_bounds)
    clear_caches()
    lo2, up2 = ShuffleAccountant(GaussianRandomizer(s0, 1), n, rel_tol=0.02).get_delta_bounds(eps)
    clear_caches()
    assert lo2 <= delta and max(lo, lo2) <= min(up, up2), ((lo, up), (lo2, up2))
