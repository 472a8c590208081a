"""The command-line program's user-facing error type and the helpers that word its messages (``sharpdp.cli``
re-exports every name)."""

from __future__ import annotations

from typing import Any


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


#: Advice in the library's messages that names an API parameter the CLI has no option for, and what the CLI says
#: instead (what its user can do, or nothing): applied by :func:`cli_wording`.
_API_ADVICE = (
    ("; sampler_charge=False certifies the mathematical mechanism alone",
     "; pass a larger --delta (no epsilon certifies less than the charge at eps = 0)"),
    (" (sigma0 too large for the grid sampler, or pass fewer grid_bits)",
     " (sigma0 too large for the grid sampler: a smaller --sigma0 can be sampled)"),
    ("; pass a larger grid_bits)", "; the grid step follows sigma0: try a smaller --sigma0, or a smaller --dim)"),
    ("sigma0, grid_bits: ", "sigma0: "),
)
#: The same, for advice with a number in it (pattern, replacement).
_API_ADVICE_PATTERNS = (
    (r" with grid_bits = \d+; the finest grid is 2\^-52\)", "; the finest grid is 2^-52: a larger --sigma0 can be "
                                                           "sampled)"),
)


def cli_wording(message: str) -> str:
    """A library message (an error, a randomizer's ``sampler_refusal``) as the CLI prints it: advice naming an API
    parameter (``sampler_charge=False``, ``grid_bits``) replaced by what the CLI user can do, or dropped; the
    Python API keeps its own wording. ``sharpdp account``'s text and its ``--json`` ``sampler_refusal`` both
    use it (docs/cli.md §5)."""
    import re

    for api, cli in _API_ADVICE:
        message = message.replace(api, cli)
    for pattern, cli in _API_ADVICE_PATTERNS:
        message = re.sub(pattern, cli, message)
    return message


def option_error(exc: ValueError, names: dict[str, str]) -> ValueError:
    """``exc`` with the library parameter that starts its message renamed to the CLI option.

    The library names its parameters (``"csv: file not found: x.csv"``); the CLI names its
    options (``"--csv: file not found: x.csv"``). ``names`` maps parameter to option; a message
    that starts with none of them is returned unchanged.
    """
    msg = str(exc)
    for name, flag in names.items():
        if msg.startswith(f"{name}:") or msg.startswith(f"{name} "):
            return ValueError(flag + msg[len(name):])
    return exc


def real_number(text: str) -> float:
    """The ``type`` of the CLI's real-valued options: ``float(text)``, but a nonzero number that underflows to 0
    as a double (``--delta 1e-400``) is refused, so that the error names it instead of "got 0.0".

    Raises
    ------
    ValueError
        ``text`` is not a number (argparse: "invalid float value: 'x'").
    argparse.ArgumentTypeError
        "1e-400 underflows to 0 as a double (the smallest positive double is 4.9e-324)"; argparse puts the option
        before it.
    """
    import argparse
    import decimal

    value = float(text)
    if value == 0.0:
        try:
            nonzero = decimal.Decimal(text.strip().replace("_", "")) != 0
        except decimal.InvalidOperation:
            nonzero = False
        if nonzero:
            raise argparse.ArgumentTypeError(f"{text} underflows to 0 as a double (the smallest positive double is "
                                             "4.9e-324): give a value of at least that size")
    return value


def underflow_wording(parser: Any, message: str) -> str:
    """An argparse error ``message`` of :func:`real_number` for a value that underflows to 0, with "or write 0 if
    you mean 0" when the option accepts 0: its help gives a range that starts at 0 ("[0, ...") or says ">= 0"
    (the help is the one place an option's range is written; docs/cli.md §6); any other message is returned as is."""
    import re

    m = re.match(r"argument ([^:/ ]+)(?:/[^: ]+)?: .* underflows to 0 as a double", message)
    if not m:
        return message
    action = next((a for a in getattr(parser, "_actions", ()) if m.group(1) in a.option_strings), None)
    if action is not None and re.search(r"\[0,|>= ?0\b", str(action.help or "")):
        return message + ", or write 0 if you mean 0 (the option accepts 0)"
    return message


real_number.__name__ = "float"  # (argparse's "invalid float value: 'x'" for a text that is not a number)


#: The largest decimal exponent :func:`integer_number` reads (``1e400`` is refused, not expanded into 400 digits).
_INTEGER_MAX_DIGITS = 100


def integer_number(text: str) -> int:
    """The ``type`` of the CLI's integer options (``--seed``, ``--trials``, ``--rounds``, ...): a whole number as
    ``int`` reads it (``42``, ``1_000``), or an integer-valued number in decimal or e-notation (``1e12``,
    ``1.5e3``, ``300.0``), read exactly (no float rounding: ``1e23`` is 10**23) (docs/cli.md §8).

    Raises
    ------
    argparse.ArgumentTypeError
        ``text`` is not a number, not a whole one (``1.5``, ``1e-3``), not finite, or longer than 100 digits;
        the message says which form is expected, and argparse puts the option before it.
    """
    import argparse
    import decimal

    try:
        return int(text)
    except ValueError:
        pass
    expected = "expected a whole number such as 42, 1000000 or 1e6"
    try:
        d = decimal.Decimal(text.strip().replace("_", ""))
    except decimal.InvalidOperation:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number ({expected})") from None
    if not d.is_finite():
        raise argparse.ArgumentTypeError(f"{text!r} is not finite ({expected})")
    if d.adjusted() >= _INTEGER_MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"{text} has more than {_INTEGER_MAX_DIGITS} digits ({expected})")
    if d != d.to_integral_value():
        raise argparse.ArgumentTypeError(f"{text} is not a whole number ({expected})")
    return int(d)


integer_number.__name__ = "integer"


def install_hint(extra: str) -> str:
    """``pip install "sharpdp[EXTRA]"`` (or ``".[EXTRA]"`` from a clone of the repository)."""
    return f'pip install "sharpdp[{extra}]" (or pip install ".[{extra}]" from a clone of the repository)'


#: The spellings ``--adjacency`` accepts beside the library's names (README's prose writes "zero-out" and
#: "replace-one"; docs/cli.md §8): each is read as the name it maps to.
ADJACENCY_ALIASES = {"zero-out": "zero_out", "replace-one": "replace", "replace_one": "replace"}


def adjacency_name(text: str) -> str:
    """``--adjacency``'s value as the library's name (``zero_out`` or ``replace``): the aliases of
    :data:`ADJACENCY_ALIASES` (any case) are mapped, anything else is left for argparse's ``choices`` to refuse
    naming the option and the choices."""
    key = text.strip().lower()
    return ADJACENCY_ALIASES.get(key, key)


adjacency_name.__name__ = "adjacency"  # (argparse names the type in a conversion error; none is raised here)

#: The end of every ``--adjacency`` help: the aliases it accepts.
ADJACENCY_ALIAS_HELP = "zero-out and replace-one are accepted for zero_out and replace"
