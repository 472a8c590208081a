"""Certified FFT accountant (`docs/accountant.md`): values against independent references."""

from __future__ import annotations

import itertools
import json
import math
import pathlib

import numpy as np
import pytest
from scipy.special import gammaln, ndtr

from sharpdp.shuffle import BlanketMixedGaussian, FiniteLaw, GaussianRandomizer, ShuffleAccountant
from _main_floats34 import machine_same


# ---------------------------------------------------------------- k-RR (finite atoms)
class KRR:
    """k-ary randomized response built in the test (not part of the library yet)."""

    def __init__(self, k, eps0):
        self.k, self.eps0 = k, eps0

    def privacy_amplification_laws(self, epsilon, adjacency):
        k, e0 = self.k, math.exp(self.eps0)
        Z = e0 + k - 1
        gamma = k / Z  # uniform blanket
        ee = math.exp(epsilon)
        if adjacency == "replace":
            vals = [k * (e0 - ee) / Z, k * (1 - ee * e0) / Z, k * (1 - ee) / Z]
            probs = [1 / k, 1 / k, (k - 2) / k]
        else:
            raise NotImplementedError
        law = FiniteLaw(vals, probs)
        return [(gamma, law), (gamma, law)]


def brute_force(vals, probs, gamma, n):
    """E[(sum_i B_i L_i)_+]/(n gamma) by summing over multinomial counts (atoms + the 0 atom)."""
    vals = list(vals) + [0.0]
    p = [gamma * q for q in probs] + [1.0 - gamma]
    lp = np.log(p)
    tot = 0.0
    m = len(vals)
    for counts in itertools.product(range(n + 1), repeat=m - 1):
        c_last = n - sum(counts)
        if c_last < 0:
            continue
        c = list(counts) + [c_last]
        s = sum(ci * vi for ci, vi in zip(c, vals))
        if s > 0:
            lw = gammaln(n + 1) - sum(gammaln(ci + 1) for ci in c) + sum(ci * l for ci, l in zip(c, lp))
            tot += math.exp(lw) * s
    return tot / (n * gamma)


def test_krr_reference_table(krr_replace_row):
    # exact D_up from multinomial sums (tests/data/krr_replace_reference.json)
    k, eps0, eps, n, exact = (krr_replace_row[c] for c in ("k", "epsilon0", "epsilon", "n", "delta"))
    acc = ShuffleAccountant(KRR(k, eps0), n, "replace")
    lo, up = acc.get_delta_bounds(eps)
    assert lo <= exact * (1 + 1e-6) and up >= exact * (1 - 1e-6)  # table has 7 digits
    assert up <= exact * 1.01
    assert acc.get_delta(eps) == up


@pytest.mark.parametrize("k,eps0,eps,n", [(3, 1.0, 0.3, 12), (4, 1.5, 0.2, 9), (3, 0.5, 0.0, 15)])
def test_krr_brute_force_small_n(k, eps0, eps, n):
    krr = KRR(k, eps0)
    gamma, law = krr.privacy_amplification_laws(eps, "replace")[0]
    exact = brute_force(law.values, law.probs, gamma, n)
    lo, up = ShuffleAccountant(krr, n, "replace").get_delta_bounds(eps)
    assert lo <= exact * (1 + 1e-12) <= up * (1 + 1e-12)
    assert up <= exact * 1.01


