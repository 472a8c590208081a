"""SumLaw.cells' sparse path (a few atoms added in place at their cells) gives the same floats as the sum of its
parts' dense cells, and FiniteLaw.cells_sparse the occupied cells of FiniteLaw.cells."""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle import GaussianRandomizer
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.laws.finite import FiniteLaw


@pytest.mark.parametrize("sigma0,eps", [(0.5, 0.01), (0.5, 8.0), (1.0, 2.0), (2.0, 0.5)])
def test_sum_cells_bit_identical_to_the_parts_sum(sigma0, eps):
    for _, law in laws_for(GaussianRandomizer(sigma0, 1), eps, "zero_out"):
        lo = law.support()[0]
        x0 = max(lo, -1e4) - 3.0 if np.isfinite(lo) else -50.0
        for h, K in [(0.25, 4096), (1.0 / 64, 20000), (3.5, 1 << 14)]:
            got = law.cells(x0, h, K)
            parts = [p.cells(x0, h, K) for p in law.parts]
            ref = [parts[0][i] + parts[1][i] for i in range(4)]
            for a, b in zip(got, ref):
                assert a.dtype == b.dtype and np.array_equal(a, b)


def test_finite_cells_sparse_is_the_occupied_cells():
    rng = np.random.default_rng(23)
    for _ in range(30):
        v = np.round(rng.normal(size=200), int(rng.integers(1, 4)))  # ties: several atoms per cell
        p = rng.random(200)
        law = FiniteLaw(v, p / p.sum())
        K = int(rng.integers(8, 400))
        dense = law.cells(-2.0, 4.0 / K, K)
        idx, *vals = law.cells_sparse(-2.0, 4.0 / K, K)
        assert np.all(np.diff(idx) > 0)
        for d, s in zip(dense, vals):
            full = np.zeros(K)
            full[idx] = s
            assert np.array_equal(full, d)
