"""Doc consistency found by a newcomer on a clean clone (2026-12-04): README's description of the
Ctrl-C JSON object covers both messages the CLI gives (before and after a release file is written)."""

from __future__ import annotations

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_readme_interrupted_error_covers_the_after_writing_form():
    readme = " ".join((ROOT / "README.md").read_text().split())
    src = (ROOT / "python" / "sharpdp" / "cli" / "__init__.py").read_text()
    assert 'f"interrupted{done}"' in src and 'f" after writing {' in src
    assert "an `\"error\"` that starts with `interrupted`" in readme
    assert "`\"interrupted after writing FILE: ...\"`" in readme
