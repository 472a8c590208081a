"""Review rev36 (session 36) of prof36's warm start along a privacy profile's sweep (docs/composition.md §2.18).

Claim attacked: every value of ``privacy_profile`` with warm-started passes is a certified upper value of delta(eps):
at or above an independent reference, and within the accountant's rel_tol of a tighter bracket where rel_tol is
targeted (values >= VALUE_FLOOR). Cells other than prof36's own tests, chosen where the warm start runs and moves
values (measured: up to -47 % against main below the floor, -3 % at 6e-26, -0.1 % above it).
References, independent of the warm start: the exact blanket divergence of k-RR replace-one by multinomial sums
(tests/data/make_krr_reference.py), fresh accountants at rel_tol 1e-3 (one eps each, no sweep), and a dominating pair
of the same accountant built after a warm profile (the profile's values in the round's cache, §2.18 "Scope").
"""

from __future__ import annotations

from test_prof36_warm import _Count
import importlib.util
import os

import numpy as np
import pytest

from sharpdp.shuffle import (BlanketMixedGaussian, RandomizedResponse, ShuffleAccountant, clear_caches,
                             dominating_pair, privacy_profile)

_SPEC = importlib.util.spec_from_file_location(
    "make_krr_reference", os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "make_krr_reference.py"))
KRR_REF = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(KRR_REF)

FLOOR = 1e-24  # (docs/accountant.md §6.3: no rel_tol targeted below)


_Hits = _Count  # (counts the refinements that found a warm state: tests/test_prof36_warm.py)


def _sweep(make, n, adj, top, m=100):
    clear_caches()
    acc = ShuffleAccountant(make(), n, adj)
    eps = np.linspace(0.0, top, m)
    return acc, eps, privacy_profile(acc, eps, progress=False)


@pytest.mark.parametrize("k, eps0, n", [(5, 2.0, 3000), (3, 1.5, 1000)])
def test_krr_replace_warm_profile_above_exact_sums(k, eps0, n, monkeypatch):
    """Swept values (the warm start on 99 of 100; the most-moved ones) at or above the exact blanket divergence, and within rel_tol of
    it where it is >= VALUE_FLOOR (5-RR: a value 47 % below main's at eps = 0.5, 1.2e-26, still above the exact 1.199e-26)."""
    hits = _Hits(monkeypatch)
    acc, eps, v = _sweep(lambda: RandomizedResponse(k, eps0), n, "replace", 0.5 if k == 5 else 0.6)
    assert hits.hits >= 50
    for i in (40, 76, 99):  # (the reference's law needs eps > 0; each exact sum ~ 3-5 s under load)
        e, val = eps[i], v[i]
        vals, probs, gamma = KRR_REF.krr_replace_law(k, eps0, float(e))
        ex = KRR_REF.exact_dup(vals, probs, gamma, n)
        assert val >= ex * (1 - 1e-9), (e, val, ex)
        if ex >= FLOOR:
            assert val <= ex * (1 + acc.rel_tol) * (1 + 1e-9), (e, val, ex)


ROUNDS = [
    ("bmg_r", lambda: BlanketMixedGaussian(0.95, 4.6, 1), 10**4, "replace", 2e-3, (13, 47, 81, 99)),
    ("bmg3_r", lambda: BlanketMixedGaussian(0.8, 2.0, 1), 3000, "replace", 0.05, (20, 50, 79, 80)),
    ("bmg2_z", lambda: BlanketMixedGaussian(0.9, 3.0, 1), 10**4, "zero_out", 0.01, (21, 28, 34, 35)),
]


@pytest.mark.parametrize("name, make, n, adj, top, idx", ROUNDS, ids=[r[0] for r in ROUNDS])
def test_warm_profile_brackets_fresh_tight_values(name, make, n, adj, top, idx, monkeypatch):
    """At the points that moved most (measured): fresh rel_tol-1e-3 lower <= swept value, and swept value <=
    (1 + rel_tol) fresh upper where that is >= VALUE_FLOOR."""
    hits = _Hits(monkeypatch)
    acc, eps, v = _sweep(make, n, adj, top)
    assert hits.hits >= 10
    for i in idx:
        clear_caches()
        lo, up = ShuffleAccountant(make(), n, adj, rel_tol=1e-3).get_delta_bounds(float(eps[i]))
        assert v[i] >= lo * (1 - 1e-12), (name, eps[i], v[i], lo)
        if up >= FLOOR:
            assert v[i] <= (1 + acc.rel_tol) * up * (1 + 1e-9), (name, eps[i], v[i], up)


@pytest.mark.parametrize("name, make, n, adj, top, idx", ROUNDS[:1], ids=[ROUNDS[0][0]])
def test_pair_after_a_warm_profile_never_below_the_tight_lower(name, make, n, adj, top, idx):
    """A dominating pair built after a warm profile on the same accountant (the profile's values in the round's
    cache): its delta at the profile's eps at or above a fresh rel_tol-1e-3 lower value."""
    acc, eps, v = _sweep(make, n, adj, top, 60)
    pair = dominating_pair(acc, progress=False)
    for e in (eps[10], eps[30], eps[50]):
        d = float(pair.get_delta(float(e)))
        clear_caches()
        lo, _ = ShuffleAccountant(make(), n, adj, rel_tol=1e-3).get_delta_bounds(float(e))
        assert d >= lo * (1 - 1e-12), (name, e, d, lo)
