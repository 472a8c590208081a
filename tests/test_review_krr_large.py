"""Adversarial review of ExactShuffleAccountant beyond N_EXACT (docs/sharp_krr.md §2.2, §4.10-4.11).

Independent references: exact rational sums over every dataset (n <= 10), full-support scipy
binomial pmfs convolved per class (every class, n just above N_EXACT), the range bound
(Proposition 2) against every class of the range, the blanket ShuffleAccountant and the
monotonicity of delta in eps and in n (post-processing: one more user is an independent noise).
Hangs are detected deterministically by counting calls of the branch and bound's decision.
"""

from __future__ import annotations

import numpy as np
import pytest
from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse
from sharpdp.shuffle.exact_krr import N_EXACT


class _Hang(RuntimeError):
    pass


def _count_decisions(acc: ExactShuffleAccountant, limit: int) -> list:
    """Wrap the branch and bound's decide(): raise _Hang after ``limit`` calls (a loop that never ends)."""
    bb = acc._bb
    orig = bb.decide
    calls: list = []

    def decide(eps, target, max_evals):
        got = orig(eps, target, max_evals)
        calls.append((eps, got))
        if len(calls) > limit:
            raise _Hang(f"decide called {len(calls)} times, last calls {calls[-3:]}")
        return got

    bb.decide = decide
    return calls


def test_get_epsilon_target_ambiguous_at_eps_zero_terminates():
    """A target inside the certified bracket of the worst class at eps = 0 (here the middle class,
    n = N_EXACT + 1, eps0 = 1): decide(0) is "unknown", the bisection on the end classes (whose
    lower values are below the target) drives hi to 0, point = 0 and step = xtol * 0 = 0: the
    "raise the point" loop never moves (found: an endless loop). The answer must be some eps with a
    certified upper delta <= target, reached in a few decisions."""
    n, e0 = N_EXACT + 1, 1.0
    acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    d = acc._bb.range_bracket(0.0, n // 2, n // 2)[0]  # the middle class's certified lower value
    assert d > max(acc.delta_at_class(0.0, 0)[1], acc.delta_at_class(0.0, n - 1)[1])  # interior max
    _count_decisions(acc, 40)
    eps = acc.get_epsilon(d)
    assert 0.0 < eps <= 1e-3
    assert acc.get_delta(eps) <= d
