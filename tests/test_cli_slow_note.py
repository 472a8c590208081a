"""A CLI step with nothing to count says why it takes long once it has run for a while, and says nothing when
it ends in time."""

import time

from sharpdp.cli import slow_note


def test_the_note_comes_once_after_the_delay_and_never_for_a_quick_step(capsys):
    with slow_note("account", "still computing", after=0.05):
        time.sleep(0.4)
    assert capsys.readouterr().err == "sharpdp account: note: still computing\n"
    with slow_note("account", "still computing", after=0.3):
        pass
    time.sleep(0.5)  # a cancelled timer does not fire later
    assert capsys.readouterr().err == ""