def test_n_equals_one_is_direct_expectation():
    krr = KRR(3, 1.0)
    gamma, law = krr.privacy_amplification_laws(0.2, "replace")[0]
    exact = float(np.dot(np.maximum(law.values, 0), law.probs))  # E[(G)_+]/gamma = E[L_+]
    lo, up = ShuffleAccountant(krr, 1, "replace").get_delta_bounds(0.2)
    assert lo <= exact <= up <= exact * 1.01
    # BMG at n = 1: E[L_+] for x vs bot in closed form (Black-Scholes), max with bot vs x.
    g, s, eps = 0.5, 1.0, 0.3
    r, ee = 1 / s, math.exp(eps)
    K = (ee - g) / (1 - g)  # (1-g)(X - K)_+
    z = (math.log(K) + r * r / 2) / r
    xb = (1 - g) * (ndtr(r - z) - K * ndtr(-z))
    K2 = (1 - ee * g) / (ee * (1 - g))  # e^eps (1-g) (K2 - X)_+
    z2 = (math.log(K2) + r * r / 2) / r
    bx = ee * (1 - g) * (K2 * ndtr(z2) - ndtr(z2 - r))
    exact = max(xb, bx)
    lo, up = ShuffleAccountant(BlanketMixedGaussian(g, s, 1), 1).get_delta_bounds(eps)
    assert lo <= exact <= up <= exact * 1.01


# ---------------------------------------------------------------- BMG vs independent numerics
def reference_delta(l_vals, l_w, gamma, n, h):
    """Independent reference: hat-rounded per-user law on a fine grid, numpy FFT power, no tilt.

    ``(l_vals, l_w)`` is a quadrature of the law of L (weights summing to ~1)."""
    lo_v = min(l_vals.min(), 0.0)
    idx = (l_vals - lo_v) / h
    j = np.floor(idx).astype(np.int64)
    f = idx - j
    K = int(j.max()) + 2
    psi = np.bincount(j, l_w * (1 - f), K) + np.bincount(j + 1, l_w * f, K)
    k0 = int(round(-lo_v / h))  # lo_v is a multiple of h only when 0; handle offset exactly
    off = lo_v - (-k0 * h)
    g = gamma * psi
    x = lo_v + h * np.arange(K)
    mean = float(np.dot(g, x)) + (1 - gamma) * 0.0
    var = float(np.dot(g, x * x)) - mean**2
    # the 0 atom sits on the grid only if lo_v/h is an integer: shift the grid to make it so
    assert abs(off) < 1e-9 * h or lo_v == 0.0
    g[k0] += 1 - gamma
    mean_s, sd_s = n * mean, math.sqrt(n * var)
    span_lo = mean_s - 14 * sd_s
    span_hi = max(mean_s + 14 * sd_s, 14 * sd_s)
    N = int(2 ** math.ceil(math.log2((span_hi - span_lo) / h + K)))
    a = np.zeros(N)
    a[:K] = g
    q = np.fft.irfft(np.fft.rfft(a) ** n, N)
    base = n * lo_v
    r = np.arange(N)
    wraps = np.ceil((span_lo - base - h * r) / (N * h))
    s_vals = base + h * (r + N * wraps)  # the value of each position inside the window
    return float(np.sum(np.maximum(s_vals, 0) * q)) / (n * gamma)


def bmg_quadrature(gamma, sigma0, eps, order):
    dz = 2e-4
    z = np.arange(-12, 12, dz) + dz / 2
    w = np.exp(-z * z / 2) / math.sqrt(2 * math.pi) * dz
    r = 1 / sigma0
    X = np.exp(r * z - r * r / 2)
    ee = math.exp(eps)
    lv = gamma + (1 - gamma) * X - ee if order == 0 else 1 - ee * (gamma + (1 - gamma) * X)
    return lv, w / w.sum()


def _stop_loss(v, w, ts):
    """E[(V - t)_+] = sum over the atoms above t of w (v - t), for every t in ``ts`` at once
    (suffix sums over the sorted atoms; one pass instead of one pass per t)."""
    order = np.argsort(v, kind="stable")
    vs, ws = v[order], w[order]
    s0 = np.append(np.cumsum(ws[::-1])[::-1], 0.0)
    s1 = np.append(np.cumsum((ws * vs)[::-1])[::-1], 0.0)
    i = np.searchsorted(vs, ts, side="right")
    return np.maximum(s1[i] - ts * s0[i], 0.0)


