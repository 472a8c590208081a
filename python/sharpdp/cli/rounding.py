"""The CLI's safe-side rounding of the certified figures its text prints (docs/cli.md §2 "Rounding"): upper values
(a certified delta, an epsilon a release is certified for) rounded up, lower ends down, one place for every command
(`sharpdp account`, `sharpdp mean`, `sharpdp histogram`); ``--json`` keeps the exact doubles."""

from __future__ import annotations


def g_up(v: float, sig: int = 6) -> str:
    """``v`` printed to ``sig`` significant digits (``sig`` >= 1) rounded up: the printed number is >= ``v`` as a real
    number (so ``float(g_up(v)) >= v``), above it by less than one unit of its last digit, in the style of
    ``f"{v:.6g}"`` (``8.6609e-29`` for 8.660894783e-29, where ``:.6g`` prints ``8.66089e-29``). Certified upper values (a delta, an epsilon certified for a delta) print this way:
    docs/cli.md §2. inf, nan and 0 print as ``:g`` prints them."""
    from decimal import ROUND_CEILING

    return _g_directed(v, sig, ROUND_CEILING)


def g_down(v: float, sig: int = 6) -> str:
    """``v`` printed to ``sig`` significant digits rounded down (the printed number is <= ``v``): the lower end of a
    bracket, a lower bound (docs/cli.md §2); otherwise as :func:`g_up`."""
    from decimal import ROUND_FLOOR

    return _g_directed(v, sig, ROUND_FLOOR)


def _g_directed(v: float, sig: int, rounding: str) -> str:
    import math
    from decimal import Context, Decimal

    if not math.isfinite(v) or v == 0.0:
        return f"{v:.{sig}g}"
    d = Context(prec=sig, rounding=rounding).create_decimal(Decimal(v))  # (Decimal(v): the double's exact value)
    x = d.adjusted()  # the exponent of its first digit
    if -4 <= x < sig:  # (where :g writes the fixed form)
        text = format(d, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    digits = "".join(map(str, d.as_tuple().digits)).rstrip("0")
    return (f"{'-' if d < 0 else ''}{digits[0]}{'.' + digits[1:] if len(digits) > 1 else ''}"
            f"e{'-' if x < 0 else '+'}{abs(x):02d}")


def short_floats(message: str, keep: tuple[float, ...] = ()) -> str:
    """A library message with its full-precision floats (``2.8869649277461074e-29``, seven or more digits after the
    point) shown to 4 significant digits rounded up (:func:`g_up`), as the CLI prints its figures (docs/cli.md §2): the
    refusals it shortens compare delta with the values they name (the smallest certified value, a charge, a certified
    value at an epsilon), and "delta is below X" stays true with X rounded up, never printed below the value. A float equal to one of ``keep`` (a value the user typed, ``--delta``)
    is left as written."""
    import re

    def short(m: re.Match) -> str:
        value = float(m.group(0))
        return m.group(0) if value in keep else g_up(value, 4)

    return re.sub(r"(?<![\w.])\d+\.\d{6,}(?:e[-+]?\d+)?", short, message)


#: Significant digits of an estimate's stated error that its printed value keeps (``sharpdp mean``'s private means:
#: the last digit shown is at the scale of the second significant digit of the expected RMSE; docs/cli.md §12).
ERROR_DIGITS = 2


def g_error(value: float, error: float, sig: int = ERROR_DIGITS) -> str:
    """A released estimate ``value`` printed to the decimal place of the ``sig``-th significant digit of its stated
    ``error`` (an expected RMSE; half-even rounding of the double's exact value): 15.583 with error 3.77 prints as
    ``15.6``, 1032.3 with error 12.1 as ``1032``, 0.456789 with error 0.0123 as ``0.457``. Digits below that place
    are noise, so showing them suggests a precision the release does not have; rounding a release is
    post-processing (its privacy is unchanged), and ``--json`` keeps the full double (docs/cli.md §12).

    At most 17 significant digits are shown (a double holds no more); a value rounding to 0 prints ``0``; a value
    of magnitude 1e16 or more, or below 1e-5, is written in exponent form (``1.2346e-12``). A non-finite ``value`` prints as
    ``:g`` prints it; an ``error`` that is 0, negative or not finite gives the value to 5 significant digits.

    Raises
    ------
    ValueError
        If ``sig`` is below 1.
    """
    import math
    from decimal import ROUND_HALF_EVEN, Context, Decimal

    if sig < 1:
        raise ValueError(f"sig must be >= 1, got {sig}")
    if not math.isfinite(value):
        return f"{value:g}"
    if value == 0.0:  # (also -0.0: a value rounding to 0 prints 0)
        return "0"
    if not (math.isfinite(error) and error > 0.0):
        return f"{value:.5g}"
    place = Decimal(error).adjusted() - (sig - 1)  # exponent of the last digit kept
    if value != 0.0:
        place = max(place, Decimal(value).adjusted() - 16)  # (at most 17 significant digits)
    d = Decimal(value).quantize(Decimal(1).scaleb(place), rounding=ROUND_HALF_EVEN, context=Context(prec=60))
    if d.is_zero():
        return "0"
    if not -5 <= d.adjusted() < 16:  # (where ``:g`` would write the exponent form too)
        digits = "".join(map(str, d.as_tuple().digits)).rstrip("0") or "0"
        keep = max(len(digits), d.adjusted() - place + 1)  # (the digits down to ``place``, zeros included)
        return f"{d:.{keep - 1}e}"
    return format(d, "f")
