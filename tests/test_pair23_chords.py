"""The closed form's upper value with chord slopes of log p and the numerical mgf's tail bound (docs/accountant_tail.md
§22) against independent references: the chord slopes and the chord inequality by mpmath, the tail bound against the
exact Chernoff value (mpmath quadrature of the mgf of V = min(L, T0)) and an exact convolution, E phi(X_m) against an
exact convolution (tests/test_pair21_curvature.py's reference), and the heavy round's certified values against the
FFT treatment's bracket at rel_tol 1e-4."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import ndtr

from sharpdp.shuffle.accountant import concentrated as C
from sharpdp.shuffle.accountant import far_tail as F
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant import mgf as M
from sharpdp.shuffle.laws.bmg import bmg_laws

from test_pair21_curvature import _exact_phi

HEAVY = (0.04089409561900239, 0.5960134902126553)


def _log_p(law, s):
    """log of the density of L = a + G e^{r N - r^2/2} at s > a (mpmath)."""
    a, G, r = (mp.mpf(x) for x in law.one_term())
    s = mp.mpf(s)
    v = (mp.log((s - a) / G) + r * r / 2) / r
    return mp.log(mp.npdf(v)) - mp.log(r * (s - a))


def _chord(law, s1, s2):
    return (_log_p(law, s1) - _log_p(law, s2)) / (mp.mpf(s2) - mp.mpf(s1))


def _laws():
    """(law, T0, S values): the heavy round near the boundary of the closed form's range, and BMG(0.3, 0.7) (T0 near
    the density's mode, where §20's rate was loose)."""
    out = []
    for eps, T0, S in [(1.0, 2584.0, (3000.0, 5740.0, 7026.0)), (1.2, 3040.0, (4000.0, 9487.0))]:
        out.append((bmg_laws(*HEAVY, eps, "zero_out")[0][1], T0, S))
    out.append((bmg_laws(0.3, 0.7, 1.5, "zero_out")[0][1], 40.0, (41.0, 522.0, 1045.0)))
    return out


def test_chord_rate_up_against_mpmath_and_the_chord_inequality():
    mp.mp.dps = 40
    for law, T0, Ss in _laws():
        assert M.log_convex_from(law, T0)
        for S in Ss:
            k = M.chord_rate_up(law, T0, S)
            exact = _chord(law, T0, S)
            assert exact <= k <= exact * (1 + 1e-9), (T0, S, k, float(exact))
            # the chord of the convex log p lies above it: p(s) <= p(S) e^{k (S - s)} on [T0, S]
            lpS = _log_p(law, S)
            for s in np.linspace(T0, S, 41):
                assert _log_p(law, s) <= lpS + mp.mpf(k) * (mp.mpf(S) - mp.mpf(s)) + mp.mpf(10) ** -30
    assert M.chord_rate_up(law, 50.0, 40.0) == math.inf  # (s2 <= s1: not available)


@pytest.mark.parametrize("eps", [1.0, 1.2])
def test_tilt_rates_at_least_each_m_s_own_chord_slope(eps):
    mp.mp.dps = 30
    n = 10**5
    gamma, law = bmg_laws(*HEAVY, eps, "zero_out")[0]
    gamma = float(gamma)
    T0 = F.choose_T0(law, gamma, n, limits.CLOSED_T0_FRAC * 1e-2 * float(law.stop_loss([-(n - 1) * gamma * law.mean()])[0][0]))
    mu_lo, mu_hi, _, _ = C._moments(law, T0)
    m, *_ = C._m_range(n - 1, gamma)
    mh = C._up(m * mu_hi)
    kap0 = M.rate_up(law, T0, float(np.max(-mh)) * (1 + 1e-12))
    rates = M.tilt_rates(law, T0, mh, kap0)
    assert np.all(rates <= kap0) and np.unique(rates).size == len(M.CHORD_EDGES)
    assert rates[np.argmin(np.abs(m - (n - 1) * gamma))] < 0.7 * kap0  # (tighter at the mean number of users)
    for i in range(m.size):  # every m: its rate bounds the chord slope over [T0, -mh] (the one it needs)
        assert rates[i] >= _chord(law, T0, float(-mh[i])), (i, m[i])


def _exact_log_mgf(law, T0, t, c):
    """log E e^{t (V - c)}, V = min(L, T0), by mpmath quadrature over L's normal variable (the atom at T0 added)."""
    a, G, r = (mp.mpf(x) for x in law.one_term())
    T, t, c = mp.mpf(T0), mp.mpf(t), mp.mpf(c)
    vT = (mp.log((T - a) / G) + r * r / 2) / r
    f = lambda z: mp.exp(t * (a + G * mp.exp(r * z - r * r / 2) - c)) * mp.npdf(z)  # noqa: E731
    return mp.log(mp.quad(f, [-mp.inf, -5, 0, vT - 3, vT - 1, vT]) + mp.exp(t * (T - c)) * (1 - mp.ncdf(vT)))


