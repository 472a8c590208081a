"""Progress of the certified values OpenDP asks a shuffled round's privacy profile for (docs/embedding.md §2.3).

OpenDP's ``PrivacyProfile.epsilon(delta)`` (and ``dp.c.make_fix_delta``, which calls it inside OpenDP) is a search
on the curve that asks it for one value at a time, about 60 of them, each one certified accountant evaluation:
a second or more each for a replace-one round bounded through ⊥, so a minute with nothing on stderr where every
value alone ended within the progress rule's quiet period. :class:`CurveProgress` shows one bar for the whole
search, named after the public call (``make_shuffled_round: profile.epsilon(delta=1e-06) of ...``), counting the
values asked for, with an estimate of their number from the search's own steps (:func:`values_left`), and the
time left by the bar's rule (``sharpdp._progress``: an estimate, said so).

Nothing here changes a value: the bar only counts the curve's calls.
"""

from __future__ import annotations

import math
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from sharpdp import _progress

#: Values OpenDP's ``epsilon(delta)`` asks for, counted on its bisection (opendp 0.16: 57-65 for answers between
#: 0.046 and 1381 nats): the bar's first total, until the search's steps give :func:`values_left`.
SEARCH_VALUES = 60
#: Values the search asks for once its step reaches the spacing of the doubles (it re-checks the two ends).
_TAIL = 2
#: Seconds with no call after which a bar opened by a call from inside OpenDP (no Python call around it) closes.
IDLE = 1.0


def values_left(previous: float, last: float) -> int | None:
    """An estimate of the number of values a bisection to the doubles' spacing still asks for, from its last two
    points: its step halves each time until it reaches the spacing of the doubles at ``last``, then the search
    re-checks its ends (:data:`_TAIL`). None when the two points give no step (the same point twice, not finite).

    Parameters
    ----------
    previous, last : float
        The eps of the last two calls.

    Returns
    -------
    int or None
    """
    step = abs(last - previous)
    if not (math.isfinite(step) and step > 0.0 and math.isfinite(last)):
        return None
    ulp = math.ulp(max(abs(last), math.ulp(0.0)))
    return max(math.ceil(math.log2(step / ulp)), 0) + _TAIL


class CurveProgress:
    """One progress bar per search of OpenDP on a round's certified curve (module docstring).

    Parameters
    ----------
    label : str
        The round's short name (``round_label``), put in every bar's description.
    progress : bool or None
        None: a bar after 1 s (the library's default), True: at once, False: none.
    """

    def __init__(self, label: str, progress: bool | None):
        if progress is not None and not isinstance(progress, (bool, np.bool_)):
            raise TypeError(f"progress must be None, True or False, got {type(progress).__name__} {progress!r}")
        self.label, self.progress = label, None if progress is None else bool(progress)
        self._lock = threading.RLock()
        self._bar: Any = None
        self._owned = False  # the bar of a Python call (epsilon, delta): closed by it, not by the idle timer
        self._points: list[float] = []
        self._timer: threading.Timer | None = None

    def _open(self, desc: str, total: int, owned: bool) -> None:
        self._bar = _progress.progress_bar(total=total, desc=desc, unit=" certified values", file=sys.stderr,
                                           leave=True, disable=self.progress is False, estimated=True,
                                           delay=0.0 if self.progress else 1.0)
        self._owned, self._points = owned, []

    def _close(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            bar, self._bar = self._bar, None
            if bar is not None:
                bar.total = bar.n  # finished: the values asked for, not the estimate
                bar.close()

    @contextmanager
    def search(self, desc: str, total: int = SEARCH_VALUES) -> Iterator[None]:
        """One bar for the values asked within the ``with`` block (a Python call: ``profile.epsilon(delta)``,
        ``profile.delta(eps)``); ``desc`` follows ``make_shuffled_round: `` and precedes `` of ROUND``."""
        with self._lock:
            self._close()  # (a bar left open by calls from inside OpenDP)
            self._open(f"make_shuffled_round: {desc} of {self.label}", total, owned=True)
        try:
            yield
        finally:
            self._close()

    def value(self, epsilon: float, compute: Callable[[], float]) -> float:
        """``compute()``, the curve's value at ``epsilon``, counted on the open bar (one is opened for a call from
        inside OpenDP, ``make_fix_delta`` or a combinator, and closed after :data:`IDLE` seconds without a call)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._bar is None:
                self._open(f"make_shuffled_round: OpenDP's epsilon search (make_fix_delta, a combinator) of "
                           f"{self.label}", SEARCH_VALUES, owned=False)
        try:
            value = compute()
        except BaseException:  # (Ctrl-C, an error: a bar opened from inside OpenDP closes now, marked so)
            with self._lock:
                if not self._owned:
                    self._close()
            raise
        with self._lock:
            bar = self._bar
            if bar is not None:
                self._points.append(float(epsilon))
                bar.update(1)
                if bar.total is not None and bar.total > 1 and len(self._points) >= 2:
                    left = values_left(self._points[-2], self._points[-1])
                    if left is not None:
                        bar.total = bar.n + left
                if not self._owned:
                    self._timer = threading.Timer(IDLE, self._close)
                    self._timer.daemon = True
                    self._timer.start()
        return value