def clamped_reference(lv, w, gamma, n, div=400):
    """Reference bracket (lo, up): L clamped to [-B, T] (clamping below only raises the value,
    clamping above lowers it by at most E[(L - T)_+]; `docs/accountant.md` §3.1), then :func:`reference_delta`."""
    sd = math.sqrt(np.dot(w, lv * lv) - np.dot(w, lv) ** 2)
    cs = np.geomspace(6.0, 1e7, 400)
    tl = _stop_loss(-lv, w, cs * sd)  # E[(-L - c sd)_+]
    tu = _stop_loss(lv, w, cs * sd)  # E[(L - c sd)_+]
    B = next((c * sd for c, t in zip(cs, tl) if t <= 1e-13), -lv.min())
    T = next((c * sd for c, t in zip(cs, tu) if t <= 1e-13), lv.max())
    tail_lo = float(np.dot(w, np.maximum(-B - lv, 0)))
    tail_up = float(np.dot(w, np.maximum(lv - T, 0)))
    lv = np.clip(lv, -B, T)
    h = sd / div
    lmin = math.floor(lv.min() / h) * h
    val = reference_delta(np.concatenate([[lmin], lv]), np.concatenate([[0.0], w]), gamma, n, h)
    return val - tail_lo, val + tail_up


@pytest.mark.parametrize("gamma,sigma0,n,eps", [
    (0.9, 3.0, 10, 0.02), (0.9, 3.0, 30, 0.025), (0.7, 1.5, 100, 0.1), (0.95, 4.6, 300, 0.002),
    (0.8, 2.0, 30, 0.08), (0.95, 4.6, 100, 0.003),
])
def test_bmg_against_reference_convolution(gamma, sigma0, n, eps):
    m = BlanketMixedGaussian(gamma, sigma0, 1)
    lo, up = ShuffleAccountant(m, n).get_delta_bounds(eps)
    brackets = [clamped_reference(*bmg_quadrature(gamma, sigma0, eps, order), gamma, n) for order in (0, 1)]
    ref_lo, ref_up = max(b[0] for b in brackets), max(b[1] for b in brackets)
    assert 1e-7 < ref_lo <= ref_up < 0.1
    assert up >= ref_lo * (1 - 1e-3)  # reference error (hat bias, quadrature) well below 1e-3
    assert up <= ref_up * 1.01
    assert lo <= ref_up * (1 + 1e-3)


@pytest.mark.parametrize("gamma,sigma0,n,eps", [
    (0.9, 3.0, 30, 0.025), (0.7, 1.5, 100, 0.1), (0.95, 4.6, 300, 0.0012), (0.6232, 1.5868, 300, 0.06),
])
def test_lower_value_per_order_below_reference(gamma, sigma0, n, eps):
    """The convex-order lower value of each order of the pair is below that order's independent
    reference, and tight (within 1%): step H of the module docstring."""
    from sharpdp.shuffle.laws import laws_for
    from sharpdp.shuffle.accountant.plain import certify_law

    pairs = laws_for(BlanketMixedGaussian(gamma, sigma0, 1), eps, "zero_out")
    for order, (g, law) in enumerate(pairs):
        ref_lo, ref_up = clamped_reference(*bmg_quadrature(gamma, sigma0, eps, order), gamma, n)
        r = certify_law(law, g, n, 1e-2, 1)
        assert ref_lo > 1e-9
        assert r.lower <= ref_up * (1 + 1e-4)
        assert r.upper >= ref_lo * (1 - 1e-4)
        assert r.lower >= 0.99 * ref_lo


@pytest.mark.parametrize("gamma,sigma0,n,eps", [
    (0.95, 4.6, 10**6, 1.106e-5), (0.95, 4.6, 10**8, 0.0),
    (0.6232, 1.5868, 10**6, 7.935e-4), (0.6232, 1.5868, 10**8, 5.035e-5),
])
def test_default_accuracy_reached_at_large_n(gamma, sigma0, n, eps):
    rep = ShuffleAccountant(BlanketMixedGaussian(gamma, sigma0, 1), n).report(eps)
    assert 1e-7 < rep.lower <= rep.upper < 1e-5
    assert rep.upper - rep.lower <= 1e-2 * rep.lower


