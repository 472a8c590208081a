"""Adversarial review of the exact lower clamp for atom laws (docs/accountant_atoms.md §1-§2, branch `atoms`).

The accountant's lower value of the blanket bound D_up = E[(sum_i B_i L_i)_+] / (n gamma) is compared with
independent evaluations of the SAME quantity for the SAME law (never with a mechanism's delta, which the
blanket bound only dominates):
* exact rational enumeration at n <= 6 (integer atom values, dyadic probabilities and gamma);
* for n = 20..600, the law of the sum by direct (non-FFT) convolution of non-negative arrays: every term is
  a product-sum of non-negative doubles, so each entry (and E[S_+]) has relative error at most
  (n (k + 2) + width + 4) u, no cancellation (the bound used below).
Lemma 1 itself (clamping at -(n - 1) top leaves E[S_+] unchanged) is checked exactly, and that the new code
path (``clamp_exact`` true, no tail_B) is actually exercised by the cases.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.laws import FiniteLaw

LAT = pytest.importorskip("sharpdp.shuffle.accountant.lattice")
if not hasattr(LAT, "clamp_exact"):  # before the merge of branch `atoms`
    pytest.skip("needs the exact lower clamp (docs/accountant_atoms.md §1)", allow_module_level=True)

U = 2.0**-53


class _OneLaw:
    """Accountant input with one given (gamma, atom law) under every adjacency."""

    def __init__(self, gamma: float, values, probs, value_error: float = 0.0) -> None:
        self.gamma = gamma
        self.law = FiniteLaw(np.asarray(values, dtype=float), np.asarray(probs, dtype=float), value_error)

    def privacy_amplification_laws(self, epsilon, adjacency="zero_out"):
        return [(self.gamma, self.law)]


@pytest.fixture
def clamp_hits(monkeypatch):
    """Counts the passes whose lower clamp was taken as exact (the new code path)."""
    hits = {"exact": 0, "calls": 0}
    orig = LAT.clamp_exact

    def spy(*args, **kwargs):
        res = orig(*args, **kwargs)
        hits["calls"] += 1
        hits["exact"] += bool(res)
        return res

    monkeypatch.setattr(LAT, "clamp_exact", spy)
    return hits


# ------------------------------------------------------------------ independent references
def _user_law(g_num: int, g_bits: int, values, p_num, p_bits: int) -> tuple[dict, int]:
    """Per-user law of B L as {integer value: integer weight} over the denominator 2^(g_bits + p_bits)."""
    w = {0: ((1 << g_bits) - g_num) << p_bits}
    for v, p in zip(values, p_num):
        w[int(v)] = w.get(int(v), 0) + g_num * p
    assert sum(w.values()) == 1 << (g_bits + p_bits)
    return w, 1 << (g_bits + p_bits)


def _exact_sum_law(w: dict, n: int, clamp: int | None = None) -> dict:
    """Exact law (integer weights) of the sum of n i.i.d. terms, each clamped below at ``clamp``."""
    if clamp is not None:
        c: dict = {}
        for v, q in w.items():
            c[max(v, clamp)] = c.get(max(v, clamp), 0) + q
        w = c
    dist = {0: 1}
    for _ in range(n):
        new: dict = {}
        for s, p in dist.items():
            for v, q in w.items():
                new[s + v] = new.get(s + v, 0) + p * q
        dist = new
    return dist


def exact_dup(g_num: int, g_bits: int, values, p_num, p_bits: int, n: int) -> Fraction:
    w, D = _user_law(g_num, g_bits, values, p_num, p_bits)
    dist = _exact_sum_law(w, n)
    return Fraction(sum(s * p for s, p in dist.items() if s > 0), D**n) / (n * Fraction(g_num, 1 << g_bits))


def dp_dup(gamma: float, values, probs, n: int) -> tuple[float, float]:
    """(D_up, relative error bound) by direct convolution of non-negative arrays (integer atom values)."""
    vals = [0] + [int(v) for v in values]
    w = [1.0 - gamma] + [gamma * p for p in probs]
    lo, hi = min(vals), max(vals)
    cur = np.array([1.0])
    for _ in range(n):
        new = np.zeros(cur.size + hi - lo)
        for v, q in zip(vals, w):
            new[v - lo: v - lo + cur.size] += q * cur
        cur = new
    s = np.arange(cur.size) + n * lo
    pos = s > 0
    return float(np.sum(s[pos] * cur[pos])) / (n * gamma), (n * (len(vals) + 2) + cur.size + 4) * U


def _random_law(rng: np.random.Generator) -> tuple[list[int], list[int]] | None:
    """Integer atoms with a small positive top and far negative atoms, probabilities k / 1024, mean < 0."""
    k = int(rng.integers(3, 7))
    top = int(rng.integers(1, 6))
    vals = sorted(set([top] + [int(v) for v in rng.integers(-80, top, size=k - 1)]))
    p = rng.integers(1, 100, size=len(vals)).astype(float)
    pn = np.floor(p / p.sum() * 1024).astype(int)
    pn[np.argmax(pn)] += 1024 - pn.sum()
    if pn.min() <= 0 or np.dot(vals, pn) >= 0:
        return None
    return vals, pn.tolist()


# ------------------------------------------------------------------ Lemma 1, exactly
@pytest.mark.parametrize("seed", range(6))
def test_clamp_at_the_exact_depth_leaves_the_positive_part_unchanged(seed):
    """E[(sum max(X_i, -d))_+] = E[(sum X_i)_+] exactly at d = exact_clamp_depth (rounded up to an integer
    lattice point), n = 2..5; a clamp 1 shallower than (n - 1) top is not exact for some case (the depth
    is needed)."""
    rng = np.random.default_rng(seed)
    strict = False
    for _ in range(20):
        law = _random_law(rng)
        if law is None:
            continue
        vals, pn = law
        w, _ = _user_law(int(rng.integers(100, 1024)), 10, vals, pn, 10)
        fl = FiniteLaw(np.array(vals, dtype=float), np.array(pn) / 1024)
        for n in (2, 3, 5):
            d = LAT.exact_clamp_depth(fl, n)
            assert d >= (n - 1) * max(vals)
            ref = _exact_sum_law(w, n)
            pos = sum(s * p for s, p in ref.items() if s > 0)
            clamped = _exact_sum_law(w, n, clamp=-math.ceil(d))
            assert sum(s * p for s, p in clamped.items() if s > 0) == pos
            shallow = _exact_sum_law(w, n, clamp=-(n - 1) * max(vals) + 1)
            strict |= sum(s * p for s, p in shallow.items() if s > 0) != pos
    assert strict


# ------------------------------------------------------------------ the accountant's lower value
NASTY = [  # (gamma numerator / 1024, integer atoms, probabilities / 1024)
    (512, [3, -1, -40], [100, 800, 124]),
    (700, [1, -2, -500], [300, 700, 24]),  # one atom far below
    (900, [1, -1, -3, -1000], [400, 500, 100, 24]),  # tiny top, huge spread
    (1000, [20, -1, -2], [2, 1000, 22]),  # rare large top
    (1024, [1, -1, -7], [500, 500, 24]),  # gamma = 1
    (3, [5, -1, -30], [200, 800, 24]),  # gamma tiny
]


@pytest.mark.parametrize("case", range(len(NASTY)))
def test_lower_value_below_the_exact_blanket_bound_small_n(case):
    """n = 1..6: lower <= D_up <= upper with D_up enumerated exactly in rationals."""
    g, vals, pn = NASTY[case]
    law = _OneLaw(g / 1024, [float(v) for v in vals], [p / 1024 for p in pn])
    for n in range(1, 7):
        lo, up = ShuffleAccountant(law, n).get_delta_bounds(0.0)
        ex = exact_dup(g, 10, vals, pn, 10, n)
        assert Fraction(lo) <= ex <= Fraction(up), (n, lo, float(ex), up)


@pytest.mark.parametrize("case", range(len(NASTY)))
def test_lower_value_below_the_blanket_bound_medium_n(case, clamp_hits):
    """n = 20, 40, 80: lower <= D_up (direct-convolution reference, relative error bound) <= upper."""
    g, vals, pn = NASTY[case]
    law = _OneLaw(g / 1024, [float(v) for v in vals], [p / 1024 for p in pn])
    for n in (20, 40, 80):
        lo, up = ShuffleAccountant(law, n).get_delta_bounds(0.0)
        ref, rel = dp_dup(g / 1024, vals, [p / 1024 for p in pn], n)
        assert lo <= ref * (1 + rel) + 1e-300 and up >= ref * (1 - rel), (n, lo, ref, up)


@pytest.mark.parametrize("seed", range(4))
def test_lower_value_below_the_blanket_bound_random_laws(seed, clamp_hits):
    """Random integer laws (top 1..5, atoms down to -80), n in [20, 80) and [100, 600): lower <= D_up <= upper;
    the exact clamp is taken in some of these passes, the Chernoff-charged shallower clamp
    (docs/accountant_atoms.md §5) in others, and the bounds are checked on both (a larger run of 150 laws x 2 n:
    no violation)."""
    rng = np.random.default_rng(100 + seed)
    done = 0
    while done < 5:
        law = _random_law(rng)
        if law is None:
            continue
        vals, pn = law
        gamma = float(rng.integers(100, 1024)) / 1024
        acc_law = _OneLaw(gamma, [float(v) for v in vals], [p / 1024 for p in pn])
        for n in (int(rng.integers(20, 80)), int(rng.integers(100, 600))):
            lo, up = ShuffleAccountant(acc_law, n).get_delta_bounds(0.0)
            ref, rel = dp_dup(gamma, vals, [p / 1024 for p in pn], n)
            assert lo <= ref * (1 + rel) + 1e-300 and up >= ref * (1 - rel), (vals, pn, gamma, n, lo, ref, up)
        done += 1
    assert clamp_hits["exact"] >= 1, clamp_hits


BLOCKS = [  # (atoms, probabilities / 2^16, gamma, n): a far-negative rare atom, mean slightly below 0
    ([-291, -1, 0, 3], [93, 41623, 2837, 20983], 0.486328125, 1044),
    ([-152, -2, 2], [58, 32336, 33142], 0.3115234375, 1035),
    ([-230, -3, 5], [19, 41218, 24299], 0.82421875, 405),
    ([-186, -6, 3], [377, 14835, 50324], 0.83984375, 1125),
]


@pytest.mark.parametrize("case", range(len(BLOCKS)))
def test_lower_value_below_the_blanket_bound_with_blocks(case, clamp_hits):
    """n ~ 400-1100 (exact blocks of docs/accountant.md §5 plus the exact clamp): lower <= D_up <= upper with
    D_up by direct convolution (a run of 150 such random laws: no violation)."""
    vals, pn, gamma, n = BLOCKS[case]
    probs = [p / 65536 for p in pn]
    lo, up = ShuffleAccountant(_OneLaw(gamma, [float(v) for v in vals], probs), n).get_delta_bounds(0.0)
    ref, rel = dp_dup(gamma, vals, probs, n)
    assert 0 < lo <= ref * (1 + rel) and up >= ref * (1 - rel), (lo, ref, up)
    assert clamp_hits["exact"] >= 1


def test_krr_lower_values_below_a_sandwich_reference():
    """4-RR, eps0 = 3, replace-one laws, n = 150: each law's atoms rounded UP to the grid 2^-5 give a law whose
    D_up dominates (S_+ is non-decreasing in every atom, D_up(c L) = c D_up(L)); the accountant's lower value
    of that law (value_error 0) must not exceed the reference (direct convolution), its upper value must not
    be below the atoms-rounded-DOWN one."""
    rr = RandomizedResponse(4, 3.0)
    n, scale = 150, 32
    for eps in (0.5, 1.5):
        for g, law in rr.privacy_amplification_laws(eps, "replace"):
            vals, probs = law.values, law.probs.tolist()
            lo, up = ShuffleAccountant(_OneLaw(g, vals, probs), n).get_delta_bounds(eps)
            hi_ref, rel = dp_dup(g, [math.ceil(v * scale) for v in vals], probs, n)
            lo_ref, _ = dp_dup(g, [math.floor(v * scale) for v in vals], probs, n)
            assert lo <= hi_ref / scale * (1 + rel) + 1e-300, (eps, lo, hi_ref / scale)
            assert up >= lo_ref / scale * (1 - rel), (eps, up, lo_ref / scale)


@pytest.mark.parametrize("case", range(len(NASTY)))
def test_lower_value_with_a_value_error(case, clamp_hits):
    """A stored law v + 1/4 with value_error 1/4 (the exact atoms anywhere in [v, v + 1/2]): lower <= D_up of
    v (the smallest law allowed) and upper >= min(1, D_up of v + 1/2), n = 1, 4, 30, 120 (exact at n <= 4)."""
    g, vals, pn = NASTY[case]
    law = _OneLaw(g / 1024, [v + 0.25 for v in vals], [p / 1024 for p in pn], value_error=0.25)
    for n in (1, 4, 30, 120):
        lo, up = ShuffleAccountant(law, n).get_delta_bounds(0.0)
        if n <= 4:
            small = exact_dup(g, 10, vals, pn, 10, n)
            big = exact_dup(g, 10, [2 * v + 1 for v in vals], pn, 10, n) / 2
            assert Fraction(lo) <= small and Fraction(up) >= min(big, 1), (n, lo, float(small), up, float(big))
        else:
            small, rel = dp_dup(g / 1024, vals, [p / 1024 for p in pn], n)
            big, _ = dp_dup(g / 1024, [2 * v + 1 for v in vals], [p / 1024 for p in pn], n)
            assert lo <= small * (1 + rel) + 1e-300 and up >= min(big / 2, 1.0) * (1 - rel), (n, lo, small, up)


def _two_atom_dup(gamma: float, values, probs, n: int) -> float:
    """D_up of a law with one positive atom a and one negative atom -b, as the sum over c1 (users at a) of
    P(c1) E[(c1 a - c2 b)_+ | c1], c2 ~ Bin(n - c1, q), by direct summation of the positive terms with
    scipy's binomial pmf (a float reference, relative accuracy ~1e-12; c1 within 60 sd of its mean)."""
    (a, pa), (nb, pb) = sorted(zip(values, probs), reverse=True)
    b = -nb
    w1, w2 = gamma * pa, gamma * pb
    q = w2 / (1 - w1)
    sd = math.sqrt(n * w1 * (1 - w1)) + 1
    total = 0.0
    c1s = list(range(max(1, int(n * w1 - 60 * sd)), min(n, int(n * w1 + 60 * sd)) + 1))
    sizes = []
    for c1 in c1s:
        K = math.floor(c1 * a / b)
        if c1 * a - K * b <= 0:
            K -= 1
        sizes.append(max(min(K, n - c1) + 1, 0))
    # scipy's pmf is elementwise: one call on every c1 and one on all the c2 ranges (concatenated) give the
    # same doubles as a call per c1 (~50 us each); the sums are taken per c1, in the same order
    p1 = binom.pmf(np.array(c1s), n, w1)
    c1r = np.repeat(np.array(c1s), sizes)
    c2r = np.concatenate([np.arange(0, m) for m in sizes]) if c1s else np.zeros(0, dtype=int)
    terms = binom.pmf(c2r, n - c1r, q) * (c1r * a - c2r * b)
    at = 0
    for w, m in zip(p1, sizes):
        total += w * float(np.sum(terms[at:at + m]))
        at += m
    return total / (n * gamma)


