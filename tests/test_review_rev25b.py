"""Review rev25b (session 25): comp25's basic-composition minimum (docs/composition.md §4.3), big25's cheap power step
(docs/accountant_tail.md §25) and rep25's far-tail settle (docs/accountant_tail.md §26), each against a reference
independent of the code under review: exact rational sums, the exact K-fold law of shuffled binary RR, mpmath's
DFT at 40 digits, and get_delta_bounds floats pinned from branch s25 (computed there, before §26)."""

from __future__ import annotations

from _main_floats34 import session43_floats

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

import sharpdp.shuffle as sh
from sharpdp.shuffle.basic_composition import basic_bounds, share
from _main_floats34 import main_floats
from _main_floats34 import switch  # noqa: E402


# ---------------------------------------------------------------- comp25: basic composition (composition.md §4.3)
class _Fake:
    """A round accountant reduced to its (lower, upper) values at every eps (duck-typed as basic_bounds reads it)."""

    def __init__(self, lo: float, up: float):
        self.lo, self.up = lo, up

    def get_delta_bounds(self, e):
        return self.lo, self.up

    def get_delta(self, e):
        return self.up


def test_basic_bounds_round_outwards_exactly():
    """§4.3 'Rounding': the upper value is >= sum_j n_j d_j in exact arithmetic (or 1), the lower value <= the exact
    sum of the lower values; K share(eps, K) <= eps exactly. Values over the whole float range (normal, subnormal,
    near 1), counts 1..10^6. Mutations caught: basic_bounds' upper without its (1 + 4u) and ulp (the products
    round down: fails on many draws), its lower without the rounding down."""
    rng = np.random.default_rng(25)
    low_fail = up_fail = 0
    for _ in range(3000):
        J = int(rng.integers(1, 5))
        parts = []
        for _ in range(J):
            up = float(10.0 ** rng.uniform(-320, 0)) * float(rng.uniform(0.5, 1.0))
            lo = up * float(rng.uniform(0.0, 1.0))
            parts.append((_Fake(lo, up), int(10 ** rng.uniform(0, 6))))
        eps = float(10.0 ** rng.uniform(-6, 3))
        lo, up = basic_bounds(parts, eps)
        ex_up = sum(Fraction(c) * Fraction(a.up) for a, c in parts)
        ex_lo = sum(Fraction(c) * Fraction(a.lo) for a, c in parts)
        up_fail += not (up == 1.0 or Fraction(up) >= ex_up)
        low_fail += not Fraction(lo) <= ex_lo
        assert 0.0 <= lo <= up <= 1.0
        K = sum(c for _, c in parts)
        assert K * Fraction(share(eps, K)) <= Fraction(eps)
    assert (up_fail, low_fail) == (0, 0)


def _rr_exact(n: int, e0: float, K: int, eps: float) -> float:
    """A lower reference of the K-fold shuffled binary RR's delta(eps), replace-one: the exact hockey-stick divergence of
    the K-fold product law of the count of ones, both orders, for the datasets 'user 0 vs 1, j of the other n - 1
    users hold a one', maximised over j (every such pair is a neighbouring pair: the true delta is >= it)."""
    p = math.exp(e0) / (1.0 + math.exp(e0))
    q = 1.0 - p
    best = 0.0
    for j in range(n):
        base = np.convolve(binom.pmf(np.arange(j + 1), j, p), binom.pmf(np.arange(n - j), n - 1 - j, q))
        lP, lQ = np.log(np.convolve(base, [p, q])), np.log(np.convolve(base, [q, p]))
        a, b = lP, lQ
        for _ in range(K - 1):
            a, b = (a[:, None] + lP[None, :]).ravel(), (b[:, None] + lQ[None, :]).ravel()
        for x, y in ((a, b), (b, a)):
            best = max(best, float(np.sum(np.exp(x) * -np.expm1(np.minimum(y + eps - x, 0.0)))))
    return best


