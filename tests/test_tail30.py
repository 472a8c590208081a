"""Session 30's far-tail rules (docs/accountant_tail.md §34): the saddle-point estimate of the skip test (§34.1,
against exact sums; the rounds against those of before), the rounding charge's splits (§34.2: every split a valid
bound against Monte Carlo, the least no larger than §14's), the body pass's cheap run with an absolute allowance
(§34.3: within its stated cost of the accurate run, and off where the allowance is 0), and the jump term's certain
rejections (§34.4: the same floats as the cheap run first; the floor's cap above the floor)."""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import numpy as np
import pytest
from scipy import stats

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer
from sharpdp.shuffle.accountant import far_tail, far_tail_shift, fft, jump, lattice
from sharpdp.shuffle.accountant.chernoff import saddle_excess_estimate
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.laws.bmg import bmg_laws

from test_rep25_far_tail_settle import _passes as _spy  # (the spy on far_tail.lattice_pass: (h, T0, B) per pass)
from _main_floats34 import switch  # noqa: E402

FIELDS = ("lower", "upper", "T0", "h", "B", "N", "multi", "body_up", "body_lo", "penalty_B")


def _law(rz, eps: float, i: int):
    gamma, law = laws_for(rz, eps, "zero_out")[i]
    return float(gamma), law.shifted(up=True)


def _exact_excess(g: np.ndarray, k0: int, h: float, nn: int, b: float) -> float:
    """E[(S - b)_+] of the nn-fold sum of the lattice pmf g on (k0 + k) h, by repeated convolution."""
    p = np.array([1.0])
    for _ in range(nn):
        p = np.convolve(p, g)
    x = (nn * k0 + np.arange(p.size)) * h
    return float(np.sum(np.maximum(x - b, 0.0) * p))


def _skewed(kind: str):
    """(pmf, k0, h): an atom-and-geometric-tail law (mean -0.1), or a shifted exponential on a finer lattice (mean -1)."""
    if kind == "geometric":
        g = np.array([0.2, 0.1, 0.55] + [0.15 * 0.5**j * 0.5 for j in range(40)])
        return g / g.sum(), -2, 0.5
    x = (-20 + np.arange(200)) * 0.1
    g = np.where(x >= -2.0, np.exp(-(x + 2.0)), 0.0)
    return g / g.sum(), -20, 0.1


@pytest.mark.parametrize("kind,nn,b", [("geometric", 60, 0.0), ("geometric", 200, 0.0), ("geometric", 200, 5.0),
                                       ("geometric", 120, -3.0), ("exponential", 30, 0.0), ("exponential", 60, 0.0),
                                       ("exponential", 60, -30.0), ("exponential", 60, -50.0)])
def test_saddle_estimate_against_exact_sums(kind, nn, b):
    """§34.1: the estimate of E[(S - b)_+] for skewed lattice laws within 7 % of the exact sum (measured 2-6 %: the
    normal law under the tilt misses the sum's skewness, O(1/sqrt(n))), also 10 sd out in the tail (2e-10), where the
    normal approximation is off by orders of magnitude; always closer than the normal approximation."""
    g, k0, h = _skewed(kind)
    exact = _exact_excess(g, k0, h, nn, b)
    est = saddle_excess_estimate(g, k0, h, nn, b)
    assert exact > 0 and abs(est / exact - 1.0) < 0.07, (est, exact)
    x = (k0 + np.arange(g.size)) * h
    mu, var = float(np.sum(g * x)), float(np.sum(g * x * x) - np.sum(g * x) ** 2)
    m, s = nn * mu, math.sqrt(nn * var)
    z = (m - b) / s
    normal = s * stats.norm.pdf(z) + (m - b) * stats.norm.cdf(z)
    assert abs(est / exact - 1.0) < abs(normal / exact - 1.0)


