"""Adversarial regression tests for the certified composition (``docs/composition.md``).

References are independent of sharpdp's FFT: exact k-fold convolution of the stored pair (direct
sums of non-negative terms), exact enumeration of shuffled binary randomized response at small n
(the count of ones is a sufficient statistic), and the closed form of the Gaussian mechanism.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

import sharpdp.shuffle as sh
from sharpdp.shuffle.basic_composition import basic_bounds
from sharpdp.shuffle.composition import ComposedAccountant


def _kfold(pair, k):
    k0 = int(pair.losses[0])
    g = np.zeros(int(pair.losses[-1]) - k0 + 1)
    g[pair.losses - k0] = pair.probs
    res, base, e = np.array([1.0]), g, k
    while e:
        if e & 1:
            res = np.convolve(res, base)
        e >>= 1
        if e:
            base = np.convolve(base, base)
    return res, k * k0


def _pair_hockey_stick(pair, k, eps):
    """H_{e^eps} of the k-fold product of a stored pair, by direct convolution (non-negative terms)."""
    q, off = _kfold(pair, k)
    x = (np.arange(q.size) + off) * pair.value_discretization_interval
    w = np.where(x > eps, -np.expm1(np.minimum(eps - x, 0.0)), 0.0)
    return -math.expm1(k * math.log1p(-pair.infinity_mass)) + float(np.sum(w * q))


def _binary_rr_pairs(n, eps0):
    """Exact output laws (count of ones) of shuffled binary RR for every zero-out pair: the
    others' inputs (m ones) and the differing user's input x vs the blanket (uniform) report."""
    p = math.exp(eps0) / (1 + math.exp(eps0))
    out = []
    for m in range(n):
        base = np.convolve(binom.pmf(np.arange(m + 1), m, p), binom.pmf(np.arange(n - m), n - 1 - m, 1 - p))
        bot = np.convolve(base, [0.5, 0.5])
        for last in ([p, 1 - p], [1 - p, p]):
            d = np.convolve(base, last)
            out += [(d, bot), (bot, d)]
    return out


@pytest.fixture(scope="module")
def rr2_k10():
    acc = sh.ShuffleAccountant(sh.RandomizedResponse(k=2, epsilon0=2.0), 2, "zero_out")
    return ComposedAccountant([(acc, 10)], 0.005)


def test_no_nan_near_the_top_of_the_composed_support(rr2_k10):
    """Review finding 1: at eps just below the largest composed loss the tilt is steep
    (theta ~ 70, sum n Lambda ~ 1000): e^{sum n Lambda} overflowed while e^{-theta x} underflowed,
    and get_delta returned NaN (inf * 0). The value must be a number >= the exact one."""
    pair = rr2_k10.pairs()[0]
    top = 10 * int(pair.losses[-1]) * rr2_k10.value_discretization_interval
    for eps in (top - 1.0, top - 0.1, top - 0.01, 19.0, 19.99):
        got = rr2_k10.get_delta(eps)
        assert math.isfinite(got), eps
        ref = _pair_hockey_stick(pair, 10, eps)
        # the pair route's value (docs/composition.md §4); get_delta reports the smaller of it and basic
        # composition's (§4.3: beyond 10 x the round's largest loss 1.435 nats that is 10 x 5e-324, below the pair's)
        pair_up = rr2_k10._pair_upper(eps)
        assert pair_up >= ref and pair_up <= ref * (1 + 1e-6) + 1e-30, (eps, pair_up, ref)
        assert got == min(pair_up, basic_bounds(rr2_k10.parts, eps, lower=False)[1]), eps
    assert math.isfinite(rr2_k10.get_epsilon(1e-20))


def test_composed_never_below_the_exact_shuffled_binary_rr(rr2_k10):
    """The composed upper value is >= the exact k-fold delta of every fixed neighbouring pair of
    the exact shuffled mechanism (a lower bound on its composed delta), at eps of both signs."""
    prs = _binary_rr_pairs(2, 2.0)
    for eps in (-2.0, -0.3, 0.0, 0.2, 1.0, 3.0, 6.0, 10.0, 15.0):
        got = rr2_k10.get_delta(eps)
        t = math.exp(eps)
        for P, Q in prs:
            # exact k-fold hockey stick through the product law of the loss (10 rounds, 4 outcomes)
            L = np.log(P) - np.log(Q)
            lp, lv = np.array([0.0]), np.array([0.0])
            for _ in range(10):
                lv = (lv[:, None] + L[None, :]).ravel()
                lp = (lp[:, None] + np.log(P)[None, :]).ravel()
                # merge equal losses (they are sums of the same few values)
                key = np.round(lv, 9)
                u, inv = np.unique(key, return_inverse=True)
                pp = np.bincount(inv, weights=np.exp(lp))
                vv = np.bincount(inv, weights=lv) / np.bincount(inv)
                lp, lv = np.log(pp), vv
            ref = float(np.sum(np.exp(lp) * np.maximum(-np.expm1(np.log(t) - lv), 0.0)))
            assert got >= ref * (1 - 1e-12), (eps, got, ref)


def test_connect_the_dots_masses_are_lower_values_at_tiny_steps():
    """Review finding 2: e^d - 1 was evaluated at 60 digits, losing -log10(d) digits to
    cancellation, so at lattice steps below ~1e-5 (auto_interval gives 2.5e-9 for very private
    rounds) the "certified lower" masses exceeded the exact ones (by ~1e-45 relative here)."""
    mpmath = pytest.importorskip("mpmath")
    from sharpdp.shuffle.pair import masses as _masses

    with mpmath.workdps(120):
        for dx in (2.5e-9, 1e-7, 1e-4, 0.3):
            k = np.array([-3, -1, 0, 2, 5])
            H = np.array([0.9, 0.5, 0.3, 0.2, 0.1])
            lo = _masses(k, H, dx)
            t = [mpmath.exp(int(kk) * mpmath.mpf(dx)) for kk in k]
            Hm = [mpmath.mpf(float(h)) for h in H]
            for v in range(len(k)):
                s_prev = (Hm[v] - 1) / t[v] if v == 0 else (Hm[v] - Hm[v - 1]) / (t[v] - t[v - 1])
                s_next = (Hm[v + 1] - Hm[v]) / (t[v + 1] - t[v]) if v < len(k) - 1 else 0
                p = t[v] * (s_next - s_prev)
                assert mpmath.mpf(lo[v].numerator) / lo[v].denominator <= p, (dx, v)


def test_pair_get_delta_is_an_upper_value_just_below_an_atom():
    """Review finding 3: DominatingPair.get_delta used the float product losses * Delta, which can
    lie half an ulp below the real loss; one ulp below it the term 1 - e^{eps - loss} was then
    under-reported by up to half (here 2.8e-17 against 4.2e-17 exactly)."""
    mpmath = pytest.importorskip("mpmath")
    from fractions import Fraction

    from sharpdp.shuffle.profile import DominatingPair

    checked = 0
    with mpmath.workdps(50):
        for dx in (0.1, 0.3, 7e-4):
            for k in range(1, 200):
                if Fraction(k * dx) >= k * Fraction(dx):
                    continue  # the float product is not below the real loss
                pair = DominatingPair(dx, np.array([k]), np.array([0.5]), 0.0)
                for e in (float(np.nextafter(k * dx, 0)), k * dx):
                    exact = 0.5 * (1 - mpmath.exp(mpmath.mpf(e) - k * mpmath.mpf(dx)))
                    assert pair.get_delta(e) >= exact, (dx, k, e)
                checked += 1
    assert checked > 20


def _inject(pair, k):
    """A ComposedAccountant over a given stored pair (bypassing the profile sampling)."""
    ca = ComposedAccountant.__new__(ComposedAccountant)
    ca.parts, ca.value_discretization_interval, ca.rel_tol = [(None, k)], pair.value_discretization_interval, 1e-2
    ca._pair_options, ca._pairs, ca._lower_pairs, ca.adjacency = {}, [pair], [pair], "zero_out"
    return ca


def _random_pair(seed):
    """A random stored pair: atoms spread over 12 decades, with or without an infinity mass."""
    from sharpdp.shuffle.profile import DominatingPair

    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 10))
    losses = np.sort(rng.choice(np.arange(-60, 150), size=m, replace=False)).astype(np.int64)
    w = rng.exponential(size=m) * 10.0 ** rng.uniform(-12, 0, size=m)
    inf = float(10.0 ** rng.uniform(-30, -1)) if rng.random() < 0.7 else 0.0
    probs = w / w.sum() * (1 - inf) * (1 - 1e-15)
    dx = float(10 ** rng.uniform(-3, 0))
    pair = DominatingPair(dx, losses, probs, float(np.nextafter(1 - math.fsum(probs), 1)))
    return pair, losses, dx


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


# derandomize: a fixed set of examples in CI; the random search found the loose case below
@settings(max_examples=25, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**31 - 1), k=st.sampled_from([1, 2, 7, 40]), where=st.floats(0.0, 1.0))
def test_composed_upper_is_above_the_exact_product_of_random_pairs(seed, k, where):
    """Section 4 in isolation: for random stored pairs (atoms spread over 12 decades, with and
    without an infinity mass) the certified composed value is >= the exact k-fold hockey stick
    (direct convolution), at lattice points, between them and one ulp below the top loss."""
    pair, losses, dx = _random_pair(seed)
    ca = _inject(pair, k)
    lo_k, hi_k = k * int(losses[0]), k * int(losses[-1])
    lattice = float(int(round(lo_k + where * (hi_k - lo_k))) * dx)
    for eps in (lattice, lattice + 0.37 * dx, float(np.nextafter(hi_k * dx, 0)), -1.0, 0.0):
        ref = _pair_hockey_stick(pair, k, eps)
        got = ca.get_delta(eps)
        assert math.isfinite(got) and got >= ref * (1 - 1e-13), (eps, got, ref)
        # tightness: FFT round-off is absolute (about 1e-11 of the total mass at theta = 0)
        assert got <= ref * (1 + 1e-5) + 1e-9, (eps, got, ref)


def test_known_loose_case_far_below_the_support_is_safe():
    """A random example (seed 3686716, k = 40, eps at the bottom of the 40-fold support, -126.3 nats)
    where the composed upper value is 1.38x the exact hockey stick: safe, but looser than the
    1e-5 + 1e-9 of the property above (not yet explained; docs/composition.md §7). Pinned: safe, and
    no looser than it is today."""
    pair, losses, dx = _random_pair(3686716)
    ca = _inject(pair, 40)
    eps = float(40 * int(losses[0]) * dx)
    ref = _pair_hockey_stick(pair, 40, eps)
    got = ca.get_delta(eps)
    assert ref * (1 - 1e-13) <= got <= 1.4 * ref, (eps, got, ref)


def test_eps_at_the_edge_of_the_support_is_not_wildly_loose():
    """Review finding 4 (over-report, not unsafe): with eps exactly at a single atom the tilted mean
    rounds below eps, the tilt runs to theta ~ 1e12, and the weight-rounding bound
    8u (1 + theta |x|) charged 0.0177 against a true value of 7e-12. The bound is now capped by
    the weights' own size (both lie in [0, w~ + (s h - eps)_+])."""
    from sharpdp.shuffle.profile import DominatingPair

    dx = 0.11777217157671381
    pair = DominatingPair(dx, np.array([-16]), np.array([1.0]), 6.991740519879387e-12)
    ca = _inject(pair, 1)
    for eps in (-1.8843547452274207, float(-16 * dx), float(np.nextafter(-16 * dx, -1.0))):
        ref = _pair_hockey_stick(pair, 1, eps)
        got = ca.get_delta(eps)
        assert ref <= got <= ref + 1e-12, (eps, got, ref)


def test_eps_at_the_top_of_the_composed_support_is_tight():
    """eps exactly at the top composed loss (40 rounds of one atom): the tilt is capped (theta h <= 40)
    so the exponent's rounding margin stays small; the value is the infinity mass, up to round-off
    (it was 1.74e-9 against 4.0e-14 with the uncapped tilt, theta ~ 1e12)."""
    from sharpdp.shuffle.profile import DominatingPair

    dx, k = 0.6799442473227424, 40
    pair = DominatingPair(dx, np.array([73]), np.array([1.0]), 9.99200722162641e-16)
    ca = _inject(pair, k)
    for eps in (float(k * 73 * dx), float(np.nextafter(k * 73 * dx, 0))):
        ref = _pair_hockey_stick(pair, k, eps)
        got = ca.get_delta(eps)
        assert ref * (1 - 1e-13) <= got <= ref * (1 + 1e-5) + 1e-11, (eps, got, ref)
