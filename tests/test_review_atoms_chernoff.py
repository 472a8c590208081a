"""Adversarial review of the Chernoff-charged shallower lower clamp (docs/accountant_atoms.md §5, Lemma 2) and of
the composed get_epsilon (docs/accountant_atoms.md §4).

Part 1 compares with independent evaluations of the blanket quantity D_up = E[(sum_i B_i L_i)_+] / (n gamma) of the
SAME law (never a mechanism's delta):
* Lemma 2 itself, exactly in rationals (n <= 6, every integer depth B);
* the hypothesis M >= E[e^{lam X_+}] of the charge, against the exact moment of the stored law raised by its
  value_error, for the M of actual passes (``PosMgf.from_lattice``);
* the lower value of ``lattice_pass`` at EVERY shallower depth B (not only where ``refine`` puts it): exact
  rationals at n <= 6, a direct-convolution reference at n = 100..3000 (the far atom counted by its binomial,
  the rest convolved directly: non-negative terms only);
* the accountant's bracket where ``refine`` takes the charged clamp (instrumented: at least one charged pass).
Part 2 checks ``ComposedAccountant.get_epsilon`` against plain bisection on ``get_delta`` and the
lower value of a prepared window at another eps against the exact divergence of hand-made product pairs
(direct convolution), and for real rounds (k-RR, BMG, Gaussian randomizer; zero-out and replace).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy.special import gammaln
from scipy.stats import binom

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.laws import FiniteLaw
from test_review_atoms import _exact_sum_law, _OneLaw  # (exact n-fold law, any numeric weights; one-law input)

LAT = pytest.importorskip("sharpdp.shuffle.accountant.lattice")
PL = pytest.importorskip("sharpdp.shuffle.accountant.plain")
if not hasattr(LAT, "PosMgf"):  # before the merge of the charged clamp
    pytest.skip("needs the Chernoff-charged clamp (docs/accountant_atoms.md §5)", allow_module_level=True)

U = 2.0**-53
mpmath.mp.dps = 50


def _charged(law, n, res) -> bool:
    """True when the pass's tail_B is the Chernoff charge of Lemma 2 (a shallower clamp, not the exact one)."""
    return (not LAT.clamp_exact(law, n, res.grid.T, res.grid.B) and res.pos_mgf is not None
            and res.tail_B < law.tail_lower(res.grid.B))


@pytest.fixture
def charged_passes(monkeypatch):
    """Records (n, B, lower) of every pass of ``refine`` whose lower clamp was Chernoff-charged."""
    seen: list = []
    orig = PL.lattice_pass

    def spy(law, gamma, n, *args, **kwargs):
        res = orig(law, gamma, n, *args, **kwargs)
        if not hasattr(res, "h_fit") and _charged(law, n, res):
            seen.append((n, res.grid.B, res.lower))
        return res

    monkeypatch.setattr(PL, "lattice_pass", spy)
    return seen


# ------------------------------------------------------------------ exact references
def _user_law(gamma: Fraction, values, probs) -> dict:
    """{value: exact probability} of X = B L, B ~ Bern(gamma) (values as Fractions)."""
    w = {Fraction(0): 1 - gamma}
    for v, p in zip(values, probs):
        w[Fraction(v)] = w.get(Fraction(v), 0) + gamma * Fraction(p)
    return w


def _pos(dist: dict, shift: Fraction = Fraction(0)) -> Fraction:
    return sum(((s - shift) * p for s, p in dist.items() if s > shift), Fraction(0))


def exact_dup(gamma: Fraction, values, probs, n: int) -> Fraction:
    return _pos(_exact_sum_law(_user_law(gamma, values, probs), n)) / (n * gamma)


