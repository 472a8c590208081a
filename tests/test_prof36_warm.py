"""Session 36, prof36: the plain engine's warm start along a privacy profile's sweep (docs/composition.md §2.18,
``accountant/plain_warm.py``, switch ``limits.PLAIN_WARM_START``).

References: the exact blanket divergence of k-RR under replace-one adjacency by multinomial sums
(tests/data/make_krr_reference.py, independent of sharpdp: its atoms in closed form); fresh accountants at a tighter
tolerance (rel_tol 1e-3, one eps per object: no sweep, main's passes); the same profile with the switch off.
"""

from __future__ import annotations

import importlib.util
import math
import os

import numpy as np
import pytest
from _main_floats34 import switch

from sharpdp.shuffle import BlanketMixedGaussian, RandomizedResponse, ShuffleAccountant, clear_caches, privacy_profile
from sharpdp.shuffle.accountant import limits, plain_warm
from sharpdp.shuffle.accountant.lattice import choose_T
from sharpdp.shuffle.laws import laws_for

_SPEC = importlib.util.spec_from_file_location(
    "make_krr_reference", os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "make_krr_reference.py"))
KRR_REF = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(KRR_REF)


def _exact_krr(k, eps0, eps, n):
    vals, probs, gamma = KRR_REF.krr_replace_law(k, eps0, eps)
    return KRR_REF.exact_dup(vals, probs, gamma, n)


class _Count:
    """Counts the refinements that found a warm state (the rule ran)."""

    def __init__(self, monkeypatch):
        self.hits = 0
        real = plain_warm.get

        def get(key):
            w = real(key)
            self.hits += w is not None
            return w

        monkeypatch.setattr(plain_warm, "get", get)


@pytest.mark.parametrize("k,eps0,n,top", [(10, 2.0, 300, 1.2), (5, 1.0, 300, 0.6)])
def test_krr_replace_profile_against_exact_sums(k, eps0, n, top, monkeypatch):
    """k-RR replace-one (plain engine on atom laws): every value of a 40-point profile swept with the warm start lies
    at or above the exact blanket divergence and within the accountant's rel_tol (1e-2) of it; the warm start ran on
    most points and moved some values against the switch off."""
    eps = np.linspace(0.02, top, 40)
    count = _Count(monkeypatch)
    clear_caches()
    acc = ShuffleAccountant(RandomizedResponse(k, eps0), n, "replace")
    v = privacy_profile(acc, eps)
    assert count.hits >= 20
    exact = np.array([_exact_krr(k, eps0, float(e), n) for e in eps])
    big = exact > 1e-300
    assert np.all(v[big] >= exact[big] * (1 - 1e-9)), np.min(v[big] / exact[big])
    assert np.all(v[big] <= exact[big] * (1 + acc.rel_tol) * (1 + 1e-9)), np.max(v[big] / exact[big])
    switch(monkeypatch, "PLAIN_WARM_START", False)
    main = privacy_profile(ShuffleAccountant(RandomizedResponse(k, eps0), n, "replace"), eps)
    assert np.all(main[big] >= exact[big] * (1 - 1e-9))
    assert np.any(main != v)


ROUNDS = [(RandomizedResponse(10, 4.0), 10**4, "replace", 0.669, [0.1, 0.3, 0.5, 0.66]),
          (BlanketMixedGaussian(0.95, 4.6, 1), 10**4, "zero_out", 1.02e-3, [1e-4, 4e-4, 7e-4, 1e-3])]


@pytest.mark.parametrize("rnd", range(len(ROUNDS)))
def test_profile_against_fresh_tighter_brackets(rnd, monkeypatch):
    """The bench's plain-engine rounds (k-RR k = 10 replace, the private BMG round) on a 300-point sweep: at the
    checked eps the swept value lies at or above a fresh tighter bracket's lower value (rel_tol 1e-3, no sweep) and
    within the accountant's rel_tol of it."""
    rz, n, adj, top, check = ROUNDS[rnd]
    count = _Count(monkeypatch)
    clear_caches()
    acc = ShuffleAccountant(rz, n, adj)
    eps = np.unique(np.concatenate([np.linspace(0.0, top, 300), check]))
    v = dict(zip(eps.tolist(), privacy_profile(acc, eps).tolist()))
    assert count.hits >= 100
    for e in check:
        lo, up = ShuffleAccountant(rz, n, adj, rel_tol=1e-3).get_delta_bounds(e)
        assert lo <= v[e] <= (1 + acc.rel_tol) * lo * (1 + 1e-9), (e, lo, v[e], up)


