"""The few-user bracket's terms j >= 2 by the pairs' form and the one-user-jump upper form on laws not bounded below
(docs/accountant.md §8.17, ``limits.FEW_PAIR_SPLIT``, ``limits.FEW_OPEN_JUMP``), against
independent references: E[(S_k)_+] and D_up by exact enumeration of finite laws, Monte Carlo of laws unbounded on
both sides, and the mpmath reference of
BlanketMixedGaussian(0.0222, 0.582, 1), n = 5, replace, eps = 15.11 (tests/test_review_rev38_fewuser_bmg.py)."""

from __future__ import annotations

from math import comb

import mpmath as mp
import numpy as np
import pytest

from _main_floats34 import switch
from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant.closed_forms import pair_split_upper, small_n_bracket
from sharpdp.shuffle.laws.finite import FiniteLaw


def _sum_law(values, probs, k):
    """The exact law of S_k (a dict value -> probability, mpmath sums) by k-fold convolution."""
    d = {mp.mpf(0): mp.mpf(1)}
    for _ in range(k):
        e: dict = {}
        for s, p in d.items():
            for v, q in zip(values, probs):
                t = s + mp.mpf(float(v))
                e[t] = e.get(t, mp.mpf(0)) + p * mp.mpf(float(q))
        d = e
    return d


def _e_plus_sum(values, probs, k):
    """E[(S_k)_+] exactly (40 digits)."""
    with mp.workdps(40):
        return float(mp.fsum(s * p for s, p in _sum_law(values, probs, k).items() if s > 0))


def _exact_dup(values, probs, gamma, n):
    """D_up = sum_j C(n-1, j) gamma^j (1-gamma)^(n-1-j) E[(S_{j+1})_+] / (j + 1) by enumeration (docs/accountant.md §6.8)."""
    with mp.workdps(40):
        g = mp.mpf(gamma)
        return float(mp.fsum(comb(n - 1, j) * g ** j * (1 - g) ** (n - 1 - j) * _e_plus_sum(values, probs, j + 1)
                             / (j + 1) for j in range(n)))


def _law(seed):
    """Random finite laws: a spread-out negative bulk with rare positive atoms (the pairs' form binds), or any law."""
    rng = np.random.default_rng(seed)
    if seed % 2 == 0:
        values = np.concatenate([-10.0 ** rng.uniform(0, 3, 3), 10.0 ** rng.uniform(-1, 2, 2)])
        probs = np.concatenate([rng.dirichlet(np.ones(3)) * (1 - 10 ** rng.uniform(-3, -1)), [0.0, 0.0]])
        probs[3:] = (1 - probs[:3].sum()) * rng.dirichlet(np.ones(2))
    else:
        values = rng.normal(0.0, 1.0, 4)
        probs = rng.dirichlet(np.ones(4))
    return FiniteLaw(values, probs / probs.sum())


@pytest.mark.parametrize("seed", range(8))
def test_pairs_form_bounds_the_enumerated_terms(seed):
    """E[(S_k)_+] / k <= (floor(k/2) E[(L1+L2)_+] + (k mod 2) E[L_+]) / k for k = 2..7, exact values put in."""
    law = _law(seed)
    e0 = _e_plus_sum(law.values, law.probs, 1)
    u1 = _e_plus_sum(law.values, law.probs, 2) / 2
    for k in range(2, 8 if law.values.size <= 4 else 7):
        exact = _e_plus_sum(law.values, law.probs, k) / k
        bound = float(pair_split_upper(np.array([k - 1]), u1, e0)[0])
        assert exact <= bound * (1 + 1e-12), (seed, k, exact, bound)
        assert bound <= max(e0, u1) * (1 + 1e-9)  # (never above the trivial term bracket where u1 <= E[L_+])


@pytest.mark.parametrize("seed", range(8))
def test_bracket_contains_enumeration_and_nests_in_mains(seed, monkeypatch):
    """The few-user bracket with the rule on holds D_up (exact enumeration, n = 3..6) and lies inside main's."""
    law = _law(seed)
    rng = np.random.default_rng(100 + seed)
    for n in (3, 4, 5) if law.values.size > 4 else (3, 5, 6):
        gamma = float(rng.uniform(0.05, 0.9))
        for rel_tol in (None, 1e-2, 1e-3):
            switch(monkeypatch, "FEW_PAIR_SPLIT", False)
            main = small_n_bracket(law, gamma, n, rel_tol)
            switch(monkeypatch, "FEW_PAIR_SPLIT", True)
            lo, up = small_n_bracket(law, gamma, n, rel_tol)
            ref = _exact_dup(law.values, law.probs, gamma, n)
            assert lo <= ref * (1 + 1e-9) and ref <= up * (1 + 1e-9), (seed, n, rel_tol, lo, ref, up)
            assert main[0] <= lo <= up <= main[1], (seed, n, rel_tol, main, (lo, up))