def conv_dup(gamma: float, values, probs, n: int) -> tuple[float, float]:
    """(D_up, relative error bound) for integer atoms: the most negative atom -b (probability q = gamma p_b per
    user) is counted by its binomial, the others (and the inactive users at 0) convolved directly:
    D_up = sum_m Bin(n, q)(m) E[(T_{n-m} - m b)_+] / (n gamma), T_k the sum of k users of the conditional law.
    Every term is a product-sum of non-negative doubles; scipy's binomial pmf is taken to 1e-12 relative."""
    order = np.argsort(values)
    vals = [int(values[i]) for i in order]
    prb = [float(probs[i]) for i in order]
    b, q = -vals[0], gamma * prb[0]
    sv = [0] + vals[1:]
    sw = np.array([1.0 - gamma] + [gamma * p for p in prb[1:]]) / (1.0 - q)
    lo, hi = min(sv), max(sv)
    pm = binom.pmf(np.arange(n + 1), n, q)
    cur = np.array([1.0])
    total = 0.0
    for k in range(n + 1):
        m = n - k
        if pm[m] > 0:
            s = np.arange(cur.size) + k * lo - m * b
            pos = s > 0
            total += pm[m] * float(np.sum(s[pos] * cur[pos]))
        if k < n:
            new = np.zeros(cur.size + hi - lo)
            for v, w in zip(sv, sw):
                new[v - lo: v - lo + cur.size] += w * cur
            cur = new
    return total / (n * gamma), (n * (len(sv) + 4) + cur.size + 8) * U + 1e-12


# ------------------------------------------------------------------ Lemma 2, exactly
LAWS = [  # (gamma, integer atoms, probabilities): a far negative atom and a small positive part
    (Fraction(1, 2), [3, -1, -20], [Fraction(3, 10), Fraction(68, 100), Fraction(2, 100)]),
    (Fraction(3, 4), [1, 0, -1, -12], [Fraction(1, 8), Fraction(1, 2), Fraction(5, 16), Fraction(1, 16)]),
    (Fraction(1), [2, -1, -9], [Fraction(1, 5), Fraction(3, 4), Fraction(1, 20)]),
    (Fraction(1, 16), [5, -2, -30], [Fraction(1, 2), Fraction(7, 16), Fraction(1, 16)]),
]


@pytest.mark.parametrize("case", range(len(LAWS)))
def test_lemma2_exactly(case):
    """0 <= E[(S_c)_+] - E[S_+] <= n gamma P(L < -B) E[(Y - B)_+] for every integer depth 0 <= B <= (n - 1) top,
    n = 2..5 (rationals), and the Chernoff form with the exact M at 8 lam is above it; the bound is not
    vacuous (the difference is positive and within a factor 100 of the first bound for some B)."""
    g, vals, probs = LAWS[case]
    w = _user_law(g, vals, probs)
    wplus: dict = {}
    for v, p in w.items():
        wplus[max(v, Fraction(0))] = wplus.get(max(v, Fraction(0)), 0) + p
    top = max(vals)
    tight = False
    for n in range(2, 6):
        base = _pos(_exact_sum_law(w, n))
        ydist = _exact_sum_law(wplus, n - 1)
        for B in range(0, (n - 1) * top + 1):
            diff = _pos(_exact_sum_law(w, n, clamp=Fraction(-B))) - base
            pbelow = sum((Fraction(p) for v, p in zip(vals, probs) if v < -B), Fraction(0))
            bound = n * g * pbelow * _pos(ydist, Fraction(B))
            assert 0 <= diff <= bound, (n, B, diff, bound)
            tight |= diff > 0 and bound <= 100 * diff
            for lam in np.geomspace(0.05, 5.0, 8):
                m = float(sum(p * Fraction(math.exp(lam * float(v))) for v, p in wplus.items()))
                ch = float(n * g * pbelow) * math.exp(-lam * B) * m ** (n - 1) / (math.e * lam)
                assert float(bound) <= ch * (1 + 1e-12), (n, B, lam, float(bound), ch)
    assert tight


