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
from scipy.stats import binom

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.laws import FiniteLaw

LAT = pytest.importorskip("sharpdp.shuffle.accountant.lattice")
PL = pytest.importorskip("sharpdp.shuffle.accountant.plain")
if not hasattr(LAT, "PosMgf"):  # before the merge of the charged clamp
    pytest.skip("needs the Chernoff-charged clamp (docs/accountant_atoms.md §5)", allow_module_level=True)

U = 2.0**-53
mpmath.mp.dps = 50


class _OneLaw:
    """Accountant input with one given (gamma, atom law) under every adjacency."""

    def __init__(self, gamma: float, values, probs, value_error: float = 0.0) -> None:
        self.gamma = gamma
        self.law = FiniteLaw(np.asarray(values, dtype=float), np.asarray(probs, dtype=float), value_error)

    def privacy_amplification_laws(self, epsilon, adjacency="zero_out"):
        return [(self.gamma, self.law)]


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


def _sum_law(w: dict, n: int, clamp: Fraction | None = None) -> dict:
    if clamp is not None:
        c: dict = {}
        for v, q in w.items():
            c[max(v, clamp)] = c.get(max(v, clamp), 0) + q
        w = c
    dist = {Fraction(0): Fraction(1)}
    for _ in range(n):
        new: dict = {}
        for s, p in dist.items():
            for v, q in w.items():
                new[s + v] = new.get(s + v, 0) + p * q
        dist = new
    return dist


def _pos(dist: dict, shift: Fraction = Fraction(0)) -> Fraction:
    return sum(((s - shift) * p for s, p in dist.items() if s > shift), Fraction(0))


def exact_dup(gamma: Fraction, values, probs, n: int) -> Fraction:
    return _pos(_sum_law(_user_law(gamma, values, probs), n)) / (n * gamma)


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
        base = _pos(_sum_law(w, n))
        ydist = _sum_law(wplus, n - 1)
        for B in range(0, (n - 1) * top + 1):
            diff = _pos(_sum_law(w, n, clamp=Fraction(-B))) - base
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
