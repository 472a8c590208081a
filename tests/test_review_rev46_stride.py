"""Review rev46 (session 46): attack on pair46's docs/composition.md §2.29 (``limits.PROFILE46_STRIDE``: privacy_profile's
own sweep certifies some eps and gives the others the chord in e^eps of certified ends). Claim: every profile value
stays at or above the true profile (the profile is convex in t = e^eps, so a chord of certified upper values is
above it). Skipped while the switch is absent.

pair46 checked a Gaussian round and k-RR (replace) at the rule's own parameters. Here the rule is pushed to its limits
(``PROFILE46_STRIDE_AIM`` = 1e6: every predicted stride accepted; ``PROFILE46_STRIDE_MAX`` = 64: long strides) so chords
span wide eps ranges, on eps grids that are uneven and of both signs (the negative eps through the swap identity):
BMG(0.3, 0.5) and GaussianRandomizer(0.6) at n = 2, zero-out, against the mpmath quadrature of the mechanism's output
densities (tests/_bmg_reference.py). (3-RR zero-out at n = 30 took no chord: not kept.)
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _bmg_reference import reference
from _main_floats34 import switch

pytestmark = pytest.mark.skipif(not hasattr(limits, "PROFILE46_STRIDE"), reason="rule of a branch not merged")


def _profile(monkeypatch, acc, eps: np.ndarray) -> np.ndarray:
    from sharpdp.shuffle import profile_stride

    profile_stride.LAST.clear()
    with monkeypatch.context() as mp_:
        switch(mp_, "PROFILE46_STRIDE", True)
        switch(mp_, "PROFILE46_STRIDE_AIM", 1e6)
        switch(mp_, "PROFILE46_STRIDE_MAX", 64)
        out = np.asarray(acc.privacy_profile(eps), dtype=float)
        clear_caches()
    assert profile_stride.LAST.get("filled", 0) >= 3, profile_stride.LAST  # (chords were given: the rule ran)
    return out


EPS_BMG = np.concatenate([np.linspace(0.0, 1.0, 40) ** 2 * 9.0, [-0.3, -0.05]])


@pytest.mark.parametrize("g, s", [(0.3, 0.5), (0.0, 0.6)])
def test_n2_profile_with_long_strides_above_quadrature(monkeypatch, g, s):
    R = GaussianRandomizer(s, 1) if g == 0 else BlanketMixedGaussian(g, s, 1)
    eps = np.sort(EPS_BMG)
    prof = _profile(monkeypatch, ShuffleAccountant(R, 2), eps)
    picks = [i for i in range(eps.size) if i % 3 == 1 or eps[i] < 0]
    with mp.workdps(30):
        for i in picks:
            e = float(eps[i])
            if e >= 0:
                ref = float(reference(g, s, e, "zero_out", 2))
            else:  # (the swap identity: delta(-e) = 1 - e^-e (1 - delta(e)) of the other order; max over orders at +e)
                ref = 1.0 - math.exp(e) * (1.0 - float(reference(g, s, -e, "zero_out", 2)))
            assert prof[i] >= ref * (1 - 1e-9) - 1e-15, (e, prof[i], ref)