# ------------------------------------------------------------------ the charge's hypotheses: M of actual passes
FLOAT_LAWS = [  # (gamma, atoms, probabilities, value_error)
    (0.5, [3.0, -1.0, -200.0], [0.3, 0.698, 0.002], 0.0),
    (0.9, [2.0, 0.0, -1.0, -150.0], [0.01, 0.5, 0.488, 0.002], 0.0),
    (1.0, [1.0, -1.0, -40.0], [0.45, 0.53, 0.02], 0.0),
    (0.37, [0.3 + 1e-3, -0.7, -63.1], [0.41, 0.58, 0.01], 1e-3),  # off-lattice atoms with a rounding bound
    (0.8, [1e-6, -1e-6, -1.0], [0.5, 0.49, 0.01], 1e-7),  # tiny positive part
]


@pytest.mark.parametrize("case", range(len(FLOAT_LAWS)))
def test_pass_mgf_bounds_the_true_moment(case):
    """For passes at several (h, B), PosMgf's log M(lam) >= log E[e^{lam X_+}] of the law whose atoms are the
    stored ones raised by value_error (the largest law allowed; mpmath at 50 digits),
    at every lam of its grid: the charge's hypothesis (docs/accountant_atoms.md §5)."""
    g, vals, probs, ve = FLOAT_LAWS[case]
    law = FiniteLaw(np.array(vals), np.array(probs), ve)
    top = max(vals)
    n = 50
    checked = 0
    for h in (top / 3.0, top / 17.0, top / 64.0):
        for B in (h, 5.3 * h, 0.5 * (n - 1) * top, -min(vals)):
            res = LAT.lattice_pass(law, g, n, h, top, B, 1e-2, 1)
            if hasattr(res, "h_fit") or res.pos_mgf is None:
                continue
            for lam, lm in zip(res.pos_mgf.lams, res.pos_mgf.logm):
                lam_m = mpmath.mpf(float(lam))
                m = (1 - mpmath.mpf(g)) + mpmath.fsum(mpmath.mpf(g) * mpmath.mpf(p) * mpmath.exp(
                    lam_m * max(mpmath.mpf(v) + mpmath.mpf(ve), 0)) for v, p in zip(vals, probs))
                assert lm >= float(mpmath.log(m)) * (1 - 1e-14) - 1e-300, (h, B, lam, lm, float(mpmath.log(m)))
            checked += 1
    assert checked >= 6


# ------------------------------------------------------------------ lattice_pass's lower value at every depth
@pytest.mark.parametrize("case", range(len(LAWS)))
def test_pass_lower_at_every_shallow_depth_small_n(case):
    """lattice_pass(h, B) with T = top and B from h to beyond the exact depth, n = 2..6: lower <= D_up (exact
    rationals) <= upper, and the charged clamp is used by some of these passes."""
    g, vals, probs = LAWS[case]
    law = FiniteLaw(np.array(vals, dtype=float), np.array([float(p) for p in probs]))
    top = float(max(vals))
    charged = 0
    for n in range(2, 7):
        ex = exact_dup(g, vals, probs, n)
        for h in (0.5, 0.125, 1 / 32):
            for B in sorted({h, 1.0, 2.0, 3.5, 0.5 * (n - 1) * top, (n - 1) * top - h, float(-min(vals))}):
                if B < h:
                    continue
                res = LAT.lattice_pass(law, float(g), n, h, top, B, 1e-3, 1)
                if hasattr(res, "h_fit"):
                    continue
                assert Fraction(res.lower) <= ex <= Fraction(res.upper), (n, h, B, res.lower, float(ex), res.upper)
                charged += _charged(law, n, res)
    assert charged >= 5


MED = [  # (gamma, integer atoms, probabilities, n, charged passes with a positive lower value expected)
    (0.5, [3, -1, -200], [0.3, 0.698, 0.002], 300, 0),
    (0.9, [2, 0, -1, -150], [0.01, 0.5, 0.488, 0.002], 100, 6),  # rare top: the charge is tiny
    (1.0, [1, -1, -40], [0.45, 0.53, 0.02], 1000, 0),
    (0.25, [4, -1, -300], [0.2, 0.799, 0.001], 3000, 0),
    (0.6, [5, 0, -1, -80], [0.004, 0.3, 0.69, 0.006], 200, 1),  # rare top
]


