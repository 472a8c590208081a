"""golden_min: the smallest value over a golden-section search (shared by the Chernoff cap's fallback and the
closed form's body bound), against the exact minimum of convex functions and its stopping rules."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle.accountant.golden import golden_min


@settings(max_examples=60, deadline=None)
@given(st.floats(-5.0, 5.0), st.floats(0.1, 10.0))
def test_finds_the_minimum_of_a_convex_function(m, w):
    values = []

    def f(x):
        values.append(w * (x - m) ** 2)
        return values[-1]

    got = golden_min(f, -10.0, 10.0, 200, tol=1e-6)
    assert 0.0 <= got <= w * 1e-12 + 1e-15  # the exact minimum is 0, at m inside [-10, 10]
    assert got == min(values)  # the smallest value the function took
    assert len(values) <= 40  # the tolerance stops it (the interval shrinks by 0.618 per step: 35 steps)


def test_stops_once_a_value_is_enough_and_keeps_the_left_part_on_ties():
    calls = []

    def f(x):
        calls.append(x)
        return abs(x - 3.0)

    assert golden_min(f, 0.0, 10.0, 100, enough=1.0) <= 1.0
    assert len(calls) <= 4
    flat = []
    golden_min(lambda x: flat.append(x) or 1.0, 0.0, 1.0, 3)
    assert max(flat[2:]) < 0.62  # equal values: the left part is kept
    flat.clear()
    golden_min(lambda x: flat.append(x) or 1.0, 0.0, 1.0, 3, left_on_tie=False)
    assert min(flat[2:]) > 0.38
    assert golden_min(lambda x: math.inf, 0.0, 1.0, 5) == math.inf


def test_nan_values_are_never_the_best():
    assert golden_min(lambda x: math.nan, 0.0, 1.0, 5) == math.inf
    assert 0.0 <= golden_min(lambda x: math.nan if x > 0.5 else x, 0.0, 1.0, 30) <= 0.382  # a number it took