def test_pairs_form_moves_the_upper_value(monkeypatch):
    """A law whose one-user-jump form is loose (bulk spread over three decades): the rule lowers the upper value."""
    law = FiniteLaw(np.array([-1000.0, -30.0, -0.5, 0.8, 40.0]), np.array([0.5, 0.3, 0.19, 0.009, 0.001]))
    switch(monkeypatch, "FEW_MULTI_JUMP", False)  # (**) session 40, eps40: §8.19's form alone already gives this upper value
    ref = _exact_dup(law.values, law.probs, 0.6, 6)
    lo, up = small_n_bracket(law, 0.6, 6)
    assert lo <= ref <= up
    switch(monkeypatch, "FEW_PAIR_SPLIT", False)
    lo0, up0 = small_n_bracket(law, 0.6, 6)
    assert lo0 == lo and up < up0


G, S0, N, EPS = 0.0222, 0.582, 5, 15.11
E0_REF, P2_REF = 1.0777282793507e-9, 9.8622026821e-12  # E[L_+], E[(L1 + L2)_+] (rev38's mpmath, 30 digits)


def _e_plus() -> float:
    """E[L_+] of the antipodal pair's law (tests/test_review_rev38_fewuser_bmg.py's closed form at its root)."""
    with mp.workdps(30):
        g, E, r = mp.mpf(G), mp.e ** mp.mpf(EPS), 1 / mp.mpf(S0)
        a, b, bm = g * (1 - E), 1 - g, -(1 - g) * E

        def L(z):
            return a + b * mp.e ** (r * z - r * r / 2) + bm * mp.e ** (-r * z - r * r / 2)

        z = mp.findroot(L, (mp.mpf(0), mp.mpf(30)), solver="bisect")
        return float(a * mp.ncdf(-z) + b * mp.ncdf(-(z - r)) + bm * mp.ncdf(-(z + r)))


def test_bmg_n5_reference():
    """D_up >= lo_ref (the terms m <= 2 exact, mpmath; the terms j >= 2 are >= 0, and at most ~1e-5 of the value): the
    bracket holds lo_ref, its upper value is at least the two exact terms, and it meets rel_tol 1e-3 ... 3e-2 (on
    main 72b04806: 9.4 % at every rel_tol <= 6e-3)."""
    e0 = _e_plus()
    assert abs(e0 - E0_REF) <= 1e-12 * E0_REF
    w = [comb(4, j) * G ** j * (1 - G) ** (4 - j) for j in range(5)]
    lo_ref = w[0] * E0_REF + w[1] * P2_REF / 2
    for rel_tol in (3e-2, 1e-2, 5e-3, 3e-3, 1e-3):
        clear_caches()
        lo, up = ShuffleAccountant(BlanketMixedGaussian(G, S0, 1), N, "replace", rel_tol=rel_tol).get_delta_bounds(EPS)
        assert lo <= lo_ref * (1 - 1e-9) and up >= lo_ref * (1 + 1e-9), (rel_tol, lo, up, lo_ref)
        assert up - lo <= rel_tol * lo, (rel_tol, lo, up)


def _open_upper_mp(j: int, c: float) -> float:
    """§6.8 (b)'s upper form q E[(L - jc)_+] + (1 - q) E[L_+] at depth c for the case's law, in mpmath (30 digits):
    E[(L - t)_+] = (a - t) Q(z_t) + b Q(z_t - r) + b' Q(z_t + r), P(L > -c) = Q(z_{-c}), z_t the root of L(z) = t."""
    with mp.workdps(30):
        g, E, r = mp.mpf(G), mp.e ** mp.mpf(EPS), 1 / mp.mpf(S0)
        a, b, bm = g * (1 - E), 1 - g, -(1 - g) * E

        def root(t):
            return mp.findroot(lambda z: a + b * mp.e ** (r * z - r * r / 2) + bm * mp.e ** (-r * z - r * r / 2) - t,
                               (mp.mpf(-40), mp.mpf(40)), solver="bisect")

        def sl(t):
            z = root(t)
            return (a - t) * mp.ncdf(-z) + b * mp.ncdf(-(z - r)) + bm * mp.ncdf(-(z + r))

        p = mp.ncdf(-root(-mp.mpf(c)))
        q = (1 - p) ** j
        return float(q * sl(j * mp.mpf(c)) + (1 - q) * sl(0))


