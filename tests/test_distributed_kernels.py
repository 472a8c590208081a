"""Building blocks of sharpdp.distributed that need no cluster: exact sums and row-offset sampling."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sharpdp import _core
from sharpdp._rng import core_key
from sharpdp._kernels.exact_sum import exact_column_means, exact_column_sums, mean_from_exact_sums
from sharpdp.shuffle import BlanketMixedGaussian

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


# ---------------------------------------------------------------- exact sums
@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(0, 40), st.integers(1, 3)), elements=finite))
def test_exact_sums_equal_rational_sums(a):
    totals = exact_column_sums(a)
    for j in range(a.shape[1]):
        exact = sum((Fraction(float(v)) for v in a[:, j]), Fraction(0))
        assert Fraction(totals[j], 2**1074) == exact
        if a.shape[0]:
            assert mean_from_exact_sums([totals[j]], a.shape[0])[0] == float(exact / a.shape[0])


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 60), st.just(2)), elements=finite), st.data())
def test_exact_sums_of_pieces_add_up_in_any_order(a, data):
    cuts = sorted(data.draw(st.lists(st.integers(0, a.shape[0]), max_size=5)))
    bounds = [0, *cuts, a.shape[0]]
    pieces = [exact_column_sums(a[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:])]
    perm = data.draw(st.permutations(range(a.shape[0])))
    assert [sum(p[j] for p in pieces) for j in range(2)] == exact_column_sums(a[list(perm)])


def test_exact_means_where_float_sums_fail():
    # 1e16 + 1 - 1e16 loses the 1 in floating point; the exact mean keeps it
    a = np.array([[1e16], [1.0], [-1e16]])
    assert a.sum() == 0.0
    assert exact_column_means(a)[0] == 1.0 / 3.0
    tiny = np.array([[5e-324], [5e-324], [-1.7976931348623157e308], [1.7976931348623157e308]])
    assert exact_column_sums(tiny) == [2]


def test_exact_sums_reject_non_finite():
    with pytest.raises(ValueError, match="finite.*row 1, column 0"):
        exact_column_sums(np.array([[1.0, 2.0], [np.nan, 0.0]]))
    with pytest.raises(ValueError, match="2-dimensional"):
        exact_column_sums(np.zeros(3))
    with pytest.raises(ValueError, match="n must be >= 1"):
        mean_from_exact_sums([0], 0)


def test_bmg_estimate_is_order_independent_and_correctly_rounded():
    rng = np.random.default_rng(5)
    y = rng.normal(size=(5000, 2)) * 1e3 + 0.25
    bmg = BlanketMixedGaussian(0.4, 2.0, 2)
    est = bmg.estimate(y)
    assert np.array_equal(est, bmg.estimate(y[rng.permutation(5000)]))
    for j in range(2):
        assert est[j] == float(sum(map(Fraction, y[:, j].tolist())) / 5000) / (1.0 - 0.4)


# ---------------------------------------------------------------- row-offset sampling
K = _core.samplers.BLOCK_ROWS


@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("cuts", [[], [1], [K - 1, K + 1], [100, 2 * K, 2 * K + 7], [K, 2 * K]])
def test_bmg_slices_are_bit_identical_to_the_whole(d, cuts):
    rng = np.random.default_rng(d)
    n = 3 * K + 123
    x = rng.uniform(-1, 1, size=(n, d)) / (2 * math.sqrt(d))
    bmg = BlanketMixedGaussian(0.3, 1.5, d)
    whole = bmg.sample(x, rng=42)
    edges = [0, *cuts, n]
    pieces = [bmg.sample(x[a:b], rng=42, threads=1 + i % 2, row_offset=a, total_rows=n)
              for i, (a, b) in enumerate(zip(edges[:-1], edges[1:]))]
    assert np.array_equal(np.concatenate(pieces), whole)


def test_bmg_row_offset_defaults_and_errors():
    bmg = BlanketMixedGaussian(0.2, 1.0, 1)
    x = np.full((10, 1), 0.5)
    assert np.array_equal(bmg.sample(x, rng=1), bmg.sample(x, rng=1, row_offset=0, total_rows=10))
    # a slice at offset o of a longer table differs from the head of a table (other streams)
    assert not np.array_equal(bmg.sample(x, rng=1), bmg.sample(x, rng=1, row_offset=K, total_rows=K + 10))
    with pytest.raises(ValueError, match="row_offset"):
        bmg.sample(x, rng=1, row_offset=-1)
    with pytest.raises(ValueError, match="total_rows"):
        bmg.sample(x, rng=1, row_offset=5, total_rows=14)
    with pytest.raises(ValueError, match="total_rows"):
        _core.samplers.bmg_sample(x, 0.2, 1.0, core_key(1), 1, 1.0, 5, 14)
