"""Shared by the make scripts of tests/data: the tests directory on sys.path (the scripts run the reference
functions of the test modules), and writing a store."""

from __future__ import annotations

import json
import pathlib
import sys

DATA = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(DATA.parent))


def write_store(path: pathlib.Path, payload: dict) -> None:
    """Write ``payload`` (its first key ``source``: the script that makes it) as indented JSON to ``path``."""
    path.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")