def test_saddle_estimate_is_the_normal_value_at_zero_tilt():
    """A symmetric law with mean 0: the root is lam = 0 and the estimate is sd / sqrt(2 pi), the normal value."""
    g = np.array([0.25, 0.5, 0.25])
    est = saddle_excess_estimate(g, -1, 1.0, 50, 0.0)
    assert est == pytest.approx(math.sqrt(50 * 0.5) / math.sqrt(2 * math.pi), rel=1e-12)
    assert math.isnan(saddle_excess_estimate(np.array([1.0]), 0, 1.0, 10, 0.0))  # (a point mass: no root)


# (randomizer, eps, law 0's upper value: the caller's maximum): the cells where §33.4's normal estimate skipped a
# round that sufficed (its upper value below the maximum) and §34.1 keeps it
KEPT = [(GaussianRandomizer(1.0, 1), 0.001, 2.3714525223869354e-3),
        (BlanketMixedGaussian(0.027018718327855053, 0.5082412099806768, 1), 0.01, 1.1218066503766385e-2),
        (GaussianRandomizer(1.0, 1), 0.01, 3.2477348157728043e-4)]


@pytest.mark.parametrize("rz,eps,neg", KEPT)
def test_skip_test_keeps_the_round_that_suffices(monkeypatch, rz, eps, neg):
    """§34.1: the bounded law's rounds and every field are those of skip_rounds=False (one round, its upper value
    below the caller's maximum), where §33.4's test alone (the saddle estimate switched off) skipped that round."""
    gamma, law = _law(rz, eps, 1)
    seen = _spy(monkeypatch)
    off = far_tail.certify_bigjump(law, gamma, 10**6, 1e-2, 1, negligible=neg, skip_rounds=False)
    p_off = list(seen)
    seen.clear()
    on = far_tail.certify_bigjump(law, gamma, 10**6, 1e-2, 1, negligible=neg)
    assert seen == p_off and len({p[2] for p in p_off}) == 1 and off.upper < neg
    for f in FIELDS:
        assert getattr(on, f) == getattr(off, f), f
    seen.clear()
    monkeypatch.setattr(far_tail, "saddle_excess_estimate", lambda *a, **k: math.inf)  # §33.4's test alone
    far_tail.certify_bigjump(law, gamma, 10**6, 1e-2, 1, negligible=neg)
    assert [p[2] for p in seen] == [4.0 * p_off[0][2]]


def test_skip_test_still_skips_where_the_redo_is_certain(monkeypatch):
    """§34.1 keeps §33.4's skip where the narrow round would have been redone (GaussianRandomizer(2), n = 1e6,
    eps = 0.001: B = 27 skipped), with the fields of skip_rounds=False."""
    gamma, law = _law(GaussianRandomizer(2.0, 1), 0.001, 1)
    seen = _spy(monkeypatch)
    off = far_tail.certify_bigjump(law, gamma, 10**6, 1e-2, 1, negligible=1.108089745389228e-4, skip_rounds=False)
    assert sorted({p[2] for p in seen}) == [27.0, 108.0]
    seen.clear()
    on = far_tail.certify_bigjump(law, gamma, 10**6, 1e-2, 1, negligible=1.108089745389228e-4)
    assert {p[2] for p in seen} == {108.0}
    for f in FIELDS:
        assert getattr(on, f) == getattr(off, f), f


# --------------------------------------------------------------------------- §34.2
def _one_split(monkeypatch, split):
    monkeypatch.setattr(far_tail_shift, "SPLITS", (split,))


@pytest.mark.parametrize("split", far_tail_shift.SPLITS)
def test_every_split_bounds_the_probability(monkeypatch, split):
    """§34.2: each split's bound alone is >= the Monte Carlo estimate of P(L_1 + S_{n-1} > 0) plus 5 standard errors
    (BMG x vs bot, n = 40: the bound is not trivial for the small splits)."""
    gamma, sigma0, eps, n = 0.3, 1.0, 1.0, 40
    g, law = bmg_laws(gamma, sigma0, eps, "zero_out")[0]
    r = far_tail.certify_bigjump(law, g, n, 1e-2, 1)
    _one_split(monkeypatch, split)
    q = far_tail.positive_prob_up(law, g, n, r)
    rng = np.random.default_rng(11)
    M = 200_000
    s = np.zeros(M)
    for j in range(n):
        x = law.a + law.b * np.exp(rng.standard_normal(M) / sigma0 - 0.5 / sigma0**2)
        s += x if j == 0 else x * (rng.random(M) < g)
    p = float(np.mean(s > 0))
    assert 0.0 < p < 1.0
    assert q >= p - 5.0 * math.sqrt(p * (1 - p) / M)


