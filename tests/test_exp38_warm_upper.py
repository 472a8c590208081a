"""Session 38, exp38: a privacy profile's sweep takes upper values alone at the warm step aimed from the law family's
last measured gap (docs/composition.md §2.19, ``accountant/plain_warm.py``, ``plain._warm_upper``; switch
``limits.PLAIN_WARM_UPPER``).

References: the exact blanket divergence of k-RR under replace-one adjacency by multinomial sums
(tests/data/make_krr_reference.py, independent of sharpdp: its atoms in closed form); fresh accountants at a tighter
tolerance (rel_tol 1e-3, one eps per object: no sweep, main's passes); the same calls with the switch off.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import numpy as np
import pytest
from _main_floats34 import switch
from test_prof36_warm import KRR_REF  # (the exact k-RR sums' loader: tests/data/make_krr_reference.py)

from sharpdp.shuffle import (BlanketMixedGaussian, PrivUnit, RandomizedResponse, ShuffleAccountant, clear_caches,
                             dominating_pair, privacy_profile)
from sharpdp.shuffle.accountant import limits, plain, plain_warm

def _exact_krr(k, eps0, eps, n):
    vals, probs, gamma = KRR_REF.krr_replace_law(k, eps0, eps)
    return KRR_REF.exact_dup(vals, probs, gamma, n)


class _Count:
    """Counts the values the rule gave (``plain._warm_upper`` returned one) and the passes it ran."""

    def __init__(self, monkeypatch):
        self.values = self.tries = 0
        real = plain._warm_upper

        def wrapped(*a, **k):
            out = real(*a, **k)
            self.tries += 1
            self.values += out is not None
            return out

        monkeypatch.setattr(plain, "_warm_upper", wrapped)


@pytest.mark.parametrize("k,eps0,n,top", [(10, 4.0, 1000, 0.9), (5, 1.0, 300, 0.6), (10, 2.0, 300, 1.2)])
def test_krr_replace_profile_against_exact_sums(k, eps0, n, top, monkeypatch):
    """k-RR replace-one (the block lattice path): every value of a 60-point profile lies at or above the exact blanket
    divergence and within the accountant's rel_tol (1e-2) of it; the rule gave most values, and moved some against
    the switch off, whose values are also at or above the exact ones."""
    eps = np.linspace(0.02, top, 60)
    count = _Count(monkeypatch)
    clear_caches()
    acc = ShuffleAccountant(RandomizedResponse(k, eps0), n, "replace")
    v = privacy_profile(acc, eps)
    assert count.values >= 20, (count.values, count.tries)
    exact = np.array([_exact_krr(k, eps0, float(e), n) for e in eps])
    big = exact > 1e-300
    assert np.all(v[big] >= exact[big] * (1 - 1e-9)), np.min(v[big] / exact[big])
    assert np.all(v[big] <= exact[big] * (1 + acc.rel_tol) * (1 + 1e-9)), np.max(v[big] / exact[big])
    switch(monkeypatch, "PLAIN_WARM_UPPER", False)
    off = _Count(monkeypatch)
    main = privacy_profile(ShuffleAccountant(RandomizedResponse(k, eps0), n, "replace"), eps)
    assert off.tries == 0
    assert np.all(main[big] >= exact[big] * (1 - 1e-9))
    assert np.any(main != v)


ROUNDS = [(RandomizedResponse(10, 4.0), 10**4, "replace", 0.669),
          (BlanketMixedGaussian(0.95, 4.6, 1), 10**4, "zero_out", 1.02e-3),
          (PrivUnit(0.75, 0.2, 10), 10**4, "replace", 0.197)]


@pytest.mark.parametrize("rnd", range(len(ROUNDS)))
def test_every_value_against_tighter_brackets(rnd, monkeypatch):
    """The bench's plain-engine rounds (10-RR replace, the private BMG round, PrivUnit), 300-point sweep: EVERY value lies at or
    above the lower value of a tighter bracket (rel_tol 1e-3, main's passes: get_delta_bounds, not a profile's sweep)
    at its eps and within the accountant's rel_tol (1e-2) of it; the rule gave at least 100 of them."""
    rz, n, adj, top = ROUNDS[rnd]
    count = _Count(monkeypatch)
    clear_caches()
    acc = ShuffleAccountant(rz, n, adj)
    eps = np.linspace(0.0, top, 300)
    v = privacy_profile(acc, eps)
    assert count.values >= 100, (count.values, count.tries)
    lo, _ = ShuffleAccountant(rz, n, adj, rel_tol=1e-3).get_delta_bounds(eps)
    assert np.all(lo <= v) and np.all(v <= (1 + acc.rel_tol) * lo * (1 + 1e-9)), np.max(v / lo)


