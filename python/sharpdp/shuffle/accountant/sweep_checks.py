"""The driver's pre-checks along a privacy profile's sweep (``docs/composition.md`` §2.20).

Before its engines, :func:`~.driver.certify` tries three shortcuts on every law: the few-user bracket
(:func:`~.closed_forms.small_n_bracket`, with its cost gate), the clamped Chernoff cap below the value floor
(:func:`~.chernoff.clamped_chernoff_cap`) and the far-tail treatment (:func:`~.far_tail.try_certify`, whose
``applicable`` test decides between it and the plain engine). Each is a choice of which certified value is computed
(every engine and closed form is certified on its own); their tests search clamps by bisection and cost as much as
the engine's passes on a light law (~40 % of the private round's profile). Inside :func:`check_sweep` (per thread; a
privacy profile's sweep enters it), a law family whose last full check found a shortcut idle skips that shortcut for
the next ``limits.SWEEP_CHECKS_EVERY - 1`` values of the family (the clamped Chernoff cap of a law without an absolute
target only while the family's last upper value is at least ``CAP_MARGIN`` times the value it is compared with); the engines then run as they would have
after an idle shortcut. Off (every check, main's floats) when ``limits.SWEEP_CHECKS`` is False.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from sharpdp.shuffle.accountant import limits

#: per thread: the sweep's state (a dict keyed by :func:`key`) inside :func:`check_sweep`, else None
_STATE = threading.local()
#: the clamped Chernoff cap is skipped only while the family's last upper value is at least this many times its
#: threshold (the cap returns only below the threshold: a value of the sweep falls ~0.1-0.3 e-folds per step)
CAP_MARGIN = 1e3
#: the names of the three shortcuts
FEW, CAP, FAR = "few", "cap", "far"


@dataclass
class Idle:
    """A family's last full check: the shortcuts it found idle, the values since (``runs``) and its last upper
    value."""

    idle: frozenset
    runs: int = 0
    upper: float = math.nan


@contextlib.contextmanager
def check_sweep() -> Iterator[None]:
    """Within this context (per thread, nested: the outer state kept) the driver skips the shortcuts a law family's last
    full check found idle (module docstring); no-op when ``limits.SWEEP_CHECKS`` is False."""
    old = getattr(_STATE, "on", None)
    if old is None and limits.SWEEP_CHECKS and int(limits.SWEEP_CHECKS_EVERY) > 1:
        _STATE.on = {}
    try:
        yield
    finally:
        _STATE.on = old


def key(family: tuple, negligible: float) -> tuple | None:
    """The state's key of a law family (``plain_warm.family``) and whether the caller set an absolute target (a later
    law of a report: another order of the pair); None outside a sweep."""
    return None if getattr(_STATE, "on", None) is None else family + (negligible > 0.0,)


def skips(k: tuple | None, threshold: float) -> frozenset:
    """The shortcuts to skip for this value of the family ``k`` (empty: a full check, then :func:`record` it): those
    its last full check found idle, for ``limits.SWEEP_CHECKS_EVERY - 1`` values after it; the clamped Chernoff cap of a
    law without an absolute target only while the family's last upper value is at least CAP_MARGIN ``threshold`` (the
    cap's comparison value; a later law's value below the maximum so far does not enter the report's maximum)."""
    st = getattr(_STATE, "on", None)
    if st is None or k is None:
        return frozenset()
    s = st.get(k)
    if s is None or s.runs + 1 >= int(limits.SWEEP_CHECKS_EVERY):
        st.pop(k, None)  # (a full check: recorded anew, or left out where a shortcut returns)
        return frozenset()
    s.runs += 1
    out = s.idle
    if CAP in out and not k[-1] and not s.upper >= CAP_MARGIN * threshold:
        out = out - {CAP}  # (a law without an absolute target: the cap's value would be reported)
    return out


def record(k: tuple | None, idle: frozenset) -> None:
    """After a full check of family ``k`` that reached the engines: the shortcuts found idle (no-op outside a sweep or
    where the state already holds the family: a value that skipped)."""
    st = getattr(_STATE, "on", None)
    if st is not None and k is not None and k not in st and idle:
        st[k] = Idle(frozenset(idle))


def note_upper(k: tuple | None, upper: float) -> None:
    """The family's latest upper value (for the cap's margin of :func:`skips`)."""
    st = getattr(_STATE, "on", None)
    s = None if st is None or k is None else st.get(k)
    if s is not None:
        s.upper = float(upper)


__all__ = ["CAP", "CAP_MARGIN", "FAR", "FEW", "Idle", "check_sweep", "key", "note_upper", "record", "skips"]