BMG_MC_CASES = [(0.9, 3.0, 10, 0.02), (0.6, 1.2, 30, 0.3)]


def bmg_mc(gamma, sigma0, n, eps):
    """[(mean, se)] of plain Monte Carlo (10^6 replications, seed 12345) of D_up for each order of the BMG pair,
    from the likelihood ratios (no library code)."""
    rng = np.random.default_rng(12345)
    reps = 1_000_000
    r, ee = 1 / sigma0, math.exp(eps)
    vals = []
    for order in (0, 1):
        tot = np.zeros(reps)
        for _ in range(n):
            B = rng.random(reps) < gamma
            X = np.exp(r * rng.standard_normal(reps) - r * r / 2)
            L = gamma + (1 - gamma) * X - ee if order == 0 else 1 - ee * (gamma + (1 - gamma) * X)
            tot += np.where(B, L, 0.0)
        y = np.maximum(tot, 0) / (n * gamma)
        vals.append([float(y.mean()), float(y.std() / math.sqrt(reps))])
    return vals


@pytest.mark.parametrize("gamma,sigma0,n,eps", BMG_MC_CASES)
def test_bmg_monte_carlo(gamma, sigma0, n, eps):
    # the n = 30 reference (~1 s of CPU) is stored (tests/data/make_bmg_mc_reference.py); the n = 10 one is
    # computed here and must equal its stored value (the store is current)
    stored = json.loads((pathlib.Path(__file__).resolve().parent / "data" / "bmg_mc_reference.json").read_text())
    vals = stored[repr((gamma, sigma0, n, eps))]
    if n == 10:
        assert machine_same(bmg_mc(gamma, sigma0, n, eps), vals)  # (**) session 42, lead: MACHINE_REL (the store from another CPU)
    lo, up = ShuffleAccountant(BlanketMixedGaussian(gamma, sigma0, 1), n).get_delta_bounds(eps)
    mc, se = max(vals)
    assert mc > 20 * se  # the CI is informative
    assert lo - 5 * se <= mc <= up + 5 * se


# ---------------------------------------------------------------- gamma = 0 Gaussian, dim 1
def test_gaussian_randomizer_against_quadrature_convolution():
    s, n, eps = 3.0, 20, 0.3
    gG = 2 * ndtr(-1 / s)
    dy = 2e-4
    y = np.arange(-1 - 12 * s, 1 + 12 * s, dy) + dy / 2
    phi = lambda t: np.exp(-t * t / (2 * s * s)) / (s * math.sqrt(2 * math.pi))  # noqa: E731
    low = phi(np.abs(y) + 1)
    wBG = low / gG * dy
    wBG /= wBG.sum()
    R1 = phi(y - 1)
    ee = math.exp(eps)
    keep = wBG > 1e-300
    brackets = [clamped_reference(lv[keep], wBG[keep], gG, n) for lv in (gG * R1 / low - ee, 1 - ee * gG * R1 / low)]
    ref_lo, ref_up = max(b[0] for b in brackets), max(b[1] for b in brackets)
    lo, up = ShuffleAccountant(GaussianRandomizer(s, 1), n).get_delta_bounds(eps)
    assert 1e-7 < ref_lo <= ref_up < 0.1
    assert lo <= ref_up * (1 + 1e-3) and up >= ref_lo * (1 - 1e-3)
    assert up <= ref_up * 1.01


def test_gaussian_randomizer_dim_error():
    with pytest.raises(ValueError, match="dim"):
        ShuffleAccountant(GaussianRandomizer(1.0, 2), 100)


def test_gaussian_randomizer_replace_goes_through_bot():
    acc = ShuffleAccountant(GaussianRandomizer(2.0, 1), 100, "replace")
    assert acc.via_bottom and acc.report(0.3).terms["via_bottom"]
    assert not ShuffleAccountant(GaussianRandomizer(2.0, 1), 100).via_bottom
