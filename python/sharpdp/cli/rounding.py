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
