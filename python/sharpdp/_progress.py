"""Progress bars on stderr: a live tqdm bar on a terminal, plain lines elsewhere.

The rule (the same for every subcommand and library call; stated in ``sharpdp --help``,
:data:`PROGRESS_RULE`, and kept here only): when the bar's stream is a terminal and tqdm is installed (the ``[cli]``
extra), a live tqdm bar, shown after the bar's ``delay``; in a Jupyter notebook, tqdm's notebook widget; otherwise
(stderr redirected to a file or a pipe, a CI log, no tqdm) plain lines: nothing for a step that ends within
:attr:`_PlainBar.quiet` seconds (2 s, or the bar's ``delay`` if longer), then one line at most every
:attr:`_PlainBar.interval` seconds (5 s) and a final ``(done)`` line. A wait with nothing to count (a bar with no
total, :func:`progress_step`) prints its ``"STEP: N s"`` line from a timer, at the same times, since no update
comes to print it; a counted bar does too while no update comes (its count, the time and the estimate of the time
left, which grows while the item under way takes long), so no log stays silent for more than 5 s. Progress never goes to stdout, so ``--json`` output is unaffected.

Interruption: a bar closed while a ``KeyboardInterrupt`` propagates (Ctrl-C) keeps its true count
and total (a caller's "finished: total = count" is ignored then), and says ``(interrupted)``
instead of ``(done)``; a plain bar or step says so even if it had printed nothing yet (the log then says where
the run stopped); :func:`close_interrupted` closes the same way the bars a caller closes only on
success (``sharpdp`` calls it before its "interrupted" line). On a terminal a description longer than the room left for the count, the
percentage and the time estimate (``columns - 40`` characters, at least 20) loses its closing
parenthesised asides, then is cut with ``...``.

The core install (numpy, scipy, numba) does not need tqdm; ``progress_bar`` takes the subset
of ``tqdm.tqdm``'s arguments that sharpdp uses, so callers write one line either way.
"""

from __future__ import annotations

import sys
import threading
import time
import weakref
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO, Any, Iterable, Iterator

__all__ = ["PROGRESS_RULE", "close_interrupted", "is_terminal", "progress_bar", "progress_gather", "progress_label",
           "progress_stage", "progress_step"]


def clock() -> float:
    """The plain bar's clock (``time.monotonic``, seconds); a public test hook: a test may replace
    ``sharpdp._progress.clock`` by a fake clock to check the lines' times without waiting."""
    return time.monotonic()


def _interrupted() -> bool:
    """True while a ``KeyboardInterrupt`` is being handled (a ``finally`` or ``__exit__`` run by Ctrl-C)."""
    return isinstance(sys.exc_info()[1], KeyboardInterrupt)


#: Bars not closed yet (plain and tqdm ones made here), for :func:`close_interrupted`.
_OPEN: "weakref.WeakSet[Any]" = weakref.WeakSet()


def close_interrupted() -> None:
    """Close every bar still open after a ``KeyboardInterrupt`` (one whose caller closes it only on success),
    at its true count and marked interrupted, so nothing is drawn after the caller's "interrupted" line.

    Returns
    -------
    None
    """
    for bar in list(_OPEN):
        bar.close(interrupted=True)


#: Room kept on a terminal line for the count, the percentage and the time estimate (see the module doc).
_ROOM = 40


_LABEL: ContextVar[str] = ContextVar("sharpdp_progress_label", default="")

#: The rule in one paragraph, for ``--help`` epilogs.
PROGRESS_RULE = ("Progress goes to stderr only; stdout holds the result (text or --json). On a terminal: a live bar "
                 "(shown at once for mean's calibration, after 0.5-1 s for most other steps; redrawn every 5 s while "
                 "nothing moves). Redirected, piped or in CI: plain lines, nothing for a step that ends within 2 s "
                 "(a closing file step, writing or drawing: 5 s), then a line at most every 5 s, never more than 5 s "
                 "of silence while the step runs, and a final '(done)' line. Ctrl-C leaves each open bar at its true "
                 "count marked 'interrupted' and exits with status 130. Warnings go to stderr once (with --json also "
                 "in the result's \"warnings\"); docs/cli.md §8 has the details.")


