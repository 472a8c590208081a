"""LognormalLaw's scalar paths give the same bytes as its vectorised ones.

interval_prob, the law's V-coordinate map and V-interval take a scalar path for one float argument (a
speed-up of the accountant's many scalar probabilities, sharpdp/shuffle/laws/lognormal.py); each must
give exactly the value of the vectorised path on a one-element array (which is the original code), on
ordinary and on edge inputs (+-0, +-inf, NaN, subnormals, the ndtr flush range below -37.5), for
one-term laws of either sign and two-term (replace-one) laws, truncated or not.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sharpdp.shuffle import LognormalLaw
from sharpdp.shuffle.laws.lognormal import interval_prob

EDGES = [0.0, -0.0, 1.0, -1.0, 37.6, -37.6, -38.0, -40.0, -101.0, -1e200, 1e300, math.inf, -math.inf, math.nan,
         5e-324, -5e-324, 8.3, -8.3]


def _bytes(v) -> bytes:
    return np.asarray(v, dtype=float).reshape(-1).tobytes()


def test_interval_prob_scalar_equals_array():
    zs = EDGES + list(np.random.default_rng(1).normal(size=40) * 20)
    with np.errstate(all="ignore"):
        for z1, z2 in itertools.product(zs, zs):
            p, e = interval_prob(z1, z2)
            pa, ea = interval_prob(np.array([z1]), np.array([z2]))
            assert type(p) is np.float64 and type(e) is np.float64
            assert _bytes(p) == _bytes(pa) and _bytes(e) == _bytes(ea), (z1, z2, p, pa, e, ea)


LAWS = [(0.3, 1.2, 0.8, -math.inf, 1.0, 0.0), (-2.0, -0.7, 1.5, 0.4, 3.0, 0.0), (1.0, 2.0, 0.05, -1.0, 0.5, -1.5),
        (0.0, -1e-3, 7.0, -math.inf, 1.0, 2e-3), (5.0, 1e4, 30.0, -math.inf, 2.0, 0.0), (0.0, 0.0, 1.0, -math.inf, 1.0, 1.0)]


@pytest.mark.parametrize("params", LAWS)
def test_v_and_vint_scalar_equal_array(params):
    law = LognormalLaw(*params)
    a, sc = law.a, abs(law.b) + abs(law.b_minus)
    rng = np.random.default_rng(2)
    xs = EDGES + [a, a + sc * 1e-12, a - sc * 1e-12, 1e308, -1e308]
    xs += list(a + rng.normal(size=30) * sc * 10.0 ** rng.uniform(-8, 3, size=30))
    for x in xs:
        v = law._v(x)
        assert isinstance(v, np.ndarray) and v.shape == ()
        assert _bytes(v) == _bytes(law._v(np.array([x]))), (params, x)
        for x2 in xs[::3]:
            lo, hi = law._vint(x, x2)
            la, ha = law._vint(np.array([x]), np.array([x2]))
            assert type(lo) is np.float64 and type(hi) is np.float64
            assert _bytes(lo) == _bytes(la) and _bytes(hi) == _bytes(ha), (params, x, x2)


@pytest.mark.parametrize("params", LAWS)
def test_tails_and_probabilities_use_the_same_values_as_cells(params):
    """prob_below / prob_above / tail_upper (scalar paths) against stop_loss and the cells' masses (vector
    paths) on the same law: the probabilities of a partition add up, and the tail equals stop_loss' value."""
    law = LognormalLaw(*params)
    lo, hi = law.support()
    x = law.a + 0.37 * (abs(law.b) + abs(law.b_minus))
    if not (lo < x < hi):
        x = law.mean()
    pb, eb = law.prob_below(x)
    pa, ea = law.prob_above(x)
    assert abs(pb + pa - law.total_mass()) <= eb + ea + 1e-15
    up = law.tail_upper(x)
    slo, sup = law.stop_loss(np.array([x]))
    assert slo[0] <= up * (1 + 1e-9) and up <= sup[0] * (1 + 1e-9) + 1e-300