def test_pairs_and_get_delta_keep_their_floats(monkeypatch):
    """Only a profile's sweep (no lower value read) runs the rule: a dominating pair and get_delta of the 10-RR round
    are the same floats with the switch on and off, and the rule is never tried there."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    rz, n = RandomizedResponse(10, 4.0), 2000
    count = _Count(monkeypatch)
    out = {}
    for on in (True, False):
        switch(monkeypatch, "PLAIN_WARM_UPPER", on)
        acc = ShuffleAccountant(rz, n, "replace")
        pair = dominating_pair(acc, 2e-3, progress=False)
        out[on] = (pair.sample_epsilons.copy(), pair.sample_deltas.copy(),
                   ShuffleAccountant(rz, n, "replace").get_delta_bounds(np.linspace(0.0, 0.5, 11)))
    assert count.tries == 0
    assert np.array_equal(out[True][0], out[False][0]) and np.array_equal(out[True][1], out[False][1])
    assert np.array_equal(out[True][2][0], out[False][2][0]) and np.array_equal(out[True][2][1], out[False][2][1])


def test_switch_off_is_session36(monkeypatch):
    """limits.PLAIN_WARM_UPPER False: the rule is never tried, and the profile's floats are those of the session-36
    warm start (the same sweep run twice with the switch off agrees bit for bit; with it on some values move)."""
    eps = np.linspace(0.0, 0.6, 40)
    switch(monkeypatch, "PLAIN_WARM_UPPER", False)
    count = _Count(monkeypatch)
    a = privacy_profile(ShuffleAccountant(RandomizedResponse(10, 4.0), 3000, "replace"), eps)
    clear_caches()
    b = privacy_profile(ShuffleAccountant(RandomizedResponse(10, 4.0), 3000, "replace"), eps)
    assert count.tries == 0 and np.array_equal(a, b)
    switch(monkeypatch, "PLAIN_WARM_UPPER", True)
    c = privacy_profile(ShuffleAccountant(RandomizedResponse(10, 4.0), 3000, "replace"), eps)
    assert count.values > 0 and np.any(c != a)


def test_state_upper_step_and_runs(monkeypatch):
    """Warm.upper_step aims the gap at WARM_UPPER_AIM rel_tol (never coarser, at most 2x finer); an upper-only record
    keeps the last measured bracket's upper value and counts the runs; upper_ready stops after WARM_UPPER_RUNS, without
    a measured gap, above GAP_OK rel_tol, outside a sweep reading no lower value, or with the switch off."""
    switch(monkeypatch, "SWEEP_UPPER_LONG", False)  # (**) session 39, exp39b: §2.19's run length (§2.21 off)
    assert limits.PLAIN_WARM_UPPER and limits.WARM_UPPER_AIM == 0.5
    with plain_warm.warm_sweep():
        key = ("x",)
        plain_warm.put(key, 2.0, 0.2, 2.0, 3.0, 1.008e-4, 1e-4)  # gap 8e-3: step x sqrt(5e-3 / 8e-3)
        w = plain_warm.get(key)
        h, g = w.upper_step(2.0, 1e-2)
        assert h == pytest.approx(0.2 * math.sqrt(5 / 8)) and g == pytest.approx(5e-3)
        assert plain_warm.upper_ready(w, 1e-2, True)
        assert not plain_warm.upper_ready(w, 1e-2, False) and not plain_warm.upper_ready(None, 1e-2, True)
        assert not plain_warm.upper_ready(w, 9e-3, True)  # gap 8e-3 > 0.8 x 9e-3
        for i in range(limits.WARM_UPPER_RUNS):
            assert plain_warm.upper_ready(plain_warm.get(key), 1e-2, True)
            plain_warm.put(key, 2.0, 0.2 * math.sqrt(5 / 8), 2.0, 3.0, 9e-5 - i * 1e-6, 0.0, g)
            w = plain_warm.get(key)
            assert (w.runs, w.measured_upper, w.gap) == (i + 1, 1.008e-4, g)
        assert not plain_warm.upper_ready(w, 1e-2, True)
        assert w.upper_step(2.0, 1e-2)[0] == pytest.approx(0.2 * math.sqrt(5 / 8))  # (the predicted gap: same step)
        assert plain_warm.upper_accepts(w, w.upper) and not plain_warm.upper_accepts(w, 1.01 * w.upper)
        assert not plain_warm.upper_accepts(w, 0.5 * plain_warm.FALL_MAX * w.measured_upper)
        plain_warm.put(key, 2.0, 0.2, 2.0, 3.0, 5.0e-5, 0.0)  # a value without a lower value: no gap
        assert not plain_warm.upper_ready(plain_warm.get(key), 1e-2, True)
        plain_warm.put(key, 2.0, 0.2, 2.0, 3.0, 4.1e-5, 4e-5)  # gap 2.5e-2 > rel_tol: at most 2x finer
        w = plain_warm.get(key)
        assert w.upper_step(2.0, 1e-2)[0] == pytest.approx(0.1) and w.runs == 0
        assert not plain_warm.upper_ready(w, 1e-2, True)


def test_upper_only_pass_is_the_full_pass_upper():
    """The rule's pass (lattice_pass with lower=False) gives the upper value, main part and clamp term of the full pass
    at the same step and clamps, bit for bit (docs/composition.md §2.19 "Certification"), on a lognormal and an atom
    law."""
    from sharpdp.shuffle.accountant.lattice import lattice_pass
    from sharpdp.shuffle.laws import laws_for

    for rz, e, adj, n in ((BlanketMixedGaussian(0.95, 4.6, 1), 3e-4, "zero_out", 10**4),
                          (RandomizedResponse(10, 4.0), 0.3, "replace", 300)):
        gamma, law = laws_for(rz, e, adj)[0]
        sd = law.std()
        for h in (sd / 4, sd / 13, sd / 37):
            full = lattice_pass(law, gamma, n, h, 3 * sd, 3 * sd, 1e-2, 1)
            up = lattice_pass(law, gamma, n, h, 3 * sd, 3 * sd, 1e-2, 1, lower=False)
            assert (up.upper, up.main, up.tail_T, up.lower) == (full.upper, full.main, full.tail_T, 0.0)
            assert full.lower > 0.0


def test_later_laws_first_pass_keeps_profile_floats(monkeypatch):
    """§2.19 (f): with PLAIN_NEG_UPPER on and off (PLAIN_WARM_UPPER off in both) the private round's profile is the
    same floats, and the later law's first pass ended upper only on most eps."""
    eps = np.linspace(0.0, 1.02e-3, 60)
    switch(monkeypatch, "PLAIN_WARM_UPPER", False)
    hits = []
    real = plain._upper_only
    monkeypatch.setattr(plain, "_upper_only", lambda best, sd, note: hits.append(note) or real(best, sd, note))
    out = {}
    for on in (True, False):
        switch(monkeypatch, "PLAIN_NEG_UPPER", on)
        out[on] = privacy_profile(ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**4), eps)
    assert np.array_equal(out[True], out[False])
    assert sum(h == plain._NEG_NOTE for h in hits) >= 30