class _Iterating:
    """What a sharpdp bar shares with tqdm's: iteration over ``iterable`` (counting each item, closing at the end)
    and ``with`` (closing at the exit); a subclass has ``iterable``, ``update(k)`` and ``close()``."""

    iterable: Iterable[Any] | None

    def update(self, k: int = 1) -> None:
        raise NotImplementedError

    def close(self, interrupted: bool = False) -> None:
        raise NotImplementedError

    def __iter__(self) -> Iterator[Any]:
        for item in self.iterable if self.iterable is not None else ():
            yield item
            self.update(1)
        self.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _PlainBar(_Iterating):
    """Minimal stand-in for ``tqdm.tqdm``: plain lines on ``file``, by the rule of the module doc.

    Shows the count, the elapsed time and, when ``total`` is known, the percentage done and a
    linear estimate of the time remaining (elapsed / done * (total - done): an estimate, said so
    in the line; a ``staged`` bar, whose first values cost the most, shows none until
    :func:`progress_stage` marks its first stage done, then the rate since that mark). Used when the stream is not a terminal (no carriage-return redraws in a log
    file) or tqdm is not installed. Nothing is printed before ``max(delay, quiet)`` seconds; a bar
    with no total (a wait) prints from a timer thread, since it may get no update at all; so does a counted bar
    while its updates stop (one item can take minutes).
    """

    interval = 5.0
    #: Seconds of real time with no line after which a counted bar prints one from its timer (an item under way,
    #: e.g. one certified value, can take minutes; real time, so that a test's fake clock adds no line).
    silence = 5.0
    #: Seconds a plain bar stays silent (a quicker step prints nothing), whatever its ``delay``.
    quiet = 2.0

    @property
    def total(self) -> int | None:
        return self._total

    @total.setter
    def total(self, value: int | None) -> None:
        if _interrupted() and hasattr(self, "_total"):  # Ctrl-C: the bar keeps its true total
            return
        self._total = value

    def __init__(self, iterable: Iterable[Any] | None = None, *, desc: str = "", total: int | None = None,
                 unit: str = "it", file: IO[str] | None = None, leave: bool = True, disable: bool = False,
                 delay: float = 0.0, budget: bool = False, silent: bool = False, staged: bool = False,
                 estimated: bool = False, **_: Any) -> None:
        self.iterable = iterable
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self.total, self.desc, self.unit = total, desc, unit
        self._budget = total  # the total announced at the start (a caller may change it when it stops early)
        self._upto = budget  # the total is a budget the work may stop short of: the time left is an upper value
        self._estimated = estimated  # the total is an estimate of the work (revised by the caller as it goes)
        self.file = sys.stderr if file is None else file
        self.disable, self.delay = disable, delay
        self._silent = silent  # (progress_step on a terminal: only the interrupted line)
        self.n = 0
        self._start = clock()
        self._last = -float("inf")
        self._last_real = time.monotonic()  # (real time of the last line, or of the start: for silence)
        # (time, count) the time left is extrapolated from: the start, or for a staged bar the end of its first
        # stage (None until then: no estimate, the first values' cost says little about the rest's)
        self._mark: tuple[float, int] | None = None if staged else (self._start, 0)
        self._shown = False
        self._closed = False
        self._lock = threading.RLock()
        self._timer: threading.Timer | None = None
        _OPEN.add(self)
        if not disable and not silent:  # (a counted bar too: a slow item would leave a log silent for minutes)
            self._tick_at(self._wait())

    def _wait(self) -> float:
        """Seconds from the start before the first line: the larger of the bar's delay and :attr:`quiet` (a
        quiet period never longer than :attr:`interval`, the time between two lines)."""
        return max(self.delay, min(self.quiet, self.interval))

    def _tick_at(self, after: float) -> None:
        """A wait's next line, ``after`` seconds from now (a daemon timer: it never holds the program open, nor
        the bar: a bar dropped without being closed stops its lines)."""
        ref = weakref.ref(self)

        def tick() -> None:
            bar = ref()
            if bar is not None:
                bar._tick()

        self._timer = threading.Timer(max(after, 0.0), tick)
        self._timer.daemon = True
        self._timer.start()

    def _tick(self) -> None:
        """A line from the timer when none was printed for :attr:`interval` seconds: a wait's ``STEP: N s``, or a
        counted bar's line between two updates (one item, e.g. a certified value, can take minutes); a finished
        bar's line is left to :meth:`close`."""
        with self._lock:
            if self._closed:
                return
            now = clock()
            if self.total is None:  # a wait: its lines come from here only
                due = now - self._start >= self._wait() and now - self._last >= self.interval
            else:  # a counted bar: its updates print its lines; this one only after silence seconds of real time
                # with no line (from its start too), and never for a finished bar (close prints its line)
                due = (self.n < self.total and now - self._start >= self._wait()
                       and time.monotonic() - self._last_real >= self.silence)
            if due:
                self._last, self._last_real = now, time.monotonic()
                self._shown = True
                print(self._line(), file=self.file, flush=True)
            # (a counted bar: the next check when silence seconds will have passed since its last line, so that a
            # log is never silent for longer: a fixed period let an update's line just after a check run to 2x)
            left = self.silence - (time.monotonic() - self._last_real)
            self._tick_at(self.interval if self.total is None else left if left > 0.05 else self.silence)

    def _line(self, done: bool = False, interrupted: bool = False) -> str:
        el = clock() - self._start
        if self.total is None and not self.n:  # a wait: nothing counted, only the time
            return f"{self.desc}: {el:.0f} s" + (" (interrupted)" if interrupted else " (done)" if done else "")
        if self.total and self.unit == "it":  # no unit given: the steps are weights, only the percentage means much
            head = f"{self.desc}: {100.0 * self.n / self.total:.0f}%"
        else:
            head = f"{self.desc}: {self.n}" + (f"/{self.total}" if self.total else "") + f"{self.unit}"
            if self.total:
                head += f" ({100.0 * self.n / self.total:.0f}%)"
        if done and self._budget and self.total != self._budget:  # say why the denominator changed
            head += f" ({self._budget} {'estimated' if self._estimated else 'budgeted'} at the start)"
        head += f", {el:.0f} s"
        if interrupted:
            return head + " (interrupted)"
        if done:
            return head + " (done)"
        mark = self._mark
        if mark is None:  # (a staged bar before its first stage ends; nothing counted: no text, as unstaged bars)
            return head + (", time left: estimated after the first stage" if self.total and self.n else "")
        if self.total and self.n > mark[1]:
            t_mark, n_mark = mark
            left = (el - (t_mark - self._start)) / (self.n - n_mark) * max(self.total - self.n, 0)
            head += f", up to about {left:.0f} s left (estimate; may stop sooner)" if self._upto else \
                f", about {left:.0f} s left (estimate)"
        elif self.total and mark[1] > 0 and mark[0] > self._start:
            # a mark just set, nothing counted since: the first stage's own rate, whose values cost more, so an
            # estimate on the high side until the next value gives the rate since the mark
            left = (mark[0] - self._start) / mark[1] * max(self.total - self.n, 0)
            head += (f", up to about {left:.0f} s left (estimate from the first stage's rate, whose values cost "
                     "more" + ("; may stop sooner)" if self._upto else ")"))
        elif self.total and self.n:  # (a mark at the start or after nothing counted: no rate yet)
            head += ", time left: estimating"
        return head

    def stage(self) -> None:
        """Mark the end of the first stage: the time left is estimated from the rate since now."""
        with self._lock:
            self._mark = (clock(), self.n)

    def update(self, k: int = 1) -> None:
        self.n += k
        if self.disable or self._silent:
            return
        now = clock()
        due = now - self._start >= self._wait()
        if self.total and self.n >= self.total:  # finished: close() prints the "(done)" line (no "0 s left")
            self._shown = self._shown or due
            return
        if due and now - self._last >= self.interval:
            with self._lock:
                self._last, self._last_real = now, time.monotonic()
                self._shown = True
                print(self._line(), file=self.file, flush=True)

    def close(self, interrupted: bool = False) -> None:
        _OPEN.discard(self)
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            stop = interrupted or _interrupted()
            if not self.disable and (stop or (self._shown and not self._silent)):
                # (interrupted: said even if nothing was printed yet, so that a log says where the run stopped)
                print(self._line(done=not stop, interrupted=stop), file=self.file, flush=True)
            self._shown = False



