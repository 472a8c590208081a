"""Review rev44 (session 44): attack on pair44's docs/composition.md §2.27 (``limits.PAIR44_SETTLED_START``: a sweep's
upper value first from one pass of the upper law alone at its family's last settled step, coarsened; and
``limits.PAIR44_SWEEP_CHORDS``: a privacy profile's own sweep certifying every third eps and taking chords in e^eps
between them). Skipped while the switches are absent (branch pair44).

Claim attacked: every profile value is still at or above the true blanket divergence (the pair's values at 25 eps
of 10-RR, n = 1e5, were checked once the same way: 106 s, too long to keep; pair44's own export test covers it). Reference:
the exact divergence of the round's law by binomial sums (tests/test_krr29_settled_upper.py's
``_blanket_three_atoms``, tests/_krr_reference.py's ``exact_two_atom``; scipy; compared with 1e-9 slack) on k-RR rounds at n = 1e5 (the rule needs §14's settled
upper values of docs/accountant_atoms.md: atom-law sums at n >~ 3e4), at dense eps including the points between the sweep's certified ones; and the
values stay within 1 % above a fresh get_delta (the accuracy §2.26.4 / §2.27 keep).
"""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.laws import laws_for

from _main_floats34 import switch
from _rev44_spy import spy
from _krr_reference import exact_two_atom
from test_krr29_settled_upper import _blanket_three_atoms

pytestmark = pytest.mark.skipif(not hasattr(limits, "PAIR44_SETTLED_START"), reason="rule of a branch not merged")


def _exact(R, e: float, n: int) -> float:
    (g, law), = laws_for(R, float(e), "replace")
    v, p = law.atoms()
    f = _blanket_three_atoms if len(v) == 3 else exact_two_atom
    return f(float(g), np.asarray(v), np.asarray(p), n)


def _on(monkeypatch) -> list:
    """The switches on; returns the record of ``settled_start.ready``'s calls (the rule engaged: a result True)."""
    from sharpdp.shuffle.accountant import settled_start

    calls = spy(monkeypatch, "ready", settled_start)
    switch(monkeypatch, "PAIR44_SETTLED_START", True)
    if hasattr(limits, "PAIR44_SWEEP_CHORDS"):
        switch(monkeypatch, "PAIR44_SWEEP_CHORDS", True)
    if hasattr(limits, "PAIR43_SETTLED_COVER"):
        switch(monkeypatch, "PAIR43_SETTLED_COVER", True)
    return calls


@pytest.mark.parametrize("k, eps0, n, top", [(10, 4.0, 10**5, 0.23)])
def test_profile_with_settled_start_and_chords_above_exact(monkeypatch, k, eps0, n, top):
    seen = _on(monkeypatch)
    R = RandomizedResponse(k, eps0)
    eps = np.linspace(0.0, top, 31)  # (delta from ~0.1 down to ~1e-13; not pair44's own 40-point grid)
    pick = eps[1::4]  # (the exact sums at n = 1e5 cost ~2 s each: 8 of the sweep's 31 eps checked)
    prof = np.asarray(ShuffleAccountant(R, n, "replace").privacy_profile(eps))
    clear_caches()
    assert any(out for _, out in seen)  # (the rule took a settled start)
    with monkeypatch.context() as mp:
        for name in ("PAIR44_SETTLED_START", "PAIR44_SWEEP_CHORDS", "PAIR43_SETTLED_COVER"):
            if hasattr(limits, name):
                switch(mp, name, False)
        fresh = ShuffleAccountant(R, n, "replace")
        ups = [fresh.get_delta(float(e)) for e in pick[::3]]
    for e, d in zip(pick.tolist(), prof[1::4].tolist()):
        ex = _exact(R, e, n)
        assert d >= ex * (1 - 1e-9), ("profile under the exact divergence", e, d, ex)
    for e, d, up in zip(pick[::3].tolist(), prof[1::4][::3].tolist(), ups):
        if up >= 1e-12:
            assert d <= 1.01 * up * (1 + 1e-12), ("accuracy", e, d / up)
    clear_caches()
