"""Review of python/sharpdp/cli/rounding.py's ``g_error`` (session 49, docs/cli.md §12): the printed value is the
double's exact value rounded half-even at the place of the error's ``sig``-th significant digit (reference: the
same rounding done independently with Fraction arithmetic), ties, 9.99 carries, signed zeros, the 1e16 / 1e-5 form
boundaries, huge and subnormal errors; and ``sharpdp mean``'s out-of-bounds warning."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from sharpdp.cli.rounding import g_error


def _place(x: float) -> int:
    """Exponent of the first significant digit of the double's exact value."""
    f = abs(Fraction(x))
    e = math.floor(math.log10(abs(x)))
    while Fraction(10) ** e > f:
        e -= 1
    while Fraction(10) ** (e + 1) <= f:
        e += 1
    return e


def _reference(value: float, error: float, sig: int = 2) -> Fraction:
    place = _place(error) - (sig - 1)
    if value != 0.0:
        place = max(place, _place(value) - 16)
    unit = Fraction(10) ** place
    return Fraction(round(Fraction(value) / unit)) * unit  # (Python's round of a Fraction: half-even)


CASES = [(15.583, 3.77), (1032.3, 12.1), (0.456789, 0.0123), (9.96, 0.1), (9.995, 0.01), (99999.5, 10.0),
         (0.125, 0.1), (0.375, 0.1), (2.5, 1.0), (3.5, 1.0), (-2.5, 1.0), (-0.004, 0.1), (95.0, 10.0), (-95.0, 10.0),
         (1e16, 1.0), (9999999999999998.0, 1.0), (9.999996e-6, 1e-7), (9.99996e-6, 1e-10), (1.2345e-12, 1e-13),
         (123.0, 1e300), (123.0, 5e-324), (1e308, 1e-300), (5e-324, 5e-324), (7.0, 0.99), (7.0, 1.0)]


@pytest.mark.parametrize(("value", "error"), CASES)
def test_printed_value_is_the_half_even_rounding(value: float, error: float) -> None:
    text = g_error(value, error)
    assert Fraction(text) == _reference(value, error), text
    if Fraction(text) == 0:
        assert text == "0"
    assert ("e" in text) == (not 1e-5 <= abs(float(text)) < 1e16 and float(text) != 0.0), text


def test_random_values_against_reference() -> None:
    rng = np.random.default_rng(49)
    for _ in range(3000):
        value = float(rng.standard_normal() * 10.0 ** rng.integers(-12, 20))
        error = float(rng.random() * 10.0 ** rng.integers(-14, 20))
        sig = int(rng.integers(1, 4))
        assert Fraction(g_error(value, error, sig)) == _reference(value, error, sig), (value, error, sig)


def test_non_finite_and_bad_arguments() -> None:
    assert g_error(math.nan, 1.0) == "nan"
    assert g_error(-math.inf, 1.0) == "-inf"
    assert g_error(1.23456789, math.nan) == "1.2346"
    assert g_error(1.23456789, -1.0) == "1.2346"
    assert g_error(-0.0, 1.0) == "0"
    with pytest.raises(ValueError, match="sig"):
        g_error(1.0, 1.0, 0)


def test_negative_zero_without_error_prints_zero() -> None:
    assert g_error(-0.0, 0.0) == "0"


def test_outside_bounds_warning_does_not_contradict_itself(capsys: pytest.CaptureFixture[str]) -> None:
    from sharpdp.cli.mean import _warn_outside_bounds

    result = {"columns": ["x"], "private_mean": [1.0004], "bounds": [(0.0, 1.0)],
              "expected_rmse_original_units": [0.1], "warnings": []}
    _warn_outside_bounds(result, from_data=False)
    shown = result["warnings"][0].split("x = ")[1].split(" not in")[0]
    assert not 0.0 <= float(shown) <= 1.0, result["warnings"][0]