@pytest.mark.parametrize("case", range(len(MED)))
def test_pass_lower_at_every_shallow_depth_large_n(case):
    """lattice_pass at depths B = (n - 1) top 2^-j (the depths ``_shrink_B`` tries) and fractions of the
    support's depth, two grids, n = 100..3000 (no blocks here: the law itself): lower <= D_up (binomial x
    direct convolution) <= upper; where the top is rare the charged clamp is used with a positive lower value
    (the charge beats E[(-B - L)_+] only when E[Y] << B, as Lemma 2 makes plain)."""
    g, vals, probs, n, want = MED[case]
    law = FiniteLaw(np.array(vals, dtype=float), np.array(probs))
    top = float(max(vals))
    ref, rel = conv_dup(g, vals, probs, n)
    sd = law.std()
    charged = 0
    for h in (sd / 64, sd / 512):
        depths = [LAT.exact_clamp_depth(law, n) * 2.0**-j for j in range(9)] + [-min(vals) * f for f in
                                                                                (0.3, 0.5, 0.7, 0.9, 0.97)]
        for B in sorted(depths):
            if B < h:
                continue
            res = LAT.lattice_pass(law, g, n, h, top, B, 1e-3, 1)
            if hasattr(res, "h_fit"):
                continue
            assert res.lower <= ref * (1 + rel) + 1e-300 and res.upper >= ref * (1 - rel), (h, B, res.lower, ref,
                                                                                            res.upper)
            charged += _charged(law, n, res) and res.lower > 0
    assert charged >= want


@pytest.mark.parametrize("case", range(len(MED)))
def test_accountant_bracket_where_refine_charges_the_clamp(case, charged_passes):
    """The accountant's bracket at n = 100..3000 (blocks and the charged clamp in refine) contains D_up."""
    g, vals, probs, n, _ = MED[case]
    lo, up = ShuffleAccountant(_OneLaw(g, [float(v) for v in vals], probs), n).get_delta_bounds(0.0)
    ref, rel = conv_dup(g, vals, probs, n)
    assert lo <= ref * (1 + rel) + 1e-300 and up >= ref * (1 - rel), (lo, ref, up)
    assert charged_passes, "the charged clamp was not exercised"


# ================================================================== Part 2: the composed get_epsilon
from sharpdp.shuffle.composition import ComposedAccountant  # noqa: E402
from sharpdp.shuffle.pair import DominatingPair  # noqa: E402


def _hand(pairs_counts, h: float) -> ComposedAccountant:
    """A ComposedAccountant over given DominatingPairs (no accountant behind them: the engine and get_epsilon
    only read the pairs and counts)."""
    ca = ComposedAccountant.__new__(ComposedAccountant)
    ca.adjacency = "zero_out"
    ca.parts = [(None, c) for _, c in pairs_counts]
    ca.value_discretization_interval = h
    ca.rel_tol = 1e-2
    ca._pair_options = {}
    ca._pairs = [p for p, _ in pairs_counts]
    ca._lower_pairs = None
    ca._parts_cache = {}
    return ca


def _rr_pair(m: int, h: float) -> DominatingPair:
    """Binary RR at eps0 = m h: losses +-m h, P(+) = e^eps0 / (1 + e^eps0) (exactly on the lattice)."""
    p = 1.0 / (1.0 + math.exp(-m * h))
    return DominatingPair(h, np.array([-m, m], dtype=np.int64), np.array([1.0 - p, p]), 0.0)


