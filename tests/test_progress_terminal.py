"""A terminal reporting 0 columns gets the plain lines (tqdm draws nothing there: `mean --rounds 3` was silent for
232 s under such a pty), and a live bar redraws at every update (no adaptive skipping after a fast burst)."""

import os
import pty

import pytest
from _tty import FakeTty

import sharpdp._progress as P


def test_zero_width_terminal_gets_plain_lines():
    pytest.importorskip("tqdm")
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "w", closefd=False) as tty:
            import fcntl
            import struct
            import termios

            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 0, 0, 0))  # 0 columns
            assert isinstance(P.progress_bar(total=3, file=tty), P._PlainBar)
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
            bar = P.progress_bar(total=3, file=tty, leave=False)
            assert not isinstance(bar, P._PlainBar)
            assert bar.miniters == 1 and not bar.dynamic_miniters
            bar.close()
    finally:
        os.close(master)
        os.close(slave)


def test_live_bar_redraws_after_a_fast_burst(monkeypatch):
    tqdm = pytest.importorskip("tqdm")

    out = FakeTty()
    bar = P.progress_bar(total=1000, file=out, mininterval=0.0)
    assert isinstance(bar, tqdm.std.tqdm)
    bar.update(500)  # a fast burst ...
    before = out.getvalue().count("\r")
    bar.update(1)  # ... then one slow step: drawn at once
    assert out.getvalue().count("\r") > before
    bar.close()
