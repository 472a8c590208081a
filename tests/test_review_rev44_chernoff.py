"""Review rev44 (session 44): attack on docs/accountant_tail.md §62.1 (``limits.CHERNOFF_LOG_STEP``, switched ON by
the lead this session) where rev42 (exact convolutions, nn <= 25) and rev43 (two atoms, nn up to 1e8) did not reach:
the body-plus-one-jump shape of the far-tail laws at large nn — a body of two adjacent atoms (a binomial body whose
tilted mean is polynomial in lam) and a far atom K - 1 steps up (exponential in lam: the creeping region the rule
targets), so that the searched lam sits where the two parts of F' compete.

The law: g0 at k0 h, g1 at (k0 + 1) h, g2 at (k0 + K - 1) h (the doubles as given, their sum not exactly 1). Its
nn-fold sum: j ~ the far count (weight C(nn, j) g2^j (g0 + g1)^(nn - j)), and given j, X ~ Bin(nn - j, g1 / (g0 + g1))
users at the second atom: S = nn k0 h + h (X + (K - 1) j). P(S >= b), P(S <= b) and E[(S - b)_+] by scipy's binomial
functions summed over j (no sharpdp code). Claims: each of Chernoff.log_p_above,
log_p_below, log_excess >= the exact log value (1e-7 slack) with the rule on, and the rule formed its step on some.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from sharpdp.shuffle.accountant import chernoff
from sharpdp.shuffle.accountant.chernoff import Chernoff

from _main_floats34 import switch
from _rev43_mp import digits_fixture
from _rev44_spy import spy

_digits = digits_fixture(40)


def _exact(g: np.ndarray, nn: int, K: int, t: float) -> tuple[float, float, float]:
    """(log P(Y >= t), log P(Y <= t), log E[(Y - t)_+]) for Y = X + (K - 1) j (S = nn k0 h + h Y), the law a measure
    of mass M^nn, M = g0 + g1 + g2 (mpmath from the doubles); the binomial parts by scipy (boost's incomplete beta and
    pmf, relative accuracy ~1e-13, far inside the 1e-7 slack; no sharpdp code)."""
    g0, g1, g2 = (float(v) for v in (g[0], g[1], g[-1]))
    Mm = mpmath.mpf(g0) + mpmath.mpf(g1) + mpmath.mpf(g2)
    logmass = float(nn * mpmath.log(Mm))
    pf = float(mpmath.mpf(g2) / Mm)
    q = float(mpmath.mpf(g1) / (mpmath.mpf(g0) + mpmath.mpf(g1)))
    mean_j = nn * pf
    sd_j = math.sqrt(mean_j) + 1.0
    js = np.arange(max(0, int(mean_j - 12 * sd_j)), min(nn, int(mean_j + 12 * sd_j)) + 1)  # (the rest: < e^-60)
    pj = stats.binom.pmf(js, nn, pf)
    above = below = excess = 0.0
    for j, w in zip(js.tolist(), pj.tolist()):
        m = nn - j
        tj = t - (K - 1) * j  # (X >= tj)
        c = math.ceil(tj)
        above += w * float(stats.binom.sf(c - 1, m, q))
        below += w * float(stats.binom.cdf(math.floor(tj), m, q))
        # E[(X - tj)_+] = m q P(Bin(m - 1, q) >= c - 1) - tj P(X >= c): a difference losing at most ~log10(sqrt(m q))
        # digits where c is above the mean (1e-9 relative at m = 1e8), none below it
        excess += w * (m * q * float(stats.binom.sf(c - 2, m - 1, q)) - tj * float(stats.binom.sf(c - 1, m, q)))
    lg = lambda v: math.log(v) + logmass if v > 0 else -math.inf  # noqa: E731
    return lg(above), lg(below), lg(excess)


def _law(K: int, p1: float, p2: float) -> np.ndarray:
    g = np.zeros(K)
    g[0], g[1], g[-1] = 1.0 - p1 - p2, p1, p2
    return g


def _check(nn: int, p1: float, mean_far: float, K: int, h: float, k0: int, zs) -> int:
    g = _law(K, p1, mean_far / nn)
    ch = Chernoff(g, np.zeros(K), k0, h, nn)
    mean_y = nn * p1 + (K - 1) * mean_far
    sd = math.sqrt(nn * p1 * (1 - p1) + (K - 1) ** 2 * mean_far)
    done = 0
    for z in zs:
        y = mean_y + z * sd
        if y <= 0:
            continue
        b = h * (k0 * nn + y)
        t = float((mpmath.mpf(b) - mpmath.mpf(h) * k0 * nn) / mpmath.mpf(h))  # (b as the double passed)
        la, lb, le = _exact(g, nn, K, t)
        le += math.log(h)
        if math.isfinite(la) and la > -700:
            assert ch.log_p_above(b) >= la - 1e-7, ("above", nn, z, ch.log_p_above(b), la)
        if math.isfinite(lb) and lb > -700:
            assert ch.log_p_below(b) >= lb - 1e-7, ("below", nn, z, ch.log_p_below(b), lb)
        if math.isfinite(le) and le > -700:
            assert ch.log_excess(b) >= le - 1e-7, ("excess", nn, z, ch.log_excess(b), le)
        done += 1
    return done


@pytest.mark.parametrize("nn", [10**6, 10**8])
@pytest.mark.parametrize("mean_far", [2.0, 30.0])
def test_body_plus_jump_sums_against_mpmath(monkeypatch, nn, mean_far):
    switch(monkeypatch, "CHERNOFF_LOG_STEP", True)
    calls = spy(monkeypatch, "log_newton_t", chernoff)
    assert _check(nn, 0.3, mean_far, 2001, 0.01, -1, (-3.0, 1.0, 4.0, 10.0, 40.0)) >= 4
    assert any(math.isfinite(out) for _, out in calls)  # (the logarithms' step was formed: the rule ran)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(log_nn=st.floats(3.0, 8.0), p1=st.floats(0.01, 0.6), log_far=st.floats(-1.0, 2.0), K=st.integers(3, 5000),
       h=st.sampled_from([0.001, 0.1, 1.0]), k0=st.integers(-3, 0), z=st.floats(-3.0, 30.0))
def test_body_plus_jump_property(monkeypatch, log_nn, p1, log_far, K, h, k0, z):
    switch(monkeypatch, "CHERNOFF_LOG_STEP", True)
    nn = int(10**log_nn)
    mean_far = min(10**log_far, 0.2 * nn)
    _check(nn, p1, mean_far, K, h, k0, (z,))


def test_reference_against_brute_force_convolution():
    """The reference's three values at nn = 30 against the nn-fold convolution of the law (numpy, exact enough at
    this size): within 1e-10 in log; and the Chernoff values are within a few nats of them (not vacuous)."""
    K, nn = 7, 30
    g = _law(K, 0.3, 0.05)
    dist = np.array([1.0])
    for _ in range(nn):
        dist = np.convolve(dist, g)
    ys = np.arange(dist.size, dtype=float)
    for y0 in (5.0, 17.5, 40.0):
        want = (math.log(dist[ys >= y0].sum()), math.log(dist[ys <= y0].sum()),
                math.log(np.sum((ys - y0).clip(0) * dist)))
        got = _exact(g, nn, K, y0)
        assert all(abs(a - b) <= 1e-10 for a, b in zip(got, want)), (y0, got, want)
    ch = Chernoff(g, np.zeros(K), 0, 1.0, nn)
    la, lb, le = _exact(g, nn, K, 40.0)
    assert la <= ch.log_p_above(40.0) <= la + 5.0 and le <= ch.log_excess(40.0) <= le + 5.0
