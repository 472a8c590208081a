"""The command-line program's user-facing error type and the helpers that word its messages (``sharpdp.cli``
re-exports every name)."""

from __future__ import annotations


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2."""



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
