"""The pair's samples are refined only where delta >= 1e-13 (docs/composition.md §2.2): below it no
sample is spent on relative accuracy (the costliest values to certify), and the pair still lies
above the accountant's certified values everywhere."""

from __future__ import annotations

import numpy as np

import sharpdp.shuffle as sh
from sharpdp.shuffle.profile import clear_caches, dominating_pair


def test_pair_refines_only_above_1e_minus_13():
    clear_caches()
    make = lambda: sh.ShuffleAccountant(sh.BlanketMixedGaussian(gamma=0.9, sigma0=3.0, dim=1), 2000)  # noqa: E731
    pair = dominating_pair(make(), 2e-5, rel_tol=2e-2, progress=False)
    sd = pair.sample_deltas
    # below 1e-13 only the search for eps_max (doubling, probes), the even start points there and
    # the point where a refined segment crosses 1e-13 remain (3 here; the refinement down to 1e-15
    # of the previous floor took 6)
    assert (sd < 1e-13).sum() <= 4, np.sort(sd)[:12]
    assert (sd >= 1e-13).sum() >= 40
    assert sd.min() <= 1e-18  # eps_max still found at delta_floor
    # the pair dominates the accountant's certified values on a dense grid (both sides of 1e-12)
    clear_caches()
    eps = np.linspace(0.0, 6e-3, 31)
    ref = make().get_delta(eps)
    assert ref[-1] < 1e-15 and ref[0] > 1e-6
    assert np.all(pair.get_delta(eps) >= ref)