@contextmanager
def progress_step(desc: str, file: IO[str] | None = None, disable: bool = False,
                  silent: bool = False) -> Iterator[None]:
    """A step with nothing to count (a cluster's start-up), by the rule of :data:`PROGRESS_RULE`.

    Where stderr is not a terminal, ``"DESC: N s"`` lines (the first after 2 s, then every 5 s) and, once one was
    printed, ``"DESC: N s (done)"``; on a terminal nothing (the caller says up front what the wait is). On Ctrl-C,
    ``"DESC: N s (interrupted)"`` on either, so that the output says where the run stopped.

    Parameters
    ----------
    desc : str
        What the step is, e.g. ``"starting a local Dask cluster of 2 workers"``.
    file : text stream, optional
        Where the lines go (default stderr).
    disable : bool, default False
        Print nothing at all.
    silent : bool, default False
        Print only the interrupted line (a step before the input is validated, so that an error is the first
        line on stderr).
    """
    stream = sys.stderr if file is None else file
    if _LABEL.get():
        desc = _LABEL.get() + desc
    bar = _PlainBar(desc=desc, total=None, file=stream, disable=disable, silent=silent or _is_terminal(stream))
    try:
        yield
    finally:
        bar.close()


def _is_terminal(file: IO[str]) -> bool:
    """True when ``file`` is an interactive terminal with a width (a closed or odd stream, or a terminal
    reporting 0 columns, where tqdm draws nothing, counts as not one)."""
    import os

    try:
        if not file.isatty():
            return False
    except (AttributeError, ValueError, OSError):
        return False
    try:
        return os.get_terminal_size(file.fileno()).columns > 0
    except (AttributeError, ValueError, OSError):  # no file descriptor (a wrapped stream): trust isatty
        return True


