"""Independent reference for the k-RR blanket divergence (nothing from sharpdp is used).

k-RR with parameter eps0: with probability gamma = k / (e^eps0 + k - 1) a user reports a uniform
symbol (the blanket omega = uniform on k symbols), else its own. Privacy loss at eps of one blanket
sample y: L(y) = (mu_x(y) - e^eps mu_x'(y)) / omega(y) (replace-one: x' another symbol; zero-out:
the pairs (mu_x, omega) and (omega, mu_x)). The blanket divergence (The Privacy Blanket of the Shuffle
Model, Theorem 3.1) is E[(sum_{i<=n} B_i L_i)_+] / (n gamma), B_i ~ Bernoulli(gamma) i.i.d.

exact(): the sum over the counts of each nonzero atom, the last (positive) atom in closed form
E[(A + b C)_+] = A P(C >= t) + b N q P(C' >= t - 1), C ~ Bin(N, q), C' ~ Bin(N - 1, q), t the first
count with A + b t > 0; the outer counts over windows of +-20 sd: valid for values >= ~1e-40 (deeper values need wider
windows: at 1e-220 this window misses the counts that make the value).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def krr_laws(k: int, eps0: float, eps: float, adjacency: str) -> tuple[float, list[tuple[list[float], list[float]]]]:
    """gamma and the laws as (values, omega-probabilities), merged atoms of equal value."""
    g = k / (math.exp(eps0) + k - 1.0)
    own, other = 1.0 - g + g / k, g / k  # mu_x(x), mu_x(y != x)
    w = 1.0 / k
    ee = math.exp(eps)
    if adjacency == "replace":
        vals = [(own - ee * other) / w, (other - ee * own) / w]
        probs = [w, w]
        if k > 2:
            vals.append((other - ee * other) / w)
            probs.append((k - 2) * w)
        return g, [(vals, probs)]
    laws = []
    for a, b in (((own, other), (w, w)), ((w, w), (own, other))):
        laws.append(([(a[0] - ee * b[0]) / w, (a[1] - ee * b[1]) / w], [w, (k - 1) * w]))
    return g, laws


def _window(n: int, q: float, width: float = 20.0) -> np.ndarray:
    m, s = n * q, math.sqrt(max(n * q * (1.0 - q), 1e-300))
    lo, hi = max(0, int(m - width * s) - 2), min(n, int(m + width * s) + 3)
    return np.arange(lo, hi + 1)


def _pos_part(A: np.ndarray, b: float, N: np.ndarray, q: float) -> np.ndarray:
    """E[(A + b C)_+], C ~ Bin(N, q), b > 0 (vectorised over A, N)."""
    t = np.where(A >= 0.0, 0, np.floor(-A / b) + 1.0)
    p_c = stats.binom.sf(t - 1.0, N, q)
    p_c1 = stats.binom.sf(t - 2.0, np.maximum(N - 1, 0), q)
    return np.where(t > N, 0.0, A * p_c + b * N * q * p_c1)


def law_value(g: float, values: list[float], probs: list[float], n: int) -> float:
    """E[(sum_{i<=n} B_i L_i)_+] / (n g) exactly (float64 sums of exact-count terms)."""
    v = np.asarray(values, float)
    q = g * np.asarray(probs, float)
    order = np.argsort(v)  # the largest (positive) atom last: the closed form
    v, q = v[order], q[order]
    if v[-1] <= 0.0:
        return 0.0
    if len(v) == 1:
        A = np.zeros(1)
        return float(_pos_part(A, v[0], np.array([n]), q[0])[0]) / (n * g)
    if len(v) == 2:
        c1 = _window(n, q[0])
        w1 = stats.binom.pmf(c1, n, q[0])
        e = _pos_part(c1 * v[0], v[1], n - c1, q[1] / (1.0 - q[0]))
        return float(np.dot(w1, e)) / (n * g)
    assert len(v) == 3
    tot = 0.0
    c1s = _window(n, q[0])
    w1s = stats.binom.pmf(c1s, n, q[0])
    q2 = q[1] / (1.0 - q[0])
    # the inner windows of every outer count c1 (w1 >= 1e-300) concatenated: scipy's pmf and sf are
    # elementwise, so one call on all of them gives the same doubles as one call per c1 (~100 us each)
    keep = [(c1, w1) for c1, w1 in zip(c1s, w1s) if not w1 < 1e-300]
    if not keep:
        return tot / (n * g)
    c2s = [_window(n - int(c1), q2) for c1, _ in keep]
    c1r = np.concatenate([np.full(c2.size, c1) for (c1, _), c2 in zip(keep, c2s)])
    c2r = np.concatenate(c2s)
    w2r = stats.binom.pmf(c2r, n - c1r, q2)
    er = _pos_part(c1r * v[0] + c2r * v[1], v[2], n - c1r - c2r, q[2] / (1.0 - q[0] - q[1]))
    at = 0
    for (c1, w1), c2 in zip(keep, c2s):  # the same per-c1 dot products, in the same order
        tot += w1 * float(np.dot(w2r[at:at + c2.size], er[at:at + c2.size]))
        at += c2.size
    return tot / (n * g)


def exact(k: int, eps0: float, eps: float, n: int, adjacency: str) -> float:
    """The blanket divergence: the maximum over the laws."""
    g, laws = krr_laws(k, eps0, eps, adjacency)
    return max(law_value(g, v, p, n) for v, p in laws)


def brute(k: int, eps0: float, eps: float, n: int, adjacency: str) -> float:
    """The same by plain summation over all counts (O(n^2) / O(n^3)): checks exact() at small n."""
    g, laws = krr_laws(k, eps0, eps, adjacency)
    best = 0.0
    for vals, probs in laws:
        q = [g * p for p in probs]
        tot = 0.0
        if len(vals) == 2:
            for c1 in range(n + 1):
                c2 = np.arange(n - c1 + 1)
                lp = (math.lgamma(n + 1) - math.lgamma(c1 + 1)
                      - np.array([math.lgamma(c + 1) + math.lgamma(n - c1 - c + 1) for c in c2])
                      + c1 * math.log(q[0]) + c2 * math.log(q[1]) + (n - c1 - c2) * math.log1p(-q[0] - q[1]))
                tot += float(np.dot(np.exp(lp), np.maximum(c1 * vals[0] + c2 * vals[1], 0.0)))
        else:
            for c1 in range(n + 1):
                for c2 in range(n - c1 + 1):
                    c3 = np.arange(n - c1 - c2 + 1)
                    lp = (math.lgamma(n + 1) - math.lgamma(c1 + 1) - math.lgamma(c2 + 1)
                          - np.array([math.lgamma(c + 1) + math.lgamma(n - c1 - c2 - c + 1) for c in c3])
                          + c1 * math.log(q[0]) + c2 * math.log(q[1]) + c3 * math.log(q[2])
                          + (n - c1 - c2 - c3) * math.log1p(-sum(q)))
                    tot += float(np.dot(np.exp(lp), np.maximum(c1 * vals[0] + c2 * vals[1] + c3 * vals[2], 0.0)))
        best = max(best, tot / (n * g))
    return best