@pytest.mark.parametrize("n,e0,K", [(12, 2.0, 3), (20, 1.0, 2)])
def test_composed_value_above_the_exact_k_fold_rr(n, e0, K):
    """ComposedAccountant of K rounds of the sharp binary-RR accountant (ExactShuffleAccountant): get_delta (the min of
    the pair route and basic composition) >= the exact K-fold divergence of a family of neighbouring pairs, over eps up
    to K eps0 (the composed support's top) and beyond it, where basic composition's value is also checked on its
    own; get_delta == get_delta_bounds' upper value >= its lower value. Worst observed margin (get_delta / exact)
    1 + 1e-9 (at the pair route's sharp points)."""
    acc = sh.ExactShuffleAccountant(sh.RandomizedResponse(k=2, epsilon0=e0), n)
    ca = sh.ComposedAccountant([(acc, K)])
    for eps in np.linspace(0.05, K * e0 * 1.02, 14).tolist():
        ref = _rr_exact(n, e0, K, eps)
        up = ca.get_delta(eps)
        lo, up2 = ca.get_delta_bounds(eps)
        assert up == up2 and 0.0 <= lo <= up
        assert up >= ref * (1 - 1e-12), (eps, up, ref)
        assert basic_bounds(ca.parts, eps, lower=False)[1] >= ref * (1 - 1e-12), eps


def test_get_epsilon_two_round_types_against_a_brute_force_bisection():
    """Two round types (BMG and k-RR, zero-out), delta below the pair route's infinity mass (7.5e-21: answered by
    basic composition's bisection, as xtol < 1e-6 is finer than the rounds accept), at 1e-24 and above it (1e-12):
    get_delta(answer) <= delta and the answer is within xtol (+ the reference's 1e-7) of a bisection on min(pair
    route, sum of fresh round accountants' values at eps / 3). Measured: within 3e-9 at xtol 1e-7, 3.6e-4 at 1e-3."""
    mk = (lambda: sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.3, 2.0, 2), 2000),
          lambda: sh.ShuffleAccountant(sh.RandomizedResponse(k=2, epsilon0=1.0), 2000, "zero_out"))
    ca = sh.ComposedAccountant([(mk[0](), 2), (mk[1](), 1)])
    fresh = [f() for f in mk]

    def ref(e):
        s = share(e, 3)
        basic = math.fsum([2 * float(fresh[0].get_delta(s)), float(fresh[1].get_delta(s))]) * (1 + 1e-12)
        return min(ca._pair_upper(e), basic)

    assert ca._pair_upper(100.0) > 1e-21  # (the pair route alone refuses 2.5e-27 and 1e-24)
    for delta, xtol in ((2.5e-27, 1e-7), (1e-24, 1e-3), (1e-12, 1e-7)):
        r = ca.get_epsilon(delta, xtol=xtol)
        assert ca.get_delta(r) <= delta
        lo, hi = 0.0, r * (1 + 2 * xtol)
        assert ref(hi) <= delta
        while hi - lo > 1e-7 * hi:
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if ref(mid) <= delta else (mid, hi)
        assert hi * (1 - xtol - 2e-7) <= r <= hi * (1 + xtol + 2e-7), (delta, r, hi)


# ---------------------------------------------------------------- big25: the power step without the accurate DFT (§25)
def _exact_circular_power(pmf: np.ndarray, N: int, n: int):
    """The exact circular n-fold convolution of the folded pmf (mpmath DFT at 40 digits, O(N^2))."""
    import mpmath as mp

    from sharpdp.shuffle.accountant.fft import fold

    with mp.workdps(40):
        xs = [mp.mpf(float(v)) for v in fold(pmf, N)]
        w = [mp.exp(-2j * mp.pi * k / N) for k in range(N)]
        Z = [mp.fsum(xs[j] * w[(j * k) % N] for j in range(N)) ** n for k in range(N)]
        return [mp.re(mp.fsum(Z[k] * mp.conj(w[(j * k) % N]) for k in range(N))) / N for j in range(N)]


