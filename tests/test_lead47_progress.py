"""The progress bar off a terminal and outside a notebook: the plain bar, without importing tqdm (its import costs
~0.1 s of CPU, 4 % of a fresh 300-point profile); on a terminal (or under IPython) tqdm's bar as before."""

import io
import subprocess
import sys
import textwrap

import pytest

from sharpdp import _progress


def test_plain_bar_off_a_terminal_does_not_import_tqdm():
    code = textwrap.dedent("""
        import io, sys
        from sharpdp import _progress
        out = io.StringIO()
        with _progress.progress_bar(total=3, desc="x", file=out) as bar:
            bar.update(3)
        print(type(bar).__name__, "tqdm" in sys.modules)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert res.stdout.split() == ["_PlainBar", "False"]


def test_terminal_still_gets_tqdm(monkeypatch):
    pytest.importorskip("tqdm")
    from tqdm.std import tqdm as std_tqdm

    monkeypatch.setattr(_progress, "_is_terminal", lambda file: True)
    bar = _progress.progress_bar(total=2, desc="y", file=io.StringIO(), delay=0)
    try:
        assert isinstance(bar, std_tqdm)
    finally:
        bar.close()


def test_ipython_loaded_defers_to_tqdm():
    """Under a loaded IPython the choice stays tqdm.autonotebook's (a notebook widget or the std class, which then
    falls back to the plain bar off a terminal): the shortcut is taken only where tqdm could not pick a widget."""
    pytest.importorskip("tqdm")
    code = textwrap.dedent("""
        import io, sys, types
        sys.modules["IPython"] = types.ModuleType("IPython")  # (a loaded IPython, not a kernel: tqdm picks std)
        from sharpdp import _progress
        bar = _progress.progress_bar(total=2, desc="z", file=io.StringIO())
        bar.close()
        print(type(bar).__name__, "tqdm.auto" in sys.modules)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert res.stdout.split() == ["_PlainBar", "True"]
