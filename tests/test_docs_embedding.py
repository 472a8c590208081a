"""docs/embedding.md: every Python code block runs (in order, each in a fresh namespace), and the
values it prints agree with the certified accountant (the blocks' own asserts check that)."""

from __future__ import annotations

import pathlib
import re

import pytest

pytest.importorskip("opendp")
pytest.importorskip("dp_accounting")

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "embedding.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def test_the_note_has_its_examples():
    assert len(BLOCKS) == 5
    text = DOC.read_text()
    for name in ("make_shuffled_round", "make_fix_delta", "make_composition", "ShufflePLDAccountant",
                 "ShuffledRoundEvent", "REPLACE_SPECIAL", "change_one_distance", "ComposedAccountant"):
        assert name in text, name


@pytest.mark.parametrize("k", range(len(BLOCKS)))
def test_code_block_runs(k, capsys):
    import opendp.prelude as dp
    from opendp import mod

    before = set(mod.GLOBAL_FEATURES)
    ns: dict = {}
    try:
        exec(compile(BLOCKS[k], f"docs/embedding.md block {k + 1}", "exec"), ns)
    finally:  # a block may enable OpenDP features (as a user would); do not leak them into other tests
        dp.disable_features(*(set(mod.GLOBAL_FEATURES) - before))
    out = capsys.readouterr().out
    assert out.strip(), "each example prints its result"
    if k == 1:  # composed (eps, delta): the round's certified epsilon plus Laplace's 1/4
        from sharpdp.shuffle import privacy_profile

        eps_round = ns["eps"] - 0.25
        assert privacy_profile(ns["accountant"], eps_round) <= 1e-6 and ns["delta"] == pytest.approx(1e-6)
    if k == 2:
        eps = ns["accountant"].get_epsilon(1e-6)
        assert 0.0 < eps < 5.0
