"""`sharpdp figures`: not implemented yet."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    sub.add_parser("figures", parents=[parent], help="(not implemented yet)")


def run(args: argparse.Namespace) -> dict[str, Any]:
    from sharpdp.cli import CliError

    raise CliError("'figures' is not implemented yet")


def format_text(result: dict[str, Any]) -> str:
    return str(result)
