"""The C heap kept for reuse while the accountant's large passes run (docs/accountant_tail.md §68): speed only,
the same floats.

A body pass or jump term at n >= 1e8 allocates and frees numpy arrays of 1-70 MB many times (folded pmfs, spectra,
lattice laws, weights). glibc's malloc serves an allocation above its mmap threshold (at most 32 MiB) by a fresh
``mmap`` and returns the heap's free top above its trim threshold to the system, so each such array's pages are
faulted in again by the kernel on first write: at GaussianRandomizer(1), n = 1e9, eps = 0.001, ~147,000 minor page
faults, a quarter of the call's CPU time spent in the kernel. Inside :func:`kept_heap` the mmap and trim thresholds
are raised (``mallopt``), so freed arrays stay in the heap and are reused without new faults; on the outermost exit
the thresholds are set back (to the ceiling glibc's own adaptive thresholds reach, 32 MiB / 64 MiB), so a free heap
top above 64 MiB goes back to the system at the next free, as glibc's default would do. Nothing computed changes: only where malloc places the
arrays. A no-op off glibc, where ``limits.BODY45_KEPT_HEAP`` is off, or where the user tuned malloc by its
environment variables (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_TOP_PAD_``).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

from sharpdp.shuffle.accountant import limits

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
KEEP_MMAP = 1 << 30  # inside: allocations below 1 GiB from the heap ...
KEEP_TRIM = 1 << 30  # ... and up to 1 GiB of free heap top kept (mallopt takes an int)
OUT_MMAP = 32 << 20  # outside: the ceiling of glibc's adaptive mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX) ...
OUT_TRIM = 64 << 20  # ... and the trim threshold it pairs with it (twice the mmap threshold)

F = TypeVar("F")

_lock = threading.Lock()
_depth = 0
_libc: Any = None
_ok: bool | None = None


def _glibc() -> Any:
    """glibc's handle, or None (another C library, a tuned environment, no ``mallopt``)."""
    global _libc, _ok
    if _ok is None:
        _ok = False
        try:
            ver = os.confstr("CS_GNU_LIBC_VERSION") or ""
        except (ValueError, OSError, AttributeError):
            ver = ""
        if ver.startswith("glibc") and not any(
                k in os.environ for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
                                          "GLIBC_TUNABLES")):
            try:
                import ctypes

                lib = ctypes.CDLL(None)
                lib.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
                _libc, _ok = lib, True
            except (OSError, AttributeError):
                _ok = False
    return _libc if _ok else None


@contextmanager
def kept_heap() -> Iterator[None]:
    """Freed C heap kept for reuse inside the block (nested and concurrent blocks share one outermost scope); speed
    only (docs/accountant_tail.md §68)."""
    global _depth
    lib = _glibc() if limits.BODY45_KEPT_HEAP else None
    if lib is None:
        yield
        return
    with _lock:
        _depth += 1
        if _depth == 1:
            lib.mallopt(M_MMAP_THRESHOLD, KEEP_MMAP)
            lib.mallopt(M_TRIM_THRESHOLD, KEEP_TRIM)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                lib.mallopt(M_MMAP_THRESHOLD, OUT_MMAP)
                lib.mallopt(M_TRIM_THRESHOLD, OUT_TRIM)


def kept_big(f: F) -> F:
    """``f(law, gamma, n, ...)`` run inside :func:`kept_heap` where n >= ``limits.BODY45_KEPT_HEAP_N`` (a decorator;
    speed only, the same floats). Below, ``f`` runs as it is: its arrays are small, and the first call would pay
    ctypes' import (~3 ms) for nothing."""
    g: Any = f

    @functools.wraps(g)
    def run(*args: Any, **kwargs: Any) -> Any:
        n = args[2] if len(args) > 2 else kwargs["n"]
        if n < limits.BODY45_KEPT_HEAP_N or not limits.BODY45_KEPT_HEAP:
            return g(*args, **kwargs)
        with kept_heap():
            return g(*args, **kwargs)
    return cast(F, run)


def depth() -> int:
    """How many :func:`kept_heap` blocks are open (0 outside)."""
    return _depth


__all__ = ["depth", "kept_big", "kept_heap"]