def is_terminal(file: IO[str]) -> bool:
    """True when the progress rule treats ``file`` as a terminal (a live bar; a step prints no line there, so a
    caller says up front what the wait is); False for a log file, a pipe, a closed or odd stream."""
    return _is_terminal(file)


def progress_stage(bar: Any) -> None:
    """Mark the end of the first stage of a bar made with ``staged=True`` by :func:`progress_bar`: its time left
    is shown from now on, estimated from the rate of the work counted after this call (the first stage's values,
    dearer than the rest, would inflate it: docs/embedding.md §3.2). A second call moves the mark; a bar made
    without ``staged`` (or a disabled one) is left as it is.

    Parameters
    ----------
    bar : object
        A bar returned by :func:`progress_bar`.

    Returns
    -------
    None
    """
    if isinstance(bar, _PlainBar):
        bar.stage()
        return
    fmt = getattr(bar, "_sharpdp_after_stage", None)
    if fmt is not None:  # a tqdm bar: its remaining time comes back (tqdm's smoothed recent rate), from now on
        bar._sharpdp_after_stage = None
        bar.bar_format = fmt
        bar.refresh()


@contextmanager
def progress_label(prefix: str) -> Iterator[None]:
    """Within the ``with`` block, every bar made by :func:`progress_bar` has ``prefix`` before its ``desc``
    (nested labels add up), e.g. ``"candidate 2: "`` for the bars of one candidate of a search.

    Parameters
    ----------
    prefix : str
        Text put before each bar's description.
    """
    token = _LABEL.set(_LABEL.get() + str(prefix))
    try:
        yield
    finally:
        _LABEL.reset(token)