def test_bmg_n5_open_form_by_mpmath():
    """§8.17 (c)'s numerics for the case: at the rule's own depths c (``_open_depths``), the form evaluated in mpmath,
    with the pairs' form at rev38's exact E[(L1 + L2)_+], gives D_up's upper reference up_ref; the accountant's upper
    value is at least up_ref (its stop-loss and probability values are on the safe side) and within 1e-4 of it."""
    from sharpdp.shuffle.accountant import closed_forms as cf
    from sharpdp.shuffle.laws import laws_for

    gam, law = laws_for(BlanketMixedGaussian(G, S0, 1), EPS, "replace")[0]
    cs, _ = cf._open_depths(law)
    assert len(cs) == 12
    w = [comb(4, j) * G ** j * (1 - G) ** (4 - j) for j in range(5)]
    lo_ref = w[0] * E0_REF + w[1] * P2_REF / 2
    terms = {j: min([_open_upper_mp(j, c) for c in cs] + [(((j + 1) // 2) * P2_REF + ((j + 1) % 2) * E0_REF) / (j + 1),
                                                           E0_REF]) for j in (2, 3, 4)}
    up_ref = lo_ref + sum(w[j] * terms[j] for j in (2, 3, 4))
    clear_caches()
    lo, up = ShuffleAccountant(BlanketMixedGaussian(G, S0, 1), N, "replace", rel_tol=1e-3).get_delta_bounds(EPS)
    assert lo <= lo_ref and up_ref * (1 - 1e-12) <= up <= up_ref * (1 + 1e-4), (lo, up, lo_ref, up_ref)


@pytest.mark.parametrize("case", [(0.3, 1.0, 1.0, 4), (0.1, 0.8, 3.0, 5), (0.2, 1.0, 2.0, 6), (0.5, 1.2, 1.5, 3)])
def test_bmg_bracket_holds_monte_carlo(case, monkeypatch):
    """Laws unbounded on both sides (BlanketMixedGaussian, replace): the few-user bracket with §8.17 (a), (c) on holds
    D_up = E[(S_K)_+ / K], K = 1 + Bin(n - 1, gamma), by Monte Carlo (2e6 samples of L = a + b e^(rZ - r^2/2)
    + b' e^(-rZ - r^2/2), a = g (1 - e^eps), b = 1 - g, b' = -(1 - g) e^eps, r = 1 / sigma0; 5 standard errors), and is
    nested in the switch-off bracket with a lower upper value."""
    from sharpdp.shuffle.laws import laws_for

    g, s0, eps, n = case
    gam, law = laws_for(BlanketMixedGaussian(g, s0, 1), eps, "replace")[0]
    lo, up = small_n_bracket(law, gam, n)
    rng = np.random.default_rng(7)
    E, r = np.exp(eps), 1.0 / s0
    a, b, bm = g * (1 - E), 1 - g, -(1 - g) * E
    M = 2_000_000
    K = 1 + rng.binomial(n - 1, gam, M)
    S = np.zeros(M)
    for i in range(n):
        z = rng.standard_normal(M)
        S += np.where(i < K, a + b * np.exp(r * z - r * r / 2) + bm * np.exp(-r * z - r * r / 2), 0.0)
    X = np.maximum(S, 0.0) / K
    m, se = X.mean(), X.std() / np.sqrt(M)
    assert lo <= m + 5 * se and m - 5 * se <= up, (case, lo, m, se, up)
    switch(monkeypatch, "FEW_PAIR_SPLIT", False)
    switch(monkeypatch, "FEW_OPEN_JUMP", False)
    lo0, up0 = small_n_bracket(law, gam, n)
    assert lo0 == lo and up < up0


def test_switch_off_restores_main(monkeypatch):
    """With both switches off the case keeps main 72b04806's bracket at rel_tol 3e-3 (the cap E[L_+])."""
    switch(monkeypatch, "FEW_PAIR_SPLIT", False)
    switch(monkeypatch, "FEW_OPEN_JUMP", False)
    switch(monkeypatch, "FEW_FINER", False)  # (**) session 40, eps40: §8.18's gate at 1e-2 runs the quadrature (nested)
    lo, up = ShuffleAccountant(BlanketMixedGaussian(G, S0, 1), N, "replace", rel_tol=3e-3).get_delta_bounds(EPS)
    assert (lo, up) == (9.851659886515332e-10, 1.077728279352123e-09)



def test_bmg_n10_gate_meets_rel_tol_inside_the_engines_bracket(monkeypatch):
    """BlanketMixedGaussian(0.0511, 0.567), n = 10, replace, eps = 12.215718: with §8.17 the few-user bracket (the
    quadrature run by (b)'s gate) meets rel_tol 1e-2 and lies inside the engines' certified bracket (the switch-off
    path: lattice / far-tail engines, independent of the few-user terms); get_epsilon's answer is certified by a fresh
    accountant."""
    rz, e = BlanketMixedGaussian(0.0511, 0.567, 1), 12.215718
    clear_caches()
    lo, up = ShuffleAccountant(rz, 10, "replace").get_delta_bounds(e)
    assert up - lo <= 1e-2 * lo
    ans = ShuffleAccountant(rz, 10, "replace").get_epsilon(1e-6)
    assert ShuffleAccountant(rz, 10, "replace").get_delta(ans) <= 1e-6
    switch(monkeypatch, "FEW_PAIR_SPLIT", False)
    switch(monkeypatch, "FEW_OPEN_JUMP", False)
    lo0, up0 = ShuffleAccountant(rz, 10, "replace").get_delta_bounds(e)
    assert lo0 <= lo <= up <= up0, ((lo0, up0), (lo, up))
