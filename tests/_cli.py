"""Run the ``sharpdp`` CLI in-process for the CLI tests."""

from __future__ import annotations

from sharpdp.cli import main


def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``sharpdp *argv``."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
