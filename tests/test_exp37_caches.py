"""Session 37 (exp37): ``clear_caches`` empties the export step's memo of halvings (docs/composition.md §4.9) with
the other process-wide caches of a round (docs/composition.md §2.3)."""

from __future__ import annotations

import sharpdp.shuffle as sh
from sharpdp.shuffle import export_step, round_cache
from sharpdp.shuffle.profile import doubling_epsilon


class _Count(sh.ShuffleAccountant):
    """An accountant counting its ``get_delta_bounds`` calls (its own type: a round key of its own)."""

    calls = 0

    def get_delta_bounds(self, eps, *args, **kwargs):
        type(self).calls += 1
        return super().get_delta_bounds(eps, *args, **kwargs)


def test_clear_caches_empties_the_halvings_memo():
    """The halvings of a round's export step are memoised per round, step and switches; ``clear_caches`` (the
    documented way to clear every cache) empties that memo, so the next export step probes the round again (what it
    costs in a fresh process) and finds the same step."""
    sh.clear_caches()
    acc = _Count(sh.GaussianRandomizer(1, 1), 1000)
    step0 = export_step.export_step(acc, doubling_epsilon)
    assert len(round_cache.SPLITS) == 1
    before = _Count.calls
    assert export_step.export_step(acc, doubling_epsilon) == step0  # memoised: no probe
    assert len(round_cache.SPLITS) == 1
    sh.clear_caches()
    assert len(round_cache.SPLITS) == 0 and len(round_cache.VALUES) == 0
    assert export_step.export_step(acc, doubling_epsilon) == step0  # the same step after a clear
    assert len(round_cache.SPLITS) == 1 and _Count.calls > before  # probed (and searched) again
    sh.clear_caches()
    assert len(round_cache.SPLITS) == 0