def test_switch_off_no_warm_start(monkeypatch):
    """limits.PLAIN_WARM_START False: no sweep state, no refinement starts warm (main's passes and floats)."""
    switch(monkeypatch, "PLAIN_WARM_START", False)
    count = _Count(monkeypatch)
    with plain_warm.warm_sweep():
        assert not plain_warm.active()
    privacy_profile(ShuffleAccountant(RandomizedResponse(10, 4.0), 10**4, "replace"), np.linspace(0.0, 0.6, 20))
    assert count.hits == 0


def test_state_only_inside_a_sweep():
    """Outside a sweep nothing is recorded or read; nested sweeps keep the outer state; the state is per family."""
    assert limits.PLAIN_WARM_START and not plain_warm.active()
    plain_warm.put(("x",), 1.0, 0.1, 2.0, 3.0, 1e-3)
    assert plain_warm.get(("x",)) is None
    with plain_warm.warm_sweep():
        plain_warm.put(("x",), 2.0, 0.1, 2.0, 3.0, 1e-3)
        with plain_warm.warm_sweep():
            plain_warm.put(("x",), 2.0, 0.2, 2.0, 3.0, 1e-4)
        w = plain_warm.get(("x",))
        assert (w.h_ratio, w.t_ratio, w.b_ratio, w.upper, w.upper_before) == (0.1, 1.0, 1.5, 1e-4, 1e-3)
        assert w.predicted() == pytest.approx(1e-5)
        assert w.step(2.0, 1e-2) == pytest.approx(0.2)  # (no lower value: the last step as it was)
        plain_warm.put(("x",), 2.0, 0.2, 2.0, 3.0, 1.0008e-4, 1e-4)  # gap 8e-4: coarsened by sqrt(5e-3 / 8e-4) = 2.5 -> 2
        assert plain_warm.get(("x",)).step(2.0, 1e-2) == pytest.approx(0.4)
        plain_warm.put(("x",), 2.0, 0.2, 2.0, 3.0, 1.004e-4, 1e-4)  # gap 4e-3: sqrt(1.25) ~ 1.118
        assert plain_warm.get(("x",)).step(2.0, 1e-2) == pytest.approx(0.2 * 1.25 ** 0.5)
        plain_warm.put(("x",), 2.0, 0.2, 2.0, 3.0, 1.02e-4, 1e-4)  # gap 2e-2 > rel_tol: not finer than the last step
        assert plain_warm.get(("x",)).step(2.0, 1e-2) == pytest.approx(0.2)
        assert plain_warm.get(("y",)) is None
    assert not plain_warm.active()


def test_clamp_near_meets_its_target():
    """clamp_near's T has E[(L - T)_+] <= target (the law's own certified tail bound), at most choose_T's x 1.25 (a
    search from below) or the guess lowered, for guesses far below and above; a law bounded above gets its top."""
    law = laws_for(BlanketMixedGaussian(0.95, 4.6, 1), 5e-4, "zero_out")[0][1]
    for target in (1e-6, 1e-10, 1e-14):
        ref = choose_T(law, target)
        for guess in (ref / 50, ref / 1.05, ref, 3 * ref):
            T = plain_warm.clamp_near(law, target, guess)
            assert T is not None and law.tail_upper(T) <= target
            assert T <= max(1.25 * 1.001 * ref, guess), (target, guess, T, ref)
    bounded = laws_for(RandomizedResponse(10, 4.0), 0.3, "replace")[0][1]
    assert plain_warm.clamp_near(bounded, 1e-9, 123.0) == max(bounded.support()[1], 0.0)
    assert math.isfinite(bounded.support()[1])
