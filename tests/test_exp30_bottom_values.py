"""Cheap comparisons of a replace-one round bounded through bot from its zero-out legs (docs/composition.md §2.11;
sharpdp.shuffle.bottom_values), and the export step they decide.

References: the round's certified ``get_delta`` (the full split search of docs/accountant.md §9) on a fresh
accountant, and the plain doubling search ``while get_delta(e) > delta: e *= 2`` on it."""

from __future__ import annotations

import math

import pytest

from sharpdp.interop.dp_accounting import export_interval
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.bottom_values import level_decider
from sharpdp.shuffle.profile import doubling_epsilon


def _plain_doubling(acc, delta: float, start: float = 1e-6) -> float:
    """The plain doubling search on the running minimum of the full search's certified values."""
    e, best = start, math.inf
    while True:
        best = min(best, acc.get_delta(e))
        if best <= delta or 2 * e > 60.0:
            return min(e, 60.0)
        e *= 2.0


def test_level_decider_only_for_rounds_through_bottom():
    assert level_decider(ShuffleAccountant(GaussianRandomizer(8.0, 1), 1000, "zero_out"), 1e-12) is None
    assert level_decider(ShuffleAccountant(GaussianRandomizer(8.0, 1), 1000, "replace"), 1e-12) is not None


@pytest.mark.parametrize("level", [1e-3, 1e-6, 1e-12])
def test_level_decider_agrees_with_the_full_search(level):
    """A value above the level is a lower value of what the full search reports (so it decides alike); a value at
    most the level is a certified upper value (checked against the full search's own lower value of its split: the
    full search cannot be much better than a certified split at the same eps)."""
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(8.0, 1), 1000, "replace")
    ref = ShuffleAccountant(GaussianRandomizer(8.0, 1), 1000, "replace")
    decide = level_decider(acc, level)
    seen = {"above": 0, "below": 0}
    for eps in (1e-6, 0.004, 0.016, 0.032, 0.048, 0.064, 0.08, 0.11):
        v = decide(eps)
        full = ref.get_delta(eps)
        if v is None:
            continue
        if v > level:
            seen["above"] += 1
            assert v <= full, (eps, v, full)
        else:
            seen["below"] += 1
            assert full <= level * 1.05 or full <= 1.5 * v, (eps, v, full)
    assert seen["above"] >= 1 and seen["below"] >= 1, seen


@pytest.mark.parametrize("sigma0,n", [(8.0, 1000), (6.0, 100)])
def test_doubling_through_bottom_is_the_plain_doubling_point(sigma0, n):
    clear_caches()
    got = doubling_epsilon(ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "replace"), 1e-12)
    want = _plain_doubling(ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "replace"), 1e-12)
    assert got == want


def test_export_interval_through_bottom_pinned():
    """GaussianRandomizer(1, 1), replace, n = 100: the step of main before the legs decided the doubling (0.016777216
    = 2^24 1e-6 / 1000; docs/composition.md §2.11)."""
    clear_caches()
    assert export_interval(ShuffleAccountant(GaussianRandomizer(1.0, 1), 100, "replace")) == 0.016777215999999998
