"""The floating-point-unsafe samplers refuse to act as a release (docs/sampling.md §6, §10.6).

``PrivUnit.sample`` and ``GeneralRandomizer.sample`` draw float messages that are not what the
accountant certifies. With ``rng=None`` (the secure generator, i.e. a release) they raise unless
``allow_unsafe_float=True``; seeded calls (research mode) keep working. The last test shows why
with a porosity attack (Mironov, "On Significance of the Least Significant Bits for Differential
Privacy", 2012): a PrivUnit message from one input is impossible under a neighbouring input.
PrivUnit's floating-point-safe release is ``LatticePrivUnit`` (docs/sampling.md §10.6; its
attack tests, which this float sampler fails, are in tests/test_privunit_lattice_attacks.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sharpdp.shuffle import GeneralRandomizer, PrivUnit, ShuffleAccountant
from tests._densities import half, lifted_rr


@pytest.fixture(scope="module")
def general():
    return GeneralRandomizer(lifted_rr, [-1.0, 1.0], (-1.0, 1.0), blanket=half, gamma=1 - math.tanh(0.5),
                             breakpoints=[0.0], cells=16)


def test_privunit_refuses_a_release():
    pu = PrivUnit(0.7, 0.2, 3)
    x = np.eye(3)
    with pytest.raises(ValueError, match=r"rng=None.*not floating-point safe.*§10\.6.*allow_unsafe_float=True"):
        pu.sample(x)
    with pytest.raises(ValueError, match="allow_unsafe_float"):
        pu.sample(x, rng=None, threads=1)
    with pytest.raises(TypeError, match="allow_unsafe_float"):
        pu.sample(x, allow_unsafe_float="yes")
    y = pu.sample(x, allow_unsafe_float=True)  # research opt-in: secure generator, float messages
    assert y.shape == (3, 3)
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), 1.0, rtol=0, atol=1e-12)
    # seeded (research mode) still works and does not depend on the opt-in
    np.testing.assert_array_equal(pu.sample(x, rng=3), pu.sample(x, rng=3, allow_unsafe_float=True))
    # bad input is still reported first, naming x
    with pytest.raises(ValueError, match="x"):
        pu.sample(np.ones((4, 3)))


def test_general_refuses_a_release_and_names_discretize(general):
    x = np.array([-1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"not floating-point safe.*discretize\(\).*allow_unsafe_float=True"):
        general.sample(x)
    with pytest.raises(TypeError, match="allow_unsafe_float"):
        general.sample(x, allow_unsafe_float=1)
    y = general.sample(x, allow_unsafe_float=True)
    assert y.shape == x.shape and np.all(np.abs(y) <= 1.0)
    np.testing.assert_array_equal(general.sample(x, rng=4), general.sample(x, rng=4, allow_unsafe_float=True))
    # the safe route named by the error releases without an opt-in
    fr = general.discretize()
    assert fr.floating_point_safe
    assert fr.sample(x).shape == x.shape


def test_privunit_float_messages_are_porous():
    """Why the refusal: for the input e1 the first coordinate of a message is T = <Y, e1> itself,
    1 - 2B or 2B - 1 with B a double, hence always a multiple of 2^-53 (Sterbenz's lemma below
    |T| = 1/2, rounding to the 2^-53 grid above); for the input e2 it is the float product s*g_0,
    whose low bits are generic. The event A = {|Y_0| < 1/4, Y_0 not on 2^-53 Z} is impossible
    under e1 and has probability ~0.2 under e2, so delta(eps) >= P(A | e2) - e^eps P(A | e1) ~ 0.2
    at every eps, where PrivUnit (local epsilon ~1.25) certifies delta(2) = 0 for n = 1 (and,
    with all other users at e1, the same event in the shuffled messages gives the same bound at
    any n). A Clopper-Pearson style allowance: the observed P(A | e2) minus 5 standard errors."""
    pu = PrivUnit(0.7, 0.2, 3)
    assert pu.local_epsilon < 2.0
    assert ShuffleAccountant(pu, 1, adjacency="replace").get_delta(2.0) <= 1e-300
    n = 20_000

    def event(v, seed):
        y = pu.sample(np.tile(v, (n, 1)), rng=seed)
        c = y[:, 0]
        scaled = np.ldexp(c, 53)
        return (np.abs(c) < 0.25) & (scaled != np.round(scaled))

    a1 = event([1.0, 0.0, 0.0], 5)
    a2 = event([0.0, 1.0, 0.0], 6)
    assert a1.sum() == 0  # impossible under e1 (an exact property of the float computation)
    p2 = a2.mean()
    lower = p2 - 5.0 * math.sqrt(p2 * (1 - p2) / n)
    assert lower > 0.15  # delta(2) >= lower - e^2 * 0 > 0.15, against a certified 0
