"""The closed form's left-tail mgf by Bennett's moment bound, the 10-term series of h(u) = e^u - 1 - u, the body's
early-stopped numerical-mgf Chernoff value and the widened cells of V, against independent references:

* h(u) by mpmath at 420 digits (the series branch |u| <= 0.1 and the expm1 branch);
* E e^{-t (X_m - mh)} = e^{t mh} (E e^{-t V})^m exactly (mpmath quadrature over L's normal variable) against the
  documented bound e^{t (mh - m mu_lo)} exp(Q h(t b_-) / b_-^2) with the code's own t, b_-, Q, mh, mu_lo;
* the body's value against mpmath's exact Chernoff bound min over lam of exp(n gamma (E e^{lam V} - 1)) / (e lam n gamma)
  (every lam's value is a valid upper bound, so the code's value must lie above that minimum);
* V = min(L, T0) at each cell end (mpmath) inside the cells of the code's grid (its end v(T0) by the same formula);
* whole rounds in the newly accepted region (eps 1.2-1.75, n 3e4-1e8) against the FFT treatment at rel_tol 1e-4.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from sharpdp.shuffle.accountant import concentrated as C
from sharpdp.shuffle.accountant import far_tail as F
from sharpdp.shuffle.accountant import mgf as M
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.laws.bmg import bmg_laws

HEAVY = (0.04089409561900239, 0.5960134902126553)


def test_h_exp_against_mpmath():
    rng = np.random.default_rng(7)
    us = np.concatenate([np.linspace(-0.1, 0.1, 401), [np.nextafter(0.1, 1.0), np.nextafter(-0.1, -1.0)],
                         10 ** rng.uniform(-150, -1, 200), -(10 ** rng.uniform(-150, -1, 200)),
                         rng.uniform(-5, 5, 200), rng.uniform(-700, 700, 50)])
    h = M.h_exp(us)
    worst_series = 0.0
    with mp.workdps(420):
        for u, hc in zip(us, h):
            U = mp.mpf(float(u))
            tru = mp.expm1(U) - U
            assert mp.mpf(float(hc)) * (1 + mp.mpf("1e-11")) + mp.mpf("1e-300") >= tru, u  # the callers' margin
            if tru > mp.mpf("1e-290"):
                rel = float(abs(tru - mp.mpf(float(hc))) / tru)
                assert rel < 1e-14, (u, rel)
                if abs(u) <= 0.1:
                    worst_series = max(worst_series, rel)
    assert worst_series < 2e-15  # (truncation after u^11/11!: below 5e-19 of u^2/2; the rest is rounding)


def _exact_log_mgf_v(law, T0, s):
    """log E e^{s V}, V = min(L, T0), by mpmath quadrature over L's normal variable."""
    a, G, r = [mp.mpf(x) for x in law.one_term()]
    T0, s = mp.mpf(T0), mp.mpf(s)
    vT = (mp.log((T0 - a) / G) + r * r / 2) / r
    f = lambda z: mp.exp(s * (a + G * mp.exp(r * z - r * r / 2))) * mp.npdf(z)  # noqa: E731
    body = mp.quad(f, [-mp.inf, vT - 8, vT - 3, vT - 1, vT])
    return mp.log(body + mp.exp(s * T0) * (1 - mp.ncdf(vT)))


@pytest.mark.parametrize("g, s0, n, eps", [(*HEAVY, 10**5, 1.25), (*HEAVY, 3 * 10**4, 1.9), (0.06, 0.596, 3 * 10**4, 1.7),
                                           (0.1, 0.45, 1000, 2.0), (0.9, 0.5, 10**5, 3.0)])
def test_left_tail_mgf_bound_against_mpmath(g, s0, n, eps):
    gamma, law = bmg_laws(g, s0, eps, "zero_out")[0]
    gamma = float(gamma)
    a = law.one_term()[0]
    T0c = F.choose_T0(law, gamma, n, 1e-5)
    mp.mp.dps = 40
    for T0 in (T0c, 0.3 * T0c, 3.0 * T0c):
        mu_lo, mu_hi, sig2, b = C._moments(law, T0)
        m, *_ = C._m_range(n - 1, gamma)
        mh = C._up(m * mu_hi)
        Q = C._up(m * sig2 + (m * (mu_hi - mu_lo)) ** 2)
        used = -T0 - mh > 0  # (the rows the tilted value is computed for)
        m, mh, Q = m[used], mh[used], Q[used]
        if not m.size:
            continue
        # the bound as _tilted_curv computes it (docs/accountant_tail.md §20 (c))
        t = math.sqrt(3.0 / float(np.median(Q)))
        bm = float(C._up(mu_hi - a))
        ben = C._up(Q * C._up(M.h_exp(np.array([t * bm]))[0] * (1 + 1e-11)) / (bm * bm * (1 - 4 * C.U)))
        log_bound = C._up(t * C._up(mh - C._dn(m * mu_lo)) + ben)
        lv = _exact_log_mgf_v(law, T0, -t)
        for i in np.unique(np.linspace(0, m.size - 1, 5).astype(int)):
            exact = mp.mpf(t) * mp.mpf(float(mh[i])) + int(m[i]) * lv  # log E e^{-t (X_m - mh)}
            assert log_bound[i] >= exact, (T0, m[i], float(log_bound[i] - exact))
            if n >= 3 * 10**4:  # (the accepted region: not vacuous there)
                assert log_bound[i] - exact < 1.0


