"""Lead's review of docs/accountant_tail.md §71.1 (Lemma 71.1) at session 46's merge: the chords' bracket of
E[(L - t)_+] against the kernel's own certified bracket at every threshold (the rule off), on adversarial threshold
arrays (spread over 1e-3 to 1e3, rounded with duplicates, spans of 1e-8 to 1e6 around a, magnitudes up to 1e300 of
both signs) and random lognormal parts (G = 0 or S = 0 included, bounded and unbounded v ranges). Both brackets hold
the true value, so they must overlap, and the chords' must be ordered and free of NaN."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sharpdp import _core

K = _core.accountant


def _part(rng):
    r = float(rng.uniform(0.05, 6))
    G = float(rng.choice([0.0, rng.uniform(1e-3, 10)]))
    S = float(rng.choice([0.0, rng.uniform(1e-3, 10)]))
    G = 1.0 if G == 0 and S == 0 else G
    a = float(rng.normal() * 5)
    vlo = float(rng.choice([-math.inf, rng.normal()]))
    vhi = math.inf if rng.random() < 0.5 else (vlo if vlo > -math.inf else float(rng.normal())) + float(
        abs(rng.normal())) + 1e-3
    return a, G, S, r, vlo, vhi, float(rng.uniform(0.01, 5))


def _thresholds(rng, a, kind, n):
    if kind == 0:
        return np.sort(rng.normal(a, 10 ** rng.uniform(-3, 3), n))
    if kind == 1:
        return np.sort(np.round(rng.normal(a, 3, n), 1))
    if kind == 2:
        return a + np.linspace(-1, 1, n) * 10 ** rng.uniform(-8, 6)
    return np.sort(a + 10 ** rng.uniform(-300, 300, n) * rng.choice([-1, 1], n))


@pytest.mark.parametrize("seed", range(4))
def test_chords_overlap_the_kernels_bracket_on_adversarial_thresholds(seed):
    rng = np.random.default_rng(seed)
    served = 0
    for case in range(24):
        a, G, S, r, vlo, vhi, w = _part(rng)
        t = _thresholds(rng, a, case % 4, int(rng.integers(4096, 9000)))
        l1, u1 = K.lognormal_stop_loss(a, G, S, r, vlo, vhi, w, t)
        l2, u2 = K.lognormal_stop_loss_chords(a, G, S, r, vlo, vhi, w, t, 4096)
        served += int(np.sum((l1 != l2) | (u1 != u2)))
        assert not np.isnan(l2).any() and not np.isnan(u2).any()
        assert np.all(l2 <= u2)
        ok = np.isfinite(l1) & np.isfinite(u1)
        assert np.all(l2[ok] <= u1[ok] * (1 + 1e-15) + 1e-300), (a, G, S, r, vlo, vhi, w)
        assert np.all(u2[ok] >= l1[ok] * (1 - 1e-15) - 1e-300), (a, G, S, r, vlo, vhi, w)
    assert served > 0  # (the chords ran: the test reaches the rule)
