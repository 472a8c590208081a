"""The closed form's lower value with the curvature term (concentrated._curvature_lo, LognormalLaw.density_lo)
against independent references: the density and Var min(L, T0) by mpmath; the remainder E R_nu(X_m) and
E phi(X_m) by an FFT convolution of V = min(L, T0) whose cells are split between their edges with the cell's exact
conditional mean (E X_m exact; a convex-order upper reference of E R_nu with an O(h^2) error, checked at h and h/2);
n = 2 by quadrature; large n against the FFT treatment's certified bracket at a tighter rel_tol."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import ndtr

from sharpdp.shuffle.accountant import concentrated as C
from sharpdp.shuffle.accountant import far_tail as F
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.laws.bmg import bmg_laws
from sharpdp.shuffle.laws.lognormal import LognormalLaw

HEAVY = (0.04089409561900239, 0.5960134902126553)


def _v(s, a, G, r):
    return (mp.log((mp.mpf(s) - a) / G) + mp.mpf(r) ** 2 / 2) / r


def _dens(s, a, G, r):
    return mp.npdf(_v(s, a, G, r)) / (r * (mp.mpf(s) - a))


def _tau(t, a, G, r):  # E (L - t)_+
    t = mp.mpf(t)
    if t <= a:
        return a + G - t
    v = _v(t, a, G, r)
    return G * mp.ncdf(r - v) - (t - a) * mp.ncdf(-v)


def _var_min(t, a, G, r):  # Var min(L, t)
    v = _v(t, a, G, r)
    a, G, r, t = map(mp.mpf, (a, G, r, t))
    e1 = G * mp.ncdf(v - r) + (t - a) * mp.ncdf(-v)
    e2 = G * G * mp.e ** (r * r) * mp.ncdf(v - 2 * r) + (t - a) ** 2 * mp.ncdf(-v)
    return e2 - e1 * e1


LAWS = [(-7.348162003311648, 0.9591059043809976, 1.6778143723612764), (-5.0, 0.9, 1.7), (-0.75, 0.1, 0.5),
        (-36.9, 0.498, 0.0361), (-1.2, 9.9e-4, 0.67), (-444.7, 19.2, 0.106), (-3.0, 1e-5, 4.0), (-2e3, 30.0, 0.03)]


def test_density_lower_values_below_the_exact_density_also_near_underflow():
    mp.mp.dps = 40
    for a, G, r in LAWS:
        law = LognormalLaw(a, G, r)
        a, G, r = law.one_term()
        # from just above a to where the density is subnormal (v up to 38.6)
        vs = np.concatenate([np.linspace(-3, 30, 25), np.linspace(36.0, 38.6, 14)])
        s = np.array([a + G * float(mp.e ** (r * v - r * r / 2)) for v in vs])
        lo = law.density_lo(s)
        for x, d in zip(s, lo):
            ex = _dens(float(x), a, G, r)
            assert d <= ex, (a, G, r, x, d, ex)
            if ex > 1e-250 and _v(x, a, G, r) > 1e-6:
                assert d >= ex * (1 - 1e-9)  # and tight where the density is normal and v(s) >= 0


def test_variance_lower_value_and_monotone_clamped_variance():
    mp.mp.dps = 40
    for a, G, r in LAWS[:6]:
        law = LognormalLaw(a, G, r)
        a, G, r = law.one_term()
        for T0 in (a + 1e-3 * G, a + 0.5 * G, 1e-6, 1.0, 30.0, 1e4):
            if T0 <= max(a, 0.0):
                continue
            var_lo = float(C._dn(C._dn(G * G * math.expm1(r * r) * (1 - 1e-12)) * (1 - 4 * C.U)
                                 - 2.0 * float(law.second_moment_above_up([T0])[0]) * (1 + 4 * C.U)))
            exact = _var_min(T0, a, G, r)
            assert var_lo <= exact
            tail = G * G * mp.e ** (r * r) * mp.ncdf(2 * r - _v(T0, a, G, r))  # E[(L - a)^2; L > T0]
            if tail < 1e-9 * exact:
                assert var_lo >= exact * (1 - 1e-6)  # (nearly exact once that tail is negligible)
            vs = [_var_min(t, a, G, r) for t in np.linspace(T0, 3 * T0 + 1, 5)]
            assert all(x <= y for x, y in zip(vs, vs[1:]))


def _conv_reference(law, T0, m, nu, c, h):
    """(E R_nu(X_m), E phi(X_m)) with V's cells split between their edges (exact conditional mean), the atom at T0."""
    a, G, r = law.one_term()
    K = int(round((T0 - a) / h))
    h = (T0 - a) / K
    edges = a + h * np.arange(K + 1)
    z = np.where(edges > a, (np.log(np.maximum(edges - a, 1e-300) / G) + 0.5 * r * r) / r, -np.inf)
    Fv, F1 = ndtr(z), ndtr(z - r)  # P(L <= x), E[L - a; L <= x] / G
    dm, d1 = np.diff(Fv), G * np.diff(F1)
    frac = np.clip(np.where(dm > 0, (d1 / np.maximum(dm, 1e-300) - (edges[:-1] - a)) / h, 0.5), 0.0, 1.0)
    pmf = np.zeros(K + 1)
    pmf[:-1] += dm * (1 - frac)
    pmf[1:] += dm * frac
    pmf[-1] += 1.0 - Fv[-1]
    size = 1 << int(math.ceil(math.log2(m * K + 2)))
    pm = np.fft.irfft(np.fft.rfft(pmf, size) ** m, size)[: m * K + 1]
    x = m * a + h * np.arange(pm.size)

    def tau(t):
        v = (np.log(np.maximum(t - a, 1e-300) / G) + 0.5 * r * r) / r
        return np.where(t > a, G * ndtr(r - v) - (t - a) * ndtr(-v), a + G - t)

    def phic(y):
        return np.where(y <= -T0, tau(-y), tau(np.array(T0)) + c * (y + T0))

    slope = float(ndtr(-(math.log((-nu - a) / G) + 0.5 * r * r) / r))  # phi_c'(nu) = P(L > -nu)
    R = phic(x) - phic(np.array(nu)) - slope * (x - nu)
    return float(np.dot(pm, R)), float(np.dot(pm, tau(np.maximum(T0, -x))))


