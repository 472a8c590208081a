"""Doc consistency found by a newcomer on a clean clone (2026-12-04): README's description of the
Ctrl-C JSON object covers both messages the CLI gives (before and after a release file is written), and
docs/embedding.md's way to keep stderr quiet (`progress=False`) is accepted where it says."""

from __future__ import annotations

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_readme_interrupted_error_covers_the_after_writing_form():
    readme = " ".join((ROOT / "README.md").read_text().split())
    src = (ROOT / "python" / "sharpdp" / "cli" / "__init__.py").read_text()
    assert 'f"interrupted{done}"' in src and 'f" after writing {' in src
    assert "an `\"error\"` that starts with `interrupted`" in readme
    assert "`\"interrupted after writing FILE: ...\"`" in readme


def test_embedding_progress_false_is_accepted_where_the_doc_says(capsys):
    text = " ".join((ROOT / "docs" / "embedding.md").read_text().split())
    assert "`to_pld(acc, progress=False)`" in text and "`ComposedAccountant(parts, progress=False)`" in text
    import pytest

    pytest.importorskip("dp_accounting")
    from sharpdp.interop.dp_accounting import to_pld
    from sharpdp.shuffle import ComposedAccountant, RandomizedResponse, ShuffleAccountant

    acc = ShuffleAccountant(RandomizedResponse(k=2, epsilon0=1.0), 200)
    to_pld(acc, progress=False, max_evaluations=60)
    assert ComposedAccountant([(acc, 2)], progress=False, max_evaluations=60).get_delta(1.0) <= 1.0
    assert capsys.readouterr().err == ""
