"""A per-thread boolean flag set within a context (nested contexts keep the outer value): the one helper behind the
sweep markers of ``plain.no_lower_values`` (docs/accountant_atoms.md §14) and ``profile_chords.chord_sweep``
(docs/composition.md §2.24, §2.25.4). No value of the accountant depends on it; it only tells a callee which caller
it runs under."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator


class ThreadFlag:
    """A flag, False by default in every thread, True within :meth:`set` in the thread that entered it."""

    def __init__(self) -> None:
        self._local = threading.local()

    @property
    def on(self) -> bool:
        """Whether this thread is within :meth:`set`."""
        return bool(getattr(self._local, "on", False))

    @contextlib.contextmanager
    def set(self) -> Iterator[None]:
        """Within this context (this thread only) the flag is True; on exit it takes its value before the context."""
        old = getattr(self._local, "on", False)
        self._local.on = True
        try:
            yield
        finally:
            self._local.on = old


__all__ = ["ThreadFlag"]
