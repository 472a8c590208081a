"""Review rev45 (session 45): attack on pair45's docs/composition.md §2.28.4 (``limits.PAIR45_SETTLED_BMG``: §2.26's
settled cover, samples upper first covered by U (1 + m), for zero-out BlanketMixedGaussian rounds). Skipped while the
switch is absent (branch pair45).

Claim attacked: the pair dominates (Claim A of §2.26.3: every pair value at or above the profile). pair45 measured BMG
rounds with gamma > 0 at n = 1e2-1e6; the gate (``isinstance(randomizer, BlanketMixedGaussian)``) also admits
GaussianRandomizer (the gamma = 0 BMG subclass) under zero-out and rounds at n >= 1e7 (the far-tail engine's upper
values first). Reference: a fresh accountant at rel_tol 1e-3 (switch off): its certified lower values at the pair's
samples and midpoints must be at or below the pair's values (else the pair under-reports). (GaussianRandomizer(2),
n = 1e6 passed too: 470 s under a load of 13, not kept.)
"""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch
from _rev44_spy import spy

pytestmark = pytest.mark.skipif(not hasattr(limits, "PAIR45_SETTLED_BMG"), reason="rule of a branch not merged")

ROUNDS = {"gauss1_1e4": (lambda: GaussianRandomizer(1.0, 1), 10**4),
          "bmg_1e7": (lambda: BlanketMixedGaussian(0.0133, 0.395, 1), 10**7)}


@pytest.mark.parametrize("name", list(ROUNDS))
def test_pair_at_or_above_certified_lower_values(monkeypatch, name):
    from sharpdp.shuffle import dominating_pair, pair_accuracy, pair_settled as ps

    mk, n = ROUNDS[name]
    switch(monkeypatch, "PAIR43_SETTLED_COVER", True)
    calls = spy(monkeypatch, "settled_values", ps, pair_accuracy)
    with monkeypatch.context() as mp:
        switch(mp, "PAIR45_SETTLED_BMG", True)
        pair = dominating_pair(ShuffleAccountant(mk(), n), progress=False)
    clear_caches()
    assert sum(int(np.sum(out[1])) for _, out in calls) > 0  # (the rule covered samples)
    se = np.asarray(pair.sample_epsilons)
    pts = np.unique(np.concatenate([se, 0.5 * (se[1:] + se[:-1])]))
    pts = pts[np.unique(np.linspace(0, pts.size - 1, 16).astype(int))]
    with monkeypatch.context() as mp:
        switch(mp, "PAIR45_SETTLED_BMG", False)
        los = np.asarray(ShuffleAccountant(mk(), n, rel_tol=1e-3).get_delta_bounds(pts)[0])
        clear_caches()
    d = np.asarray(pair.get_delta(pts))
    assert np.all(d >= los * (1 - 1e-12)), (pts[np.argmin(d / np.maximum(los, 1e-300))],
                                            float(np.min(d / np.maximum(los, 1e-300))))