def test_power_step_bound_with_and_without_the_accurate_dft():
    """§25 keeps the power step's result without the accurate DFT (budget 0) where its bound is small: that bound must
    be a bound. convolve's err_q (l2 distance to the exact circular convolution) against mpmath's DFT at 40 digits,
    budget 0 and the accurate DFT's budget, on 30 pmfs (random, geometric down to e^-30, two atoms 1 - 1e-9 and 1e-9,
    steep powers, Gaussian bumps; mass 1, 1 - 1e-6, 1 - 1e-3), n from 1 to 1e5, N = 32..64; and the cheap and accurate
    results within the sum of their bounds. Worst observed error / err_q: 0.035 (both budgets)."""
    import mpmath as mp

    from sharpdp.shuffle.accountant.fft import Part, convolve
    from sharpdp.shuffle.accountant.limits import DFT_WORK

    rng = np.random.default_rng(11)
    worst = 0.0
    for trial in range(30):
        N = int(rng.choice([32, 48, 64]))
        K = int(rng.integers(1, N // 2))
        kind = trial % 5
        x = np.arange(K + 1)
        g = [rng.random(K + 1), np.exp(-rng.random() * 30 * x / K), np.r_[1 - 1e-9, np.zeros(K - 1), 1e-9],
             rng.random(K + 1) ** 20, np.exp(-0.5 * ((x - K / 2) / (0.1 + K / 8)) ** 2)][kind]
        g = g / np.sum(g) * (1 - float(rng.choice([0, 1e-6, 1e-3])))
        n = int(rng.choice([1, 2, 7, 50, 1000, 10**5]))
        exact = _exact_circular_power(g, N, n)
        got = [convolve([Part(g, n)], N, thr, work, 1) for work, thr in ((0.0, 1e-30), (DFT_WORK, 1e-30))]
        for c in got:
            err = float(mp.sqrt(mp.fsum((mp.mpf(float(c.q[j])) - exact[j]) ** 2 for j in range(N))))
            assert err <= c.err_q, (trial, N, K, n, err, c.err_q)
            worst = max(worst, err / c.err_q)
        assert np.linalg.norm(got[0].q - got[1].q) <= (got[0].err_q + got[1].err_q) * (1 + 1e-9)
    assert worst > 1e-3  # (the bound is not vacuous on these inputs)


@pytest.mark.slow
@pytest.mark.parametrize("make,n,eps", [
    (lambda rt: sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.3, 0.5, 1), 10**5, rel_tol=rt), 10**5, 0.1),
    (lambda rt: sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.0, 1.0, 1), 1000, "replace", rel_tol=rt), 1000, 0.1),
    (lambda rt: sh.ShuffleAccountant(sh.GaussianRandomizer(0.7, 1), 10**4, "replace", rel_tol=rt), 10**4, 0.1)])
def test_cheap_power_brackets_meet_the_tight_accurate_engine(make, n, eps):
    """Families the builder's tests leave out (BMG rounds, zero-out and replace through bot; the Gaussian randomizer
    replace through bot): with §25's rule the bracket at rel_tol 1e-2 keeps cheap results (2, 120 and 146 engine
    calls measured on big25 e26c261's rule) and still intersects the always-accurate engine's bracket at rel_tol
    1e-4."""
    from test_big25_cheap_power import accurate_always, count_kept

    sh.clear_caches()
    with count_kept() as k:
        lo, up = make(1e-2).get_delta_bounds(eps)
    assert k[0] > 0
    sh.clear_caches()
    with accurate_always():
        tlo, tup = make(1e-4).get_delta_bounds(eps)
    assert tup - tlo <= 1e-3 * tlo
    assert lo <= tup and tlo <= up, (lo, up, tlo, tup)


