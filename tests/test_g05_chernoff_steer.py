"""Session 42 (g05): the Chernoff searches' step on the logarithms of F''s parts (docs/accountant_tail.md §62.1).

The step only chooses lam; every value returned is the certified log_mgf's at that lam. Checked here: the step
against closed forms (a power law's root in one step) and a finite-difference Newton step; the bounds against brute
force (exact tails and excesses of small n-fold sums); the searches' values against the switch off and golden
section; fewer steering evaluations on a heavy law.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.chernoff import Chernoff, log_newton_t
from _main_floats34 import switch


def test_log_step_power_law_root_in_one_step():
    """P = c lam^k, Q = q0: log P - log Q is linear in t = log lam, so one step lands on the root (q0 / c)^(1/k)."""
    for c, k, q0, lam in ((3.0, 2.0, 50.0, 17.0), (1e6, 5.0, 2.5, 0.3), (2.0, 0.5, 1e3, 1e7)):
        p, dp = c * lam**k, c * k * lam ** (k - 1)
        t = log_newton_t(lam, p - q0, dp, q0, False)
        assert t == pytest.approx(math.log((q0 / c) ** (1.0 / k)), rel=1e-12, abs=1e-12)


def test_log_step_excess_against_finite_differences():
    """With the excess's Q = q0 + 1/lam (F' = P - Q, F'' = P' + 1/lam^2) the step is Newton's in t on
    phi(t) = log P(e^t) - log Q(e^t): compared with phi' by central differences."""
    def P(lam):
        return 4.0 * math.exp(3.0 * lam) - 1.0

    def dP(lam):
        return 12.0 * math.exp(3.0 * lam)

    q0 = 30.0
    for lam in (0.4, 1.3, 2.0):
        def phi(t):
            x = math.exp(t)
            return math.log(P(x)) - math.log(q0 + 1.0 / x)

        t0, d = math.log(lam), 1e-6
        ref = t0 - phi(t0) / ((phi(t0 + d) - phi(t0 - d)) / (2 * d))
        got = log_newton_t(lam, P(lam) - q0 - 1.0 / lam, dP(lam) + 1.0 / lam**2, q0, True)
        assert got == pytest.approx(ref, rel=1e-7, abs=1e-7)


def test_log_step_refuses_nonpositive_parts():
    assert math.isnan(log_newton_t(1.0, -5.0, 1.0, 2.0, False))  # P = -3
    assert math.isnan(log_newton_t(1.0, 1.0, 1.0, -2.0, False))  # Q = -2
    assert math.isnan(log_newton_t(1.0, 1.0, -1.0, 2.0, False))  # P' < 0: no slope


def _nfold(g: np.ndarray, nn: int) -> np.ndarray:
    out = np.array([1.0])
    for _ in range(nn):
        out = np.convolve(out, g)
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=9), st.integers(-4, 2), st.integers(2, 30),
       st.floats(0.0, 1.0), st.sampled_from([0.25, 0.5, 1.0]))
def test_bounds_dominate_brute_force(w, k0, nn, frac, h):
    """exp(log_p_above(b)) >= P(S >= b), exp(log_p_below(a)) >= P(S <= a), exp(log_excess(b)) >= E(S - b)_+ for
    the nn-fold sum S of a small lattice law (exact by repeated convolution), the switch on; and the searched values
    are no worse than the switch off's and golden section's beyond the searches' tolerance."""
    g = np.array(w)
    if g.sum() <= 0.0:
        g[0] = 1.0
    g = g / g.sum()
    eta = g * 1e-14
    x = (k0 + np.arange(g.size)) * h
    S = _nfold(g, nn)
    xs = (nn * k0 + np.arange(S.size)) * h
    lo_s, hi_s = xs[0], xs[-1]
    b = lo_s + frac * (hi_s - lo_s)
    mu = float((g * x).sum())
    vals = {}
    for sw in (False, True):
        old = limits.CHERNOFF_LOG_STEP
        limits.CHERNOFF_LOG_STEP = sw  # (hypothesis: no function-scoped monkeypatch; restored below)
        try:
            ch = Chernoff(g, eta, k0, h, nn)
            vals[sw] = (ch.log_p_above(b), ch.log_p_below(b), ch.log_excess(b))
        finally:
            limits.CHERNOFF_LOG_STEP = old
        if sw:
            up, below, ex = (math.exp(v) for v in vals[sw])
            assert up >= float(S[xs >= b].sum()) * (1 - 1e-9)
            assert below >= float(S[xs <= b].sum()) * (1 - 1e-9)
            assert ex >= float((S * np.maximum(xs - b, 0.0)).sum()) * (1 - 1e-9)
            if b > nn * mu + h and b < hi_s:  # an interior minimum in lam: the search is near golden section's
                gold = ch._min(lambda lam: -lam * b + nn * ch.log_mgf(lam), "p")
                assert vals[sw][0] <= gold + 1e-3 * abs(gold) + 1e-6
    for v_on, v_off in zip(vals[True], vals[False]):
        assert v_on <= v_off + 1e-3 * abs(v_off) + 1e-6


def _heavy():
    """A mass 0.99 at -0.05 and a lognormal(0, 1.5) tail of mass 0.01 on the step 0.01 up to 200."""
    h, k0 = 0.01, -5
    x = (k0 + np.arange(20006)) * h
    g = np.zeros(x.size)
    pos = x > 0
    g[pos] = np.exp(-0.5 * (np.log(x[pos]) / 1.5) ** 2) / x[pos]
    g[pos] *= 0.01 / g[pos].sum()
    g[0] = 0.99
    return g, k0, h, x


def test_heavy_law_fewer_steering_evaluations_same_bounds(monkeypatch):
    """On a heavy law at nn = 1e8 far above the mean the step needs fewer plain-float evaluations than Newton's step
    in log lam alone, and the certified values agree with the switch off's to 1e-9 (both near the minimum over lam)."""
    g, k0, h, x = _heavy()
    eta = g * 1e-13
    nn = 10**8
    mu = float((g * x).sum())
    sd = math.sqrt(float((g * x * x).sum()) - mu * mu)
    seen, vals = {}, {}
    for sw in (False, True):
        switch(monkeypatch, "CHERNOFF_LOG_STEP", sw)
        ch = Chernoff(g, eta, k0, h, nn)
        out = []
        for z in (10.0, 100.0, 1000.0):
            b = nn * mu + z * math.sqrt(nn) * sd
            out += [ch.log_p_above(b), ch.log_excess(b)]
        seen[sw], vals[sw] = len(ch._steer), out
    assert seen[True] < seen[False]
    for a, c in zip(vals[True], vals[False]):
        assert a == pytest.approx(c, rel=1e-9)


def test_switch_default_on():
    """Shipped off in session 42, switched on in session 44 after a full test run (docs/accountant_tail.md §62.4)."""
    assert limits.CHERNOFF_LOG_STEP is True
