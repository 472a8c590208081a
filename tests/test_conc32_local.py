"""Session 32's stage of the closed form (docs/accountant_tail.md §40) against independent references: the lower chord
slope of log p by mpmath and the chord inequality, the tail deduction of §40.1 and the term of §40.2 against exact
convolutions of X_m, E phi(X_m)'s bracket against an exact convolution (tests/test_pair21_curvature.py's reference),
and the stage's jump bracket nested in stage 3's at the BMG cell of §38.4."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import ndtr

from sharpdp.shuffle.accountant import concentrated as C
from sharpdp.shuffle.accountant import concentrated_tilted as CT
from sharpdp.shuffle.accountant import far_tail as F
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant import mgf as M
from sharpdp.shuffle.laws.bmg import bmg_laws

from test_pair21_curvature import _exact_phi
from test_pair23_chords import _chord, _log_p

HEAVY = (0.04089409561900239, 0.5960134902126553)


def test_chord_rate_lo_against_mpmath_and_the_chord_inequality():
    mp.mp.dps = 40
    cases = [(bmg_laws(*HEAVY, 1.0, "zero_out")[0][1], ((3000.0, 5740.0), (5740.0, 7026.0))),
             (bmg_laws(0.3, 0.7, 1.5, "zero_out")[0][1], ((41.0, 522.0), (522.0, 1045.0)))]
    for law, pairs in cases:
        for s1, s2 in pairs:
            assert M.log_convex_from(law, s1)
            k = CT.chord_rate_lo(law, s1, s2)
            exact = _chord(law, s1, s2)
            assert exact * (1 - 1e-9) <= k <= exact, (s1, s2, k, float(exact))
            lp1 = _log_p(law, s1)  # the convex log p lies below its chord: p(s) <= p(s1) e^{-k (s - s1)} on [s1, s2]
            for s in np.linspace(s1, s2, 41):
                assert _log_p(law, s) <= lp1 - mp.mpf(k) * (mp.mpf(s) - mp.mpf(s1)) + mp.mpf(10) ** -30
    assert CT.chord_rate_lo(law, 50.0, 40.0) == 0.0  # (s2 <= s1: the rate 0, always valid)


def _conv(law, T0, m, h):
    """(points, masses) of X_m, the sum of m copies of min(L, T0), by an FFT convolution on cells of width h, each
    cell's mass at its upper end (X_m moved up by at most m h); written independently of the package."""
    a, G, r = law.one_term()
    tops = a + h * np.arange(1, int(math.ceil((T0 - a) / h)) + 1)
    tops[-1] = T0
    below = ndtr((np.log(tops - a) - math.log(G) + 0.5 * r * r) / r)  # P(L <= top) of each cell
    mass = np.diff(below, prepend=0.0)
    mass[-1] += 1.0 - below[-1]  # L > T0: V = T0, in the last cell
    length = 1 << int(math.ceil(math.log2(m * mass.size + 1)))
    spec = np.fft.rfft(mass, length) ** m
    pm = np.clip(np.fft.irfft(spec, length)[: m * (mass.size - 1) + 1], 0.0, None)
    return m * a + h * (np.arange(pm.size) + m), pm


def _case(T0, m):
    law = bmg_laws(0.3, 0.7, 1.5, "zero_out")[0][1]
    mu_lo, mu_hi, sig2, b = C._moments(law, T0)
    mm = np.array([float(m)])
    mh = C._up(mm * mu_hi)
    Q = C._up(mm * sig2 + (mm * (mu_hi - mu_lo)) ** 2)
    return law, mu_lo, mu_hi, b, mm, mh, Q


@pytest.mark.parametrize("T0", [400.0, 440.0])
def test_tail_deduction_at_least_an_exact_convolution(T0):
    # -T0 a few sd above the mean: E[g(Z''); Z'' > w] is resolved by the convolution (the cells' tops bound Z'' above)
    law, mu_lo, mu_hi, b, mm, mh, Q = _case(T0, 150)
    nu = C._dn(mm * mu_lo)
    w, d = C._dn(-T0 - nu), C._up(mh - nu)
    k = np.array([2e-3])
    got = float(CT.tail_ded_up(law, T0, mm, w, d, mu_hi, k)[0])
    x, pm = _conv(law, T0, 150, 0.05)
    z = x - float(nu[0])
    sel = z > float(w[0])
    exact = float(np.dot(pm[sel], z[sel] ** 2 / 2 + k[0] * z[sel] ** 3 / 6))
    assert 0 < exact <= got < math.inf, (exact, got)
    if T0 == 400.0:  # (at 440 the mean is 2 sd below -T0: the rates t >= 3 / w make the bound huge, and unused)
        assert got <= 200 * exact