def _gauss_pair(mu: float, h: float, width: float = 9.0) -> DominatingPair:
    """Gaussian mechanism's privacy loss N(mu, 2 mu) under P, rounded UP to the lattice (interval ((i-1)h, ih] to
    i), the lower tail moved up to the first node, the upper tail sent to +inf (a dominating pair)."""
    from scipy.stats import norm
    sd = math.sqrt(2 * mu)
    lo, hi = math.floor((mu - width * sd) / h), math.ceil((mu + width * sd) / h)
    idx = np.arange(lo, hi + 1)
    cdf = norm.cdf(idx * h, mu, sd)
    probs = np.diff(np.concatenate([[0.0], cdf]))
    return DominatingPair(h, idx.astype(np.int64), probs, float(norm.sf(hi * h, mu, sd)) * (1 + 1e-6) + 1e-300)


_HS_CACHE: dict = {}


def _exact_hs(pairs_counts, h: float, eps: float) -> float:
    """Hockey-stick divergence of the product pair at eps by direct convolution (non-negative terms; the law of
    the sum cached per product)."""
    key = tuple((id(p), c) for p, c in pairs_counts)
    if key not in _HS_CACHE:
        law, off, inf_log = np.array([1.0]), 0, 0.0
        for p, c in pairs_counts:
            g = np.zeros(int(p.losses[-1] - p.losses[0]) + 1)
            g[p.losses - p.losses[0]] = p.probs
            for _ in range(c):
                law = np.convolve(law, g)
            off += c * int(p.losses[0])
            inf_log += c * math.log1p(-p.infinity_mass)
        _HS_CACHE[key] = ((np.arange(law.size) + off) * h, law, -math.expm1(inf_log), [p for p, _ in pairs_counts])
    x, law, p_inf, _ = _HS_CACHE[key]
    w = np.where(x > eps, -np.expm1(np.minimum(eps - x, 0.0)), 0.0)
    return p_inf + float(np.sum(w * law))


def _rr_hs(m: int, h: float, k: int, eps: float) -> float:
    """k-fold binary RR pair: S = m h (2 J - k), J ~ Bin(k, p), closed sum over J."""
    p = 1.0 / (1.0 + math.exp(-m * h))
    j = np.arange(k + 1)
    s = m * h * (2 * j - k)
    return float(np.sum(binom.pmf(j, k, p) * np.where(s > eps, -np.expm1(np.minimum(eps - s, 0.0)), 0.0)))


_BISECT_PATHS: dict = {}


def _exact_start(ca, delta: float, top: float, exact) -> tuple[float, float]:
    """A start for _bisect's bracket from the exact divergence: lo where the exact value exceeds delta (so the
    certified get_delta, never below it, must too: asserted) and hi, 0.1 % above the exact crossing, the gap
    multiplied by 4 until get_delta(hi) <= delta (at most top). (0, top) when the exact value at 0 is already <= delta."""
    if exact(0.0) <= delta:
        return 0.0, top
    a, b = 0.0, top
    while b - a > 1e-4 * b:  # the exact crossing (cheap calls), to 1e-4 relative
        mid = 0.5 * (a + b)
        a, b = (a, mid) if exact(mid) <= delta else (mid, b)
    assert ca.get_delta(a) > delta, (delta, a, ca.get_delta(a), exact(a))  # certified >= exact > delta
    gap = 1e-3 * b
    while b + gap < top and ca.get_delta(b + gap) > delta:
        gap *= 4.0
    return a, min(b + gap, top)


