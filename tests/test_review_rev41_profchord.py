"""Review rev41 (session 41) of exp41's docs/composition.md §2.24 (``PROFILE_CHORDS``: privacy_profile's eps strictly
between two of the round's cached certified values take the chord in t = e^eps of their upper values, rounded up).

Claim attacked: every chord value is at or above the true delta at its eps. Reference: 10-RR (eps0 = 4), replace, the
exact blanket divergence by binomial sums (tests/test_krr29_settled_upper.py's ``_blanket_three_atoms``, relative error
~1e-12 at the values >= 1e-13 checked; tolerance 1e-9 relative) at the chords the rule itself takes (recorded), after the
round's pair (n = 1e4: its ~250 samples are the chords' ends) and on a 300-point grid; and a profile of another round
(n = 12000) after that pair: no chord may read the other round's values (every value of it at or above its own exact
divergence at 10 eps). Measured on exp41 33688c92: 284 chords on the 300-point grid, 95 checked offline: chord / exact 1.000113 (eps 0.00224)
- 1.0061, none below."""

from __future__ import annotations

import numpy as np
import pytest
from _main_floats34 import switch

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant, clear_caches, dominating_pair, privacy_profile
from sharpdp.shuffle.accountant import limits
from test_review_rev41_pair import _exact_krr

pytestmark = pytest.mark.skipif(not hasattr(limits, "PROFILE_CHORDS"), reason="rule of a branch not merged")


@pytest.fixture(autouse=True)
def _chords_on(monkeypatch):
    """docs/composition.md §2.24.1: the rule is off by default; these tests check it switched on."""
    switch(monkeypatch, "PROFILE_CHORDS", True)


def test_krr10_profile_chords_after_the_pair_at_or_above_the_exact_sums(monkeypatch):
    from sharpdp.shuffle import profile_chords
    R = RandomizedResponse(10, 4.0)
    clear_caches()
    acc = ShuffleAccountant(R, 10**4, "replace")
    pair = dominating_pair(acc, progress=False)
    top = float(pair.sample_epsilons[np.nonzero(pair.sample_deltas <= 1e-13)[0][0]])
    got = []
    real = profile_chords.chord_value

    def spy(e_a, u_a, e_b, u_b, e):
        v = real(e_a, u_a, e_b, u_b, e)
        got.append((e, v))
        return v

    monkeypatch.setattr(profile_chords, "chord_value", spy)
    eps = np.linspace(0.0, top, 300)
    prof = np.asarray(privacy_profile(ShuffleAccountant(R, 10**4, "replace"), eps, progress=False))
    monkeypatch.undo()
    assert len(got) >= 100, len(got)  # (the rule ran)
    idx = np.linspace(0, len(got) - 1, 24).astype(int)
    ratios = []
    for e, v in (got[i] for i in idx.tolist()):
        ex = _exact_krr(R, e, 10**4)
        if ex < 1e-13:
            continue
        ratios.append(v / ex)
        assert v >= ex * (1 - 1e-9), (e, v, ex)
        j = int(np.searchsorted(eps, e))
        assert eps[j] == e and prof[j] <= v  # (the profile reports the chord or a tighter value)
    assert len(ratios) >= 15 and min(ratios) < 1.01


def test_profile_of_another_round_after_a_pair_reads_none_of_its_values():
    R = RandomizedResponse(10, 4.0)
    clear_caches()
    dominating_pair(ShuffleAccountant(R, 10**4, "replace"), progress=False)
    eps = np.linspace(0.0, 0.6, 40)
    prof = np.asarray(privacy_profile(ShuffleAccountant(R, 12000, "replace"), eps, progress=False))
    for j in range(2, 40, 4):
        ex = _exact_krr(R, float(eps[j]), 12000)
        assert prof[j] >= ex * (1 - 1e-9), (float(eps[j]), float(prof[j]), ex)
