"""rev44 (not collected by pytest): a call recorder for the review's tests."""

from __future__ import annotations


def spy(monkeypatch, name: str, *modules) -> list:
    """Replace ``name`` in each of ``modules`` (the first one's function) by a wrapper recording (args, result) of every
    call; returns the record (monkeypatch undoes the replacement)."""
    calls: list = []
    orig = getattr(modules[0], name)

    def wrapped(*a, **k):
        out = orig(*a, **k)
        calls.append((a, out))
        return out

    for mod in modules:
        monkeypatch.setattr(mod, name, wrapped)
    return calls