def _bisect(ca, delta: float, xtol: float, exact=None) -> float:
    """Plain bisection on the certified get_delta (the former get_epsilon), from [0, top of the support],
    or, given the exact divergence, from the bracket :func:`_exact_start` finds (get_delta checked at its
    ends: fewer halvings, the same kind of reference).

    The brackets (lo, hi) visited depend on (ca, delta) only, not on xtol (xtol only says when to stop), so
    the path is kept per (ca, delta) and extended as needed: the answer for any xtol is exactly that of a
    fresh bisection (the first hi with hi - lo <= xtol hi), without repeating the get_delta calls."""
    key = (id(ca), delta)
    if key not in _BISECT_PATHS:
        h = ca.value_discretization_interval
        if ca.get_delta(0.0) <= delta:
            _BISECT_PATHS[key] = (ca, None)
        else:
            top = max(sum(c * int(p.losses[-1]) for p, c in zip(ca.pairs(), [c for _, c in ca.parts])) * h, h)
            start = (0.0, top) if exact is None else _exact_start(ca, delta, top, exact)
            _BISECT_PATHS[key] = (ca, [start])  # (ca kept alive: its id is not reused)
    path = _BISECT_PATHS[key][1]
    if path is None:
        return 0.0
    i = 0
    while True:
        lo, hi = path[i]
        if hi - lo <= xtol * hi:
            return hi
        if i + 1 == len(path):
            mid = 0.5 * (lo + hi)
            path.append((lo, mid) if ca.get_delta(mid) <= delta else (mid, hi))
        i += 1


def _check_epsilon(ca, delta: float, xtol: float, exact=None) -> float:
    """get_epsilon's claims: get_delta(answer) <= delta; answer (1 - xtol) not certified (get_delta there above
    delta, get_delta being non-increasing); the bracket overlaps plain bisection's; exact divergence <= delta."""
    ans = ca.get_epsilon(delta, xtol=xtol)
    assert ca.get_delta(ans) <= delta, (delta, xtol, ans, ca.get_delta(ans))
    if ans > 0:
        assert ca.get_delta(ans * (1 - xtol)) > delta, (delta, xtol, ans, ca.get_delta(ans * (1 - xtol)))
    bis = _bisect(ca, delta, xtol, exact)
    assert ans * (1 - xtol) <= bis and bis * (1 - xtol) <= ans, (delta, xtol, ans, bis)
    if exact is not None:
        assert exact(ans) <= delta * (1 + 1e-12), (delta, xtol, ans, exact(ans))
    return ans


DELTAS = [1e-3, 1e-6, 1e-10, 1e-14]
XTOLS = [1e-12, 1e-6, 1e-3, 0.3, 0.9]


@pytest.mark.parametrize("k", [1, 7, 100, 1000])
def test_get_epsilon_binary_rr_rounds(k):
    """k binary-RR pairs (eps0 = 1): every delta x xtol, against bisection and the exact binomial divergence
    (deltas the certified value at the support's top already meets: see the finding test below)."""
    h, m = 0.01, 100
    ca = _hand([(_rr_pair(m, h), k)], h)
    top = k * m * h
    for delta in DELTAS:
        if ca.get_delta(top) > delta:
            continue
        for xtol in XTOLS if k < 1000 else XTOLS[::2]:
            _check_epsilon(ca, delta, xtol, exact=lambda e: _rr_hs(m, h, k, e))


def test_get_epsilon_refuses_a_reachable_delta_at_the_support_top():
    """FINDING (robustness, not a privacy bound): 7 binary-RR pairs (eps0 = 1, no infinity mass): the exact
    delta(eps) is 0 for eps >= 7 and get_delta(7 (1 + 1e-15)) = 0, but get_epsilon(1e-14) raises "not above the
    composition's infinity mass 3.3e-14": the reachability check evaluates get_delta AT the top of the support
    (kmax h), where the weight is 0 but the engine's error terms are not, instead of beyond it (where _prepare
    returns the infinity mass alone)."""
    h, m, k = 0.01, 100, 7
    ca = _hand([(_rr_pair(m, h), k)], h)
    assert ca.get_delta(k * m * h * (1 + 1e-12)) == 0.0
    _check_epsilon(ca, 1e-14, 1e-3, exact=lambda e: _rr_hs(m, h, k, e))


