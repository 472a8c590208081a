"""Review rev47 (session 47): attack on docs/accountant_tail.md §71 (``limits.G46_STOP_LOSS_CHORDS``, Lemma 71.1: the
stop-loss E[(L - t)_+] of a lognormal part at sorted thresholds by chords between the kernel's brackets at every 32nd).

The lead checked the chords against the kernel's own bracket (tests/test_review_lead46_chords.py). Here the END values:
(1) the chords' bracket against 120-digit mpmath values (tests/_rev47_lognormal.py, both coefficients G, S non-zero,
the root in closed form) at a few hundred thresholds per law that are NOT nodes, on thresholds spread over the law's
quantiles (body, both tails, and clusters of near-duplicates); (2) GaussianRandomizer(sigma) at n = 1e7-1e8 with the
switch on vs off (zero-out, rel_tol 1e-2): the brackets overlap, and the on-bracket lies within the off-bracket's width
of it (a chord's slack cannot push an end further than the bracket's own resolution)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from sharpdp import _core
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch
from _rev47_lognormal import exact

pytestmark = pytest.mark.skipif(not hasattr(limits, "G46_STOP_LOSS_CHORDS"), reason="rule of session 46 absent")
K = _core.accountant


def _law(rng):
    r = float(rng.uniform(0.05, 4.0))
    G = float(rng.choice([0.0, rng.uniform(1e-3, 10)]))
    S = float(rng.uniform(1e-3, 10)) if G == 0 or rng.random() < 0.7 else 0.0
    a = float(rng.normal() * 3)
    vlo = -math.inf if rng.random() < 0.5 else float(rng.normal() - 1)
    vhi = math.inf if rng.random() < 0.5 else max(vlo, -3.0) + float(abs(rng.normal())) + 0.5
    return a, G, S, r, vlo, vhi, float(rng.uniform(0.01, 2))


def _L(a, G, S, r, v):
    return a + G * np.exp(r * v - r * r / 2) - S * np.exp(-r * v - r * r / 2)


@pytest.mark.parametrize("seed", range(5))
def test_chords_hold_the_exact_stop_loss(seed):
    rng = np.random.default_rng(100 + seed)
    checked = served = 0
    for _ in range(4):
        a, G, S, r, vlo, vhi, w = _law(rng)
        n = int(rng.integers(4096, 6000))
        v = np.sort(rng.normal(0, 1.6, n))
        if rng.random() < 0.5:  # clusters of near-duplicates
            v = np.sort(np.round(v, 1) + rng.uniform(0, 1e-9, n))
        t = np.sort(_L(a, G, S, r, v))
        t = t[np.isfinite(t)]
        l1, u1 = K.lognormal_stop_loss(a, G, S, r, vlo, vhi, w, t)
        l2, u2 = K.lognormal_stop_loss_chords(a, G, S, r, vlo, vhi, w, t, 4096)
        served += int(np.sum((l1 != l2) | (u1 != u2)))
        picks = [i for i in rng.choice(t.size, 90, replace=False) if i % 32 and i != t.size - 1]
        for i in picks:
            ex = exact(a, G, S, r, vlo, vhi, w, float(t[i]))
            assert mp.mpf(float(l2[i])) <= ex <= mp.mpf(float(u2[i])), (a, G, S, r, vlo, vhi, w, float(t[i]),
                                                                          float(l2[i]), float(ex), float(u2[i]))
            checked += 1
    assert checked > 200 and served > 0  # (the chords ran on these arrays)


def _bracket(monkeypatch, s, n, eps, chords):
    from sharpdp.shuffle.laws import lognormal

    calls = [0]
    orig = lognormal.LognormalLaw.stop_loss

    def spy(self, t):
        calls[0] += int(np.atleast_1d(t).size >= 4096)
        return orig(self, t)

    with monkeypatch.context() as m:
        switch(m, "G46_STOP_LOSS_CHORDS", chords)
        m.setattr(lognormal.LognormalLaw, "stop_loss", spy)
        lo, up = ShuffleAccountant(GaussianRandomizer(s, 1), n, rel_tol=1e-2).get_delta_bounds(eps)
        clear_caches()
    assert calls[0] > 0  # (arrays long enough for the chords: the rule is reached)
    return float(lo), float(up)


@pytest.mark.parametrize("s, n, eps", [(1.0, 10**8, 1e-3), (0.8, 10**7, 1e-2), (1.2, 3 * 10**7, 0.1)])
def test_gaussian_round_on_within_the_off_bracket(monkeypatch, s, n, eps):
    lo0, up0 = _bracket(monkeypatch, s, n, eps, 0)
    lo1, up1 = _bracket(monkeypatch, s, n, eps, 4096)
    assert 0 <= lo1 <= up1 and lo1 <= up0 and lo0 <= up1, (lo0, up0, lo1, up1)
    wid = up0 - lo0
    assert lo1 >= lo0 - wid and up1 <= up0 + wid, (lo0, up0, lo1, up1)