def test_splits_least_bound_and_the_first_split(monkeypatch):
    """§34.2 at GaussianRandomizer(2), n = 1e6, eps = 0.01 (x vs bot, the raised law): the first split gives §14's
    expression (t = |m|/2, y = |m|/4) bit for bit, the least bound is below 1e-10 (§14's: ~0.08), a target stops
    the search at the first split reaching it."""
    gamma, law = _law(GaussianRandomizer(2.0, 1), 0.01, 0)
    n = 10**6
    r = far_tail.certify_bigjump(law, gamma, n, 1e-2, 1)
    m = (n - 1) * gamma * law.mean()
    t, y = 0.5 * abs(m), 0.25 * abs(m)
    from sharpdp.shuffle.accountant.chernoff import Chernoff, capped_exp

    ch = Chernoff(r.hat.g, r.hat.eta, r.hat.k0, r.h, n - 1)
    pT, pTy = (float(v) for v in law.prob_above_up([r.T0, r.T0 + y]))
    old = min((float(law.prob_above_up([t])[0]) + capped_exp(ch.log_p_above(-t - y))
               + (n - 1) * gamma * pTy + ((n - 1) * gamma * pT) ** 2 / 2.0) * (1 + 1e-9), 1.0)
    best = far_tail.positive_prob_up(law, gamma, n, r)
    assert old > 1e-3 and best < 1e-10
    assert far_tail.positive_prob_up(law, gamma, n, r, target=1.0) == old  # (stops at the first split)
    _one_split(monkeypatch, far_tail_shift.SPLITS[0])
    assert far_tail.positive_prob_up(law, gamma, n, r) == old


def test_rounding_charge_without_the_second_run():
    """§34.2: the cell's lower value is the raised run's minus d P (no second run), below the lowered law's upper
    value and within 1e-3 rel_tol of the raised run's lower value."""
    rz, n = GaussianRandomizer(2.0, 1), 10**6
    gamma, law = laws_for(rz, 0.01, "zero_out")[0]
    gamma = float(gamma)
    b = far_tail.try_certify(law, gamma, n, 1e-2, 1)
    raised = far_tail.certify_bigjump(law.shifted(up=True), gamma, n, 1e-2, 1)
    lowered = far_tail.certify_bigjump(law.shifted(up=False), gamma, n, 1e-2, 1)
    assert raised.lower * (1 - 1e-5) <= b.lower < raised.lower
    assert b.lower <= lowered.upper and b.upper == raised.upper


# --------------------------------------------------------------------------- §34.3
BMG100 = (0.051057210686144563, 0.5666966712607993, 100, 8.0)  # the regime map's BMG cell n = 100, eps = 8


def test_cheap_body_with_allowance_within_its_cost():
    """§34.3: the body pass at the jump term's step with the allowance A keeps both engines' cheap runs; its values
    are within 2 (0.01 rel_tol body + A) (and the summation terms) of the accurate run's, and the two certified
    brackets intersect."""
    gamma_, sigma0, n, eps = BMG100
    g, law = bmg_laws(gamma_, sigma0, eps, "zero_out")[0]
    run = law.shifted(up=True)
    r = far_tail.certify_bigjump(run, g, n, 1e-2, 1)
    A = far_tail.CHEAP_SHARE * 1e-2 * r.jump.lo  # (the engine keeps a cheap run within CHEAP_POWER (rel_tol E + A))
    assert r.body is not None and r.body.main < 1e-2 * r.jump.lo  # (the body: a tiny share of the value)
    p0 = lattice.lattice_pass(run, g, n, r.h, r.T0, r.B, 1e-2, 1, True, lat=r.hat)
    pa = lattice.lattice_pass(run, g, n, r.h, r.T0, r.B, 1e-2, 1, True, lat=r.hat, allow=A)
    assert pa.main != p0.main  # (the cheap runs were kept)
    cost = 2.0 * 0.01 * (1e-2 * p0.main + A) * 1.01
    assert abs(pa.main - p0.main) <= cost
    lo0, loa = far_tail._body_lower(p0), far_tail._body_lower(pa)
    assert abs(loa - lo0) <= cost
    assert max(lo0, loa) <= min(p0.main, pa.main)


