"""A command's closing step with nothing to count (writing its CSV, drawing its PNG), by the progress rule
(``sharpdp._progress.PROGRESS_RULE``) and with no repeated line (docs/cli.md §8).

A plain :func:`sharpdp._progress.progress_step` prints, in a log, ``STEP: 2 s`` and then ``STEP: 3 s (done)`` for a
step of 2-5 s: two lines naming the same short step (``sharpdp histogram``'s "drawing ...png" twice), and nothing at
all on a terminal (``sharpdp crlb`` sat silent for seconds after its bar). :func:`file_step` instead says, on a
terminal, one line once the step has run :data:`TERMINAL_AFTER` seconds (what it is and how long it typically
takes), and in a log nothing for a step that ends within :data:`LOG_AFTER` seconds, then the rule's ``STEP: N s``
lines every 5 s and ``(done)``; on Ctrl-C either way an ``interrupted`` line (where the run stopped).
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from typing import Iterator

#: Seconds before the terminal's one line (a quicker step prints nothing).
TERMINAL_AFTER = 1.0
#: Seconds before a log's first line (the bar's delay: a quicker step prints nothing, so no "2 s" / "(done)" pair).
LOG_AFTER = 5.0


@contextmanager
def file_step(command: str, step: str, typical: str) -> Iterator[None]:
    """Run the ``with`` block as the closing step ``step`` of ``sharpdp COMMAND``.

    Parameters
    ----------
    command : str
        The subcommand, e.g. ``"crlb"``.
    step : str
        What the step does, e.g. ``"drawing out/crlb_5_2.png"``.
    typical : str
        How long it typically takes, measured (an estimate, said so), e.g. ``"about 1 s of CPU"``.
    """
    from sharpdp._progress import is_terminal, progress_bar, progress_step

    label = f"{command}: {step} ({typical}; longer on a busy machine)"
    if not is_terminal(sys.stderr):
        bar = progress_bar(total=None, desc=label, delay=LOG_AFTER)  # (a plain bar off a terminal)
        try:
            yield
        finally:
            bar.close()
        return
    timer = threading.Timer(TERMINAL_AFTER, lambda: print(f"sharpdp {label}", file=sys.stderr, flush=True))
    timer.daemon = True
    with progress_step(label):  # (on a terminal: only its interrupted line)
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