@pytest.mark.parametrize("g, s0, eps, m, T0", [(0.3, 0.7, 1.5, 150, 40.0), (0.1, 1.0, 1.0, 300, 40.0),
                                                (0.3, 0.7, 1.0, 150, 40.0)])
def test_curvature_term_below_the_exact_remainder(g, s0, eps, m, T0):
    law = bmg_laws(g, s0, eps, "zero_out")[0][1]
    a, G, r = law.one_term()
    mu_lo, mu_hi, sig2, b = C._moments(law, T0)
    mm = np.array([float(m)])
    mh, Q = C._up(mm * mu_hi), C._up(mm * sig2 + (mm * (mu_hi - mu_lo)) ** 2)
    nu = C._dn(mm * mu_lo)
    c = float(law.prob_above_up([T0])[0])
    add = float(C._curvature_lo(law, T0, mm, nu, mh, Q, mu_hi)[0])
    lo = float(C._lower_m(law, T0, mm, mu_lo, mu_hi, mh, Q, b)[0])
    h = min((T0 - a) / 1500, G * math.sqrt(math.expm1(r * r)) / 10)
    ER, EP = _conv_reference(law, T0, m, float(nu[0]), c, h)
    ER2, EP2 = _conv_reference(law, T0, m, float(nu[0]), c, h / 2)
    assert abs(ER2 / ER - 1) < 1e-3 and abs(EP2 / EP - 1) < 1e-5  # (the reference's discretisation)
    assert 0 < add <= 0.5 * ER2  # a lower value of E R_nu(X_m), with a margin far above the reference's error
    assert lo <= EP2 * (1 - 1e-3)  # the lower value of E phi(X_m) with the term


def test_n2_lower_value_against_quadrature():
    """n = 2: A' = B_2 min(L_2, T0), m in {0, 1}; the lower value (the term cannot apply at m = 1) against the
    exact E phi(A') by quadrature."""
    mp.mp.dps = 30
    for eps, T0 in ((2.0, 3.0), (3.0, 10.0), (1.0, 0.5)):
        gamma, law = bmg_laws(*HEAVY, eps, "zero_out")[0]
        gamma = float(gamma)
        a, G, r = law.one_term()
        lo = C._jump_lower(law, gamma, 2, T0, curvature=True)
        assert lo == C._jump_lower(law, gamma, 2, T0, curvature=False)
        vT = _v(T0, a, G, r)

        def phi(x):
            return _tau(max(mp.mpf(T0), -x), a, G, r)

        e1 = mp.quad(lambda v: phi(a + G * mp.e ** (r * v - r * r / 2)) * mp.npdf(v), [-mp.inf, vT]) \
            + mp.ncdf(-vT) * phi(mp.mpf(T0))
        exact = (1 - gamma) * _tau(T0, a, G, r) + gamma * e1
        assert lo <= exact
        assert lo >= exact * 0.9


@pytest.mark.parametrize("eps, n", [(1.5, 10**5), (2.0, 10**5), (3.0, 10**5), (1.0, 10**6)])
def test_large_n_lower_value_with_the_term_against_the_fft_bracket(monkeypatch, eps, n):
    g = HEAVY if n == 10**5 else (0.3, 0.7)
    gamma, law = bmg_laws(*g, eps, "zero_out")[0]
    gamma = float(gamma)
    m_est = (n - 1) * gamma * law.mean()
    est = float(law.stop_loss([max(-m_est, 0.0)])[0][0])
    T0 = F.choose_T0(law, gamma, n, limits.CLOSED_T0_FRAC * 1e-2 * est)
    jlo = C._jump_lower(law, gamma, n, T0)  # forced, where the accountant may not use it
    assert jlo > C._jump_lower(law, gamma, n, T0, curvature=False)
    monkeypatch.setattr(C, "certify", lambda *a, **k: None)
    fft = F.certify_bigjump(law, gamma, n, 2e-3)
    assert fft.N > 0 and jlo * (1 - 1e-9) <= fft.upper
    assert jlo >= fft.lower * (1 - 2e-2)


def test_upper_values_do_not_depend_on_the_term(monkeypatch):
    """certify's upper values (and whether it returns a bracket) with the term and with it replaced by 0."""
    laws = [(HEAVY, 10**5, e) for e in (1.5, 1.9, 2.0, 2.5, 4.0)] + [((0.3, 0.7), 10**6, e) for e in (0.5, 1.0)]
    got = []
    for zero in (False, True):
        if zero:
            monkeypatch.setattr(C, "_curvature_lo", lambda law, T0, m, *a: np.zeros(m.shape))
        row = []
        for g, n, eps in laws:
            gamma, law = bmg_laws(*g, eps, "zero_out")[0]
            C._MEMO.clear()
            cb = C.certify(law, float(gamma), n, 1e-2, F.choose_T0)
            row.append(None if cb is None else (cb.upper, cb.jump_up, cb.T0))
        got.append(row)
    C._MEMO.clear()
    assert got[0] == got[1] and any(x is not None for x in got[0])