def progress_bar(iterable: Iterable[Any] | None = None, **kwargs: Any) -> Any:
    """A progress bar on ``file`` (default stderr), by the rule of :data:`PROGRESS_RULE`.

    ``tqdm.auto.tqdm(iterable, **kwargs)`` when tqdm is installed and ``file`` is a terminal (or
    a notebook runs tqdm's widget); else :class:`_PlainBar`: one line at most every 5 s, no
    carriage-return redraws (a log file or pipe gets readable lines).

    Parameters
    ----------
    iterable : iterable, optional
        Wrapped and iterated as by tqdm.
    **kwargs
        ``desc``, ``total``, ``unit``, ``file``, ``leave``, ``disable``, ``delay`` (seconds
        before anything is shown), ``budget`` (sharpdp's: True when the total is a budget the work
        may stop short of, so that the time left is shown as an upper value: "up to about N s left"
        in a log, "<=" before tqdm's remaining time), ``staged`` (sharpdp's: True when the first values
        cost far more than the rest: no time left is shown until :func:`progress_stage` marks the first
        stage done, then the rate since that mark is used), ``estimated`` (sharpdp's: True when the total is an
        estimate the caller revises as the work goes: a log's "(done)" line then names it "N estimated at the start"
        where it moved, not "budgeted"); other tqdm options are ignored by the fallback.

    Returns
    -------
    object
        A tqdm bar, or the plain one with ``update(k)``, ``close()``, ``n``, ``total``, iteration
        and ``with``.
    """
    gather = _GATHER.get()
    if gather is not None:  # (inside progress_gather: counted into the one bar shown)
        return _Counted(gather, iterable, **kwargs)
    if _LABEL.get():
        kwargs["desc"] = _LABEL.get() + str(kwargs.get("desc") or "")
    budget = bool(kwargs.pop("budget", False))
    staged = bool(kwargs.pop("staged", False))
    estimated = bool(kwargs.pop("estimated", False))
    if "IPython" not in sys.modules and not _is_terminal(sys.stderr if kwargs.get("file") is None else kwargs["file"]):
        # neither a notebook (tqdm.autonotebook picks its widget only under a loaded IPython) nor a terminal: the
        # plain bar whatever tqdm would say, without tqdm's import (~0.1 s of CPU, 4 % of a 300-point profile)
        return _PlainBar(iterable, budget=budget, staged=staged, estimated=estimated, **kwargs)
    try:
        from tqdm.auto import tqdm
        from tqdm.autonotebook import tqdm as chosen  # (imported by tqdm.auto: the notebook or the std class)
        from tqdm.std import tqdm as std_tqdm
    except ImportError:
        return _PlainBar(iterable, budget=budget, staged=staged, estimated=estimated, **kwargs)
    file = sys.stderr if kwargs.get("file") is None else kwargs["file"]
    if chosen is not std_tqdm or _is_terminal(file):  # notebook widget or a tty
        # miniters=1: redraw at every update after mininterval; tqdm's adaptive default skips the updates
        # that follow a fast burst (a bar froze for minutes once a batch of quick steps had passed)
        kwargs.setdefault("miniters", 1)
        if chosen is std_tqdm:  # a long unit ("accountant evaluations") keeps its last word: the rate fits
            unit = str(kwargs.get("unit") or "")
            if len(unit) > 12:
                kwargs["unit"] = " " + unit.split()[-1]
            desc = str(kwargs.get("desc") or "")
            kwargs["desc"] = _fit(desc, _columns(file) - len(str(kwargs.get("unit") or "")) - budget)  # "<=": 1 more
            total = kwargs.get("total", len(iterable) if hasattr(iterable, "__len__") else None)  # type: ignore[arg-type]
            if kwargs["desc"] != desc and total is not None and "bar_format" not in kwargs:
                # the label would be cut: the rate goes first (the count, the percentage and the time left
                # stay), which leaves the unit's room to the label (a nested "candidate 2: ..." one is whole)
                kwargs["desc"] = _fit(desc, _columns(file))
                kwargs["bar_format"] = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<" + "=" * budget + "{remaining}]"
        if budget:  # the time left is the whole budget's: an upper value ("<=")
            kwargs.setdefault("bar_format",
                              "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<={remaining}, {rate_fmt}{postfix}]")
        after = None
        if staged:  # no remaining time until progress_stage (the first stage's rate would inflate it)
            after = kwargs.get("bar_format") or "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, " \
                "{rate_fmt}{postfix}]"
            kwargs["bar_format"] = after.replace("<={remaining}", "").replace("<{remaining}", "")
        bar = _tqdm_class(tqdm)(iterable, **kwargs)
        bar._sharpdp_after_stage = after
        _OPEN.add(bar)
        if chosen is std_tqdm:
            _keep_alive(bar)
        return bar
    return _PlainBar(iterable, budget=budget, staged=staged, estimated=estimated, **kwargs)


