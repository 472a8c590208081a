"""Review rev43 (session 43): attack on pair43's docs/composition.md §2.26 (``pair_settled``,
``limits.PAIR43_SETTLED_COVER``, off: a pure-LDP round's pair samples all taken upper first and covered by U (1 + m),
no bracket). Skipped while the module is absent (branch pair43).

Claim attacked: the pair built with the switch on still dominates (Claim A of docs/composition.md §2): its curve is at
or above (a) the exact delta of the shuffled binary RR itself (``ExactShuffleAccountant``: the mechanism's own
replace-one delta, a different computation from the blanket bound; the blanket bound is above it), (b) a fresh
certified lower value of the blanket bound (switch off, rel_tol 1e-3), at dense eps including ones between the
samples; and the pair's floats are finite (its samples below the accurate floor carry NaN lower values in the rule).
"""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse, ShuffleAccountant, clear_caches, dominating_pair

from _main_floats34 import switch

ps = pytest.importorskip("sharpdp.shuffle.pair_settled")


@pytest.mark.parametrize("eps0, n", [(1.0, 1000), (3.0, 5000), (0.5, 10**5)])
def test_settled_pair_dominates_exact_and_fine_lower(monkeypatch, eps0, n):
    switch(monkeypatch, "PAIR43_SETTLED_COVER", True)
    taken: list = []
    orig = ps.settled_values

    def spy(*a):
        out = orig(*a)
        taken.append(int(np.sum(out[1])))
        return out

    monkeypatch.setattr(ps, "settled_values", spy)
    from sharpdp.shuffle import pair_accuracy
    monkeypatch.setattr(pair_accuracy, "settled_values", spy)
    acc = ShuffleAccountant(RandomizedResponse(2, eps0), n, "replace")
    pair = dominating_pair(acc, progress=False)
    assert sum(taken) > 0  # (samples were covered by the margin: the rule ran)
    assert np.all(np.isfinite(pair.probs)) and np.isfinite(pair.infinity_mass)
    assert np.all(pair.probs >= 0) and pair.infinity_mass >= 0
    exact = ExactShuffleAccountant(RandomizedResponse(2, eps0), n)
    eps = np.unique(np.concatenate([np.linspace(0.0, eps0, 13), pair.sample_epsilons[::max(1, pair.sample_epsilons.size // 8)]]))
    eps = eps[eps <= eps0]
    with monkeypatch.context() as mp:
        switch(mp, "PAIR43_SETTLED_COVER", False)
        fine = ShuffleAccountant(RandomizedResponse(2, eps0), n, "replace", rel_tol=1e-3)
        lows = [fine.get_delta_bounds(float(e))[0] for e in eps]
    for e, lo in zip(eps, lows):
        d = pair.get_delta(float(e))
        assert d >= lo, (e, d, lo)
        ex_lo = exact.get_delta_bounds(float(e))[0]
        assert d >= ex_lo, (e, d, ex_lo)
    clear_caches()
