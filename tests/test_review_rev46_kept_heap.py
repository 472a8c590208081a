"""Review rev46 (session 46): attack on docs/accountant_tail.md §68 (``limits.BODY45_KEPT_HEAP``, on since session 45: the
C heap kept for reuse inside ``lattice_pass`` and ``jump_term`` at n >= 1e7, glibc's mmap / trim thresholds raised by
``mallopt`` in the outermost scope and set back on its exit). Claims: the same floats (bit for bit) and the allocator
settings restored on every exit.

Not repeated from tests/test_body45_kept_heap.py and rev45 (single-threaded brackets, a poisoned heap, the scope's
bookkeeping with ``1 / 0`` inside a bare scope): (1) bit identity with ``threads=2`` (two passes in concurrent scopes
sharing one outermost scope) and with the accountant called inside an outer ``kept_heap`` block the caller holds
(nested: the thresholds raised for the whole call, also between passes); (2) an exception raised deep inside a real
call (``KeyboardInterrupt`` and ``MemoryError`` injected by monkeypatching a callee of the kept passes: the lattice
engine's ``_pass`` and the jump term's ``convolve``): the depth is back at 0, the last two ``mallopt`` calls set both
thresholds back (a recording stand-in for glibc's handle), and a call afterwards gives the switch-off floats (no
half-made state left in a cache). Reference: the switch off (its floats are main's by §68's claim).
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import heap_keep, jump, lattice, limits

from _main_floats34 import switch

pytestmark = pytest.mark.skipif(not hasattr(limits, "BODY45_KEPT_HEAP"), reason="rule of session 45 absent")

N, EPS = 10**7, 0.01


def _hex(monkeypatch, on: bool, threads: int = 1, outer: bool = False) -> tuple[str, str]:
    with monkeypatch.context() as mp:
        switch(mp, "BODY45_KEPT_HEAP", on)
        acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), N, "zero_out", threads=threads)
        if outer:
            with heap_keep.kept_heap():
                assert heap_keep.depth() == (1 if heap_keep._glibc() is not None else 0)
                lo, up = acc.get_delta_bounds(EPS)
        else:
            lo, up = acc.get_delta_bounds(EPS)
        clear_caches()
    assert heap_keep.depth() == 0
    return float(lo).hex(), float(up).hex()


@pytest.fixture(scope="module")
def off_hex():
    old = limits.BODY45_KEPT_HEAP
    limits.BODY45_KEPT_HEAP = False
    clear_caches()
    try:
        lo, up = ShuffleAccountant(GaussianRandomizer(1.0, 1), N, "zero_out").get_delta_bounds(EPS)
    finally:
        limits.BODY45_KEPT_HEAP = old
        clear_caches()
    assert 0 < lo <= up < 1
    return float(lo).hex(), float(up).hex()


def test_threads_and_nested_scope_same_floats(monkeypatch, off_hex):
    assert _hex(monkeypatch, True, threads=2) == off_hex
    assert _hex(monkeypatch, False, threads=2) == off_hex
    assert _hex(monkeypatch, True, outer=True) == off_hex


class _Lib:
    """A stand-in for glibc's handle recording ``mallopt`` calls."""

    def __init__(self):
        self.calls: list = []

    def mallopt(self, param, value):
        self.calls.append((param, value))
        return 1


@pytest.mark.parametrize("exc", [KeyboardInterrupt, MemoryError])
@pytest.mark.parametrize("where", ["pass", "jump"])
def test_exception_inside_a_call_restores_the_allocator(monkeypatch, off_hex, exc, where):
    switch(monkeypatch, "EPS47_CALL_HEAP", False)  # (**) session 47, eps47: docs/accountant.md §8.27.1
    lib = _Lib()
    target = (lattice, "_pass") if where == "pass" else (jump, "convolve")
    orig = getattr(*target)
    seen: list = []

    def boom(*a, **k):
        seen.append(heap_keep.depth())
        raise exc("injected by rev46")

    with monkeypatch.context() as mp:
        switch(mp, "BODY45_KEPT_HEAP", True)
        mp.setattr(heap_keep, "_glibc", lambda: lib)
        mp.setattr(*target, boom)
        with pytest.raises(exc):
            ShuffleAccountant(GaussianRandomizer(1.0, 1), N, "zero_out").get_delta_bounds(EPS)
        assert seen and seen[0] == 1  # (raised inside the scope)
        assert heap_keep.depth() == 0
        assert lib.calls[:2] == [(heap_keep.M_MMAP_THRESHOLD, heap_keep.KEEP_MMAP),
                                 (heap_keep.M_TRIM_THRESHOLD, heap_keep.KEEP_TRIM)]
        assert lib.calls[-2:] == [(heap_keep.M_MMAP_THRESHOLD, heap_keep.OUT_MMAP),
                                  (heap_keep.M_TRIM_THRESHOLD, heap_keep.OUT_TRIM)]
        ins = lib.calls.count((heap_keep.M_MMAP_THRESHOLD, heap_keep.KEEP_MMAP))
        outs = lib.calls.count((heap_keep.M_MMAP_THRESHOLD, heap_keep.OUT_MMAP))
        assert ins == outs >= 1  # (every entry of the outermost scope left: a caught MemoryError may retry)
        mp.setattr(*target, orig)
        lo, up = ShuffleAccountant(GaussianRandomizer(1.0, 1), N, "zero_out").get_delta_bounds(EPS)
        clear_caches()
    assert (float(lo).hex(), float(up).hex()) == off_hex  # (no half-made state left behind)
