"""The closed form's tilted upper value, mgf body and tilted lower value (docs/accountant_tail.md §20, §21) against
independent references: E phi(X_m) by an exact FFT convolution (tests/test_pair21_curvature.py's reference), the mgf
and moments of V = min(L, T0) and the body E[A_+] by quadrature / FFT convolution written here, the heavy round's
values against the FFT treatment's certified bracket; and LognormalLaw.density_up below the normal range (mpmath)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate
from scipy.special import ndtr

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.accountant import concentrated as C
from sharpdp.shuffle.accountant import far_tail as F
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant import mgf as M
from sharpdp.shuffle.laws.bmg import bmg_laws
from sharpdp.shuffle.laws.lognormal import LognormalLaw
from sharpdp.shuffle.profile import privacy_profile
from sharpdp.shuffle.randomizers import BlanketMixedGaussian

from test_pair21_curvature import _exact_phi

HEAVY = (0.04089409561900239, 0.5960134902126553)


def _quad_v(law, T0, fn):
    """E fn(min(L, T0)) by quadrature over L's normal variable (the atom at T0 added)."""
    a, G, r = law.one_term()
    vT = (math.log((T0 - a) / G) + 0.5 * r * r) / r
    val, err = integrate.quad(lambda z: fn(a + G * math.exp(r * z - 0.5 * r * r)) * math.exp(-0.5 * z * z)
                              / math.sqrt(2 * math.pi), -40.0, vT, limit=400, epsabs=0.0, epsrel=1e-11,
                              points=[0.0, vT / 2])
    return val + fn(T0) * float(ndtr(-vT))


@pytest.mark.parametrize("m", [150, 300])
def test_e_phi_bracket_against_an_exact_convolution(m):
    gamma, law = bmg_laws(0.3, 0.7, 1.5, "zero_out")[0]
    T0, mm = 40.0, np.array([float(m)])
    mu_lo, mu_hi, sig2, b = C._moments(law, T0)
    mh = C._up(mm * mu_hi)
    Q = C._up(mm * sig2 + (mm * (mu_hi - mu_lo)) ** 2)
    exact = _exact_phi(law, T0, m, 8e-3)
    f_up = law.stop_loss(-mh)[1]
    tails_T = np.exp(-C._bennett_exp(Q, b, np.maximum(C._dn(-T0 - mh), 1e-300))) * (1 + 1e-12)
    up = float((f_up + C._tilted_curv(law, T0, mm, mh, Q, mu_lo, mu_hi) + law.tail_upper_bracket(T0)[1] * tails_T)[0])
    jensen = float(C._lower_m(law, T0, mm, mu_lo, mu_hi, mh, Q, b, curvature=False)[0])
    curved = float(C._lower_m(law, T0, mm, mu_lo, mu_hi, mh, Q, b, curvature=True)[0])
    tilted = float(C._lower_m(law, T0, mm, mu_lo, mu_hi, mh, Q, b, curvature=False, tilted=True)[0])
    assert up >= exact * (1 + 1e-4)  # valid, with room for the reference's discretisation (< 2e-5)
    assert jensen < curved < tilted <= exact * (1 - 1e-5)
    assert exact - tilted <= 0.05 * (exact - jensen)  # 95 % of Jensen's gap closed (§19: about a quarter)


@pytest.mark.parametrize("kap", [4e-4, 1.36e-3, -0.004])
def test_mgf_and_moments_of_v_against_quadrature(kap):
    gamma, law = bmg_laws(*HEAVY, 1.3, "zero_out")[0]
    T0 = 3222.0
    mu_lo, mu_hi = C._mean_v(law, T0)
    exact = _quad_v(law, T0, lambda x: math.expm1(kap * (x - mu_hi)) - kap * (x - mu_hi))
    h = M.mgf_h_up(law, T0, kap, mu_hi)
    assert exact <= h <= exact * 1.02
    s2l, s2u, s3l, s4u = M.v_moments(law, T0, mu_lo)
    m2, m3, m4 = (_quad_v(law, T0, lambda x, k=k: (x - mu_lo) ** k) for k in (2, 3, 4))
    assert s2l <= m2 <= s2u and s2u <= m2 * 1.01 and s2l >= m2 * 0.99
    assert s3l <= m3 and s3l >= m3 - 0.02 * abs(m3)
    assert m4 <= s4u <= m4 * 1.02


def _exact_body(law, gamma, n, T0, h):
    """E[A_+] / (n gamma), A = sum of n terms B min(L, T0), B ~ Bernoulli(gamma): FFT convolution on cells of width h
    whose mass sits at the cell's upper end (an upper reference: A is moved up by at most n h)."""
    a, G, r = law.one_term()
    k0 = int(math.floor(a / h))
    edges = h * np.arange(k0, int(math.ceil(T0 / h)) + 1, dtype=float)
    F_ = np.where(edges > a, ndtr((np.log(np.maximum(edges - a, 1e-300) / G) + 0.5 * r * r) / r), 0.0)
    mass = np.diff(F_)
    mass[-1] += 1.0 - F_[-1]
    pts = edges[1:]  # the cells' upper ends
    base = np.zeros(int(pts[-1] / h) - k0 + 1)  # offsets from k0 h
    np.add.at(base, np.rint(pts / h).astype(int) - k0, gamma * mass)
    base[-k0] += 1.0 - gamma  # B = 0: the term is 0
    size = 1 << int(math.ceil(math.log2(n * base.size)))
    pm = np.fft.irfft(np.fft.rfft(base, size) ** n, size)[: n * (base.size - 1) + 1]
    x = h * (n * k0 + np.arange(pm.size))
    return float(np.dot(np.maximum(pm, 0.0), np.maximum(x, 0.0))) / (n * gamma)


