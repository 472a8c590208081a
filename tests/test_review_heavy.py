"""Adversarial review of the heavy-tail speedups (docs/accountant_tail.md §13, §14; LognormalLaw.cells).

Independent references only: conditional Monte Carlo (Asmussen-Kroese, written here with scipy's erfcx/ndtr,
precomputed with 2e4-2e5 samples; script in the docstrings of the constants), mpmath quadrature at n = 2,
exact convolutions of small lattice laws, mpmath cell masses / partial moments.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import ndtr

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.accountant.chernoff import Chernoff
from sharpdp.shuffle.accountant.jump import stop_loss_grid
from sharpdp.shuffle.laws.bmg import bmg_laws
from _main_floats34 import switch
from sharpdp.shuffle.laws.lognormal import LognormalLaw

HEAVY = (0.04089409561900239, 0.5960134902126553)  # the heavy round of bench/bench_composition.py

# --------------------------------------------------------------------------------------------------------------
# (1) Lemma 14 (docs/accountant_tail.md §14): the charge d P(L_1 + S_{n-1} > 0) and positive_prob_up.

# P(L_1 + S_{n-1} > 0) by conditional Monte Carlo: given K' ~ Bin(n - 1, gamma) other active users, the K' + 1 active
# values are i.i.d., so P = E[(K' + 1) Pbar(max(m, -s))], s, m the sum and maximum of K' of them (x vs bot law,
# Pbar in closed form). 3000 samples, seed 11: (mean, standard error).
POS_PROB_REF = {3.5: (6.279961136650169e-12, 6.649612311657108e-15),
                6.0: (1.1724085233711805e-17, 1.5129802870643384e-20),
                8.5: (2.744922392688802e-24, 4.213824282518337e-27)}


@pytest.mark.parametrize("eps", sorted(POS_PROB_REF))
def test_positive_prob_up_covers_conditional_mc_at_n_1e5(eps):
    # the regime where the §14 branch is taken (heavy round, n = 1e5): the bound must cover the reference
    g, law = bmg_laws(*HEAVY, eps, "zero_out")[0]
    run = law.shifted(up=True)
    r = far_tail.certify_bigjump(run, g, 10**5, 1e-2, 1)
    q = far_tail.positive_prob_up(run, g, 10**5, r)
    p, se = POS_PROB_REF[eps]
    assert q >= p + 5 * se
    assert q < 1e-6  # (non-trivial: the branch is really exercised with a small probability)


# plain Monte Carlo at small n (2e5 samples, seed 1) on laws the builder's test does not cover: the replace-one
# law (two-sided tails) and bot vs x (bounded above, heavy left tail); (gamma, sigma0, eps, n, adjacency, index)
POS_PROB_SMALL_N = [((0.3, 0.8, 1.0, 30, "replace", 0), (0.04341, 0.00045566)),
                    ((0.5, 1.0, 0.5, 10, "replace", 0), (0.11185, 0.00070477)),
                    ((0.3, 1.0, 1.0, 20, "zero_out", 1), (7e-05, 1.87e-05)),
                    ((0.5, 0.7, 0.3, 8, "zero_out", 1), (0.34014, 0.00105935))]


@pytest.mark.parametrize("case,ref", POS_PROB_SMALL_N)
def test_positive_prob_up_other_laws(case, ref):
    gamma, sigma0, eps, n, adj, i = case
    g, law = bmg_laws(gamma, sigma0, eps, adj)[i]
    r = far_tail.certify_bigjump(law, g, n, 1e-2, 1)
    q = far_tail.positive_prob_up(law, g, n, r)
    assert q >= ref[0] - 5 * ref[1]


def _spy_try_certify(monkeypatch, law, g, n):
    seen = {"ppu": 0, "runs": 0}
    ppu, cb = far_tail.positive_prob_up, far_tail.certify_bigjump

    def ppu_spy(*a, **k):
        seen["ppu"] += 1
        return ppu(*a, **k)

    def cb_spy(*a, **k):
        seen["runs"] += 1
        return cb(*a, **k)

    monkeypatch.setattr(far_tail, "positive_prob_up", ppu_spy)
    monkeypatch.setattr(far_tail, "certify_bigjump", cb_spy)
    return far_tail.try_certify(law, g, n, 1e-2, 1), seen


# D_up = E[S_+]/(n gamma) of the conditional-MC reference (Asmussen-Kroese, u = max(m, -s), inner expectation
# tau(u) + (s + u) Pbar(u) in closed form), BMG zero-out x vs bot (the only law with D_up > 0 here: gamma e^eps > 1):
# (gamma, sigma0, n, eps): (mean, standard error); 2e5 samples for the heavy round (2e4 at eps 5, 7), 4e4 at n = 1e4.
DELTA_REF = {(HEAVY[0], HEAVY[1], 100000, 3.5): (5.2216092870919036e-11, 6.9710544258956186e-15),
             (HEAVY[0], HEAVY[1], 100000, 5.0): (9.735377100021299e-14, 4.629254360788216e-17),
             (HEAVY[0], HEAVY[1], 100000, 7.0): (7.310660152106345e-18, 4.043222632304564e-21),
             (HEAVY[0], HEAVY[1], 100000, 8.5): (2.408519611965407e-21, 4.632359823812373e-25),
             (0.05, 0.5, 10000, 3.0): (4.905447200937394e-05, 2.3364697185010128e-08),
             (0.05, 0.5, 10000, 5.0): (5.015104783240596e-07, 2.7270261332337543e-10),
             (0.05, 0.5, 10000, 7.0): (2.1429181110993015e-09, 1.3905073659651603e-12),
             (0.05, 0.5, 10000, 9.0): (3.5462633876952952e-12, 2.7030812173468587e-15)}


@pytest.mark.parametrize("key", sorted(DELTA_REF))
def test_get_delta_bounds_bracket_the_reference_at_small_delta(key):
    gamma, sigma0, n, eps = key
    mu, se = DELTA_REF[key]
    lo, up = ShuffleAccountant(BlanketMixedGaussian(gamma, sigma0, 1), n, "zero_out").get_delta_bounds(eps)
    assert up >= mu - 4 * se
    assert lo <= mu + 4 * se
    assert lo > 0.0  # (the bracket is a real one: the Lemma-14 charge did not zero the lower value)


def _dup_n2_xbot(gamma, sigma0, eps, shift):
    """D_up at n = 2 of the x vs bot law moved by ``shift``: (1 - gamma) tau(0) + gamma/2 E tau(-L), mpmath."""
    mp.mp.dps = 30
    g = mp.mpf(gamma)
    r = 1 / mp.mpf(sigma0)
    a, b = g - mp.e ** mp.mpf(eps) + shift, 1 - g

    def tau(t):
        if t <= a:
            return a + b - t
        z = (mp.log((t - a) / b) + r * r / 2) / r
        return b * mp.ncdf(-(z - r)) - (t - a) * mp.ncdf(-z)

    zc = (mp.log(-2 * a / b) + r * r / 2) / r  # L(z) = -a: the kink of tau(-L(z))
    I = mp.quad(lambda z: mp.npdf(z) * tau(-(a + b * mp.e ** (r * z - r * r / 2))), [-mp.inf, -5, 0, zc, 5, 12, mp.inf])
    return float((1 - g) * tau(0) + g / 2 * I)


@pytest.mark.parametrize("c", [1e-3, 1e-5])
def test_inflated_value_error_n2_against_quadrature(monkeypatch, c):
    # a law stated with value_error c: the true law may be the stored one moved by -c or +c; the bracket must hold
    # for both (the lower value after the §12/§14 charge, the upper value of the raised law)
    g, law = bmg_laws(0.0409, 0.596, 3.0, "zero_out")[0]
    law.value_error = c
    b, seen = _spy_try_certify(monkeypatch, law, g, 2)
    assert seen["ppu"] == 1  # the §14 branch was tried
    assert b.lower <= _dup_n2_xbot(0.0409, 0.596, 3.0, -c)
    assert b.upper >= _dup_n2_xbot(0.0409, 0.596, 3.0, +c)


def test_inflated_value_error_lemma14_branch_at_n_1e5(monkeypatch):
    # heavy round, eps = 6, value error inflated 100x (4e-11): the §14 branch is taken (no second run) and the lower
    # value is still below the reference of the law moved down (within MC error: moving by 4e-11 changes D_up by
    # about 4e-11 P(S > 0 | B_1 = 1) ~ 1e-27, far below the MC error); the upper value above it
    g, law = bmg_laws(*HEAVY, 6.0, "zero_out")[0]
    law.value_error = 100 * law.value_error
    b, seen = _spy_try_certify(monkeypatch, law, g, 10**5)
    assert seen == {"ppu": 1, "runs": 1}
    lo_plain = ShuffleAccountant(BlanketMixedGaussian(*HEAVY, 1), 10**5, "zero_out").get_delta_bounds(6.0)[0]
    assert b.lower <= lo_plain  # a larger value error never raises the lower value
    assert b.lower > 0.99 * lo_plain


# Gaussian randomizer (atom + truncated lognormal laws): n = 2 by mpmath quadrature of (1 - g) tau(0) + g/2 E tau(-L)
# (closed-form tau of the atom and lognormal parts), both zero-out laws; n = 1e5 by conditional Monte Carlo of the
# x vs bot law (the only one with D_up > 0 at eps >= 2 here), 6000 samples: (mean, standard error).
GR_N2 = {(0.5, 1.0): (0.7586477964089547, 0.6791362681028217), (0.5, 3.0): (0.5861711080771683, 0.043271323463885715),
         (0.5, 6.0): (0.3043506046000813, 0.0)}
GR_MC = {(0.7, 100000, 6.0): (4.71744140862088e-07, 7.92726906869222e-11),
         (0.7, 100000, 10.0): (1.6338183038137505e-10, 3.557301923817646e-14),
         (0.7, 100000, 14.0): (8.5548301261172e-15, 2.208608411325593e-18)}


@pytest.mark.parametrize("key", sorted(GR_N2))
def test_gaussian_randomizer_n2_against_quadrature(key):
    sigma0, eps = key
    lo, up = ShuffleAccountant(GaussianRandomizer(sigma0, 1), 2, "zero_out").get_delta_bounds(eps)
    ref = max(GR_N2[key])
    assert lo <= ref * (1 + 1e-12) and up >= ref * (1 - 1e-12)


@pytest.mark.parametrize("key", sorted(GR_MC))
def test_gaussian_randomizer_large_n_against_conditional_mc(key):
    sigma0, n, eps = key
    mu, se = GR_MC[key]
    lo, up = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "zero_out").get_delta_bounds(eps)
    assert up >= mu - 4 * se and lo <= mu + 4 * se


# --------------------------------------------------------------------------------------------------------------
# (2) docs/accountant_tail.md §13: one certified log_mgf per bound, at the lam used; bounds >= exact convolution.

def _exact(p, k0, h, nn):
    q = np.array([1.0])
    for _ in range(nn):
        q = np.convolve(q, p)
    return (nn * k0 + np.arange(q.size)) * h, q


def test_chernoff_one_certified_evaluation_at_the_lam_used_and_valid(monkeypatch):
    # (**) session 36, jump36: one certified evaluation per call pinned; docs/accountant_tail.md §49.3's kept bounds
    # answer a repeated (kind, b) without one (the same float)
    switch(monkeypatch, "CHERNOFF_KEEP", False)
    rng = np.random.default_rng(3)
    for _ in range(60):
        K = int(rng.integers(2, 40))
        k0, h, nn = int(rng.integers(-30, 5)), float(2.0 ** rng.integers(-20, 20)), int(rng.integers(1, 6))
        p = rng.random(K) ** rng.choice([1, 5, 20])
        p /= p.sum()
        ch = Chernoff(p, np.zeros(K), k0, h, nn)
        lams = []
        orig = ch.log_mgf

        def rec(lam, orig=orig, lams=lams):
            v = orig(lam)
            lams.append((lam, v))
            return v

        ch.log_mgf = rec
        xs, q = _exact(p, k0, h, nn)
        for b in list(rng.choice(xs, 3)) + [xs.max() + h, xs.min() - h, 0.0, 1e300, -1e300]:
            for side, fn, ex in ((1, ch.log_p_above, q[xs >= b].sum()), (-1, ch.log_p_below, q[xs <= b].sum()),
                                 (0, ch.log_excess, float((np.maximum(xs - b, 0.0) * q).sum()))):
                lams.clear()
                v = fn(b)
                assert not math.isnan(v)
                assert len(lams) == 1  # one certified evaluation (no golden-section fallback here)
                lam, L = lams[0]
                lam = abs(lam)
                f = (-lam * b if side >= 0 else lam * b) + nn * L - (1.0 + math.log(lam) if side == 0 else 0.0)
                assert v == (min(f, 0.0) if side else f)  # the value IS the bound at the lam evaluated
                if ex > 0:
                    assert v >= math.log(ex) - 1e-12


def test_chernoff_degenerate_laws_fail_safe():
    # a single atom (zero variance), and an all-zero upper pmf (the steering's NaN -> the golden-section fallback)
    ch = Chernoff(np.array([1.0]), np.zeros(1), 3, 0.5, 4)
    assert ch.log_p_above(6.0) == 0.0 and ch.log_p_above(6.5) < -10
    assert ch.log_excess(5.0) >= math.log(1.0) - 1e-12  # E(S - 5)_+ = 1
    z = Chernoff(np.zeros(5), np.zeros(5), 0, 1.0, 3)
    for v in (z.log_p_above(1.0), z.log_p_below(1.0), z.log_excess(1.0)):
        assert not math.isnan(v)


# --------------------------------------------------------------------------------------------------------------
# (3) LognormalLaw.cells: every cell within its stated bounds (mpmath, on the cells between the computed V-edges,
# which the docstring states is what the masses are; see docs/accountant_tail.md §11.1).

def _ref_cells(law, x0, h, K):
    mp.mp.dps = 50
    a, G, S, r, wt = (mp.mpf(v) for v in (law.a, law._G, law._S, law.r, law.weight))
    x = x0 + h * np.arange(K + 1, dtype=float)
    v = law._v(x)

    def P(lo, hi):
        s2 = mp.sqrt(2)
        if lo > 0:
            return (mp.erfc(lo / s2) - mp.erfc(hi / s2)) / 2
        return (mp.erfc(-hi / s2) - mp.erfc(-lo / s2)) / 2

    out = []
    for j in range(K):
        lo = min(max(mp.mpf(v[j]), law._vlo), law._vhi)
        hi = min(max(mp.mpf(v[j + 1]), lo), law._vhi)
        m = P(lo, hi)
        EL = a * m + G * P(lo - r, hi - r) - S * P(lo + r, hi + r)
        out.append((wt * m, wt * min((EL - mp.mpf(x[j]) * m) / h, m)))
    return out


def _worst(law, x0, h, K):
    m, w, em, ew = law.cells(x0, h, K)
    worst = 0.0
    for j, (rm, rw) in enumerate(_ref_cells(law, x0, h, K)):
        for val, ref, err in ((m[j], rm, em[j]), (w[j], rw, ew[j])):
            d = abs(mp.mpf(val) - ref)
            if d > 0:
                worst = max(worst, math.inf if err <= 0 else float(d / err))
    return worst


CELL_CASES = [  # (a, b, r, b_minus, x0, h, K)
    (0.04 - math.e, 0.96, 1 / 0.596, 0.0, -2.7, 0.25, 30),  # BMG x vs bot near the bottom
    (0.04 - math.e, 0.96, 1 / 0.596, 0.0, 1e8, 1e8, 20),  # far right tail (masses ~1e-45)
    (0.04 - math.e, 0.96, 0.01, 0.0, 0.04 - math.e + 1.3, 1e-4, 20),  # sigma0 = 100, masses ~1e-203
    (0.04 - math.e, 0.96, 20.0, 0.0, 1e30, 1e30, 20),  # sigma0 = 0.05
    (-2.0, 1.0, 1.5, -2.0, -1e5, 1e3, 20),  # replace law, far left tail
    (-2.0, 1.0, 1.5, -2.0, 1e4, 1e4, 20),  # replace law, far right tail
    (1 - 0.04 * math.e, -0.96 * math.e, 1 / 0.596, 0.0, -40.0, 1.0, 20),  # bot vs x (decreasing)
]


@pytest.mark.parametrize("case", CELL_CASES)
def test_lognormal_cells_within_stated_bounds(case):
    a, b, r, bm, x0, h, K = case
    assert _worst(LognormalLaw(a, b, r, b_minus=bm), x0, h, K) <= 1.0


@pytest.mark.parametrize("weight", [1.0, 1e250])
def test_lognormal_cells_subnormal_phi(weight):
    """Review finding (fixed, docs/accountant.md §2.3): phi(v*) subnormal or 0 gave error bound 0."""
    # r = 1e-3 (sigma0 = 1000): the cells around v = 38.3 are narrow and phi(v) ~ 1e-319
    a, b, r, v0 = 0.04 - math.e, 0.96, 1e-3, 38.3
    x0, h = a + b * math.exp(r * v0 - r * r / 2), b * r * math.exp(r * v0) * 0.005
    assert _worst(LognormalLaw(a, b, r, weight=weight), x0, h, 3) <= 1.0


def test_lognormal_cells_gaussian_randomizer_small_sigma():
    s = 0.03
    g = 2 * float(ndtr(-1 / s))
    law = LognormalLaw(-math.e, g, 2 / s, 1 / s, 1 / g)
    assert _worst(law, -1.0, 0.25, 3) <= 1.0


# --------------------------------------------------------------------------------------------------------------
# stop_loss_grid (full segments by broadcasting, commit f3b8069): the bracket holds the mpmath stop-loss at every node

@pytest.mark.parametrize("case", [(0.0409, 0.596, 3.0, "zero_out", 1e4, 0.125, 300),
                                  (0.0409, 0.596, 3.0, "zero_out", 256.0, 1 / 64, 400),
                                  (0.05, 0.5, 4.0, "replace", 4096.0, 0.5, 300)])
def test_stop_loss_grid_brackets_mpmath(case):
    gamma, sigma0, eps, adj, t0, dt, k = case
    law = bmg_laws(gamma, sigma0, eps, adj)[0][1]
    lo, up = stop_loss_grid(law, t0, dt, k)
    mp.mp.dps = 30
    a, G, S, r = (mp.mpf(v) for v in (law.a, law._G, law._S, law.r))
    for j in range(k):
        t = mp.mpf(t0) + j * mp.mpf(dt)
        q = t - a
        P = (q + mp.sqrt(q * q + 4 * G * S * mp.e ** (-r * r))) / 2
        v = (mp.log(P / G) + r * r / 2) / r
        tau = G * mp.ncdf(-(v - r)) - S * mp.ncdf(-(v + r)) + (a - t) * mp.ncdf(-v)
        assert lo[j] <= tau <= up[j]