#: Seconds between two redraws of a terminal bar that gets no update (tqdm redraws on updates only).
_REDRAW = 5.0


def _keep_alive(bar: Any) -> None:
    """Redraw a terminal bar every :data:`_REDRAW` seconds until it is closed (a daemon timer, holding the bar by a
    weak reference): its elapsed time moves while one slow item (a certified value at n = 1e9) is under way, where
    tqdm, which redraws on updates only, showed a frozen bar for minutes."""
    ref = weakref.ref(bar)

    def tick() -> None:
        b = ref()
        if b is None or b not in _OPEN or getattr(b, "disable", True):
            return
        try:
            b.refresh()
        except Exception:  # (a stream closed under it: no more redraws)
            return
        _start(tick)

    def _start(fn: Any) -> None:
        timer = threading.Timer(_REDRAW, fn)
        timer.daemon = True
        timer.start()

    _start(tick)


def _columns(file: IO[str]) -> int:
    """The terminal's width in columns (80 if unknown)."""
    import os

    try:
        return os.get_terminal_size(file.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def _fit(desc: str, columns: int) -> str:
    """``desc`` shortened to ``columns - _ROOM`` characters (at least 20), so that a terminal of ``columns`` still
    shows the bar's count, percentage and time estimate. Shortened in this order, each step only while it is too
    long: closing parenthesised asides are dropped, then the other asides (the last first), then trailing
    ``" of ..."`` phrases (the last first: "candidate 2: privacy profile of BMG(...) n=1e5" keeps "candidate 2:
    privacy profile"); only then is the rest cut, ending in "..."."""
    import re

    room = max(columns - _ROOM, 20)
    while len(desc) > room and re.search(r"\s*\([^()]*\)$", desc):  # a closing aside goes first
        desc = re.sub(r"\s*\([^()]*\)$", "", desc)
    while len(desc) > room and re.search(r"\s*\([^()]*\)", desc):  # then the others, the last first
        head, _, tail = desc.rpartition("(")
        desc = head.rstrip() + tail[tail.index(")") + 1:] if ")" in tail else head.rstrip()
    while len(desc) > room and " of " in desc:
        desc = desc[:desc.rindex(" of ")]
    return desc if len(desc) <= room else desc[:room - 3].rstrip() + "..."


_CLASSES: dict[type, type] = {}


def _tqdm_class(base: type) -> type:
    """``base`` (a tqdm class) whose total is frozen while a ``KeyboardInterrupt`` is handled and whose close
    then shows "interrupted" (the count stays the true one: not the 100 % of a finished bar)."""
    if base not in _CLASSES:
        class Bar(base):  # type: ignore[misc, valid-type]
            @property
            def total(self) -> Any:
                return self._sharpdp_total

            @total.setter
            def total(self, value: Any) -> None:
                if _interrupted() and hasattr(self, "_sharpdp_total"):
                    return
                self._sharpdp_total = value

            def close(self, interrupted: bool = False) -> None:
                try:
                    _OPEN.discard(self)
                    interrupted = interrupted or _interrupted()
                except (AttributeError, TypeError):  # tqdm's __del__ at interpreter exit: module globals gone
                    pass
                if interrupted and not getattr(self, "disable", True):
                    # the true count, no rate: "interrupted" fits in 80 columns
                    self.bar_format = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}] interrupted"
                    self.leave = True  # (a leave=False bar would erase itself: nothing would say where it stopped)
                super().close()

        Bar.__name__ = Bar.__qualname__ = base.__name__
        _CLASSES[base] = Bar
    return _CLASSES[base]


