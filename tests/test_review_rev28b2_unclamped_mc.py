"""Review rev28b, claim 1 (c): an independent Asmussen-Kroese conditional Monte Carlo of D_up for the BMG's
replace-one law L = a + b e^{rZ - r^2/2} + b_minus e^{-rZ - r^2/2} (increasing in Z), at M = n gamma users (O(1/M)
relative from M's spread). The accountant's replace-one report (its lower value is max(lower, unclamped_lower),
docs/accountant_tail.md §32 (e)) must not lie above the estimate by more than 5 standard errors + 1% relative."""

import math

import numpy as np
import pytest
from scipy import special

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.randomizers import BlanketMixedGaussian


def _tail(a, b, c, r, t):
    """(P(L > t), E[L; L > t]) for L = a + b X+ + c X-, b > 0 >= c (increasing in Z): Z's threshold by bisection."""
    L = lambda z: a + b * np.exp(r * z - r * r / 2) + c * np.exp(-r * z - r * r / 2)
    lo, hi = np.full(t.shape, -40.0), np.full(t.shape, 40.0)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        up = L(mid) > t
        hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
    z = hi
    return special.ndtr(-z), a * special.ndtr(-z) + b * special.ndtr(r - z) + c * special.ndtr(-r - z)


def _ak(a, b, c, r, M, N, seed=3):
    rng = np.random.default_rng(seed)
    rows = max(1, 2_000_000 // (M - 1))
    parts = []
    for i in range(0, N, rows):
        Z = rng.standard_normal((min(rows, N - i), M - 1))
        X = a + b * np.exp(r * Z - r * r / 2) + c * np.exp(-r * Z - r * r / 2)
        s, m = X.sum(axis=1), X.max(axis=1)
        p, e = _tail(a, b, c, r, np.maximum(m, -s))
        parts.append(s * p + e)
    g = np.concatenate(parts)
    return float(g.mean()), float(g.std(ddof=1) / math.sqrt(N))


def _ak_mixed(a, b, c, r, n, gamma, N, seed=4):
    """Unbiased: M ~ Bin(n, gamma) per row (no O(1/M) term): D_up = E[M (s P(L > t) + E[L; L > t])] / (n gamma)."""
    rng = np.random.default_rng(seed)
    Ms = rng.binomial(n, gamma, N)
    W = int(Ms.max()) - 1
    rows = max(1, 2_000_000 // W)
    parts = []
    for i in range(0, N, rows):
        Mi = Ms[i:i + rows]
        Z = rng.standard_normal((Mi.size, W))
        X = a + b * np.exp(r * Z - r * r / 2) + c * np.exp(-r * Z - r * r / 2)
        valid = np.arange(W)[None, :] < (Mi - 1)[:, None]
        s = np.where(valid, X, 0.0).sum(axis=1)
        m = np.where(valid, X, -np.inf).max(axis=1)
        p, e = _tail(a, b, c, r, np.maximum(m, -s))
        parts.append(Mi * (s * p + e))
    g = np.concatenate(parts) / (n * gamma)
    return float(g.mean()), float(g.std(ddof=1) / math.sqrt(N))


@pytest.mark.parametrize("gamma,sigma0,eps", [(0.2, 0.5, 3.0), (0.05, 0.3, 3.0)])
def test_report_bracket_contains_unbiased_ak(gamma, sigma0, eps):
    """The bracket against the unbiased estimate: 5 standard errors, no relative slack."""
    n = 10**4
    b = BlanketMixedGaussian(gamma, sigma0, 1)
    ((g, law),) = laws_for(b, eps, "replace")
    est, se = _ak_mixed(law.a, law.b, law.b_minus, law.r, n, g, 20000)
    rep = ShuffleAccountant(b, n, "replace", rel_tol=1e-3).report(eps)
    print(gamma, sigma0, eps, rep.lower, rep.upper, est, se, (rep.lower - est) / se)
    assert rep.lower <= est + 5 * se and rep.upper >= est - 5 * se, (rep.lower, rep.upper, est, se)


@pytest.mark.parametrize("gamma,sigma0,eps", [(0.2, 0.5, 1.0), (0.2, 0.5, 3.0), (0.05, 0.3, 1.0), (0.05, 0.3, 3.0)])
def test_report_lower_below_ak(gamma, sigma0, eps):
    n = 10**4
    b = BlanketMixedGaussian(gamma, sigma0, 1)
    ((g, law),) = laws_for(b, eps, "replace")
    assert law.weight == 1.0 and not math.isfinite(law.z_lo) and law.b > 0 >= law.b_minus
    M = int(round(n * g))
    est, se = _ak(law.a, law.b, law.b_minus, law.r, M, 20000)
    rep = ShuffleAccountant(b, n, "replace", rel_tol=1e-3).report(eps)
    print(gamma, sigma0, eps, rep.lower, rep.upper, est, se)
    assert rep.lower <= est * 1.01 + 5 * se, (rep.lower, est, se)
    assert rep.upper >= est * 0.99 - 5 * se, (rep.upper, est, se)
