"""Session 46 (g46): mgf.dn / mgf.up of a C-contiguous float64 array by the compiled core in one pass, the same
doubles as numpy's chain t = |x|, t *= 4u, t = x -+ t, t -+= 1e-300 (docs/accountant_tail.md §71.3)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sharpdp import _core
from sharpdp.shuffle.accountant import mgf

U = 2.0 ** -53
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, -1e-300,
                    2e-300, 1.7976931348623157e308, -1.7976931348623157e308, 1.0, -1.0, 3.0, 1e16])


def numpy_chain(x, upward):
    """main's numpy form (docs/accountant_tail.md §69.2)."""
    with np.errstate(all="ignore"):
        t = np.abs(x)
        t *= 4 * U
        (np.add if upward else np.subtract)(x, t, out=t)
        if upward:
            t += 1e-300
        else:
            t -= 1e-300
    return t


def same(a, b):
    na, nb = np.isnan(a), np.isnan(b)
    return (a.shape == b.shape and np.array_equal(na, nb)
            and np.array_equal(a[~na].view(np.int64), b[~nb].view(np.int64)))


def test_special_values_bit_for_bit():
    for upward, f in ((False, mgf.dn), (True, mgf.up)):
        got = f(SPECIAL)
        assert same(got, numpy_chain(SPECIAL, upward))
        assert same(got, _core.accountant.round_out(SPECIAL, upward))
    # the values themselves (an independent reference: exact rational arithmetic is not needed at these points)
    assert mgf.up(np.array([1.0]))[0] == 1.0 + 4 * U  # (1 + 2^-51, exactly representable; + 1e-300 rounds away)
    assert mgf.dn(np.array([0.0]))[0] == -1e-300
    assert mgf.up(np.array([-0.0]))[0] == 1e-300


@settings(max_examples=150, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=40),
                    elements=st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True)))
def test_property_same_doubles_as_numpy(x):
    for upward, f in ((False, mgf.dn), (True, mgf.up)):
        got = f(x)
        assert got.flags.c_contiguous and got.dtype == np.float64
        assert same(got, numpy_chain(x, upward))
        # a strided view takes numpy's path: the same doubles again
        if x.ndim >= 1 and x.shape[-1] > 1:
            v = x[..., ::2]
            with np.errstate(all="ignore"):  # (numpy's path warns on overflow and inf - inf)
                assert same(f(v), numpy_chain(v, upward))


def test_closed_form_arrays():
    rng = np.random.default_rng(7)
    x = -np.sort(rng.uniform(5e7, 6e7, 111_707))
    for upward, f in ((False, mgf.dn), (True, mgf.up)):
        assert same(f(x), numpy_chain(x, upward))
        assert np.all(f(x) < x) if not upward else np.all(f(x) > x)
