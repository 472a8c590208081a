"""Session 34's bracket-moving speed rules off (docs/accountant_tail.md §44): main's (session 33's) floats, for the
tests that pin an older rule's floats on purpose (each call marked `# (**) session 34, tail34`)."""

from __future__ import annotations


def main_floats(monkeypatch) -> None:
    """The switches of docs/accountant_tail.md §44.1-§44.4 off for the test (monkeypatch undoes them)."""
    from sharpdp.shuffle.accountant import far_tail, far_tail_grid, plain

    monkeypatch.setattr(far_tail_grid, "BODY_WHOLE_STOP", False)
    monkeypatch.setattr(far_tail, "JUMP_TV_STOP", False)
    monkeypatch.setattr(plain, "ATOM_AIM_SLOW", False)
