"""The Chernoff searches' steering by one compiled pass (switch CHERNOFF44_STEER, off by default;
docs/accountant_tail.md §67.3).

The steering only chooses lam; every value returned is the certified ``log_mgf`` bound at that lam. References: the
steering sums in 40-digit arithmetic over the whole support (mpmath), the nn-fold sum's exact tail by brute-force
convolution (the bounds stay above it), and the switch off (numpy's passes): the searched bounds agree to the
search's flatness, and a whole call's bracket meets main's.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _main_floats34 import switch
from sharpdp._core_loader import core
from sharpdp.shuffle.accountant.chernoff import Chernoff


def _mp_steer(lg, x, lam):
    mp.mp.dps = 40
    z = [mp.mpf(float(a)) + mp.mpf(lam) * mp.mpf(float(b)) for a, b in zip(lg, x)]
    m = max(z)
    e = [mp.exp(v - m) for v in z]
    s0 = mp.fsum(e)
    m1 = mp.fsum(w * mp.mpf(float(b)) for w, b in zip(e, x)) / s0
    var = mp.fsum(w * (mp.mpf(float(b)) - m1) ** 2 for w, b in zip(e, x)) / s0
    return float(m + mp.log(s0)), float(m1), float(var)


def _law(seed: int, K: int, heavy: bool):
    rng = np.random.default_rng(seed)
    k = np.arange(K, dtype=float)
    g = np.exp(-0.5 * ((k - 0.2 * K) / (0.05 * K + 1)) ** 2)
    if heavy:
        g += 1e-4 * (1 + k) ** -1.5
    g *= rng.uniform(0.5, 1.5, K)
    return g / g.sum()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), K=st.integers(1, 300), heavy=st.booleans(), lam=st.floats(-5.0, 5.0),
       h=st.floats(0.01, 2.0), k0=st.integers(-200, 200))
def test_steering_sums_against_40_digits(seed, K, heavy, lam, h, k0):
    g = _law(seed, K, heavy)
    lg = np.log(g)
    x = (k0 + np.arange(K)).astype(float) * h
    L, m1, var = core.accountant.steer(lg, x, lam, 60.0)
    rL, rm1, rvar = _mp_steer(lg, x, lam)
    scale = max(abs(rm1), h * K)
    assert L == pytest.approx(rL, rel=1e-12, abs=1e-12)
    assert abs(m1 - rm1) <= 1e-10 * scale
    assert abs(var - rvar) <= 1e-9 * scale * scale


def test_cut_leaves_out_only_terms_below_its_level():
    """Two far apart groups: the cut drops the far one exactly when its terms are below e^-cut of the largest."""
    lg = np.log(np.array([1.0, 1.0, 1e-30, 1e-30]))
    x = np.array([0.0, 1.0, 100.0, 101.0])
    full = _mp_steer(lg, x, 0.0)
    assert core.accountant.steer(lg, x, 0.0, 80.0)[1] == pytest.approx(full[1], rel=1e-14)
    assert core.accountant.steer(lg, x, 0.0, 60.0)[1] == pytest.approx(0.5, rel=1e-14)  # (e^-69: left out)
    assert math.isnan(core.accountant.steer(np.empty(0), np.empty(0), 1.0, 60.0)[0])


def _exact_tail(g, k0, nn, b_idx):
    """P(S >= b) for the nn-fold sum of the pmf g on nodes k0 + k, S in lattice units (exact convolution)."""
    q = np.array([1.0])
    for _ in range(nn):
        q = np.convolve(q, g)
    s = nn * k0 + np.arange(q.size)
    return float(q[s >= b_idx].sum()), float(q[s <= -b_idx].sum())


@pytest.mark.parametrize("seed, K, nn, heavy", [(1, 40, 6, True), (2, 25, 10, False), (3, 60, 4, True)])
def test_bounds_stay_above_the_exact_tails_and_match_the_numpy_steering(monkeypatch, seed, K, nn, heavy):
    g = _law(seed, K, heavy)
    eta = np.full(K, 1e-15)
    h, k0 = 0.1, -K // 4
    got = {}
    for on in (False, True):
        switch(monkeypatch, "CHERNOFF44_STEER", on)
        ch = Chernoff(g, eta, k0, h, nn)
        mean = nn * float(np.sum(g * (k0 + np.arange(K)) * h))
        b = mean + 2.0 * math.sqrt(nn) * K * h / 8
        got[on] = (ch.log_p_above(b), ch.log_p_below(-b), ch.log_excess(b))
        above, below = _exact_tail(g, k0, nn, math.ceil(b / h - 1e-9))
        assert math.exp(got[on][0]) >= above * (1 - 1e-12)
    for a, c in zip(got[False], got[True]):  # (both minimise the same convex F: the two lam agree to ~1e-3 in t)
        assert c == pytest.approx(a, rel=1e-4, abs=1e-6)


def test_a_far_tail_call_meets_mains_bracket(monkeypatch):
    """GaussianRandomizer(0.5), n = 1e8, eps = 0.5: the bracket with the compiled steering meets main's (both
    certified) and moves by at most the searches' flatness."""
    from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

    def call():
        return ShuffleAccountant(GaussianRandomizer(0.5, 1), 10**8, "zero_out").get_delta_bounds(0.5)

    switch(monkeypatch, "CHERNOFF44_STEER", False)
    lo0, up0 = call()
    switch(monkeypatch, "CHERNOFF44_STEER", True)
    lo1, up1 = call()
    assert max(lo0, lo1) <= min(up0, up1)
    assert up1 == pytest.approx(up0, rel=1e-6) and lo1 == pytest.approx(lo0, rel=1e-6)
