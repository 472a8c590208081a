"""Independent checks of the closed-form deep tail (sharpdp.shuffle.accountant.concentrated) for the one-term
lognormal law L = a + G exp(rV - r^2/2), V ~ N(0, 1) (the BMG's x vs bot order):

* n = 2: the exact D_up and the exact jump functional E phi(A') by Gauss-Legendre panels with breakpoints at the
  near-kinks (stop-loss written here from ndtr), against the closed form's bracket computed without its acceptance
  rule, at the default clamp T0 and at clamps 20 times smaller and 50 times larger;
* the bracket of E phi(X_m) given the number m of active users against Monte Carlo with two control variates;
* the binomial weights (gammaln) against mpmath at n up to 1e9, the Chernoff mass outside the window against scipy;
* the density's sup and the second moment above a level against mpmath; the Bennett constants against quadrature;
* accepted brackets against the FFT treatment's bracket (the closed form refused) at a tighter rel_tol.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from numpy.polynomial.legendre import leggauss
from scipy.special import ndtr
from scipy.stats import binom

from sharpdp.shuffle.accountant import concentrated as C
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.accountant.jump import pair_integral_up
from sharpdp.shuffle.laws.bmg import bmg_laws
from sharpdp.shuffle.laws.lognormal import LognormalLaw


def _law(g, s, eps):
    gamma, law = bmg_laws(g, s, float(eps), "zero_out")[0]
    return float(gamma), law


# ---------------------------------------------------------------- independent closed forms and quadrature


def _tau(t, a, G, r):
    """E[(L - t)_+] (Black-Scholes form)."""
    t = np.asarray(t, dtype=float)
    k = t - a
    with np.errstate(divide="ignore", invalid="ignore"):
        v = (np.log(np.where(k > 0, k, 1.0) / G) + 0.5 * r * r) / r
        val = G * ndtr(r - v) - k * ndtr(-v)
    return np.where(k > 0, np.maximum(val, 0.0), a + G - t)


def _pbar(t, a, G, r):
    t = np.asarray(t, dtype=float)
    k = t - a
    with np.errstate(divide="ignore", invalid="ignore"):
        v = (np.log(np.where(k > 0, k, 1.0) / G) + 0.5 * r * r) / r
    return np.where(k > 0, ndtr(-v), 1.0)


def _L(v, a, G, r):
    return a + G * np.exp(r * v - 0.5 * r * r)


def _v_of(x, a, G, r):
    return (math.log((x - a) / G) + 0.5 * r * r) / r


def _nodes(breaks=(), width=0.25, span=14.0, k=24):
    """Nodes and weights of E_V[.] (density included): Gauss-Legendre panels plus breakpoints."""
    pts = np.unique(np.concatenate([np.arange(-span, span + 1e-12, width), np.asarray(breaks, float)]))
    pts = pts[(pts >= -span) & (pts <= span)]
    x, w = leggauss(k)
    lo, hi = pts[:-1], pts[1:]
    X = (0.5 * (hi - lo)[:, None] * x[None, :] + 0.5 * (hi + lo)[:, None]).ravel()
    W = (0.5 * (hi - lo)[:, None] * w[None, :]).ravel() * np.exp(-0.5 * X * X) / math.sqrt(2 * math.pi)
    return X, W


def _kinks(a, G, r):
    """V where L_1 = -L_2 for L_2 over its bulk: tau(-L_1) turns from linear to its tail there, sharply."""
    others = a + G * np.exp(r * np.arange(-7.0, 7.01, 0.25) - 0.5 * r * r)
    tgt = -others
    return list((np.log((tgt[tgt > a] - a) / G) + 0.5 * r * r) / r)


def _exact_n2(a, G, r, gamma, T0):
    """(D_up, E phi(A'), P(L_1 + S_1 > 0)) at n = 2."""
    X, W = _nodes(_kinks(a, G, r))
    L = _L(X, a, G, r)
    dup = (1 - gamma) * float(_tau(0.0, a, G, r)) + 0.5 * gamma * float(np.sum(W * _tau(-L, a, G, r)))
    ppos = (1 - gamma) * float(_pbar(0.0, a, G, r)) + gamma * float(np.sum(W * _pbar(-L, a, G, r)))
    br = [_v_of(T0, a, G, r)] + ([_v_of(-T0, a, G, r)] if -T0 > a else [])
    X, W = _nodes(br)
    V = np.minimum(_L(X, a, G, r), T0)
    ephi = (1 - gamma) * float(_tau(T0, a, G, r)) + gamma * float(np.sum(W * _tau(np.maximum(T0, -V), a, G, r)))
    return dup, ephi, ppos


def _forced(law, gamma, n, T0):
    """The closed form's bracket of D_up as concentrated._certify computes it, without its acceptance rule."""
    multi = 0.5 * (n - 1) * gamma * pair_integral_up(law, T0) * (1 + 1e-9)
    body = C._body_up(law, gamma, n, T0)
    jup, jlo = C._jump(law, gamma, n, T0, True)
    return jlo * (1 - 1e-9), min((body + jup + multi) * (1 + 1e-9), law.tail_upper(0.0)), jlo, jup


def _default_T0(law, gamma, n, rel_tol=1e-2):
    est = float(law.stop_loss([max(-(n - 1) * gamma * law.mean(), 0.0)])[0][0])
    frac = 0.02  # (the module's own choice; any T0 > 0 is valid)
    return far_tail.choose_T0(law, gamma, n, frac * rel_tol * est)


N2_CELLS = [(0.0409, 0.596, 3), (0.0409, 0.596, 8), (0.3, 0.6, 6), (0.9, 0.55, 10), (0.002, 0.45, 12), (0.2, 1.0, 4),
            (0.98, 0.7, 2), (0.5, 1.5, 6)]


@pytest.mark.parametrize("g,s,eps", N2_CELLS)
def test_n2_bracket_contains_the_exact_values(g, s, eps):
    gamma, law = _law(g, s, eps)
    a, G, r = law.one_term()
    T0d = _default_T0(law, gamma, 2)
    for fac in (1.0, 0.05, 50.0):
        T0 = T0d * fac
        dup, ephi, ppos = _exact_n2(a, G, r, gamma, T0)
        lo, up, jlo, jup = _forced(law, gamma, 2, T0)
        assert lo <= dup * (1 + 1e-12) and up >= dup * (1 - 1e-12), (fac, lo / dup, up / dup)
        assert jlo <= ephi * (1 + 1e-12) and jup >= ephi * (1 - 1e-12), (fac, jlo / ephi, jup / ephi)
        assert C.positive_prob_up(law, gamma, 2, T0) >= ppos


def test_n2_reference_converges():
    # the quadrature's own check: panel width 0.25 vs 0.125 agree to 1e-12 (the near-kinks are breakpoints)
    gamma, law = _law(0.3, 0.6, 6.0)
    a, G, r = law.one_term()
    vals = []
    for width in (0.25, 0.125):
        X, W = _nodes(_kinks(a, G, r), width=width)
        vals.append(float(np.sum(W * _tau(-_L(X, a, G, r), a, G, r))))
    assert abs(vals[0] - vals[1]) <= 1e-12 * vals[1]


# ---------------------------------------------------------------- given m: Monte Carlo with control variates


def _per_m(law, m, T0, fine, monkeypatch):
    with monkeypatch.context() as mpt:
        mpt.setattr(C, "_m_range", lambda N, g: (np.array([float(m)]), np.array([1.0]), np.array([1.0]), 0.0))
        return C._jump(law, 0.5, 10, T0, fine)


def _mc_phi(a, G, r, m, T0, ns, rng):
    """E phi(X_m), X_m a sum of m i.i.d. min(L, T0): mean of phi(X) - f'(mu)(X - mu) - f''(mu)/2 ((X - mu)^2 - Var X),
    mu and Var X by quadrature (the two control variates have mean 0)."""
    X, W = _nodes([_v_of(T0, a, G, r)], width=0.125)
    V = np.minimum(_L(X, a, G, r), T0)
    ev = float(np.sum(W * V))
    mu, var = m * ev, m * float(np.sum(W * (V - ev) ** 2))
    f1 = float(_pbar(-mu, a, G, r))
    hh = 1e-4 * abs(mu)
    f2 = float((_pbar(-mu - hh, a, G, r) - _pbar(-mu + hh, a, G, r)) / (2 * hh))
    Xm = np.minimum(_L(rng.standard_normal((ns, m)), a, G, r), T0).sum(axis=1)
    y = _tau(np.maximum(T0, -Xm), a, G, r) - f1 * (Xm - mu) - 0.5 * f2 * ((Xm - mu) ** 2 - var)
    return float(y.mean()), float(y.std() / math.sqrt(ns))


@pytest.mark.parametrize("g,s,eps,n,m", [(0.3, 0.6, 6.0, 300, 44), (0.3, 0.6, 6.0, 300, 89), (0.3, 0.45, 12.0, 50, 7),
                                         (0.0409, 0.596, 5.0, 1000, 20), (0.2, 1.0, 3.0, 500, 49)])
def test_given_m_bracket_contains_monte_carlo(g, s, eps, n, m, monkeypatch):
    gamma, law = _law(g, s, eps)
    a, G, r = law.one_term()
    T0 = _default_T0(law, gamma, n)
    ref, se = _mc_phi(a, G, r, m, T0, 20000, np.random.default_rng(20))
    for fine in (False, True):
        up, lo = _per_m(law, m, T0, fine, monkeypatch)
        assert lo <= ref + 5 * se and up >= ref - 5 * se, (fine, (lo - ref) / se, (up - ref) / se)
    assert up <= ref * 1.03  # and informative


# ---------------------------------------------------------------- the mixture over m


@pytest.mark.parametrize("N,gamma", [(10**9 - 1, 0.0409), (10**9 - 1, 0.98), (10**8 - 1, 0.3), (10**5 - 1, 0.0409),
                                     (99, 0.9), (10**9 - 1, 1e-6)])
def test_binomial_weights_against_mpmath(N, gamma):
    mp.mp.dps = 40
    m, p_up, p_lo, outside = C._m_range(N, gamma)
    for i in np.unique(np.linspace(0, len(m) - 1, 9).astype(int)):
        k = int(m[i])
        ex = mp.exp(mp.loggamma(N + 1) - mp.loggamma(k + 1) - mp.loggamma(N - k + 1) + k * mp.log(mp.mpf(gamma))
                    + (N - k) * mp.log1p(-mp.mpf(gamma)))
        assert p_lo[i] <= ex <= p_up[i]
        val, err = C._log_binom(N, np.array([float(k)]), gamma)
        assert abs(mp.mpf(float(val[0])) - mp.log(ex)) <= 0.1 * err[0]  # the stated bound, with room
    m1, m2 = int(m[0]), int(m[-1])
    ex_out = (binom.cdf(m1 - 1, N, gamma) if m1 > 0 else 0.0) + (binom.sf(m2, N, gamma) if m2 < N else 0.0)
    assert outside >= ex_out


def test_gammaln_within_a_few_ulp_up_to_1e9():
    from scipy.special import gammaln
    mp.mp.dps = 40
    for x in [11.0, 1e3 + 1, 123457.0, 4.09e7 + 1, 5e8 + 1, 1e9 + 1, 999999998.0, 987654321.5]:
        ex = mp.loggamma(mp.mpf(x))
        assert abs(mp.mpf(float(gammaln(x))) - ex) <= 4 * 2.0 ** -53 * abs(ex)  # assumed: 8 ulp


# ---------------------------------------------------------------- the closed-form pieces


def _dens_mp(s, a, G, r):
    q = mp.mpf(s) - mp.mpf(a)
    v = (mp.log(q / mp.mpf(G)) + mp.mpf(r) ** 2 / 2) / mp.mpf(r)
    return mp.npdf(v) / (mp.mpf(r) * q)


@pytest.mark.parametrize("a,G,r", [(-2.677, 0.9591, 1.678), (-1e5, 0.99, 1.2), (-3e5, 0.002, 2.9), (-50.0, 0.5, 0.4),
                                   (-1e9, 0.5, 10.0), (-1.0000001, 1.0, 1.0)])
def test_density_sup_and_second_moment_against_mpmath(a, G, r):
    mp.mp.dps = 40
    law = LognormalLaw(a, G, r)
    s = np.r_[np.geomspace(1e-3, 1e4, 12) * max(abs(a), 1.0), a + G * math.exp(-1.5 * r * r) * (1 + 1e-6)]
    up = law.density_up(s)
    for x, u in zip(s, up):
        if np.isfinite(u):
            grid = [x] + list(x + np.geomspace(1e-9, 1e2, 25) * abs(x - a))
            assert u >= max(float(_dens_mp(y, a, G, r)) for y in grid)
    for x, u in zip(s, law.second_moment_above_up(s)):
        v0 = (mp.log((mp.mpf(x) - a) / G) + mp.mpf(r) ** 2 / 2) / r
        ex = mp.mpf(G) ** 2 * mp.exp(mp.mpf(r) ** 2) * mp.ncdf(2 * r - v0)
        if ex > 1e-300:
            assert ex <= u <= ex * (1 + 1e-8)


@pytest.mark.parametrize("g,s,eps,n", [(0.0409, 0.596, 5.0, 10**5), (0.98, 0.7, 9.0, 2000), (0.002, 0.45, 3.0, 10**9),
                                       (0.3, 0.45, 12.0, 50)])
def test_bennett_constants_against_quadrature(g, s, eps, n):
    # V = min(L, T0): E V in [mu_lo, mu_hi], V - E V <= b, Var V <= sig2 (E V by mpmath, Var V by quadrature)
    mp.mp.dps = 40
    gamma, law = _law(g, s, eps)
    a, G, r = law.one_term()
    T0 = _default_T0(law, gamma, n)
    mu_lo, mu_hi, sig2, b = C._moments(law, T0)
    A, Gm, R, T = map(mp.mpf, (a, G, r, T0))
    v = (mp.log((T - A) / Gm) + R * R / 2) / R
    ev = A + Gm - (Gm * mp.ncdf(R - v) - (T - A) * mp.ncdf(-v))
    assert mu_lo <= ev <= mu_hi and T - ev <= b
    X, W = _nodes([_v_of(T0, a, G, r)], width=0.125)
    V = np.minimum(_L(X, a, G, r), T0)
    assert float(np.sum(W * (V - float(ev)) ** 2)) <= sig2


# ---------------------------------------------------------------- against the FFT treatment


@pytest.mark.parametrize("g,s,n,eps", [(0.0409, 0.596, 10**6, 3), (0.01, 0.5, 10**7, 2), (0.002, 0.45, 10**7, 3),
                                       (0.3, 0.6, 10**5, 4), (0.0409, 0.596, 30000, 5)])
def test_accepted_bracket_meets_the_fft_treatments(g, s, n, eps, monkeypatch):
    gamma, law = _law(g, s, eps)
    C._MEMO.clear()
    cf = C.certify(law, gamma, n, 1e-2, far_tail.choose_T0)
    assert cf is not None
    monkeypatch.setattr(C, "certify", lambda *a, **k: None)
    fft = far_tail.certify_bigjump(law, gamma, n, 1e-3)
    assert fft.N > 0 and fft.lower > 0
    assert fft.lower <= cf.upper and cf.lower <= fft.upper
    C._MEMO.clear()


def test_memo_returns_the_fresh_value():
    gamma, law = _law(0.0409, 0.596, 6.0)
    C._MEMO.clear()
    first = C.certify(law, gamma, 10**6, 1e-2, far_tail.choose_T0)
    again = C.certify(law, gamma, 10**6, 1e-2, far_tail.choose_T0)
    fresh = C._certify(law, gamma, 10**6, 1e-2, far_tail.choose_T0)
    assert first is again and fresh == first
    raised = law.shifted(up=True)  # one ulp of a apart: its own key
    assert raised.one_term()[0] != law.one_term()[0]
    assert C.certify(raised, gamma, 10**6, 1e-2, far_tail.choose_T0).upper >= first.upper
    C._MEMO.clear()


# ---------------------------------------------------------------- robustness of the public entry points


def test_certify_refuses_a_tiny_sigma0():
    # r^2 > 709 (sigma0 < 0.0375): exp(r*r) overflowed (OverflowError) instead of refusing
    gamma, law = _law(0.3, 0.036, 5.0)
    assert C.certify(law, gamma, 10**5, 1e-2, far_tail.choose_T0) is None


def test_jump_bracket_at_gamma_one():
    # gamma = 1 divided by log(1 - gamma) = 0 in the binomial Chernoff tail (ZeroDivisionError): now not eligible
    # (no BMG law has gamma = 1 with G > 0): a ValueError, and certify returns None (the FFT treatment runs)
    with pytest.raises(ValueError, match="eligible"):
        C.jump_bracket(LognormalLaw(-50.0, 0.9, 1.6), 1.0, 1000, 100.0)
    assert C.certify(LognormalLaw(-50.0, 0.9, 1.6), 1.0, 1000, 1e-2, far_tail.choose_T0) is None