@pytest.mark.parametrize("mix", range(2))
def test_get_epsilon_gaussian_and_mixed_rounds(mix):
    """Gaussian-mechanism pairs (mu = 0.02, rounded up to the lattice) alone and mixed with RR pairs, k = 5..300."""
    h = 0.02
    g1, rr = _gauss_pair(0.02, h), _rr_pair(25, h)
    pcs = [[(g1, 300)], [(g1, 50), (rr, 5)]][mix]
    ca = _hand(pcs, h)
    for delta in DELTAS:
        for xtol in XTOLS:
            _check_epsilon(ca, delta, xtol, exact=lambda e: _exact_hs(pcs, h, e))


def test_get_epsilon_fails_with_a_wide_gaussian_pair():
    """FINDING (robustness, not a privacy bound): 3 Gaussian pairs (mu = 0.5; the pair stores 35 trailing losses
    of probability 0, 8.8..9.5 nats, where the cdf differences underflow; DominatingPair allows probs >= 0) and 20
    RR pairs: get_delta(eps) = 1.0 for eps in [0.97, 1] x top (true value 3.4e-19, get_delta(0.9 top) =
    3.4e-19). There the tilted mean cannot reach eps (the nonzero losses stop below it), theta is capped at
    40/h = 2000, and C.tilt returns NaN nodes, tau and mass for that pair (0 x e^{theta x} overflow at the
    zero-probability top nodes; the same pair without its trailing zeros tilts fine), so _finish falls back to
    1.0. get_delta is then not monotone and get_epsilon raises "not above the composition's infinity mass 1.0"
    for EVERY delta."""
    h = 0.02
    pcs = [(_gauss_pair(0.5, h), 3), (_rr_pair(25, h), 20)]
    ca = _hand(pcs, h)
    top = sum(c * int(p.losses[-1]) for p, c in pcs) * h
    assert ca.get_delta(0.9 * top) < 1e-18
    _check_epsilon(ca, 1e-3, 1e-3, exact=lambda e: _exact_hs(pcs, h, e))


@pytest.fixture(scope="module")
def real_rounds():
    from sharpdp.shuffle import BlanketMixedGaussian, RandomizedResponse
    krr = ShuffleAccountant(RandomizedResponse(4, 2.0), 1000)
    bmg = ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 1000)
    rep = ShuffleAccountant(RandomizedResponse(2, 1.0), 50, "replace")
    return krr, bmg, rep


@pytest.mark.parametrize("which", range(4))
def test_get_epsilon_real_rounds(which, real_rounds):
    """Real rounds (4-RR eps0 = 2 and BMG(0.95, 4.6), zero-out, mixed; binary RR replace-one k = 1..1000):
    get_epsilon against bisection on get_delta, every delta x a few xtol."""
    krr, bmg, rep = real_rounds
    parts = [[(krr, 3), (bmg, 7)], [(bmg, 1)], [(rep, 1)], [(rep, 1000)]][which]
    ca = ComposedAccountant(parts, 1e-3)
    for delta in DELTAS if which < 3 else DELTAS[::3]:
        for xtol in (1e-9, 1e-3, 0.5) if which < 3 else (1e-3,):
            _check_epsilon(ca, delta, xtol)


@pytest.mark.parametrize("mix", range(3))
def test_prepared_window_lower_and_upper_at_other_eps(mix):
    """_finish(eps', _prepare(eps)) brackets the exact divergence for eps' from 0.3 eps to 3 eps (the lower end
    of get_epsilon's bracket is confirmed by such a lower value at a = r (1 - xtol/2), xtol up to 1)."""
    h = 0.02
    g1, g2, rr = _gauss_pair(0.02, h), _gauss_pair(0.5, h), _rr_pair(25, h)
    pcs = [[(g1, 300)], [(g2, 3), (rr, 20)], [(rr, 200)]][mix]
    ca = _hand(pcs, h)
    for eps in (0.2, 1.0, 3.0, 6.0):
        prep = ca._prepare(eps)
        if isinstance(prep, tuple):
            continue
        for f in (0.3, 0.5, 0.55, 0.9, 0.9995, 1.0, 1.0004, 1.4, 3.0):
            lo, up = ca._finish(eps * f, prep)
            ex = _exact_hs(pcs, h, eps * f)
            assert lo <= ex * (1 + 1e-12) + 1e-300 and up >= ex * (1 - 1e-12), (eps, f, lo, ex, up)


