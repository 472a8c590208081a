"""Review rev48 (session 48): the bit-identical claims of docs/accountant_tail.md §73.1-§73.2 (gauss47), float.hex.

§73.1: the closed form's entry points inside the kept heap: the brackets of GaussianRandomizer(sigma0), n = 1e8-1e9,
at closed-form eps, with every kept-heap switch off (malloc untouched) against main, each in a fresh process
(tests/test_review_rev48_call_heap.py's worker). §73.2 (Lemma 73.2): numpy's log1p of the distinct values spread by
the inverse equals numpy's log1p of the spread array element by element: checked on the layouts numpy dispatches
differently (lengths 1-70 around the SIMD widths and their masked remainders, 111,707 as at n = 1e8, unaligned by
8 bytes, strided) and on values at the ends of log1p's domain (subnormal,
-1 + 2^-53, 1e300, the rates' range), against the values by the same ufunc on one-element arrays.

Found (a gap in the proof, not in the floats): the lemma's "each element depends only on that element" holds per
loop, but numpy chooses the loop by layout: a negative-stride view takes the scalar libm loop (numpy 2.4.6 on this
AVX-512 machine: log1p(0.44735250930159265) is 0x1.7a9c15142d031p-2 in the SIMD loop, ...030p-2 through a reversed
view). §73.2's arrays are fresh contiguous results (np.sum, np.full, fancy indexing), so both sides take the same
loop; the lemma needs that premise stated."""

from __future__ import annotations

import numpy as np
import pytest

from test_review_rev48_call_heap import _same


def test_closed_form_cells_same_floats_heap_on_and_off():
    _same([
        [[1.0], 10 ** 8, "zero_out", 1, "bounds", [0.01, 0.5, 2.0, 4.0]],
        [[0.5], 10 ** 8, "zero_out", 1, "bounds", [0.5]],
        [[2.0], 10 ** 7, "zero_out", 2, "bounds", [0.05, 0.3]],
        [[1.0], 10 ** 9, "zero_out", 1, "bounds", [1.0]],
    ])


def _values(rng) -> np.ndarray:
    return np.concatenate([10.0 ** rng.uniform(-320, 300, 64), rng.uniform(-1, 1, 32), 10.0 ** rng.uniform(-20, 2, 64),
                           [5e-324, -1 + 2 ** -53, -0.5, 0.0, -0.0, 1e300, np.inf]])


@pytest.mark.parametrize("length", list(range(1, 71)) + [111_707])
def test_log1p_spread_equals_log1p_of_distinct(length):
    rng = np.random.default_rng(length)
    vals = _values(rng)
    one = np.array([np.log1p(np.full(1, v))[0] for v in vals])
    for i in rng.choice(vals.size, 6, replace=False):
        spread = np.full(length, vals[i])
        buf = np.empty(length + 1)  # unaligned by 8 bytes (the SIMD loop's peel, if any)
        buf[1:] = spread
        wide = np.repeat(spread, 3)
        for arr in (spread, buf[1:], wide[::3]):  # (not spread[::-1]: the scalar loop, see above)
            got = np.log1p(arr)
            assert np.all(got.view(np.int64) == one[i:i + 1].view(np.int64)), (vals[i], length)  # (bit for bit)
    # the distinct values spread by an inverse (np.unique's) against log1p of the spread array
    vals = vals[~((vals == 0) & np.signbit(vals))]  # (np.unique merges -0.0 into 0.0: not a spread of one double)
    idx = rng.integers(0, vals.size, length)
    spread = vals[idx]
    uniq, inv = np.unique(spread, return_inverse=True)
    a, b = np.log1p(uniq)[inv], np.log1p(spread)
    assert np.array_equal(a.view(np.int64), b.view(np.int64))
