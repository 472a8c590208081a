"""Review rev38 (session 38) of exp38's rule (docs/composition.md §2.19, ``limits.PLAIN_WARM_UPPER``,
``limits.PLAIN_NEG_UPPER``): a privacy profile's sweep keeps the upper value of one pass of the upper lattice law alone at
a step aimed from the family's last measured gap (no lower value), and later laws' first pass upper only.

Attacked where the builder's tests do not look: PrivUnit(0.75, 0.2, 10), n = 1e4, replace (the cell the rule brings
under 1 s; not in tests/test_exp38_warm_upper.py), with the 300 eps given in random order and on a geometric grid (the
sweep's state follows the sorted eps: the kept values must not depend on the caller's order), and 10-RR (eps0 = 4),
n = 1e3, replace. Reference: a fresh accountant at rel_tol 1e-3 per eps (get_delta_bounds: no sweep, main's passes).
Measured (rev38, exp38 ff80232): every profile value checked is at or above the tight lower value (ratios 1.0004 ...
1.0037 where delta >= 1e-15) and within rel_tol 1e-2 of it; the three orders give the same values."""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle import PrivUnit, RandomizedResponse, ShuffleAccountant, clear_caches, privacy_profile

ROUNDS = {"privunit": (lambda: PrivUnit(0.75, 0.2, 10), 10**4, "replace", 0.3),
          "krr10": (lambda: RandomizedResponse(10, 4.0), 10**3, "replace", 0.9)}


def _grid(kind: str, top: float) -> np.ndarray:
    if kind == "geom":
        return np.concatenate(([0.0], np.geomspace(1e-3, top, 299)))
    eps = np.linspace(0.0, top, 300)
    return np.random.default_rng(38).permutation(eps) if kind == "random" else eps


@pytest.mark.parametrize("name, kind", [("privunit", "random"), ("privunit", "geom"), ("krr10", "linear")])
def test_profile_values_against_fresh_tight_brackets(name, kind):
    """Every 10th value: at or above the fresh rel_tol-1e-3 lower value, and within rel_tol (1e-2) of it where the
    value is >= 1e-15 (the accuracy the accountant asks)."""
    make, n, adj, top = ROUNDS[name]
    eps = _grid(kind, top)
    clear_caches()
    acc = ShuffleAccountant(make(), n, adj)
    v = np.asarray(privacy_profile(acc, eps, progress=False))
    for i in range(0, eps.size, 10):
        clear_caches()
        lo, up = ShuffleAccountant(make(), n, adj, rel_tol=1e-3).get_delta_bounds(float(eps[i]))
        assert v[i] >= lo * (1 - 1e-12), (name, kind, float(eps[i]), float(v[i]), lo, up)
        if lo >= 1e-15:
            assert v[i] <= lo * (1 + acc.rel_tol), (name, kind, float(eps[i]), float(v[i]), lo, up)


def test_profile_does_not_depend_on_the_callers_order():
    """PrivUnit n = 1e4: the same 300 eps sorted and shuffled give the same values (the sweep sorts them)."""
    make, n, adj, top = ROUNDS["privunit"]
    eps = _grid("linear", top)
    perm = np.random.default_rng(38).permutation(eps.size)
    clear_caches()
    a = np.asarray(privacy_profile(ShuffleAccountant(make(), n, adj), eps, progress=False))
    clear_caches()
    b = np.asarray(privacy_profile(ShuffleAccountant(make(), n, adj), eps[perm], progress=False))
    assert np.array_equal(a[perm], b)
