"""Session 49: ``block_values``' padded output (cpp/bind_blocks.cpp, docs/composition.md §2.34.4) is
``np.append(values, 0.0)`` without the copy: the same doubles (float.hex), the same max |value| and flag; a negative
pad is refused with a ValueError naming it."""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle.accountant import blocks


@pytest.mark.parametrize("rows,m,seed", [(1, 1, 0), (7, 3, 1), (513, 5, 2), (5000, 10, 3)])
def test_padded_values_are_append(rows, m, seed):
    rng = np.random.default_rng(seed)
    counts = np.asfortranarray(rng.integers(0, 9, size=(rows, m)).astype(np.float64))
    a = rng.normal(size=m) * 3.0
    hi, lo = blocks._split(a)
    C = blocks._kernels()
    v0, mx0, ok0 = C.block_values(counts, hi, lo)
    for pad in (0, 1, 3):
        v, mx, ok = C.block_values(counts, hi, lo, pad)
        want = np.append(v0, np.zeros(pad))
        assert [x.hex() for x in v.tolist()] == [x.hex() for x in want.tolist()]
        assert (float(mx).hex(), ok) == (float(mx0).hex(), ok0)


def test_negative_pad_refused():
    C = blocks._kernels()
    with pytest.raises(ValueError, match="pad"):
        C.block_values(np.ones((2, 1), order="F"), np.ones(1), np.zeros(1), -1)
