"""Review rev33 of session 33's one default lattice per round (lat33, the composition document's §4.6: ComposedAccountant's
and dominating_pair's default step = the export step, ``shuffle/export_step.py``). Only a resolution choice; the claims
attacked: the composed values on the new default lattice stay certified (at k = 1 not below the round's certified
lower value; at any k not below the composition of the same pair by dp_accounting, an independent implementation),
and the three consumers share one step.

References: dp_accounting's PrivacyLossDistribution of the same pair (``interop.dp_accounting.pld_from_pair``)
composed by ``self_compose`` with no tail truncation (dp_accounting's default truncation 1e-15 adds up to ~1e-15 of
pessimistic mass: the composed values below 1e-13 are not compared), and the accountant's certified lower values.

Review sweep (lat33 at b01689e): GaussianRandomizer(2) n = 1e4, k-RR(2, 2) n = 1e3, BMG(0.0653, 0.7227) n = 1e4 (zero
out), k = 1 and 10, 8 eps each: the pair route's value / dp_accounting's in [0.99999, 1.000014] where delta >= 1e-13
and dp_accounting's value is not dominated by its truncation; the reported upper value >= the round's certified lower
value at k = 1 everywhere.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, ComposedAccountant, RandomizedResponse, ShuffleAccountant, clear_caches

dpa = pytest.importorskip("sharpdp.interop.dp_accounting")
export_step = pytest.importorskip("sharpdp.shuffle.export_step")  # (lat33's module: skip before its merge)

def _composed_delta(pair, k: int, eps: float) -> float:
    """The hockey-stick divergence of the k-fold product of ``pair`` at eps by direct convolution of its P-masses on
    the loss lattice (numpy's direct convolution of non-negative arrays: relative error ~k n u per entry, no FFT),
    exact sums by math.fsum; the mass at +inf 1 - (1 - infinity_mass)^k."""
    lo = int(pair.losses[0])
    base = np.zeros(int(pair.losses[-1]) - lo + 1)
    base[pair.losses - lo] = pair.probs
    p = base
    for _ in range(k - 1):
        p = np.convolve(p, base)
    loss = (k * lo + np.arange(p.size)) * pair.value_discretization_interval
    sel = loss > eps
    inf = -math.expm1(k * math.log1p(-pair.infinity_mass))
    return math.fsum((p[sel] * -np.expm1(eps - loss[sel])).tolist()) + inf


CELLS = [
    (lambda: RandomizedResponse(2, 2.0), 1000, (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)),
    (lambda: BlanketMixedGaussian(0.0653, 0.7227, 1), 10**4, (0.0, 0.9, 1.8, 2.6, 3.5, 5.2)),
]


@pytest.mark.parametrize("make, n, eps", CELLS)
def test_default_lattice_composition_against_dp_accounting(make, n, eps):
    clear_caches()
    acc = ShuffleAccountant(make(), n, "zero_out")
    step = dpa.export_interval(acc)
    for k in (1, 2, 10):
        ca = ComposedAccountant([(acc, k)])
        assert ca.value_discretization_interval == step  # (one step: the export step)
        pair = ca.pairs()[0]
        assert pair.value_discretization_interval == step
        pld = dpa.pld_from_pair(pair)
        if k > 1:
            pld = pld.self_compose(k, tail_mass_truncation=0.0)
        for e in eps:
            ref = float(pld.get_delta_for_epsilon(e))
            lo, up = ca.get_delta_bounds(e)
            pair_up = float(ca._bracket(e)[1])  # (the pair route alone; the reported value may be basic composition's)
            assert pair_up >= ref * (1.0 - 1e-9) - 1e-14, (k, e, pair_up, ref)  # (dp_accounting's FFT: ~1e-15 absolute)
            if k <= 3:
                exact = _composed_delta(pair, k, e)
                assert pair_up >= exact * (1.0 - 1e-12), (k, e, pair_up, exact)
            if k == 1:
                r_lo = float(acc.get_delta_bounds(e)[0])
                assert float(up) >= r_lo, (e, up, r_lo)