class _Gather:
    """What :func:`progress_gather` shares with the bars made inside it: the bar shown, its unit, the open ones."""

    def __init__(self, bar: Any, unit: str) -> None:
        self.bar, self.unit = bar, unit
        self.open: list["_Counted"] = []


_GATHER: ContextVar["_Gather | None"] = ContextVar("sharpdp_progress_gather", default=None)


class _Counted(_Iterating):
    """A bar made inside :func:`progress_gather`: it draws nothing; the work it counts (in the gathering bar's unit,
    by the innermost open bar only: a bar within which another is made counts nothing from then on, its items being
    the inner bars' ones) goes to the gathering bar, whose total grows to at least its count plus this bar's total
    when that is more than the total said so far (the gathering bar's total is an estimate, revised as it goes)."""

    def __init__(self, gather: _Gather, iterable: Iterable[Any] | None = None, *, total: int | None = None,
                 unit: str = "it", **_: Any) -> None:
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self.iterable, self.total, self.n = iterable, total, 0
        self._gather, self._counts = gather, unit == gather.unit
        for outer in gather.open:  # (their items are this bar's ones)
            outer._counts = False
        gather.open.append(self)
        bar = gather.bar
        if self._counts and total and bar.total is not None and bar.n + total > bar.total:
            bar.total = bar.n + int(total)
            _redraw(bar)

    def update(self, k: int = 1) -> None:
        self.n += k
        if self._counts:
            self._gather.bar.update(k)

    def close(self, interrupted: bool = False) -> None:
        if self in self._gather.open:
            self._gather.open.remove(self)



def _redraw(bar: Any) -> None:
    """Redraw a tqdm bar whose total changed (a plain bar prints its next line by its own rule)."""
    refresh = getattr(bar, "refresh", None)
    if refresh is not None and not getattr(bar, "disable", True):
        refresh()


@contextmanager
def progress_gather(bar: Any, unit: str = " values") -> Iterator[Any]:
    """Within the ``with`` block, the bars made by :func:`progress_bar` draw nothing and count their work into
    ``bar`` instead: one bar for a step made of many short ones (e.g. a composed round's dominating pair: a few
    single certified values, a secant's, then 40 at once, perhaps twice), none of which would last long enough to
    be seen by the progress rule's delays.

    Only the bars counting in ``unit`` count, and only the innermost open one (a bar made inside another one's
    life counts the same items: the outer one counts nothing from then on). ``bar``'s total is taken as an estimate:
    it grows to the count plus a new inner bar's total where that is more (make ``bar`` with ``estimated=True``,
    so that a log's ``(done)`` line says where the total moved); the caller closes ``bar``.

    Parameters
    ----------
    bar : object
        A bar returned by :func:`progress_bar` (outside any gathering block).
    unit : str, default " values"
        The unit of the inner bars that count.

    Yields
    ------
    object
        ``bar``.
    """
    token = _GATHER.set(_Gather(bar, unit))
    try:
        yield bar
    finally:
        _GATHER.reset(token)