def test_neg_side_at_least_an_exact_convolution():
    law, mu_lo, mu_hi, b, mm, mh, Q = _case(40.0, 150)
    kap = np.array([M.rate_up(law, 40.0, float(-mh[0]) * (1 + 1e-12))])
    kap_m, wid = CT.minus_rates(law, 40.0, mh, Q)
    assert 0 < kap_m[0] < kap[0] and wid[0] > 0
    t = math.sqrt(3.0 / float(Q[0]))
    b_minus = float(C._up(mu_hi - law.one_term()[0]))
    d_mu = C._up(mh - C._dn(mm * mu_lo))
    ben = Q * M.h_exp(np.array([t * b_minus]))[0] * (1 + 1e-11) / (b_minus * b_minus) * (1 + 1e-12)
    mgf_minus = np.exp(t * d_mu + ben) * (1 + 1e-12)
    got = float(CT.neg_side_up(mh, Q, kap, t, mgf_minus, d_mu, b_minus, kap_m, wid)[0])
    # the reference: cells at their lower ends lower Z' = X_m - mh, i.e. raise |Z'| on Z' < 0 (an upper reference)
    x, pm = _conv(law, 40.0, 150, 8e-3)
    z = x - 150 * 8e-3 - float(mh[0])
    neg = np.where(z < 0, -z, 0.0) ** 3
    exact = (kap[0] - kap_m[0]) / 6 * float(np.dot(pm, neg)) + kap[0] / 6 * float(np.dot(pm[z < -wid[0]], neg[z < -wid[0]]))
    old = kap[0] / 6 * (3.0 / (math.e * t)) ** 3 * float(mgf_minus[0])  # §20 (c)'s term
    assert exact <= got < old, (exact, got, old)


@pytest.mark.parametrize("m", [150, 300])
def test_e_phi_bracket_against_an_exact_convolution(m):
    law, mu_lo, mu_hi, b, mm, mh, Q = _case(40.0, m)
    T0 = 40.0
    exact = _exact_phi(law, T0, m, 8e-3)
    f_up = law.stop_loss(-mh)[1]
    tails_T = np.exp(-C._bennett_exp(Q, b, np.maximum(C._dn(-T0 - mh), 1e-300))) * (1 + 1e-12)
    tT = law.tail_upper_bracket(T0)[1]
    up_sharp = float((f_up + CT.tilted_curv(law, T0, mm, mh, Q, mu_lo, mu_hi, True) + tT * tails_T)[0])
    up_loc = float((f_up + CT.tilted_curv(law, T0, mm, mh, Q, mu_lo, mu_hi, True, local=True) + tT * tails_T)[0])
    lo_t = float(C._lower_m(law, T0, mm, mu_lo, mu_hi, mh, Q, b, curvature=False, tilted=True)[0])
    lo_loc = float(C._lower_m(law, T0, mm, mu_lo, mu_hi, mh, Q, b, curvature=False, tilted=True, local=True)[0])
    assert exact * (1 + 1e-4) <= up_loc < up_sharp  # valid (room for the reference's discretisation), and tighter
    assert lo_t <= lo_loc <= exact * (1 - 1e-5)


def test_stage_bracket_nested_in_stage_3s_at_the_bmg_cell():
    """BMG(gamma 0.01424, sigma0 0.4049), n = 1e9, eps = 0.1 (calibrate_bmg's pick; docs/accountant_tail.md §38.4):
    §40's jump bracket inside stage 3's, about 40 % narrower (measured: 2.48e-9 -> 1.44e-9 wide)."""
    gamma, law = bmg_laws(0.01424190084729267, 0.4049056344211431, 0.1, "zero_out")[0]
    gamma, n = float(gamma), 10**9
    m_est = (n - 1) * gamma * law.mean()
    est = float(law.stop_loss([max(-m_est, 0.0)])[0][0])
    T0 = F.choose_T0(law, gamma, n, limits.CLOSED_T0_FRAC * 1e-2 * est)
    keep: dict = {}
    C._jump_upper(law, gamma, n, T0, fine=False, bands=False, keep=keep)
    C._jump_upper(law, gamma, n, T0, fine=False, bands=False, sharp=True, keep=keep)
    up3 = C._jump_upper(law, gamma, n, T0, fine=False, bands=False, sharp=True, jumps=True, keep=keep)
    up4 = C._jump_upper(law, gamma, n, T0, fine=False, bands=False, sharp=True, jumps=True, keep=keep, local=True)
    lo3 = C._jump_lower(law, gamma, n, T0, curvature=False, tilted=True, sharp_pmf=True)
    lo4 = C._jump_lower(law, gamma, n, T0, curvature=False, tilted=True, sharp_pmf=True, local=True)
    assert lo3 < lo4 < up4 < up3
    assert up4 - lo4 <= 0.65 * (up3 - lo3)


def test_stage_moves_the_boundary_and_its_switch_restores_main(monkeypatch):
    """GaussianRandomizer(0.5, 1), n = 1e3, eps = 6.85 (the x vs bot law raised by its value error): refused by the
    stages of §38.3 (main's FFT treatment answers), accepted by §40.3's stage; its bracket contains the FFT
    treatment's at rel_tol 1e-4 (measured: [4.965448e-2, 4.965496e-2])."""
    from sharpdp.shuffle import GaussianRandomizer
    from sharpdp.shuffle.laws import laws_for
    g, law = laws_for(GaussianRandomizer(0.5, 1), 6.85, "zero_out")[0]
    g, run = float(g), law.shifted(up=True)
    C._MEMO.clear()
    monkeypatch.setattr(limits, "CLOSED_LOCAL_STAGE", False)
    assert C.certify(run, g, 10**3, 1e-2, F.choose_T0) is None
    monkeypatch.setattr(limits, "CLOSED_LOCAL_STAGE", True)
    cb = C.certify(run, g, 10**3, 1e-2, F.choose_T0)
    C._MEMO.clear()
    assert cb is not None and cb.upper - cb.lower <= limits.CLOSED_ACCEPT_TILTED * 1e-2 * cb.lower
    assert cb.lower <= 4.965448e-2 and cb.upper >= 4.965496e-2