# ---------------------------------------------------------------- rep25: far_tail's cut rounds settled (§26)
# get_delta_bounds(eps) of ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "replace") (caches cleared), computed on
# branch s25 (before §25 and §26): (sigma0, n, eps, lower, upper) as float.hex. On rep25 §26's rule cuts rounds in each
# cell (3 - 51 cut states counted per cell); 92 cells of a sweep (sigma0 0.46 - 1.5, n 10 - 1e5, eps 0.1 - 8, replace,
# and 12 zero-out cells) gave the same floats on rep25 and s25. (*) re-pinned after the merge of the engine's faster
# tilt search (docs/accountant_tail.md §25: any theta > 0 is a valid tilt, docs/accountant.md §3.4; the root found by
# another iteration moves the last bits, <= 1.7e-14 relative here): the new floats computed with §26's rule on and
# off (certify_bigjump's doomed=False) with CHEAP_POWER = 0, bit for bit equal, so the pins still test §26's claim.
# (**) re-pinned after the compiled cells' exact empty intervals (docs/accountant_tail.md §29): nested in the old
# bracket, moved <= 2.8e-6 relative (1.0, n = 1e4, eps = 1: the upper value; the others <= 1.0e-8); computed the same
# way: §26's rule on and off (doomed=False) with CHEAP_POWER = 0, bit for bit equal, and equal to the default run.
# (***) re-pinned after docs/composition.md §2.7 (far_tail.try_certify takes the shift charge of docs/accountant_tail.md §12/§14 where it costs
# <= 1e-3 rel_tol of the lower value instead of a second run on the lowered law): the lower value 1.56e-7 relative
# lower (was 0x1.72c15a518ce6ap-18), the upper unchanged; computed the same way, bit for bit equal rule on and off.
S25_FLOATS = [
    # (**) session 28, big28: the four re-pinned cells nested in their old brackets (tighter on both sides or one),
    # the body passes' quarter steps (docs/accountant_tail.md §31.2); old values in the comments
    (0.46, 1000, 4.0, "0x1.1c6444699b0a0p-1", "0x1.1c6e08b14a129p-1"),  # (*) (**) s28: was 0x1.1c629035b5c7cp-1, 0x1.1c6e667c13503p-1
    (0.46, 10000, 8.0, "0x1.2c8c100b914c3p-4", "0x1.2d6218e8c10cap-4"),  # (**) s28: upper was 0x1.2d6797aca08c4p-4
    (0.7, 10000, 4.0, "0x1.6b64667e64ae7p-11", "0x1.6ba4c5e3a9cd3p-11"),  # (*) (**)
    (1.0, 1000, 0.1, "0x1.9c5d4f69846e4p-4", "0x1.9cd5faba0bf20p-4"),  # (*) (**)
    # (**) session 30, tail30: nested (the lower value higher; was 0x1.72c15685c56f6p-18): the shift charge's least split
    # (docs/accountant_tail.md §34.2) makes the charge d P smaller
    (1.0, 1000, 4.0, "0x1.72c159f244814p-18", "0x1.72e715697f896p-18"),  # (*) (**) (***)
    (1.0, 10000, 1.0, "0x1.2c5860fc776a6p-15", "0x1.2c9eb2c3afce0p-15"),  # (**) s28: was 0x1.2c5382e8c6e2bp-15, 0x1.2c9f516457cb4p-15
    (1.5, 100, 1.0, "0x1.ce51971b5d35cp-10", "0x1.cf7e5c30098c3p-10"),  # (*) (**)
    (1.5, 1000, 0.1, "0x1.014e0504c945ap-6", "0x1.01d5e2479b592p-6"),  # (*) (**)
    (1.5, 1000, 4.0, "0x1.783191aa08f12p-45", "0x1.7be01f57a90d5p-45"),  # (*) (**) s28: upper was 0x1.7be0d48fac011p-45
]


