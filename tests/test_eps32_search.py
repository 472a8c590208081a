"""Session 32 (eps32): the single-big-jump lower value of D_up (docs/accountant.md §8.12, ``accountant.jump_lower``)
and get_epsilon's check that rules out the answer 0 with it.

Checked: the lower value against D_up computed exactly (the law on a lattice, the sum's pmf by repeated convolution,
and by enumeration at small n), never above it and close to it where one big jump makes D_up; below every certified
upper value of the accountant (BMG, GaussianRandomizer, k-RR) and within 1 % of the certified lower value at the BMGs
of the regime map at n >= 1e8; get_epsilon's answers are main 15710f7's floats and the loose pass of the old check is no
longer made where the closed form decides.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sharpdp.shuffle import (BlanketMixedGaussian, FiniteLaw, GaussianRandomizer, RandomizedResponse,
                             ShuffleAccountant, clear_caches)
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.jump_lower import jump_lower, jump_lower_max
from sharpdp.shuffle.laws import laws_for

from _main_floats34 import session44_floats


def _exact_dup_lattice(k: np.ndarray, probs: np.ndarray, h: float, gamma: float, n: int) -> float:
    """D_up = E[(sum_i B_i L_i)_+] / (n gamma) for L = h k (k integers), by repeated convolution of X = B L's pmf."""
    lo = min(int(k.min()), 0)
    px = np.zeros(int(max(k.max(), 0)) - lo + 1)
    px[-lo] += 1.0 - gamma
    np.add.at(px, k - lo, gamma * probs)
    pmf, off = np.array([1.0]), 0
    for _ in range(n):
        pmf, off = np.convolve(pmf, px), off + lo
    s = (np.arange(pmf.size) + off) * h
    return float(np.sum(np.where(s > 0, s * pmf, 0.0))) / (n * gamma)


def _heavy_law(rng: np.random.Generator, top: int) -> tuple[np.ndarray, np.ndarray]:
    """Mostly -2 .. 1 (in units of h), a rare atom at ``top``: E[L] < 0, a heavy right tail."""
    k = np.array([-2, -1, 0, 1, top // 2, top])
    p = np.array([0.3, 0.4, 0.15, 0.15 - 2e-3 - 1e-4, 2e-3, 1e-4])
    p = p * rng.uniform(0.9, 1.1, p.size)
    return k, p / p.sum()


# (the last two: the shift c lies near the top atoms, where the threshold's margin costs most: measured 0.03 and 0.13 of
# D_up there, against 0.68 and 0.52 in the first two)
@pytest.mark.parametrize("n, gamma, top, close", [(50, 0.5, 120, 0.6), (200, 0.2, 150, 0.45), (400, 0.5, 300, 0.0),
                                                  (120, 0.9, 200, 0.0)])
def test_jump_lower_below_exact_dup_and_close_where_one_jump_makes_it(n, gamma, top, close):
    rng = np.random.default_rng(n + top)
    k, p = _heavy_law(rng, top)
    h = 0.5
    law = FiniteLaw(h * k, p)
    exact = _exact_dup_lattice(k, law.probs, h, gamma, n)
    low = jump_lower(law, gamma, n)
    assert 0.0 < low <= exact, (low, exact)
    assert low >= close * exact, (low, exact)


@pytest.mark.parametrize("n", [2, 3, 5])
@pytest.mark.parametrize("gamma", [0.2, 0.7, 1.0])
def test_jump_lower_below_brute_force_small_n(n, gamma):
    rng = np.random.default_rng(11 * n + int(10 * gamma))
    values = np.concatenate([rng.uniform(-3.0, -1.0, 3), rng.uniform(0.1, 6.0, 2)])
    probs = rng.dirichlet(np.ones(values.size)) * np.array([1.0, 1.0, 1.0, 0.2, 0.2])
    law = FiniteLaw(values, probs / probs.sum())
    assert float(np.sum(law.values * law.probs)) < 0.0
    atoms = [(0.0, 1.0 - gamma)] + [(v, gamma * q) for v, q in zip(law.values, law.probs)]
    total = 0.0
    for combo in itertools.product(atoms, repeat=n):
        s = math.fsum(v for v, _ in combo)
        if s > 0:
            total += s * math.prod(q for _, q in combo)
    low = jump_lower(law, gamma, n)
    assert 0.0 <= low <= total / (n * gamma)


@pytest.mark.parametrize("make, n, eps", [
    (lambda: BlanketMixedGaussian(0.008381652260123077, 0.3385914116355968, 1), 10**9, 1.0),
    (lambda: BlanketMixedGaussian(0.013286438947208885, 0.39542028612923635, 1), 10**8, 0.5),
    (lambda: BlanketMixedGaussian(0.0467, 0.619, 1), 10**6, 0.05),
    (lambda: GaussianRandomizer(0.5, 1), 10**8, 4.0),
    (lambda: RandomizedResponse(8, 2.0), 10**4, 0.2),
])
def test_jump_lower_below_certified_upper(make, n, eps):
    clear_caches()
    r = make()
    lo, up = ShuffleAccountant(r, n, rel_tol=1e-3).get_delta_bounds(eps)
    low = jump_lower_max(laws_for(r, eps, "zero_out"), n)
    assert low <= up
    if n >= 10**8 and isinstance(r, BlanketMixedGaussian):
        assert low >= 0.99 * lo  # (measured 0.9973-0.9999 on the map's BMGs)


@pytest.mark.parametrize("g, s0, n, ans", [
    (0.008381652260123077, 0.3385914116355968, 10**9, 1.9982663502787132),
    (0.011128265411935699, 0.37220511033260534, 10**9, 0.49921876303477875),
])
def test_get_epsilon_is_mains_float_without_the_loose_pass(g, s0, n, ans, monkeypatch):
    session44_floats(monkeypatch)  # (**) session 45, lead: EPS45_START_PROBE moves these answers (docs/accountant.md §8.25)
    clear_caches()
    calls = []
    orig = S.certify

    def spy(law, gamma, nn, rel, threads, mode):
        calls.append(rel)
        return orig(law, gamma, nn, rel, threads, mode)

    monkeypatch.setattr(S, "certify", spy)
    acc = ShuffleAccountant(BlanketMixedGaussian(g, s0, 1), n)
    e = acc.get_epsilon(1e-6)
    assert e == ans  # (main 15710f7's answer: regime map /tmp/map32/a.jsonl)
    assert 0.5 not in calls  # (main: one loose pass at rel_tol 0.5 at half the phase-1 root)
    assert acc.get_delta(e) <= 1e-6
