"""Review rev45 (session 45): attack on docs/composition.md §2.27 (``limits.PAIR44_SETTLED_START``: a sweep's upper value
of an atom-law sum first from one pass of the upper law alone at its family's last settled step, coarsened; the step
re-checked by main's refinement every ``PAIR44_SETTLED_RUNS`` values).

rev44 checked one ascending profile of 10-RR at n = 1e5. Here: (1) the settled step made as stale as the rule's
parameters allow (``PAIR44_SETTLED_RUNS`` = 10**6: never re-checked; ``PAIR44_SETTLED_GROW`` = 16,
``PAIR44_SETTLED_AIM`` = 10: coarsened 16 times; ``PAIR44_SETTLED_FALL`` = 0: kept whatever it falls to): each kept value
is claimed to be one lattice pass's certified upper value at any step, so the profile must stay above the exact
divergence; (2) sweeps in a non-monotone order (the family's step settled at one end of the range and used at the
other); (3) PrivUnit at d = 3 (replace-one: a three-atom law) besides k-RR. Reference: the exact divergence of the
round's atom law by binomial sums (rev44's ``_exact``: tests/test_krr29_settled_upper.py's ``_blanket_three_atoms``,
tests/_krr_reference.py's ``exact_two_atom``; scipy, 1e-9 relative slack) at n = 3e4, where the rule engages (asserted).
"""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.randomizers.privunit import PrivUnit

from _main_floats34 import switch
from _rev44_spy import spy
from test_review_rev44_pair44 import _exact

pytestmark = pytest.mark.skipif(not hasattr(limits, "PAIR44_SETTLED_START"), reason="rule of a branch not merged")

N = 30_000


def _profile(monkeypatch, R, eps: np.ndarray, stale: bool, n: int = N) -> tuple[np.ndarray, int]:
    from sharpdp.shuffle.accountant import settled_start

    calls = spy(monkeypatch, "ready", settled_start)
    switch(monkeypatch, "PAIR44_SETTLED_START", True)
    if stale:
        switch(monkeypatch, "PAIR44_SETTLED_RUNS", 10**6)
        switch(monkeypatch, "PAIR44_SETTLED_GROW", 16.0)
        switch(monkeypatch, "PAIR44_SETTLED_AIM", 10.0)
        switch(monkeypatch, "PAIR44_SETTLED_FALL", 0.0)
    prof = np.asarray(ShuffleAccountant(R, n, "replace").privacy_profile(eps))
    clear_caches()
    return prof, sum(1 for _, out in calls if out)


def _check(R, eps: np.ndarray, prof: np.ndarray, picks, n: int = N) -> None:
    for i in picks:
        ex = _exact(R, float(eps[i]), n)
        assert prof[i] >= ex * (1 - 1e-9), ("profile under the exact divergence", float(eps[i]), prof[i], ex)


UP = np.linspace(0.0, 0.3, 13)
ORDER = np.concatenate([UP, UP[::-1][1:] + 0.0125, [0.001, 0.29, 0.002]])  # (ramp up, down between, jumps)


@pytest.mark.parametrize("stale, eps, picks", [(False, ORDER, [3, 18, 26]), (True, ORDER, [6, 14, 25])])
def test_krr_profile_above_exact(monkeypatch, stale, eps, picks):
    R = RandomizedResponse(4, 2.0)
    prof, used = _profile(monkeypatch, R, eps, stale)
    assert used >= 3  # (the rule took settled starts)
    _check(R, eps, prof, picks)


def test_privunit_d3_profile(monkeypatch):
    """PrivUnit(0.97, 0.7, 3), n = 1e5 (the rule engages there: 17 of 24 values), the stale parameters."""
    R = PrivUnit(0.97, 0.7, 3)
    eps = np.linspace(0.0, 0.6, 25)
    prof, used = _profile(monkeypatch, R, eps, True, 10**5)
    assert used >= 3
    _check(R, eps, prof, [1, 4, 8, 13], 10**5)


def test_non_monotone_order_stays_near_main(monkeypatch):
    """(Tightness, not certification: with the rule's own parameters, a sweep in a non-monotone order stays within
    5 % above main's sweep; the 16-times-coarsened steps of the stale parameters give up to 3.6 times main's, as
    they may.)"""
    R = RandomizedResponse(4, 2.0)
    prof, used = _profile(monkeypatch, R, ORDER, False)
    assert used >= 3
    with monkeypatch.context() as mp:
        switch(mp, "PAIR44_SETTLED_START", False)
        ref = np.asarray(ShuffleAccountant(R, N, "replace").privacy_profile(ORDER))
        clear_caches()
    keep = ref > 1e-12
    assert np.all(prof[keep] <= 1.05 * ref[keep]), np.max(prof[keep] / ref[keep])