def _three_atom_dup(gamma: float, values, probs, n: int) -> float:
    """D_up of a three-atom law by the sum over the number A ~ Bin(n, gamma) of active users and their
    trinomial counts (positive terms only; A up to its mean + 25 sd + 40, beyond which the binomial mass is
    below 1e-40)."""
    a_max = int(n * gamma + 25 * math.sqrt(n * gamma) + 40)
    lp = np.log(np.asarray(probs))
    total = 0.0
    for A in range(1, a_max + 1):
        c0, c1 = np.meshgrid(np.arange(A + 1), np.arange(A + 1), indexing="ij")
        ok = c0 + c1 <= A
        c0, c1 = c0[ok], c1[ok]
        c2 = A - c0 - c1
        s = c0 * values[0] + c1 * values[1] + c2 * values[2]
        pos = s > 0
        lw = (gammaln(A + 1) - gammaln(c0 + 1) - gammaln(c1 + 1) - gammaln(c2 + 1) + c0 * lp[0] + c1 * lp[1]
              + c2 * lp[2])
        total += binom.pmf(A, n, gamma) * float(np.sum(np.exp(lw[pos]) * s[pos]))
    return total / (n * gamma)


def test_krr_replace_at_large_eps0_where_refine_charges_the_clamp(charged_passes):
    """10-RR eps0 = 8, replace-one, n = 1e4 (the motivating shape of docs/accountant_atoms.md §5: an atom near
    -e^eps0-ish far below a value that lives near 0; blocks of a few active users; refine halves B 4100 -> 130
    with the Chernoff charge): the bracket contains D_up by the trinomial sum (to the law's value_error)."""
    from sharpdp.shuffle import RandomizedResponse
    rr = RandomizedResponse(10, 8.0)
    n = 10**4
    for eps in (0.5, 2.0, 4.0):
        (g, law), = rr.privacy_amplification_laws(eps, "replace")
        ref = _three_atom_dup(g, law.values.tolist(), law.probs.tolist(), n)
        lo, up = ShuffleAccountant(rr, n, "replace").get_delta_bounds(eps)
        slack = 1e-9 * ref + 2 * law.value_error
        assert lo <= ref + slack and up >= ref - slack, (eps, lo, ref, up)
        assert up - lo <= 0.02 * ref  # not vacuous
    assert len(charged_passes) >= 3


@pytest.mark.parametrize("case", range(len(LAWS)))
def test_pass_lower_at_shallow_depths_with_a_value_error(case):
    """Stored atoms v + 1/4 with value_error 1/4 (the true atoms anywhere in [v, v + 1/2]), n = 2..5, shallow
    depths: lower <= D_up of v (the smallest law allowed, exact rationals) and upper >= D_up of v + 1/2."""
    g, vals, probs = LAWS[case]
    law = FiniteLaw(np.array(vals, dtype=float) + 0.25, np.array([float(p) for p in probs]), 0.25)
    top = float(max(vals)) + 0.25
    charged = 0
    for n in range(2, 6):
        small = exact_dup(g, vals, probs, n)
        big = exact_dup(g, [Fraction(v) + Fraction(1, 2) for v in vals], probs, n)
        for h in (0.25, 1 / 16):
            for B in (h, 1.0, 2.5, 0.5 * (n - 1) * top):
                if B < h:
                    continue
                res = LAT.lattice_pass(law, float(g), n, h, top, B, 1e-3, 1)
                if hasattr(res, "h_fit"):
                    continue
                assert Fraction(res.lower) <= small and Fraction(res.upper) >= min(big, 1), (n, h, B, res.lower,
                                                                                               float(small))
                charged += _charged(law, n, res)
    assert charged >= 3