def _chernoff_min(law, T0, gamma, n, lam0):
    ng = mp.mpf(n) * mp.mpf(gamma)
    a, G, r = [mp.mpf(x) for x in law.one_term()]
    T = mp.mpf(T0)
    vT = (mp.log((T - a) / G) + r * r / 2) / r

    def g(ll):
        lam = mp.exp(ll)
        f = lambda z: mp.exp(lam * (a + G * mp.exp(r * z - r * r / 2))) * mp.npdf(z)  # noqa: E731
        M = mp.quad(f, [-mp.inf, vT - 8, vT - 3, vT - 1, vT]) + mp.exp(lam * T) * (1 - mp.ncdf(vT))
        return mp.exp(ng * (M - 1)) / (mp.e * lam * ng)

    lo, hi = mp.log(lam0 / 16), mp.log(lam0 * 16)
    xs = [lo + (hi - lo) * k / 12 for k in range(13)]
    vals = [g(x) for x in xs]
    k = min(range(13), key=lambda i: vals[i])
    a_, b_, best = xs[max(k - 1, 0)], xs[min(k + 1, 12)], vals[k]
    for _ in range(14):
        c1, c2 = a_ + mp.mpf("0.382") * (b_ - a_), a_ + mp.mpf("0.618") * (b_ - a_)
        f1, f2 = g(c1), g(c2)
        best = min(best, f1, f2)
        if f1 < f2:
            b_ = c2
        else:
            a_ = c1
    return best


@pytest.mark.parametrize("g, s0, n, eps", [(*HEAVY, 10**5, 1.25)])
def test_body_mgf_value_against_the_exact_chernoff_minimum(g, s0, n, eps):
    gamma, law = bmg_laws(g, s0, eps, "zero_out")[0]
    gamma = float(gamma)
    rel_tol = 1e-2
    est = float(law.stop_loss([max(-(n - 1) * gamma * law.mean(), 0.0)])[0][0])
    T0 = F.choose_T0(law, gamma, n, limits.CLOSED_T0_FRAC * rel_tol * est)
    lam0 = C._body_lam(law, gamma, n, T0)
    enough = 1e-4 * limits.CLOSED_ACCEPT * rel_tol * est
    stopped = C._body_mgf_up(law, gamma, n, T0, lam0, enough)
    full = C._body_mgf_up(law, gamma, n, T0, lam0)
    mp.mp.dps = 20
    ref = _chernoff_min(law, T0, gamma, n, lam0)
    assert full >= ref and stopped >= full
    assert stopped <= max(enough, 1.1 * full)  # (the early stop is where the value is already negligible)
    assert full <= ref * 1.3  # (the search finds nearly the best lam)


@pytest.mark.parametrize("g, s0, n, eps", [(0.9, 0.5, 10**8, 3.0), (*HEAVY, 10**8, 5.0), (*HEAVY, 10**5, 1.4)])
def test_body_values_are_positive_upper_values_below_the_normal_range(g, s0, n, eps):
    """The body's Bennett value exp(-(n v1/b1^2) h(b1 |E A|/(n v1))) / (e lam n gamma) (exact, mpmath, with the
    code's inputs) is positive however small; the returned values (Bennett's and the numerical mgf's) lie above it
    and above the exact Chernoff value at the same lam (they are not 0 where exp underflows)."""
    gamma, law = bmg_laws(g, s0, eps, "zero_out")[0]
    gamma = float(gamma)
    C._MEMO.clear()
    cb = C.certify(law, gamma, n, 1e-2, F.choose_T0)
    assert cb is not None and cb.body > 0
    T0 = cb.T0
    mp.mp.dps = 30
    mu_lo, mu_hi = C._mean_v(law, T0)
    _, G, r = law.one_term()
    v1 = mp.mpf(gamma) * (mp.mpf(G) ** 2 * mp.e ** (mp.mpf(r) ** 2) + max(mu_lo * mu_lo, mu_hi * mu_hi))
    b1 = mp.mpf(T0) - gamma * mp.mpf(mu_lo)
    ea = n * mp.mpf(gamma) * mp.mpf(mu_hi)
    u = b1 * -ea / (n * v1)
    lam = mp.log1p(u) / b1
    exact = mp.exp(-(n * v1 / b1 ** 2) * ((1 + u) * mp.log1p(u) - u)) / (mp.e * lam * n * gamma)
    assert C._body_up(law, gamma, n, T0) >= exact
    assert C._body_mgf_up(law, gamma, n, T0, C._body_lam(law, gamma, n, T0)) > 0