@pytest.mark.parametrize("k,eps0", [(10, 8.0), (2, 8.0)])
def test_krr_zero_out_at_large_n_against_a_two_atom_reference(k, eps0):
    """k-RR zero-out (two-atom laws, both orders), n = 1e4, 1e5: the bracket contains the reference to 1e-9
    (the motivating case of docs/accountant_atoms.md §1-§2 is 10-RR eps0 = 8)."""
    rr = RandomizedResponse(k, eps0)
    for n in (10**4, 10**5):
        for eps in (0.5, 2.0, 4.0):
            ref = max(_two_atom_dup(g, law.values.tolist(), law.probs.tolist(), n) if law.values.max() > 0 else 0.0
                      for g, law in rr.privacy_amplification_laws(eps, "zero_out"))
            lo, up = ShuffleAccountant(rr, n).get_delta_bounds(eps)
            assert lo <= ref * (1 + 1e-9) and ref <= up * (1 + 1e-9), (n, eps, lo, ref, up)


def test_the_extra_rounds_only_tighten():
    """Lower value at rel_tol 1e-2 <= upper at rel_tol 1e-4 and vice versa (10-RR, eps0 = 8, zero-out, the
    motivating case at a smaller n)."""
    rr = RandomizedResponse(10, 8.0)
    for n in (300, 3000):
        for eps in (1.0, 3.0):
            a = ShuffleAccountant(rr, n, rel_tol=1e-2).get_delta_bounds(eps)
            b = ShuffleAccountant(rr, n, rel_tol=1e-4).get_delta_bounds(eps)
            assert a[0] <= b[1] and b[0] <= a[1], (n, eps, a, b)