def test_body_by_the_mgf_against_an_exact_convolution():
    gamma, law = bmg_laws(0.3, 0.7, 1.0, "zero_out")[0]
    gamma, n, T0 = float(gamma), 40, 25.0
    exact = _exact_body(law, gamma, n, T0, 2e-3)
    assert abs(_exact_body(law, gamma, n, T0, 4e-3) / exact - 1) < 0.05  # (the reference's discretisation)
    bennett = C._body_up(law, gamma, n, T0)
    mgf = C._body_mgf_up(law, gamma, n, T0, C._body_lam(law, gamma, n, T0))
    assert exact * 1.05 <= mgf < bennett  # valid above the (upper) reference with its error, and tighter


@pytest.mark.parametrize("eps", [1.45, 1.6])
def test_heavy_round_closed_form_below_eps_2_against_the_fft_treatment(eps, monkeypatch):
    gamma, law = bmg_laws(*HEAVY, eps, "zero_out")[0]
    gamma = float(gamma)
    C._MEMO.clear()
    cb = C.certify(law, gamma, 10**5, 1e-2, F.choose_T0)
    C._MEMO.clear()
    assert cb is not None and cb.upper - cb.lower <= limits.CLOSED_ACCEPT * 1e-2 * cb.lower
    monkeypatch.setattr(C, "certify", lambda *a, **k: None)  # the FFT treatment alone
    fft = F.certify_bigjump(law, gamma, 10**5, 2e-3)
    assert fft.N > 0 and cb.lower <= fft.upper and cb.upper >= fft.lower
    assert cb.upper <= fft.upper * (1 + 2.5e-3)  # the certified value moves by less than the acceptance


def test_profile_sweep_value_certifies_like_a_fresh_get_delta():
    acc = ShuffleAccountant(BlanketMixedGaussian(*HEAVY, 1), 10**5)
    sweep = privacy_profile(acc, [1.45, 1.6])
    for e, d in zip([1.45, 1.6], sweep):
        C._MEMO.clear()  # (a fresh value: not the sweep's memo entry)
        lo, up = ShuffleAccountant(BlanketMixedGaussian(*HEAVY, 1), 10**5).get_delta_bounds(e)
        assert lo <= d and lo <= up and d <= lo * (1 + 1e-2) and up <= lo * (1 + 1e-2)


def test_density_up_at_least_the_density_below_the_normal_range():
    mp.mp.dps = 40
    laws = [(-7.348162003311648, 0.9591059043809976, 1.6778143723612764), (-0.75, 0.1, 0.5), (-1.2, 9.9e-4, 0.67),
            (-3.0, 1e-5, 4.0)]
    for a, G, r in laws:
        law = LognormalLaw(a, G, r)
        vs = np.linspace(35.0, 40.0, 60)
        s = np.array([a + G * float(mp.e ** (r * v - r * r / 2)) for v in vs])
        for x, u in zip(s, law.density_up(s)):
            v = (mp.log((mp.mpf(x) - a) / G) + mp.mpf(r) ** 2 / 2) / r
            assert u >= mp.npdf(v) / (mp.mpf(r) * (mp.mpf(x) - a)), (a, G, r, x)


def test_to_pld_above_get_delta_where_the_gap_condition_holds():
    """to_pld's documented claim: above get_delta(eps) wherever get_delta's bracket gap at eps is at most the cover
    factors of the samples around eps (here the brackets are nearly exact, so the condition holds at every eps)."""
    pytest.importorskip("dp_accounting")
    from sharpdp.interop.dp_accounting import to_pld
    from sharpdp.shuffle import RandomizedResponse
    from sharpdp.shuffle.profile import dominating_pair

    acc = ShuffleAccountant(RandomizedResponse(2, 1.0), 50, "replace")
    pair = dominating_pair(acc, 5e-3, progress=False)
    pld = to_pld(acc, 5e-3, progress=False)
    se = np.asarray(pair.sample_epsilons)
    sb = [acc.get_delta_bounds(float(e)) for e in se]
    sg = np.array([(u - lo) / lo if lo > 0 else np.inf for lo, u in sb])
    g = np.maximum(sg, np.maximum(np.r_[sg[1:], 0.0], np.r_[0.0, sg[:-1]]))  # the cover factors (docs §2)
    checked = 0
    for e in np.linspace(0.0, float(se[-1]) * 0.99, 60):
        lo, up = acc.get_delta_bounds(float(e))
        k = int(np.searchsorted(se, e, side="right"))
        if lo > 0 and k < se.size and (up - lo) / lo <= min(g[k - 1], g[k]):
            checked += 1
            assert pld.get_delta_for_epsilon(float(e)) >= up * (1 - 1e-12), e
    assert checked >= 40