def _chernoff_case(g, s0, eps, T0, ms):
    """(law, m, mh, Q, b, w, mu_hi, {t: exact log E e^{t (V - mu_hi)}}) at the rates t of beyond_up."""
    mp.mp.dps = 30
    law = bmg_laws(g, s0, eps, "zero_out")[0][1]
    mu_lo, mu_hi, sig2, b = C._moments(law, T0)
    m = np.array(ms)
    mh = C._up(m * mu_hi)
    Q = C._up(m * sig2 + (m * (mu_hi - mu_lo)) ** 2)
    kap = M.rate_up(law, T0, float(np.max(-mh)) * (1 + 1e-12))
    lv = {t: _exact_log_mgf(law, T0, t, mu_hi) for t in (c * kap for c in M.TAIL_RATES)}
    return law, m, mh, Q, b, C._dn(-T0 - mh), mu_hi, lv


@pytest.mark.parametrize("g, s0, eps, T0, ms", [(0.3, 0.7, 1.5, 40.0, (150.0, 300.0)),
                                                (*HEAVY, 1.0, 2584.0, (3500.0, 4089.0, 4600.0))])
def test_beyond_up_at_least_the_exact_chernoff_value(g, s0, eps, T0, ms):
    law, m, mh, Q, b, w, mu_hi, lv = _chernoff_case(g, s0, eps, T0, ms)
    ben = np.exp(-C._bennett_exp(Q, b, w)) * (1 + 1e-12)
    got = M.beyond_up(law, T0, m, mh, ben, mu_hi, 0.0, 1024)
    assert np.all(got <= ben) and np.all(got < 1e-2 * ben)  # (the mgf's bound is the smaller here)
    for i in range(m.size):  # P(X_m > -T0) <= e^{-t w} E e^{t Z'} for each t (Markov)
        best = min(-mp.mpf(t) * mp.mpf(float(w[i])) + int(m[i]) * v for t, v in lv.items())
        assert best <= mp.log(got[i]) <= best + 0.5, (m[i], float(mp.log(got[i]) - best))  # (1024 cells' sums)


@pytest.mark.parametrize("g, s0, eps, T0, ms", [(0.3, 0.7, 1.5, 40.0, (150.0, 300.0)),
                                                (*HEAVY, 1.1, 2796.0, (3500.0, 4089.0, 4600.0))])
def test_excess_bound_at_least_the_exact_chernoff_value(g, s0, eps, T0, ms):
    law, m, mh, _, _, w, mu_hi, lv = _chernoff_case(g, s0, eps, T0, ms)
    got = M.mgf_tail_up(law, T0, m, mh, mu_hi, 1024, excess=True)
    for i in range(m.size):  # E(X_m + T0)_+ <= e^{-t w} E e^{t Z'} / (e t) for each t (x_+ <= e^{t x - 1} / t)
        best = min(-mp.mpf(t) * mp.mpf(float(w[i])) + int(m[i]) * v - 1 - mp.log(t) for t, v in lv.items())
        assert best <= mp.log(got[i]) <= best + 0.5, (m[i], float(mp.log(got[i]) - best))