@pytest.mark.parametrize("sigma0,n,eps,lo_hex,up_hex", S25_FLOATS)
def test_far_tail_settle_gives_the_floats_of_s25(sigma0, n, eps, lo_hex, up_hex, monkeypatch):
    """§26 claims the same floats as before, §25 the same floats with its rule off (CHEAP_POWER = 0): with the rule off,
    get_delta_bounds equals branch s25's floats bit for bit; with it on (§25's cheap power results kept), the bracket
    still intersects s25's. Mutations caught: _settle never refining a cut round (4 of 9 cells move), its lower value
    of a bounded-above round from the largest Body_lo of ALL rounds instead of the later ones (1 of 9). Not caught
    (no float moves on these 9 cells nor on the 92-cell sweep): the lower-value test of _settle dropped (the builder's
    tests/test_rep25_far_tail_settle.py catches it), the cut allowed in the last round (speed only). §25: the engine's
    second run without the accurate DFT (budget 0 in lattice.engine's rerun): 3 of 9 cells move with the rule off."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    switch(monkeypatch, "VIA_BOTTOM_CHORD", False)  # (**) session 41, rep41: docs/accountant.md §9.19 moves this cell
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)  # (**) session 41, body41: docs/accountant_tail.md §59.2
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    switch(monkeypatch, "HAT_LOWER", False)  # (**) session 35, big35: pins main's floats; §45's values: test_big35_hat_lower.py
    from test_big25_cheap_power import accurate_always

    from sharpdp.shuffle.accountant.via_bottom_cliff import CliffSearch

    # (**) session 33, lead: the far tail's floats on s25's split; the legs' vertex model of docs/accountant.md §9.10
    # reports another split at [1.0-1000-0.1] and [1.5-100-1.0] (another split's chain, certified): the golden section
    # alone (MODEL = False) is what this test compares
    monkeypatch.setattr(CliffSearch, "MODEL", False)
    main_floats(monkeypatch)  # (**) session 34, tail34: un-nested, pins an older rule's floats on purpose: docs/accountant_tail.md §44's switches off
    lo0, up0 = float.fromhex(lo_hex), float.fromhex(up_hex)
    sh.clear_caches()
    with accurate_always():
        lo, up = sh.ShuffleAccountant(sh.GaussianRandomizer(sigma0, 1), n, "replace").get_delta_bounds(eps)
    assert (float(lo).hex(), float(up).hex()) == (lo_hex, up_hex)
    sh.clear_caches()
    lo, up = sh.ShuffleAccountant(sh.GaussianRandomizer(sigma0, 1), n, "replace").get_delta_bounds(eps)
    assert lo <= up0 and lo0 <= up, (lo, up, lo0, up0)


# ---------------------------------------------------------------- found: get_epsilon refuses a delta get_delta certifies
def _gauss_replace():
    return sh.ShuffleAccountant(sh.GaussianRandomizer(2.0, 1), 1000, "replace")


def test_round_get_epsilon_reaches_what_its_get_delta_certifies(monkeypatch):
    """ShuffleAccountant(GaussianRandomizer(2), n = 1000, replace): get_delta(6) = 9.965e-28 <= 1e-27, so get_epsilon
    (1e-27) must answer (it does, 4.85, once get_delta has been called on the object: the refusal floor is
    min(sampler_floor(EPS_MAX), values seen so far))."""
    switch(monkeypatch, "VIA_BOTTOM_FLOOR_STOP", False)  # (**) session 36, lead: below the value floor 1e-24
    # get_delta reports the first certified split (docs/accountant.md §9.13), not the minimum this pin compares with
    assert _gauss_replace().get_delta(6.0) <= 1e-27
    r = _gauss_replace().get_epsilon(1e-27)
    assert r <= 6.0 * (1 + 1e-3)


@pytest.mark.slow
def test_composed_get_epsilon_below_the_pair_mass_with_replace_rounds():
    # (found in review rev25b: basic composition's get_epsilon asks each round's get_epsilon at delta / K, which
    # refuses (the test above); fixed by comp26: the composed refusal path searches basic composition's floor and
    # bisects V_basic below it, docs/composition.md §4.4)
    """3 replace rounds: the pair route's infinity mass is 1.40e-18; basic composition certifies 3 x 9.97e-28 =
    2.99e-27 at eps = 18 (get_delta there is at most that value), so get_epsilon(3.1e-27) must answer."""
    assert basic_bounds([(_gauss_replace(), 3)], 18.0, lower=False)[1] <= 3.1e-27  # (another object: see above)
    ca = sh.ComposedAccountant([(_gauss_replace(), 3)])
    r = ca.get_epsilon(3.1e-27)  # (the round's get_delta not called before on this object; it would answer then)
    assert ca.get_delta(r) <= 3.1e-27 and r <= 18.0 * (1 + 1e-3)
