"""The command-line program's user-facing error type and the helpers that word its messages (``sharpdp.cli``
re-exports every name)."""

from __future__ import annotations


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


#: Advice in the library's messages that names an API parameter the CLI has no option for, and what the CLI says
#: instead (what its user can do, or nothing): applied by :func:`cli_wording`.
_API_ADVICE = (
    ("; sampler_charge=False certifies the mathematical mechanism alone",
     "; pass a larger --delta (no epsilon certifies less than the charge at eps = 0)"),
    (" (sigma0 too large for the grid sampler, or pass fewer grid_bits)", " (sigma0 too large for the grid sampler)"),
    ("; pass a larger grid_bits)", ")"),
    ("sigma0, grid_bits: ", "sigma0: "),
)


def cli_wording(message: str) -> str:
    """A library message (an error, a randomizer's ``sampler_refusal``) as the CLI prints it: advice naming an API
    parameter (``sampler_charge=False``, ``grid_bits``) replaced by what the CLI user can do, or dropped; the
    Python API keeps its own wording."""
    for api, cli in _API_ADVICE:
        message = message.replace(api, cli)
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


def install_hint(extra: str) -> str:
    """``pip install "sharpdp[EXTRA]"`` (or ``".[EXTRA]"`` from a clone of the repository)."""
    return f'pip install "sharpdp[{extra}]" (or pip install ".[{extra}]" from a clone of the repository)'
