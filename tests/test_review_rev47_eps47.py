"""Review rev47 (session 47): eps47's docs/accountant.md §8.27.1 and docs/calibration.md §18 (``limits.EPS47_CALL_HEAP``:
get_delta_bounds, get_epsilon and the calibrations run whole inside the kept C heap at n >= 1e7; claimed speed only,
the same floats). Attack: the same doubles with the switch on and off in one process, in an order that interleaves
the scopes (on, off, on; a nested swap-identity call through privacy_profile's negative eps; a call that raises inside
the scope first), and the scope's depth back at 0 after each (else malloc's thresholds would stay raised for the rest
of the process, or a later scope would never lower them). Skipped while the switch is absent (eps47 not merged)."""

from __future__ import annotations

import math

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import heap_keep, limits

from _main_floats34 import switch

pytestmark = pytest.mark.skipif(not hasattr(limits, "EPS47_CALL_HEAP"), reason="rule of a branch not merged (eps47)")


def _calls(mk, n, eps, delta):
    acc = mk()
    out = [float(x).hex() for x in ShuffleAccountant(acc, n).get_delta_bounds(eps)]
    clear_caches()
    out.append(float(ShuffleAccountant(mk(), n).get_epsilon(delta)).hex())
    clear_caches()
    out += [float(x).hex() for x in ShuffleAccountant(mk(), n).privacy_profile([-0.01, eps])]
    clear_caches()
    assert heap_keep._depth == 0
    return out


@pytest.mark.parametrize("g, s, n, eps, delta", [(0.0389, 0.529, 10**8, 0.01, 1e-6), (0.0, 0.8, 10**7, 0.01, 1e-4)])
def test_same_doubles_on_off_on(monkeypatch, g, s, n, eps, delta):
    mk = (lambda: GaussianRandomizer(s, 1)) if g == 0 else (lambda: BlanketMixedGaussian(g, s, 1))  # noqa: E731
    got = []
    for on in (True, False, True):
        with monkeypatch.context() as m:
            switch(m, "EPS47_CALL_HEAP", on)
            if on:  # a call that raises inside the scope first: the scope must unwind
                with pytest.raises((ValueError, TypeError)):
                    ShuffleAccountant(mk(), n).get_delta_bounds(math.nan)
                assert heap_keep._depth == 0
            got.append(_calls(mk, n, eps, delta))
    assert got[0] == got[1] == got[2], got


def test_calibration_same_doubles_on_off(monkeypatch):
    """docs/calibration.md §18.1: calibrate_gaussian at n = 1e7 (one scope over its evaluations), on vs off."""
    from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian

    got = []
    for on in (True, False):
        with monkeypatch.context() as m:
            switch(m, "EPS47_CALL_HEAP", on)
            got.append(float(calibrate_gaussian(10**7, 0.05, 1e-6).sigma0).hex())
            clear_caches()
        assert heap_keep._depth == 0
    assert got[0] == got[1], got
