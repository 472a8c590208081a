"""Lazy package namespaces (PEP 562): a package's public names imported from their modules on first use."""

from __future__ import annotations

import importlib
from typing import Any, Callable


_HELPERS = {"TYPE_CHECKING", "annotations", "lazy_namespace"}


def lazy_namespace(package: str, modules: dict[str, str],
                   namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: a name of ``modules`` (public name -> full
    module path) is imported from its module and stored in ``namespace`` (the package's globals, so
    later lookups skip ``__getattr__``); any other name is tried as a submodule (``sharpdp.shuffle.
    randomizers`` after ``import sharpdp.shuffle``); otherwise AttributeError."""
    def getattr_(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:  # (the package's own helpers -- TYPE_CHECKING, annotations, lazy_namespace -- left out)
        own = {k for k in namespace if not k.startswith("_") and k not in _HELPERS}
        return sorted(own | set(modules))

    return getattr_, dir_
