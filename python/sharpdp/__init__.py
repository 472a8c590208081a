"""sharpdp: sharp privacy-utility trade-offs, certified.

Subpackages (imported lazily on first attribute access, so ``import sharpdp``
is cheap and compiles nothing):

- :mod:`sharpdp.shuffle`: shuffle-model local randomizers, shuffle indices and
  the certified FFT accountant.
- :mod:`sharpdp.histogram`: count-dependent zCDP histograms (shifted-log
  Gaussian mechanism) and their lower bounds.
- :mod:`sharpdp.crlb`: privacy-preserving Cramer-Rao bounds and private RLS.
- :mod:`sharpdp.conversions`: conversions between privacy notions.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"
__all__ = ["shuffle", "histogram", "crlb", "conversions", "__version__"]

_LAZY = {"shuffle", "histogram", "crlb", "conversions"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'sharpdp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY)
