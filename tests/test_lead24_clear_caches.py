"""clear_caches empties the engine's result memos too (a fresh-process cost after it), and changes no value."""

from sharpdp.shuffle import GaussianRandomizer, RandomizedResponse, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import memo


def test_clear_caches_empties_the_engine_memos_and_keeps_values():
    heavy = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**6)  # the closed form's memo (concentrated)
    atoms = ShuffleAccountant(RandomizedResponse(10, 4.0), 10**5, adjacency="replace")  # block memos
    first = (heavy.get_delta_bounds(1.0), atoms.get_delta_bounds(0.5))
    assert sum(len(d) for d in memo.RESULT_MEMOS) >= 2
    clear_caches()
    assert all(len(d) == 0 for d in memo.RESULT_MEMOS)
    fresh = (ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**6).get_delta_bounds(1.0),
             ShuffleAccountant(RandomizedResponse(10, 4.0), 10**5, adjacency="replace").get_delta_bounds(0.5))
    assert fresh == first  # the memos are deterministic functions of their keys: the same floats


def test_every_engine_memo_is_registered():
    from sharpdp.shuffle.accountant import blocks, concentrated, two_atom

    ids = {id(d) for d in memo.RESULT_MEMOS}
    for d in (concentrated._MEMO, two_atom._MEMO, blocks._WEIGHTS_CACHE, blocks._BLOCK_CACHE):
        assert id(d) in ids
