"""Review rev46 (session 46): attack on rep46's docs/accountant.md §9.23 (``limits.REP46_PROBE_GATE``: the golden
section's new split probed first where the cached legs beside it predict it worse; ``limits.REP46_LOOSE_CAP``: the cap
proved from the loose search's legs first). Both choose which certified legs run; claim: the reported bracket stays a
certified bracket of the same bound, and get_epsilon's answer stays certified. Skipped while the switches are absent.

rep46 checked its gate at 2.0 on two cells (the same bracket as off). Here the gate is pushed to both ends (1.0: it
fires wherever the prediction is at the bar; 50: almost never) with the loose cap on, at replace-one
GaussianRandomizer rounds not in rep46's tests (sigma0 0.8, 1.3, 3 at n = 1e3, 1e4). References: the switch-off
bracket (a certified bracket of the same bound: the two must overlap, lo_on <= up_off and lo_off <= up_on), and for
get_epsilon a fresh switch-off ``get_delta`` at the answer (<= delta).
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch

pytestmark = pytest.mark.skipif(not hasattr(limits, "REP46_PROBE_GATE"), reason="rule of a branch not merged")

CELLS = [(0.8, 1000, 3.0), (1.3, 1000, 1.5), (3.0, 10**4, 0.4)]


def _bracket(monkeypatch, s, n, eps, gate, cap):
    with monkeypatch.context() as mp:
        switch(mp, "REP46_PROBE_GATE", gate)
        switch(mp, "REP46_LOOSE_CAP", cap)
        out = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").get_delta_bounds(eps)
        clear_caches()
    return float(out[0]), float(out[1])


@pytest.mark.parametrize("s, n, eps", CELLS)
def test_brackets_overlap_the_switch_off_bracket(monkeypatch, s, n, eps):
    lo0, up0 = _bracket(monkeypatch, s, n, eps, 0.0, False)
    assert 0.0 <= lo0 <= up0 <= 1.0
    for gate in (1.0, 50.0):
        lo1, up1 = _bracket(monkeypatch, s, n, eps, gate, True)
        assert lo1 <= up1 and lo1 <= up0 * (1 + 1e-12) and lo0 <= up1 * (1 + 1e-12), (gate, lo0, up0, lo1, up1)


@pytest.mark.parametrize("s, n, delta", [(1.3, 1000, 1e-5), (3.0, 10**4, 1e-7)])
def test_epsilon_certified_with_the_rules_forced(monkeypatch, s, n, delta):
    with monkeypatch.context() as mp:
        switch(mp, "REP46_PROBE_GATE", 1.0)
        switch(mp, "REP46_LOOSE_CAP", True)
        eps = float(ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").get_epsilon(delta))
        clear_caches()
    with monkeypatch.context() as mp:
        switch(mp, "REP46_PROBE_GATE", 0.0)
        switch(mp, "REP46_LOOSE_CAP", False)
        up = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").get_delta(eps)
        clear_caches()
    assert up <= delta, (eps, up, delta)
