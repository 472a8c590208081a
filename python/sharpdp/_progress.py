"""Progress bars: tqdm when it is installed (the ``[cli]`` extra), else a plain stderr fallback.

The core install (numpy, scipy, numba) does not need tqdm; ``progress_bar`` takes the subset
of ``tqdm.tqdm``'s arguments that sharpdp uses, so callers write one line either way.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any, Iterable, Iterator

__all__ = ["progress_bar"]


class _PlainBar:
    """Minimal stand-in for ``tqdm.tqdm``: one line on ``file`` at most every ``interval`` seconds.

    Shows the count, the elapsed time and, when ``total`` is known, a linear estimate of the
    time remaining (elapsed / done * (total - done): an estimate, said so in the line).
    """

    interval = 2.0

    def __init__(self, iterable: Iterable[Any] | None = None, *, desc: str = "", total: int | None = None,
                 unit: str = "it", file: IO[str] | None = None, leave: bool = True, disable: bool = False,
                 delay: float = 0.0, **_: Any) -> None:
        self.iterable = iterable
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self.total, self.desc, self.unit = total, desc, unit
        self.file = sys.stderr if file is None else file
        self.disable, self.delay = disable, delay
        self.n = 0
        self._start = time.monotonic()
        self._last = -float("inf")
        self._shown = False

    def _line(self) -> str:
        el = time.monotonic() - self._start
        head = f"{self.desc}: {self.n}" + (f"/{self.total}" if self.total else "") + f"{self.unit}, {el:.0f} s"
        if self.total and self.n:
            head += f", about {el / self.n * (self.total - self.n):.0f} s left (estimate)"
        return head

    def update(self, k: int = 1) -> None:
        self.n += k
        if self.disable:
            return
        now = time.monotonic()
        if now - self._start >= self.delay and now - self._last >= self.interval:
            self._last = now
            self._shown = True
            print(self._line(), file=self.file, flush=True)

    def close(self) -> None:
        if self._shown and not self.disable:
            print(self._line() + " (done)", file=self.file, flush=True)
        self._shown = False

    def __iter__(self) -> Iterator[Any]:
        for item in self.iterable if self.iterable is not None else ():
            yield item
            self.update(1)
        self.close()

    def __enter__(self) -> "_PlainBar":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def progress_bar(iterable: Iterable[Any] | None = None, **kwargs: Any) -> Any:
    """A progress bar: ``tqdm.auto.tqdm(iterable, **kwargs)`` if tqdm is installed, else a plain one.

    Parameters
    ----------
    iterable : iterable, optional
        Wrapped and iterated as by tqdm.
    **kwargs
        ``desc``, ``total``, ``unit``, ``file``, ``leave``, ``disable``, ``delay`` (seconds
        before anything is shown); other tqdm options are ignored by the fallback.

    Returns
    -------
    object
        A tqdm bar, or the fallback with ``update(k)``, ``close()``, iteration and ``with``.
    """
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _PlainBar(iterable, **kwargs)
    return tqdm(iterable, **kwargs)