def test_cheap_body_allowance_off_gives_the_floats_of_before(monkeypatch):
    """§34.3: CHEAP_SHARE = 0 gives the bracket of before the rule (the regime map's cell, with §34.2's charge), and
    the rule's bracket intersects it and meets rel_tol."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    from sharpdp.shuffle import ShuffleAccountant

    gamma_, sigma0, n, eps = BMG100
    rz = BlanketMixedGaussian(gamma_, sigma0, 1)
    lo, up = ShuffleAccountant(rz, n).get_delta_bounds(eps)
    switch(monkeypatch, "JUMP_HAT_FIRST", False)  # (**) session 36, jump36: pins main's floats; §49's values: test_jump36_hat_first.py
    switch(monkeypatch, "STOP_LOSS_OCTAVES", False)  # (**) session 36, jump36
    switch(monkeypatch, "HAT_DENSITY", False)  # (**) session 39, hat39: §55 raises this lower value by 2e-13 relative
    monkeypatch.setattr(far_tail, "CHEAP_SHARE", 0.0)
    lo0, up0 = ShuffleAccountant(rz, n).get_delta_bounds(eps)
    assert (lo0, up0) == (8.939607417946165e-07, 8.940107688299075e-07)
    assert lo <= up0 and lo0 <= up and up - lo <= 1e-2 * lo
    assert (lo, up) != (lo0, up0)


# --------------------------------------------------------------------------- §34.4
@pytest.mark.parametrize("sigma0,n,eps", [(0.5, 10**6, 0.1), (0.5, 100, 8.0)])
def test_jump_term_same_floats_as_the_cheap_run_first(monkeypatch, sigma0, n, eps):
    """§34.4: the jump term equals, bit for bit, the one computed with the cheap run always tried first (no floor,
    no certain rejection: `small` alone decides), and the one with the floor always computed (§31.1's rule alone
    where the value's bound does not fire)."""
    gamma, law = _law(GaussianRandomizer(sigma0, 1), eps, 0)
    r = far_tail.certify_bigjump(law, gamma, n, 1e-2, 1)
    args = (law, gamma, n, r.hat, r.h, r.T0, 1e-2, float(law.stop_loss([max(-(n - 1) * gamma * law.mean(), 0)])[0][0]),
            1)
    new = jump.jump_term(*args)
    monkeypatch.setattr(jump, "cheap_err_cap", lambda *a, **k: math.inf)
    capped = jump.jump_term(*args)
    monkeypatch.setattr(jump, "cheap_err_cap", lambda *a, **k: 0.0)
    monkeypatch.setattr(jump, "cheap_err_floor", lambda *a, **k: 0.0)
    first = jump.jump_term(*args)
    assert (new.up, new.lo, new.N) == (first.up, first.lo, first.N) == (capped.up, capped.lo, capped.N)


@pytest.mark.parametrize("n,size,atom", [(2, 50, 0.0), (100, 3000, 0.95), (10**6, 4000, 0.6), (10**4, 200, 0.0)])
def test_floor_cap_is_above_the_floor(n, size, atom):
    """§34.4 (b): cheap_err_cap >= cheap_err_floor on random non-negative pmfs (with and without an atom)."""
    rng = np.random.default_rng(size)
    p = rng.random(size) ** 4
    p = (1.0 - atom) * p / p.sum()
    p[0] += atom
    part = fft.Part(p, n)
    N = fft.next_fast_len_real(4 * size)
    sp: dict = {}
    assert fft.cheap_err_cap(part, N, sp) >= fft.cheap_err_floor(part, N, 1, sp) > 0.0
