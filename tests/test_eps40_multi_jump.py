"""Session 40, eps40: the few-user terms' multi-jump upper form (docs/accountant.md §8.19, ``limits.FEW_MULTI_JUMP``):
E[(S_{j+1})_+] / (j + 1) <= sum_{i < M} P(B = i) E[(L - t_{i+1})_+] + P(B >= M) E[L_+], B ~ Bin(j, P(L > -c)),
t_m = (j + 1 - m) c / m.

References (independent of the accountant): E[(S_k)_+] and D_up by exact enumeration of finite laws
(tests/test_eps39_pair_split.py), the form itself in mpmath from the exact law, Monte Carlo of laws unbounded on both
sides, and the Asmussen-Kroese conditional Monte Carlo of tests/_review28_ak_reference.py for the Gaussian randomizer's
x-vs-bot law at n = 100, eps = 8."""

from __future__ import annotations

from math import comb

import mpmath as mp
import numpy as np
import pytest
from _main_floats34 import switch
from _review28_ak_reference import GaussXBot, d_up_ak
from test_eps39_pair_split import _e_plus_sum, _exact_dup, _law

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import closed_forms as cf
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.laws.finite import FiniteLaw


def test_switch_values():
    assert limits.FEW_MULTI_JUMP is True and limits.FEW_MULTI_M == 4 and limits.FEW_MULTI_TERMS == 1024


def _form_mp(values, probs, j, c, m_max):
    """The multi-jump form at depth c in mpmath from the exact finite law (40 digits)."""
    with mp.workdps(40):
        v = [mp.mpf(float(x)) for x in values]
        q = [mp.mpf(float(x)) for x in probs]
        p = mp.fsum(qq for vv, qq in zip(v, q) if vv > -mp.mpf(c))
        phi = lambda t: mp.fsum(qq * (vv - t) for vv, qq in zip(v, q) if vv > t)  # noqa: E731
        tot, mass = mp.mpf(0), mp.mpf(0)
        for i in range(min(m_max, j + 1)):
            w = comb(j, i) * p ** i * (1 - p) ** (j - i)
            tot += w * phi(mp.mpf(j - i) * mp.mpf(c) / (i + 1))
            mass += w
        return float(tot + (1 - mass) * phi(mp.mpf(0)))


@pytest.mark.parametrize("seed", range(8))
def test_multi_form_bounds_the_enumerated_terms(seed):
    """For k = 2..7 users and depths c over four decades: E[(S_k)_+] / k (exact) <= the form (mpmath, exact law) <=
    the code's value, the latter within 1e-9 + 1e-10 E[L_+] of the former (its roundings, all to the safe side)."""
    law = _law(seed)
    e0 = float(cf.stop_loss_bracket(law, 0.0)[1])
    for k in range(2, 8 if law.values.size <= 4 else 7):
        j = k - 1
        exact = _e_plus_sum(law.values, law.probs, k) / k
        for c in (0.01, 0.3, 1.0, 3.0, 30.0, 300.0):
            p_up = np.asarray(law.prob_above_up(np.array([np.nextafter(-c - law.value_error, -np.inf)])), float)
            code = float(cf._multi_jump_uppers(law, np.array([j]), np.array([c]), p_up, np.array([0]), e0)[0])
            form = _form_mp(law.values, law.probs, j, c, int(limits.FEW_MULTI_M))
            assert exact <= form * (1 + 1e-12), (seed, k, c, exact, form)
            # (sharpness: the code's margins, 1e-11 on each P(B = i) and 1e-12 on the sum, act on E_up - sum, so
            # they cost up to ~1e-11 E[L_+] absolute where the form is far below E[L_+])
            assert form <= code * (1 + 1e-12) and code <= form * (1 + 1e-9) + 1e-10 * e0, (seed, k, c, form, code)


@pytest.mark.parametrize("seed", range(8))
def test_bracket_contains_enumeration_and_nests(seed, monkeypatch):
    """The few-user bracket with the rule on holds D_up (exact enumeration, n = 3..6) and lies inside the switch-off
    bracket (the same lower value)."""
    law = _law(seed)
    rng = np.random.default_rng(200 + seed)
    for n in (3, 4, 5) if law.values.size > 4 else (3, 5, 6):
        gamma = float(rng.uniform(0.05, 0.9))
        for rel_tol in (None, 1e-2):
            lo, up = cf.small_n_bracket(law, gamma, n, rel_tol)
            ref = _exact_dup(law.values, law.probs, gamma, n)
            assert lo <= ref * (1 + 1e-9) and ref <= up * (1 + 1e-9), (seed, n, rel_tol, lo, ref, up)
            switch(monkeypatch, "FEW_MULTI_JUMP", False)
            off = cf.small_n_bracket(law, gamma, n, rel_tol)
            switch(monkeypatch, "FEW_MULTI_JUMP", True)
            assert off[0] == lo and up <= off[1], (seed, n, rel_tol, off, (lo, up))


