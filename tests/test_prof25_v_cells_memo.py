"""The numerical mgf's cells kept per law object (python/sharpdp/shuffle/accountant/mgf.py, v_cells): the kept cells
at (T0, cells) are the arrays a fresh law gives, in any order of the requests, read-only, and the upper Riemann sum
built on them (mgf_h_up) still bounds E h(kap (V - c)), V = min(L, T0), h(u) = e^u - 1 - u, from above (mpmath
quadrature over L's normal variable: an independent reference)."""

import mpmath as mp
import numpy as np
import pytest

from sharpdp.shuffle.accountant.mgf import mgf_h_up, v_cells
from sharpdp.shuffle.laws.lognormal import LognormalLaw

PARAMS = [(-0.9591059043809976, 0.9591059043809976, 1.6778143723612764), (-2.677, 0.959, 1.678)]


@pytest.mark.parametrize("p", PARAMS)
def test_kept_cells_are_the_fresh_arrays_in_any_order(p):
    law = LognormalLaw(*p)
    keys = [(5.0, 0), (5.0, 256), (40.0, 0), (5.0, 0), (40.0, 0), (5.0, 256)]
    got = [v_cells(law, T0, c) for T0, c in keys]
    assert len(law._v_cells_memo) == 3
    for (T0, c), g in zip(keys, got):
        fresh = v_cells(LognormalLaw(*p), T0, c)
        for x, y in zip(g, fresh):
            assert not x.flags.writeable
            np.testing.assert_array_equal(x, y)
    assert got[0][1].size != got[1][1].size and got[0][1][-1] == 5.0 and got[2][1][-1] == 40.0  # (a wrong key shows)


@pytest.mark.parametrize("p", PARAMS)
def test_mgf_on_kept_cells_bounds_the_quadrature(p):
    mp.mp.dps = 30
    a, G, r = (mp.mpf(x) for x in p)
    law = LognormalLaw(*p)
    T0, kap, c = 6.0, 0.4, float(p[0] + p[1])
    for _ in range(2):  # (the second call reads the kept cells)
        up = mgf_h_up(law, T0, kap, c)

        def f(z):
            v = min(a + G * mp.exp(r * z - r * r / 2), mp.mpf(T0))
            u = kap * (v - c)
            return (mp.exp(u) - 1 - u) * mp.npdf(z)

        ref = float(mp.quad(f, [-mp.inf, -5, 0, 2, 5, mp.inf]))
        assert ref <= up <= ref * 1.05 + 1e-12
