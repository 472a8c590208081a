"""Session 42, ft42: the far-tail clamp T0 searched from the previous eps's along a sweep
(docs/accountant_tail.md §63; ``far_tail_warm``, ``limits.FT42_T0_WARM``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import far_tail_grid as G
from sharpdp.shuffle.accountant import far_tail_warm as W
from sharpdp.shuffle.accountant import limits, plain_warm
from sharpdp.shuffle.accountant.jump import pair_integral_up
from sharpdp.shuffle.laws.bmg import bmg_laws

from _main_floats34 import switch

# calibrate_bmg(1e4, 1, 1e-6)'s pick: a heavy-tailed round whose sweep goes through the far-tail treatment (§8, §18)
GAMMA, SIGMA0, N = 0.0653379979786911, 0.7226836737470597, 10**4


def _law(eps: float):
    gamma, law = bmg_laws(GAMMA, SIGMA0, eps, "zero_out")[0]
    return float(gamma), law


def _target(law, gamma: float, frac: float) -> float:
    m_est = (N - 1) * gamma * law.mean()
    return frac * 1e-2 * float(law.stop_loss([max(-m_est, 0.0)])[0][0])


def _pair(law, gamma: float, T: float) -> float:
    return 0.5 * (N - 1) * gamma * pair_integral_up(law, T)


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(0.5, 4.0), log_guess=st.floats(-3.0, 8.0), frac=st.sampled_from([0.02, 0.1]))
def test_warm_search_meets_choose_T0s_contract(eps, log_guess, frac):
    """From any guess (a thousandth to thousands of times the threshold), the warm search returns a clamp where the pair
    term holds, at least E[L]_+ + sd(L), whose 3 % lower neighbour fails (minimal to the bisection's 2 %), and within
    the bisection's tolerance of choose_T0's (the cold search, main's clamp; both bracket the same threshold)."""
    gamma, law = _law(eps)
    target = _target(law, gamma, frac)
    base = max(law.mean(), 0.0) + law.std()
    cold = G.choose_T0(law, gamma, N, target)
    T = W.warm_search(law, gamma, N, target, math.exp(log_guess) * cold)
    assert T is not None
    assert T >= base
    assert _pair(law, gamma, T) <= target
    assert T == base or _pair(law, gamma, 0.97 * T) > target
    assert 0.97 <= T / cold <= 1.0 / 0.97


def test_sweep_T0_is_choose_T0_outside_a_sweep():
    """Outside a sweep (no plain_warm state) the clamp is choose_T0's, bit for bit, whatever came before: a value does
    not depend on the history of the process."""
    for eps in (3.0, 1.0, 2.0):
        gamma, law = _law(eps)
        target = _target(law, gamma, 0.02)
        assert W.sweep_T0(law, gamma, N, target, "closed").hex() == G.choose_T0(law, gamma, N, target).hex()


def test_sweep_starts_from_the_familys_last_clamp(monkeypatch):
    """Inside a sweep the first eps runs choose_T0, the next ones the warm search from the last clamp (no cold search),
    each meeting the pair target, each within 3 % of choose_T0's; with the switch off, choose_T0 every time."""
    cold_calls = []
    orig = G.choose_T0

    def counted(*a):
        cold_calls.append(a)
        return orig(*a)

    eps_s = np.linspace(2.0, 3.0, 6)
    with plain_warm.warm_sweep():
        for eps in eps_s:
            gamma, law = _law(eps)
            target = _target(law, gamma, 0.02)
            T = W.sweep_T0(law, gamma, N, target, "closed", counted)
            assert _pair(law, gamma, T) <= target
            assert 0.97 <= T / orig(law, gamma, N, target) <= 1.0 / 0.97
    assert len(cold_calls) == 1
    switch(monkeypatch, "FT42_T0_WARM", False)
    cold_calls.clear()
    with plain_warm.warm_sweep():
        for eps in eps_s:
            gamma, law = _law(eps)
            W.sweep_T0(law, gamma, N, _target(law, gamma, 0.02), "closed", counted)
    assert len(cold_calls) == eps_s.size


@pytest.fixture(scope="module")
def profiles():
    """The round's 60-point profile on [0, 4.24] with the switch off (main's clamps: the certified reference) and on,
    and a fresh rel_tol-1e-3 bracket at every 6th eps."""
    eps = np.linspace(0.0, 4.24, 60)
    out = {}
    for on in (False, True):
        old = limits.FT42_T0_WARM
        limits.FT42_T0_WARM = on
        try:
            clear_caches()
            out[on] = np.asarray(ShuffleAccountant(BlanketMixedGaussian(GAMMA, SIGMA0, 1), N).privacy_profile(eps))
        finally:
            limits.FT42_T0_WARM = old
            clear_caches()
    fine = ShuffleAccountant(BlanketMixedGaussian(GAMMA, SIGMA0, 1), N, rel_tol=1e-3)
    lows = {i: fine.get_delta_bounds(float(eps[i]))[0] for i in range(0, eps.size, 6)}
    clear_caches()
    return eps, out, lows


def test_profile_values_stay_above_a_fine_lower_value_and_near_mains(profiles):
    """Each warm value is an upper value: at or above an independent rel_tol-1e-3 lower value, and within rel_tol
    (1e-2) of main's value at the same eps (only the clamp T0 moved, §63.3); some values did move (the rule ran)."""
    eps, out, lows = profiles
    for i, lo in lows.items():
        assert out[True][i] >= lo, (eps[i], out[True][i], lo)
    pos = out[False] > 0
    r = out[True][pos] / out[False][pos]
    assert np.all(np.abs(r - 1.0) <= 1e-2), (r.min(), r.max())
    assert np.any(out[True] != out[False])
