"""Review rev44 (session 44): attack on rep44's docs/accountant.md §9.22 (replace-one through bot:
``limits.VIA_BOTTOM_GOLDEN_PROBE``, the golden section's new split probed first; ``VIA_BOTTOM_EDGE_FIRST``, the split
at the edge of leg B's cliff tried first; ``VIA_BOTTOM_TRIVIAL_REFUTE``, the cap proofs refuted by E[L_+]; choices of
which certified splits and proofs run). Skipped while the switches are absent (branch rep44).

Claim attacked: the reported bracket stays certified. References: the switches off (main's certified bracket) and a
finer accountant (rel_tol 1e-3, switches off); the rules' bracket must meet both, on the cells of §9.22.1's kinds
(a)-(c) (GaussianRandomizer(sigma0), n = 10 and 1e3, eps up to 8), its upper value at most 1 and its lower value >= 0.
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch
from _rev44_spy import spy

NAMES = ("VIA_BOTTOM_GOLDEN_PROBE", "VIA_BOTTOM_EDGE_FIRST", "VIA_BOTTOM_TRIVIAL_REFUTE")
pytestmark = pytest.mark.skipif(not hasattr(limits, "VIA_BOTTOM_EDGE_FIRST"), reason="rule of a branch not merged")
EDGES: list = []  # (per cell: the edge split was tried)


@pytest.mark.parametrize("sigma, n, eps", [(1.0, 10, 2.0), (4.6, 10, 1.0), (2.0, 1000, 1.0), (0.46, 10, 8.0),
                                           (4.6, 1000, 8.0)])
def test_replace_through_bottom_with_the_rules_meets_off_and_fine(monkeypatch, sigma, n, eps):
    with monkeypatch.context() as mp:
        for name in NAMES:
            if hasattr(limits, name):
                switch(mp, name, False)
        off = ShuffleAccountant(GaussianRandomizer(sigma, 1), n, "replace").get_delta_bounds(eps)
        fine = ShuffleAccountant(GaussianRandomizer(sigma, 1), n, "replace", rel_tol=1e-3).get_delta_bounds(eps)
    for name in NAMES:
        if hasattr(limits, name):
            switch(monkeypatch, name, True)
    from sharpdp.shuffle.accountant import via_bottom

    edges = spy(monkeypatch, "edge_first", via_bottom)
    acc = ShuffleAccountant(GaussianRandomizer(sigma, 1), n, "replace")
    assert acc.via_bottom
    on = acc.get_delta_bounds(eps)
    clear_caches()
    EDGES.append(any(out is not None for _, out in edges))
    assert 0.0 <= on[0] <= on[1] <= 1.0
    for ref in (off, fine):
        assert max(on[0], ref[0]) <= min(on[1], ref[1]), (on, ref)


def test_the_edge_split_was_tried():
    """(After the cells above, in file order: the edge-first rule returned a split on at least one of them.)"""
    if len(EDGES) < 5:
        pytest.skip("run with the cells above")
    assert any(EDGES)
