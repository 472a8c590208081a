"""Review rev44 (session 44): attack on docs/calibration.md §15 (``limits.CAL43_CHEAP_CERT``, on since session 43:
calibrate_gaussian's certifying evaluation tried first at rel_tol 0.1 at n = 1e8), at cells rev43
(tests/test_review_rev43_cheapcert.py: eps = 0.01 and 0.003 at delta = 1e-6) did not run.

Claim (Lemma 15.1): the calibrated sigma0 is certified, the true blanket divergence at sigma0 is <= delta. Attack: a
fresh accountant at rel_tol 1e-3 (ten times finer than any the calibration runs) brackets the divergence tightly; its
lower value must be <= delta (else the divergence exceeds delta: an under-report), and its bracket must meet the
report's. The rule ran (the report's rel_tol is CAL43_CHEAP_REL) on each cell.
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch

CELLS = [(0.01, 1e-8), (0.009, 1e-7)]  # (cells where the rel_tol-0.1 call decided the point: measured)


@pytest.mark.parametrize("eps, delta", CELLS)
def test_cheap_certified_sigma_against_a_finer_accountant(monkeypatch, eps, delta):
    from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian_report

    switch(monkeypatch, "CAL43_CHEAP_CERT", True)
    n = 10**8
    rep = calibrate_gaussian_report(n, eps, delta)
    s0 = rep.randomizer.sigma0
    lo, up = (float(v) for v in rep.delta_bounds)
    assert up <= delta
    assert float(rep.rel_tol) == float(limits.CAL43_CHEAP_REL)  # (the rule decided the point)
    clear_caches()
    flo, fup = ShuffleAccountant(GaussianRandomizer(s0, 1), n, rel_tol=1e-3).get_delta_bounds(eps)
    clear_caches()
    assert flo <= delta, ("the divergence at the calibrated sigma0 exceeds delta", s0, flo, delta)
    assert max(lo, flo) <= min(up, fup), ((lo, up), (flo, fup))

