"""Review rev45 (session 45): attack on body45's docs/accountant_tail.md §68 (``limits.BODY45_KEPT_HEAP``: the C heap
kept for reuse inside lattice_pass and jump_term at n >= 1e7 by raising glibc's mmap and trim thresholds; claimed
"speed only, the same floats"). Skipped while the switch is absent (branch body45).

The attack: outside the rule an array above the mmap threshold (up to 32 MiB) is a fresh mmap, whose pages are zero;
inside it the same array is carved from freed heap memory holding old data. Any read of an ``np.empty`` element before
its write (harmless on zero pages) would change floats only with the rule. So the heap is poisoned first: inside the
rule's own scope (``heap_keep.kept_heap``, nested scopes share it), arrays of 1-160 MB filled with NaN and with 1e300
are allocated and freed, then the accountant runs in that scope; its bracket must be the switch-off bracket float.hex
for float.hex (this process, this machine: a bit-identity claim), at far-tail cells whose passes allocate arrays above
32 MiB (n = 1e8; and replace-one through bot at n = 1e7; GaussianRandomizer(1), n = 1e9, eps = 0.001 passed too, 50 s: not kept).
"""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch

pytestmark = pytest.mark.skipif(not hasattr(limits, "BODY45_KEPT_HEAP"), reason="rule of a branch not merged")

CELLS = {"bmg_1e8": (lambda: BlanketMixedGaussian(0.0389, 0.529, 1), 10**8, 0.01, "zero_out"),
         "gauss05_1e8": (lambda: GaussianRandomizer(0.5, 1), 10**8, 0.5, "zero_out"),
         "gauss2_1e7_replace": (lambda: GaussianRandomizer(2.0, 1), 10**7, 0.01, "replace")}


def _poison(fill: float) -> None:
    for mb in (1, 3, 9, 20, 40, 70, 160, 35, 5):
        a = np.empty(mb * (1 << 20) // 8)
        a.fill(fill)
        del a


@pytest.mark.parametrize("cell, fill", [("bmg_1e8", np.nan), ("bmg_1e8", 1e300), ("gauss05_1e8", np.nan),
                                        ("gauss2_1e7_replace", np.nan)])
def test_poisoned_kept_heap_gives_the_same_bracket(monkeypatch, cell, fill):
    from sharpdp.shuffle.accountant import heap_keep

    mk, n, eps, adj = CELLS[cell]
    with monkeypatch.context() as mp:
        switch(mp, "BODY45_KEPT_HEAP", False)
        off = ShuffleAccountant(mk(), n, adj).get_delta_bounds(eps)
        clear_caches()
    switch(monkeypatch, "BODY45_KEPT_HEAP", True)
    with heap_keep.kept_heap():
        _poison(fill)
        on = ShuffleAccountant(mk(), n, adj).get_delta_bounds(eps)
        _poison(fill)
        again = ShuffleAccountant(mk(), n, adj, rel_tol=0.05).get_delta_bounds(eps)  # (a second call in the scope)
    clear_caches()
    with monkeypatch.context() as mp:
        switch(mp, "BODY45_KEPT_HEAP", False)
        ref = ShuffleAccountant(mk(), n, adj, rel_tol=0.05).get_delta_bounds(eps)
        clear_caches()
    assert [float(v).hex() for v in on] == [float(v).hex() for v in off]
    assert [float(v).hex() for v in again] == [float(v).hex() for v in ref]