def test_rule_moves_a_jump_law_and_holds_enumeration(monkeypatch):
    """A law bounded below with a rare large atom (two or more users above the depth matter): the upper value falls,
    and holds the exact D_up."""
    law = FiniteLaw(np.array([-4.0, -3.0, 2.0, 9.0]), np.array([0.55, 0.3, 0.1, 0.05]))
    for n in (4, 6):
        ref = _exact_dup(law.values, law.probs, 0.7, n)
        lo, up = cf.small_n_bracket(law, 0.7, n)
        assert lo <= ref <= up
        switch(monkeypatch, "FEW_MULTI_JUMP", False)
        lo0, up0 = cf.small_n_bracket(law, 0.7, n)
        switch(monkeypatch, "FEW_MULTI_JUMP", True)
        assert lo0 == lo and up < up0, (n, (lo0, up0), (lo, up))


@pytest.mark.parametrize("case", [(0.3, 1.0, 1.0, 4), (0.1, 0.8, 3.0, 5), (0.2, 1.0, 2.0, 6), (0.5, 1.2, 1.5, 3)])
def test_bmg_bracket_nested_in_switch_off(case, monkeypatch):
    """Laws unbounded on both sides (BlanketMixedGaussian, replace; §8.17 (c)'s depths): the same lower value, an upper
    value at most the switch-off one. (That these brackets hold D_up by Monte Carlo, 2e6 samples, 5 standard errors,
    is tests/test_eps39_pair_split.py's test_bmg_bracket_holds_monte_carlo at the same cases, run with §8.19 on.)"""
    g, s0, eps, n = case
    gam, law = laws_for(BlanketMixedGaussian(g, s0, 1), eps, "replace")[0]
    lo, up = cf.small_n_bracket(law, gam, n)
    switch(monkeypatch, "FEW_MULTI_JUMP", False)
    lo0, up0 = cf.small_n_bracket(law, gam, n)
    assert lo0 == lo and up <= up0, (case, (lo0, up0), (lo, up))


def test_gaussian_n100_eps8_meets_rel_tol_and_holds_ak(monkeypatch):
    """GaussianRandomizer(0.5), n = 100, zero-out, eps = 8 (the map's cell: main's engines 0.10 s): the few-user bracket
    now meets rel_tol 1e-2 (main's: 1.46 % wide), holds the AK reference (20,000 samples per M, 6 standard errors)
    and meets the engines' (switch-off) bracket; get_delta_bounds returns it."""
    g, law = laws_for(GaussianRandomizer(0.5, 1), 8.0, "zero_out")[0]
    lo, up = cf.small_n_bracket(law, float(g), 100, 1e-2)
    assert up - lo <= 1e-2 * lo
    ref, se = d_up_ak(GaussXBot(0.5, 8.0), float(g), 100, 20000)
    assert lo <= ref + 6 * se and ref - 6 * se <= up, (lo, up, ref, se)
    clear_caches()
    rep = ShuffleAccountant(GaussianRandomizer(0.5, 1), 100).get_delta_bounds(8.0)  # (its final roundings: ~1 ulp)
    assert rep[0] == lo and up <= rep[1] <= up * (1 + 1e-15), (rep, (lo, up))
    switch(monkeypatch, "FEW_MULTI_JUMP", False)
    assert cf.small_n_bracket(law, float(g), 100, 1e-2)[1] > 1.01 * lo
    clear_caches()
    lo0, up0 = ShuffleAccountant(GaussianRandomizer(0.5, 1), 100).get_delta_bounds(8.0)
    assert max(lo, lo0) <= min(up, up0), ((lo0, up0), (lo, up))


def test_cost_gate_and_switch_off_bit_for_bit(monkeypatch):
    """More than FEW_MULTI_TERMS terms: the form is not evaluated (the one-jump values alone); switch off: §6.8 (b) /
    §8.17 (c)'s values bit for bit."""
    g, law = laws_for(GaussianRandomizer(0.5, 1), 8.0, "zero_out")[0]
    e0 = float(cf.stop_loss_bracket(law, 0.0)[1])
    j = np.arange(1, 2000)
    on_big = cf._term_brackets(law, j, e0)
    on_small = cf._term_brackets(law, j[:50], e0)
    switch(monkeypatch, "FEW_MULTI_JUMP", False)
    off_big = cf._term_brackets(law, j, e0)
    off_small = cf._term_brackets(law, j[:50], e0)
    assert np.array_equal(on_big[1], off_big[1]) and np.array_equal(on_big[0], off_big[0])
    assert np.array_equal(on_small[0], off_small[0]) and np.all(on_small[1] <= off_small[1])
    assert np.any(on_small[1] < off_small[1])
