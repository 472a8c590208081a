"""The OpenDP route with the floating-point-safe PrivUnit (``LatticePrivUnit``, docs/sampling.md §10.6).

The float ``PrivUnit`` is refused by ``make_shuffled_round`` (its messages are not what the accountant
certifies); its lattice release is accepted, releases the exact integer messages shuffled, and its
privacy profile is the accountant's certified one, which includes the sampler charge of §10.6.
"""

from __future__ import annotations

import numpy as np
import pytest

import sharpdp.shuffle as sh

pytest.importorskip("opendp.prelude")
from sharpdp.interop.opendp import make_shuffled_round  # noqa: E402

LAT = sh.LatticePrivUnit(0.7, 0.2, 3)


def test_float_privunit_is_refused_and_the_message_names_the_lattice_route():
    with pytest.raises(ValueError, match="LatticePrivUnit"):
        make_shuffled_round(sh.ShuffleAccountant(sh.PrivUnit(0.7, 0.2, 3), 100), rng=1)


def test_lattice_release_is_the_sampler_then_a_shuffle():
    n = 40
    x = np.random.default_rng(5).normal(size=(n, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    got = make_shuffled_round(sh.ShuffleAccountant(LAT, n), rng=11)(x)
    g = np.random.default_rng(11)
    expected = LAT.sample(x, rng=g)[g.permutation(n)]
    assert got.dtype == object and all(type(v) is int for v in got.ravel())  # exact integers, no float
    assert got.tolist() == expected.tolist()


def test_profile_is_the_accountants_certified_profile_with_the_charge():
    acc = sh.ShuffleAccountant(LAT, 1000)
    prof = make_shuffled_round(acc, rng=1).map(1)
    assert LAT.sampler_tv > 0.0
    for eps in (0.0, 0.5, 1.0, 2.0):
        ref = acc.get_delta(eps)
        # the float PrivUnit's value plus the charge (1 + e^eps) n eta, never below it
        assert ref >= sh.ShuffleAccountant(sh.PrivUnit(0.7, 0.2, 3), 1000).get_delta(eps)
        assert ref <= prof.delta(eps) <= 1.01 * ref
