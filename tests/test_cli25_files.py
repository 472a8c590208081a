"""--diagnostics FILE is checked by a trial (an empty temporary file beside it), not by os.access, which says yes
to root on /proc and ignores ACLs and read-only mounts (before: the run released and then failed to write)."""

from __future__ import annotations

import os

import pytest
from _cli import run  # noqa: E402

from sharpdp.cli import CliError, check_diagnostics_path


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_diagnostics_in_a_directory_where_no_file_can_be_created(monkeypatch):
    monkeypatch.setattr(os, "access", lambda *a, **k: True)  # what root (or an ACL) is told
    with pytest.raises(CliError, match=r"^--diagnostics: directory /proc is not writable"):
        check_diagnostics_path("/proc/diag.json", [])
    # (caught: s25's os.access test passed /proc/diag.json, under this monkeypatch and as root on this machine)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_mean_refuses_it_before_any_work(capsys):
    code, out, err = run(capsys, "mean", "--diagnostics", "/proc/diag.json")
    assert code == 2 and out == "" and err.strip().splitlines() == [
        err.strip()] and "--diagnostics: directory /proc is not writable" in err, err


def test_a_writable_directory_passes_and_keeps_no_probe(tmp_path):
    target = tmp_path / "d.json"
    check_diagnostics_path(str(target), [])
    assert list(tmp_path.iterdir()) == []  # (the trial's file is removed)
    target.write_text("{}")
    os.chmod(target, 0o400)  # a read-only earlier file is replaced by a rename, as the writer does
    check_diagnostics_path(str(target), [])
    check_diagnostics_path(str(tmp_path / "no" / "d.json"), [])  # a missing directory: created when written (data26)
    assert not (tmp_path / "no").exists()  # (the trial's directory is removed)