def test_tail_bounds_against_an_exact_convolution_where_the_probability_is_large():
    # -T0 a few sd of X_m above its mean: P(X_m > -T0) is 1e-6 ... 1e-2, resolved by a convolution of min(L, T0)
    law = bmg_laws(0.3, 0.7, 1.5, "zero_out")[0][1]
    a, G, r = law.one_term()
    m, h = 150, 0.05
    for T0 in (400.0, 440.0, 470.0):
        mu_lo, mu_hi, sig2, b = C._moments(law, T0)
        mm = np.array([float(m)])
        mh = C._up(mm * mu_hi)
        Q = C._up(mm * sig2 + (mm * (mu_hi - mu_lo)) ** 2)
        ben = np.exp(-C._bennett_exp(Q, b, C._dn(-T0 - mh))) * (1 + 1e-12)
        got = float(M.beyond_up(law, T0, mm, mh, ben, mu_hi, 0.0, 1024)[0])
        edges = a + h * np.arange(0, int(math.ceil((T0 - a) / h)) + 1)
        edges[-1] = T0
        cdf = ndtr((np.log(np.maximum(edges - a, 1e-300) / G) + 0.5 * r * r) / r)
        base = np.append(np.diff(cdf), 0.0)
        base[-1] += 1.0 - cdf[-1]  # the atom at T0
        size = 1 << int(math.ceil(math.log2(m * base.size)))
        pm = np.fft.irfft(np.fft.rfft(base, size) ** m, size)[: m * (base.size - 1) + 1]
        top = m * a + h * np.arange(pm.size) + m * h  # each cell's sum at its upper end: P(top > -T0) >= P
        exact = float(np.sum(pm[top > -T0]))
        assert 1e-6 < exact <= got, (T0, exact, got)
        # and the excess E(X_m + T0)_+ (the cells' tops bound it from above too)
        ex_exact = float(np.dot(pm, np.maximum(top + T0, 0.0)))
        ex_got = float(M.mgf_tail_up(law, T0, mm, mh, mu_hi, 1024, excess=True)[0])
        assert 1e-6 < ex_exact <= ex_got, (T0, ex_exact, ex_got)


@pytest.mark.parametrize("m", [150, 300])
def test_sharp_upper_value_of_e_phi_against_an_exact_convolution(m):
    law = bmg_laws(0.3, 0.7, 1.5, "zero_out")[0][1]
    T0, mm = 40.0, np.array([float(m)])
    mu_lo, mu_hi, sig2, b = C._moments(law, T0)
    mh = C._up(mm * mu_hi)
    Q = C._up(mm * sig2 + (mm * (mu_hi - mu_lo)) ** 2)
    f_up = law.stop_loss(-mh)[1]
    tT = law.tail_upper_bracket(T0)[1]
    ben = np.exp(-C._bennett_exp(Q, b, C._dn(-T0 - mh))) * (1 + 1e-12)
    old = float((f_up + C._tilted_curv(law, T0, mm, mh, Q, mu_lo, mu_hi) + tT * ben)[0])
    new = float((f_up + C._tilted_curv(law, T0, mm, mh, Q, mu_lo, mu_hi, True)
                 + tT * M.beyond_up(law, T0, mm, mh, ben, mu_hi, 0.0, 1024))[0])
    exact = _exact_phi(law, T0, m, 8e-3)
    assert exact * (1 + 1e-4) <= new  # valid, with room for the reference's discretisation (< 2e-5)
    assert new - exact <= 0.06 * (old - exact)  # §20's excess (+8 % and +38 %) cut to +0.4 % and +0.2 %


@pytest.mark.parametrize("n, eps", [(10**5, 1.1), (10**5, 1.2), (10**5, 1.3), (3 * 10**5, 0.9), (10**6, 0.55),
                                    (10**6, 0.6)])
def test_heavy_round_values_of_the_new_stage_against_the_fft_treatment(n, eps, monkeypatch):
    gamma, law = bmg_laws(*HEAVY, eps, "zero_out")[0]
    gamma = float(gamma)
    run = law.shifted(up=True)
    C._MEMO.clear()
    cb = C.certify(run, gamma, n, 1e-2, F.choose_T0)
    C._MEMO.clear()
    assert cb is not None and cb.upper - cb.lower <= limits.CLOSED_ACCEPT_TILTED * 1e-2 * cb.lower * (1 + 1e-9)
    # the new stage decided it: §20's upper value alone (with §21's lower value) is refused there
    old_up = (cb.body + C._jump_upper(run, gamma, n, cb.T0, fine=False, bands=False) + cb.multi) * (1 + 1e-9)
    assert old_up - cb.lower > limits.CLOSED_ACCEPT_TILTED * 1e-2 * cb.lower and cb.upper < old_up
    monkeypatch.setattr(C, "certify", lambda *a, **k: None)  # the FFT treatment alone, at rel_tol 1e-4
    fft = F.certify_bigjump(run, gamma, n, 1e-4)
    assert fft.N > 0 and fft.upper - fft.lower <= 2e-4 * fft.lower
    assert cb.lower <= fft.upper and cb.upper >= fft.lower  # both certified: the brackets meet
    assert cb.upper <= fft.upper * (1 + 1e-3)  # and the closed form's upper value is within the acceptance
