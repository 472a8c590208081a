"""Review rev46 (session 46): attack on docs/composition.md §2.28.2's restated export claim (main, every switch at its
default): the exported pair is within 1 % above ``get_delta`` at the lattice points k Delta where ``get_delta`` >=
1e-12, and at any other eps within 1 % above the chord in t = e^eps of ``get_delta``'s values at the two lattice points
around it (where its left end is >= 1e-12); and never below the accountant's certified lower value.

pair45 checked five k-RR rounds at n = 30-100 (tests/test_pair45_support_end.py). Here rounds of other randomizers and
sizes, both engines: BMG(0.1, 0.4) and GaussianRandomizer(1.5) at n = 1e4 (far-tail engine, zero-out), PrivUnit(0.97,
0.7, 3) at n = 1e3 (replace, atom law) and 10-RR (eps0 = 4) at n = 1e5 (replace). Lattice points spread over the range
where get_delta >= 1e-12 and eps at 0.37 / 0.81 of a step past them. Reference: a fresh accountant (its get_delta; its
rel_tol 1e-3 lower value for the pair's floor). Measured before (16:10 UTC, with PAIR45_SETTLED_BMG on, 6 zero-out BMG
/ Gaussian rounds at n = 1e3-1e5, 40 lattice points each): worst 1.0066 x get_delta.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant, clear_caches
from sharpdp.shuffle import dominating_pair
from sharpdp.shuffle.randomizers.privunit import PrivUnit

GOAL = 1.01
ACCURATE = 1e-12

ROUNDS = {"bmg_1e4": (lambda: BlanketMixedGaussian(0.1, 0.4, 1), 10**4, "zero_out"),
          "gauss_1e4": (lambda: GaussianRandomizer(1.5, 1), 10**4, "zero_out"),
          "privunit_1e3": (lambda: PrivUnit(0.97, 0.7, 3), 10**3, "replace"),
          "krr10_1e5": (lambda: RandomizedResponse(10, 4.0), 10**5, "replace")}


@pytest.mark.parametrize("name", list(ROUNDS))
def test_export_within_its_claimed_domain(name):
    mk, n, adj = ROUNDS[name]
    clear_caches()
    pair = dominating_pair(ShuffleAccountant(mk(), n, adj), progress=False)
    dx = float(pair.value_discretization_interval)
    se, sd = np.asarray(pair.sample_epsilons), np.asarray(pair.sample_deltas)
    top = int(se[np.flatnonzero(sd >= 10 * ACCURATE)[-1]] / dx)
    ks = np.unique(np.linspace(0, max(top - 1, 1), 7).astype(int))
    fresh = ShuffleAccountant(mk(), n, adj)
    tight = ShuffleAccountant(mk(), n, adj, rel_tol=1e-3)
    gd = dict(zip(ks.tolist() + (ks + 1).tolist(),
                  np.asarray(fresh.get_delta(np.concatenate([ks, ks + 1]) * dx), dtype=float).tolist()))
    checked = 0
    for k in ks.tolist():
        a, b = k * dx, (k + 1) * dx
        fa, fb = gd[k], gd[k + 1]
        if fa >= ACCURATE:
            assert pair.get_delta(a) <= GOAL * fa, (name, a, pair.get_delta(a) / fa)
            checked += 1
            for frac in (0.37, 0.81):
                e = a + frac * dx
                w = math.exp(e - a) * math.expm1(b - e) / math.expm1(b - a)
                ch = fb + w * (fa - fb)
                d = pair.get_delta(e)
                assert d <= GOAL * ch, (name, e, d / ch)
                lo = float(tight.get_delta_bounds(e)[0])
                assert d >= lo * (1 - 1e-12), (name, e, d, lo)
    clear_caches()
    assert checked >= 4
