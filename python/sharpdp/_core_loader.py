"""Import the compiled core with a helpful message when it is missing."""

from __future__ import annotations

try:
    from sharpdp import _core as core
except ImportError as exc:  # pragma: no cover - exercised only on broken installs
    raise ImportError(
        "sharpdp's compiled extension sharpdp._core is missing or broken. "
        "Install sharpdp with `pip install .` from the repository root (a C++17 "
        "compiler is needed), not by putting python/ on sys.path."
    ) from exc

__all__ = ["core"]
