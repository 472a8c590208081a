"""Frictions an embedder met in session 30's newcomer pass (docs/embedding.md §3.2, §4)."""

from __future__ import annotations

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_shuffled_round_event_refuses_a_non_randomizer_at_construction():
    pytest.importorskip("dp_accounting")
    from sharpdp.interop.dp_accounting import ShuffledRoundEvent
    from sharpdp.shuffle import RandomizedResponse

    for bad in ("bmg", None, 3.0):
        with pytest.raises(TypeError, match="randomizer: .* is not a local randomizer"):
            ShuffledRoundEvent(bad, n=100)
    assert ShuffledRoundEvent(RandomizedResponse(2, 1.0), n=100).n == 100  # a randomizer passes


def test_embedding_names_the_search_tolerance_and_the_shared_step():
    text = " ".join((ROOT / "docs" / "embedding.md").read_text().split())
    assert "**the search's tolerance**" in text and "`xtol=1e-6`" in text
    assert "ComposedAccountant([(acc, 10)], step)" in text and "`acc.get_delta(1.0) <= 1e-6`" in text
    assert "**Replace-one rounds bounded through ⊥**" in text


def test_to_pld_and_gaussian_randomizer_docstrings_say_what_the_newcomer_missed():
    pytest.importorskip("dp_accounting")
    from sharpdp.interop.dp_accounting import to_pld
    from sharpdp.shuffle import GaussianRandomizer

    assert "``progress``" in to_pld.__doc__
    doc = " ".join(GaussianRandomizer.__doc__.split())
    assert "certifies d = 1 only" in doc and "unit ball" in doc
