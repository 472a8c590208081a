"""Native block construction and the exact lower clamp (docs/accountant_atoms.md §1-§3): each kernel
against the numpy expression it replaced (bit for bit), the clamp lemma pointwise and against exact
sums, and the slow 10-RR eps0 = 8 cells against the exact multinomial sum."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.accountant import blocks as BL
from sharpdp.shuffle.accountant.lattice import PosMgf, clamp_exact, exact_clamp_depth, lattice_laws
from sharpdp.shuffle.accountant.plain import certify_law
from sharpdp.shuffle.laws import FiniteLaw
from sharpdp.shuffle.laws.finite import SubFinite
from sharpdp.shuffle.randomizers import RandomizedResponse
from test_shuffle_blocks_large import _exact_krr_mp

C = BL._kernels()


# --- the numpy expressions the kernels replaced (the former blocks.py code) ---

def _values_numpy(counts: np.ndarray, a: np.ndarray) -> np.ndarray:
    hi, lo = BL._split(a)
    m1 = a.size
    cols = [(j, x) for x in (hi, lo) for j in range(m1)]
    acc = counts[:, 0] * hi[0]
    comp = np.zeros(acc.size)
    for j, x in cols[1:]:
        col = counts[:, j] * x[j]
        tot = acc + col
        z = tot - acc
        comp += (acc - (tot - z)) + (col - z)
        acc = tot
    return acc + comp


def _multinomial_numpy(counts: np.ndarray, pa: np.ndarray, ms: int) -> np.ndarray:
    m1 = pa.size
    M = counts.sum(axis=1)
    binom = np.zeros((ms + 1, ms + 1))
    binom[:, 0] = 1.0
    for x in range(1, ms + 1):
        binom[x, 1:x + 1] = binom[x - 1, 1:x + 1] + binom[x - 1, 0:x]
    pw = np.ones((m1, ms + 1))
    for c in range(1, ms + 1):
        pw[:, c] = pw[:, c - 1] * pa
    prob = np.ones(M.size)
    rest = M.copy()
    for j in range(m1):
        prob *= binom[rest, counts[:, j]] * pw[j, counts[:, j]]
        rest -= counts[:, j]
    return prob


def _estimate_numpy(gamma: float, a: np.ndarray, pa: np.ndarray, n: int) -> float:
    lg = math.log(gamma)
    l1g = math.log1p(-gamma) if gamma < 1.0 else -math.inf

    def lam(th):
        x = th * a
        w = pa * np.exp(x - float(np.max(x)))
        z = float(np.sum(w))
        big = lg + float(np.max(x)) + math.log(z)
        lam0 = max(l1g, big) + math.log1p(math.exp(-abs(l1g - big))) if l1g > -math.inf else big
        r = math.exp(big - lam0)
        d1 = r * float(np.sum(w * a)) / z
        return lam0, d1, max(r * float(np.sum(w * a * a)) / z - d1 * d1, 0.0)

    amax = float(np.max(np.abs(a)))
    lo = hi = 1e-3 / (n * amax)
    for _ in range(200):
        hi *= 2.0
        if n * lam(hi)[1] * hi > 1.0:
            break
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if n * lam(mid)[1] * mid > 1.0:
            hi = mid
        else:
            lo = mid
    th = math.sqrt(lo * hi)
    lam0, _, d2 = lam(th)
    return n * lam0 - 1.0 - math.log(th) - math.log1p(th * math.sqrt(n * d2)) - math.log(n * gamma)


# --- kernels, bit for bit ---

@settings(max_examples=40, deadline=None)
@given(m1=st.integers(1, 4), ms=st.integers(0, 30), seed=st.integers(0, 2**32 - 1))
def test_block_values_are_the_numpy_sum2_bit_for_bit(m1, ms, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=m1) * 10.0 ** rng.uniform(-3, 4, size=m1)
    counts = np.asfortranarray(BL._compositions(ms, m1), dtype=float)
    v, vmax, finite = C.block_values(counts, *BL._split(a))
    ref = _values_numpy(counts, a)
    assert finite and np.array_equal(v, ref) and vmax == float(np.max(np.abs(ref)))


def test_block_values_flags_overflow():
    counts = np.asfortranarray([[0.0], [900.0]])
    _, _, finite = C.block_values(counts, np.array([1e306]), np.array([0.0]))  # 900 x 1e306 overflows
    assert not finite


@settings(max_examples=40, deadline=None)
@given(na=st.integers(1, 300), K=st.integers(1, 200), seed=st.integers(0, 2**32 - 1))
def test_atom_cells_are_finite_law_cells_bit_for_bit(na, K, seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=na) * 5.0  # unsorted, some atoms outside [x0, x0 + K h)
    v[: na // 4] = np.round(v[: na // 4])  # repeated values and values on cell edges
    p = rng.uniform(0.1, 1.0, size=na)
    p /= p.sum()
    x0, h, rel_p = -float(rng.uniform(0, 8)), float(rng.uniform(0.01, 0.3)), float(rng.uniform(0, 1e-12))
    law = SubFinite(v, p)  # the unsorted FiniteLaw path (mask), the atoms in stored order
    m, w, em, ew = FiniteLaw.cells(law, x0, h, K)
    got = C.atom_cells(v, p, x0, h, K, rel_p)
    ref = (m, w, em + rel_p * m + 1e-300, ew + rel_p * w + 1e-300)
    for g, r in zip(got, ref):
        assert np.array_equal(g, r)


def test_kahan_prefix_is_the_python_loop():
    terms = np.log((1000.0 - np.arange(400.0)) / (np.arange(400.0) + 1.0))
    s = c = 0.0
    ref = [0.0]
    for x in terms.tolist():
        y = x - c
        t = s + y
        c = (t - s) - y
        s = t
        ref.append(s)
    assert np.array_equal(C.kahan_prefix(terms), np.array(ref))


@pytest.mark.parametrize("m1,ms", [(1, 5), (2, 60), (3, 40), (4, 12)])
def test_multinomial_is_the_numpy_product_bit_for_bit(m1, ms):
    pa = np.random.default_rng(m1).dirichlet(np.ones(m1))
    counts = BL._compositions(ms, m1)
    assert np.array_equal(C.multinomial(np.asfortranarray(counts), pa, ms), _multinomial_numpy(counts, pa, ms))


def test_multinomial_rejects_counts_beyond_ms():
    with pytest.raises(ValueError, match="ms"):
        C.multinomial(np.asfortranarray([[3, 2]], dtype=np.int64), np.array([0.5, 0.5]), 4)


@pytest.mark.parametrize("gamma,n", [(0.54, 10**4), (0.0033, 10**5), (1.0, 50), (0.2, 7)])
def test_log_value_estimate_matches_the_numpy_reference(gamma, n):
    (g, law), = RandomizedResponse(10, 2.0).privacy_amplification_laws(0.5, "replace")
    a, pa = law.values, law.probs
    assert C.log_value_estimate(a, pa, gamma, float(n)) == pytest.approx(_estimate_numpy(gamma, a, pa, n), rel=1e-12)


# --- the exact lower clamp (Lemma 1) ---

@settings(max_examples=200, deadline=None)
@given(xs=st.lists(st.floats(-1e6, 10.0, allow_nan=False), min_size=1, max_size=8),
       top=st.floats(10.0, 50.0), extra=st.floats(0.0, 100.0))
def test_clamp_lemma_pointwise(xs, top, extra):
    n = len(xs)
    x0 = -((n - 1) * top + extra)  # kB h >= (n - 1) top
    assert max(math.fsum(max(x, x0) for x in xs), 0.0) == max(math.fsum(xs), 0.0) or \
        (math.fsum(xs) <= 0.0 and math.fsum(max(x, x0) for x in xs) <= 0.0)


def test_clamp_exact_conditions():
    law = FiniteLaw([-100.0, -1.0, 2.0], [0.1, 0.6, 0.3])
    assert exact_clamp_depth(law, 5) == pytest.approx(8.0, rel=1e-8) and exact_clamp_depth(law, 5) > 8.0
    assert clamp_exact(law, 5, 2.0, 8.0 * (1 + 2e-9))
    assert not clamp_exact(law, 5, 2.0, 8.0)  # the margin 1e-9 is required
    assert not clamp_exact(law, 5, 1.5, 100.0)  # clamped above: not covered


def _exact_dup(values, probs, gamma, n):
    """E[(sum of n users' B_i L_i)_+]/(n gamma) by enumeration of every n-tuple (exact up to fsum)."""
    atoms = [(0.0, 1.0 - gamma)] + [(v, gamma * p) for v, p in zip(values, probs)]
    tot = []
    for combo in itertools.product(atoms, repeat=n):
        s = math.fsum(v for v, _ in combo)
        if s > 0:
            tot.append(s * math.prod(p for _, p in combo))
    return math.fsum(tot) / (n * gamma)


@pytest.mark.parametrize("values,probs,gamma,n", [([-60.0, -1.5, 2.0], [0.15, 0.45, 0.4], 0.5, 4),
                                                  ([-300.0, 0.7], [0.05, 0.95], 0.8, 6)])
def test_exact_clamp_brackets_the_enumerated_value(values, probs, gamma, n):
    law = FiniteLaw(values, probs)
    r = certify_law(law, gamma, n, 1e-3, 1)
    exact = _exact_dup(values, probs, gamma, n)
    assert r.lower <= exact <= r.upper
    assert r.upper - r.lower <= 1e-3 * exact
    assert r.grid.B < -min(values)  # the clamp is above the support's bottom
    assert r.terms["tail_B"] <= 1e-3 * r.upper


def _exact_clamp_gap(values, probs, gamma, n, B):
    """(E[(S_c)_+] - E[S_+]) / (n gamma) for the clamp at -B, by enumeration of every n-tuple."""
    atoms = [(0.0, 1.0 - gamma)] + [(v, gamma * p) for v, p in zip(values, probs)]
    tot = []
    for combo in itertools.product(atoms, repeat=n):
        s = math.fsum(v for v, _ in combo)
        sc = math.fsum(max(v, -B) for v, _ in combo)
        if sc > 0:
            tot.append((sc - max(s, 0.0)) * math.prod(p for _, p in combo))
    return math.fsum(tot) / (n * gamma)


@pytest.mark.parametrize("B", [2.0, 3.0, 5.0, 8.0])
def test_clamp_charge_bounds_the_enumerated_gap(B):
    values, probs, gamma, n, h = [-60.0, -1.5, 2.0], [0.15, 0.45, 0.4], 0.5, 4, 0.25
    law = FiniteLaw(values, probs)
    lat = lattice_laws(law, gamma, h, 2.0, B, lower=False)
    pm = PosMgf.from_lattice(lat.g, lat.eta, lat.k0, h, 0.0)
    p, e = law.prob_below(-B)
    charge = pm.clamp_charge(B, p + e, n)
    gap = _exact_clamp_gap(values, probs, gamma, n, B)
    assert gap <= charge
    if B >= 5.0:
        assert charge <= 20 * gap + 1e-12  # (not vacuous: within a small factor where it matters)


# --- the slow 10-RR eps0 = 8 cells ---

def test_krr10_eps0_8_brackets_the_exact_sum_within_rel_tol():
    n, eps = 10**4, 7.0258
    rep = ShuffleAccountant(RandomizedResponse(10, 8.0), n, adjacency="replace").report(eps)
    exact = _exact_krr_mp(10, 8.0, n, eps)
    assert rep.lower <= exact <= rep.upper
    assert rep.upper - rep.lower <= 1e-2 * rep.lower  # the default rel_tol (former code: 6.4 %)
    assert rep.terms["tail_B"] <= 1e-12 * rep.upper  # the clamp's Chernoff charge (§5): negligible


def test_krr10_eps0_8_n1e5_get_epsilon_bracket():
    acc = ShuffleAccountant(RandomizedResponse(10, 8.0), 10**5, adjacency="replace")
    e = acc.get_epsilon(1e-6)
    rep = acc.report(e)
    assert rep.upper <= 1e-6
    assert rep.upper - rep.lower <= 1e-2 * rep.lower
    assert e == pytest.approx(1.1742, rel=2e-3)  # (the former code: 1.1742 as well, 6 % bracket)
    assert acc.get_delta(e * (1 - 3e-3)) > 1e-6  # the answer is within xtol of the certified root


# --- ComposedAccountant.get_epsilon: model root, then checked (docs/accountant_atoms.md §4) ---

def test_composed_get_epsilon_is_certified_and_tight():
    from sharpdp.shuffle import ComposedAccountant

    acc = ShuffleAccountant(RandomizedResponse(2, 1.0), 50, rel_tol=5e-3)
    ca = ComposedAccountant([(acc, 3)], 1e-3)
    for delta, xtol in [(1e-4, 1e-3), (1e-6, 1e-2)]:
        e = ca.get_epsilon(delta, xtol=xtol)
        assert ca.get_delta(e) <= delta
        assert ca.get_delta(e * (1 - xtol)) > delta  # the smallest to xtol
        # the former plain bisection on get_delta (an independent search) ends within xtol of it
        lo, hi = 0.0, 3 * float(ca.pairs()[0].losses[-1]) * 1e-3
        while hi - lo > xtol * hi:
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if ca.get_delta(mid) <= delta else (mid, hi)
        assert e == pytest.approx(hi, rel=2 * xtol)
