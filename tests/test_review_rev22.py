"""The closed form's tilted upper value, numerical-mgf body and tilted lower value (concentrated._tilted_curv,
_body_mgf_up, _tilted_lo) against independent references:

* E phi(X_m) (X_m the sum of m copies of V = min(L, T0), phi(x) = tau(max(T0, -x))) by FFT convolutions of V's law
  on a lattice with each cell's mass at its lower end and at its upper end: these two sums bracket X_m in the usual
  stochastic order and phi is non-decreasing, so they bracket E phi(X_m) (rigorous up to the FFT's round-off, which
  is checked to be negligible where used);
* the whole jump term E phi(A') at n = 30 (M' ~ Bin(29, gamma) exactly) from those brackets;
* the cells of V's numerical mgf against mpmath at large r (the exponent's rounded argument);
* the certified bracket of whole rounds against the FFT treatment at rel_tol 1e-4, and a privacy profile's values
  against fresh get_delta_bounds calls.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import gammaln, ndtr

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant
from sharpdp.shuffle.accountant import concentrated as C
from sharpdp.shuffle.accountant import far_tail as F
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant import mgf as M
from sharpdp.shuffle.laws.bmg import bmg_laws
from sharpdp.shuffle.laws.lognormal import LognormalLaw
from sharpdp.shuffle.profile import privacy_profile
from sharpdp.shuffle.round_cache import clear_caches

from _main_floats34 import switch

HEAVY = (0.04089409561900239, 0.5960134902126553)


def _phi_bracket(law, T0, ms, h):
    """{m: (lower, upper)} of E phi(X_m): V's cells [a + k h, a + (k + 1) h] with their exact masses (ndtr) put at
    the lower end / the upper end (the atom P(L > T0) at T0), m-fold FFT powers."""
    a, G, r = law.one_term()
    K = int(math.ceil((T0 - a) / h))
    h = (T0 - a) / K
    edges = a + h * np.arange(K + 1)
    Fv = np.where(edges > a, ndtr((np.log(np.maximum(edges - a, 1e-300) / G) + 0.5 * r * r) / r), 0.0)
    mass = np.diff(Fv)
    b_lo = np.append(mass, 0.0)
    b_hi = np.append(0.0, mass)
    b_lo[-1] += 1.0 - Fv[-1]
    b_hi[-1] += 1.0 - Fv[-1]
    out = {}
    for m in ms:
        size = 1 << int(math.ceil(math.log2(m * K + 2)))
        x = m * a + h * np.arange(m * K + 1)
        k = np.maximum(T0, -x) - a
        v = (np.log(k / G) + 0.5 * r * r) / r
        tau = G * ndtr(r - v) - k * ndtr(-v)
        vals = []
        for base in (b_lo, b_hi):
            pm = np.fft.irfft(np.fft.rfft(base, size) ** m, size)[: m * K + 1]
            vals.append(float(np.dot(np.maximum(pm, 0.0), tau)))
            noise = float(np.sum(np.abs(np.minimum(pm, 0.0)))) * float(np.max(tau))
            assert noise < 1e-6 * vals[-1]  # (the round-off of the reference is negligible here)
        out[m] = (vals[0], vals[1])
    return out


def _closed_m(law, T0, m):
    """(upper, lower) of E phi(X_m) by the closed form for one m: §20's tilted upper value, the larger lower value
    of §18 (c) + §19 / §21."""
    mm = np.array([float(m)])
    mu_lo, mu_hi, sig2, b = C._moments(law, T0)
    mh = C._up(mm * mu_hi)
    Q = C._up(mm * sig2 + (mm * (mu_hi - mu_lo)) ** 2)
    assert -T0 - mh[0] > 0
    f_up = law.stop_loss(-mh)[1]
    tails_T = np.exp(-C._bennett_exp(Q, b, np.maximum(C._dn(-T0 - mh), 1e-300))) * (1 + 1e-12)
    up = float((f_up + C._tilted_curv(law, T0, mm, mh, Q, mu_lo, mu_hi) + law.tail_upper_bracket(T0)[1] * tails_T)[0])
    lo = max(float(C._lower_m(law, T0, mm, mu_lo, mu_hi, mh, Q, b, curvature=cv, tilted=tl)[0])
             for cv, tl in ((False, False), (True, False), (False, True), (True, True)))
    return up, lo


@pytest.mark.parametrize("g, s0, eps, T0, ms, h", [
    (0.9, 0.5, 2.0, 10.0, (3, 30, 100), 0.0058),   # the tilted upper value within 1.4e-3 of the reference
    (0.3, 0.7, 4.0, 10.0, (30, 100), 0.032),
    (0.1, 0.7, 2.0, 5.0, (1, 2, 3), 0.0041),       # m = 1-3: X_m far from normal
    (0.3, 0.7, 1.5, 40.0, (150,), 0.0025),
    (*HEAVY, 1.3, 40.0, (100,), 0.004),
])
def test_e_phi_bracket_against_a_monotone_lattice_reference(g, s0, eps, T0, ms, h):
    law = bmg_laws(g, s0, eps, "zero_out")[0][1]
    ref = _phi_bracket(law, T0, ms, h)
    for m in ms:
        up, lo = _closed_m(law, T0, m)
        r_lo, r_hi = ref[m]
        assert r_lo <= r_hi <= r_lo * (1 + 1e-2)
        assert up >= r_lo, (m, up, r_lo)  # a certified upper value above a lower reference
        assert lo <= r_hi, (m, lo, r_hi)  # a certified lower value below an upper reference
        assert 0 < lo <= up


def test_n30_jump_term_against_the_exact_binomial_mixture():
    """n = 30, gamma = 0.99 (M' ~ Bin(29, gamma) summed exactly over every m): the closed form's jump-term bracket
    against the mixture of the lattice brackets of E phi(X_m), at the round's own clamp T0."""
    g, s0, eps, n = 0.99, 0.3, 7.0, 30
    gamma, law = bmg_laws(g, s0, eps, "zero_out")[0]
    gamma = float(gamma)
    C._MEMO.clear()
    cb = C.certify(law, gamma, n, 1e-2, F.choose_T0)
    C._MEMO.clear()
    assert cb is not None
    T0, N = cb.T0, n - 1
    a = law.one_term()[0]
    ms = list(range(0, N + 1))
    lp = gammaln(N + 1.0) - gammaln(np.arange(N + 1) + 1.0) - gammaln(N - np.arange(N + 1) + 1.0) \
        + np.arange(N + 1) * math.log(gamma) + (N - np.arange(N + 1)) * math.log1p(-gamma)
    w = np.exp(lp)
    tT = float(law.stop_loss([T0])[0][0])
    big = [m for m in ms if m >= 20]  # (the others: P(M' < 20) < 1e-14, phi <= tau(T0))
    ref = _phi_bracket(law, T0, big, (T0 - a) / 20000)
    j_lo = sum(w[m] * ref[m][0] for m in big)
    j_hi = sum(w[m] * ref[m][1] for m in big) + float(np.sum(w[:20])) * tT
    assert j_hi <= j_lo * (1 + 1e-4)  # a tight reference
    assert cb.jump_up >= j_lo
    lo = C.with_curvature(cb, law, gamma, n)
    assert lo.jump_lo <= j_hi and lo.lower <= cb.upper
    assert cb.upper >= j_lo  # D_up >= E phi(A') (the left side of the split)
    assert cb.jump_up <= j_hi * (1 + 1e-4)  # and the tilted upper value is within 1e-4 of it


@pytest.mark.parametrize("g, s0, n, eps", [(0.99, 0.3, 30, 7.0), (*HEAVY, 10**5, 1.45), (0.2, 0.45, 10**6, 0.75),
                                           (0.5, 0.3, 30, 6.0), (0.3, 0.7, 10**5, 2.0),
                                           # the region accepted since the tilted values (eps 1.2-2, n 3e4-1e8)
                                           (*HEAVY, 3 * 10**4, 1.9), (0.06, 0.596, 3 * 10**4, 1.7),
                                           (*HEAVY, 10**8, 1.2), (0.03, 0.596, 10**6, 1.2)])
def test_round_bracket_against_the_fft_treatment_at_rel_tol_1e4(g, s0, n, eps, monkeypatch):
    gamma, law = bmg_laws(g, s0, eps, "zero_out")[0]
    gamma = float(gamma)
    C._MEMO.clear()
    cb = C.certify(law, gamma, n, 1e-2, F.choose_T0)
    assert cb is not None
    lo = C.with_curvature(cb, law, gamma, n).lower
    C._MEMO.clear()
    monkeypatch.setattr(C, "certify", lambda *a, **k: None)  # the FFT treatment alone
    fft = F.certify_bigjump(law, gamma, n, 1e-4)
    assert fft.N > 0 and fft.lower > 0
    assert cb.upper >= fft.lower and lo <= fft.upper
    assert cb.upper - cb.lower <= limits.CLOSED_ACCEPT * 1e-2 * cb.lower * (1 + 1e-9)  # accepted within its tolerance
    assert cb.upper <= fft.upper * (1 + 2e-3)


def test_v_cells_contain_v_at_the_cell_ends_for_large_r():
    """V = min(L, T0) at each cell end z_i (mpmath) lies in [lo of the cell above, hi of the cell below]; at r ~ 26
    the rounded exponent argument r z - r^2/2 moves G e^{...} by ~250 ulp relative."""
    mp.mp.dps = 50
    for a, G, r, T0 in [(-3.0, 1.0, 26.0, 1e3), (-3.0, 1.0, 20.0, 1e6), (-0.5, 0.4, 26.4, 1e8),
                        (-7.348162003311648, 0.9591059043809976, 1.6778143723612764, 3222.0)]:
        law = LognormalLaw(a, G, r)
        a, G, r = law.one_term()
        K = 4096
        vT = (math.log((T0 - a) / G) + 0.5 * r * r) / r
        z = np.linspace(M.MGF_Z0, max(vT, M.MGF_Z0 + 1.0), K + 1)
        lo, hi, p_lo, p_up = M.v_cells(law, T0, K)
        assert np.all(p_lo <= p_up) and abs(float(np.sum(p_up)) - 1) < 1e-9  # the cells' probabilities
        for i in list(range(0, K + 1, 97)) + list(range(K - 40, K + 1)):
            V = min(mp.mpf(a) + mp.mpf(G) * mp.e ** (mp.mpf(r) * mp.mpf(z[i]) - mp.mpf(r) ** 2 / 2), mp.mpf(T0))
            assert lo[i + 1] <= V <= hi[i], (a, G, r, T0, i)


def test_profile_values_certify_like_fresh_calls(monkeypatch):
    switch(monkeypatch, "FT42_T0_WARM", False)  # (**) session 42, ft42: docs/accountant_tail.md §63
    for (g, s0), n, eps in (((0.9, 0.45), 30, [2.5, 3.2]), (HEAVY, 10**5, [1.45, 1.55])):
        clear_caches()
        C._MEMO.clear()
        prof = privacy_profile(ShuffleAccountant(BlanketMixedGaussian(g, s0, 1), n), eps)
        for e, d in zip(eps, prof):
            clear_caches()
            C._MEMO.clear()
            lo, up = ShuffleAccountant(BlanketMixedGaussian(g, s0, 1), n).get_delta_bounds(e)
            assert lo <= d <= up * (1 + 1e-12) and up <= lo * (1 + 1e-2)
