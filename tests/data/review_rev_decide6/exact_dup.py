"""Independent exact blanket divergence D_up(eps) = E[(sum_{i<=n} B_i L_i)_+] / (n gamma) for the
k-RR laws (review rev-decide6), from closed-form atoms (not sharpdp's laws) by direct sums of
positive terms over count vectors (no cancellation), in float64 log-space (lgamma), cross-checked
against mpmath brute force for small n (``check``).

k-RR, eps0, blanket gamma = k / (e^eps0 + k - 1), R_BG uniform:
  zero-out x vs bot: atoms e^eps0 gamma - e^eps (1/k), gamma - e^eps ((k-1)/k)
  zero-out bot vs x: atoms 1 - e^(eps+eps0) gamma (1/k), 1 - e^eps gamma ((k-1)/k)
  replace (x1, x1'): gamma (e^eps0 - e^eps) (1/k), gamma (1 - e^(eps+eps0)) (1/k),
                     gamma (1 - e^eps) ((k-2)/k; absent for k = 2)
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln


def krr_laws(k: int, eps0: float, eps: float, adjacency: str) -> tuple[float, list[tuple[np.ndarray, np.ndarray]]]:
    g = k / (math.exp(eps0) + k - 1)
    E, E0 = math.exp(eps), math.exp(eps0)
    if adjacency == "zero_out":
        return g, [(np.array([E0 * g - E, g - E]), np.array([1 / k, (k - 1) / k])),
                   (np.array([1 - E * E0 * g, 1 - E * g]), np.array([1 / k, (k - 1) / k]))]
    if k == 2:
        return g, [(np.array([g * (E0 - E), g * (1 - E * E0)]), np.array([0.5, 0.5]))]
    return g, [(np.array([g * (E0 - E), g * (1 - E * E0), g * (1 - E)]), np.array([1 / k, 1 / k, (k - 2) / k]))]


def _window(mean: float, sd: float, lo: int, hi: int, width: float = 60.0) -> tuple[int, int]:
    w = width * sd + width
    return max(lo, int(math.floor(mean - w))), min(hi, int(math.ceil(mean + w)))


def dup_law(values: np.ndarray, probs: np.ndarray, gamma: float, n: int) -> float:
    """E[(sum B_i L_i)_+]/(n gamma): sum over M ~ Bin(n, gamma) active users and the multinomial
    counts of the atoms (2 or 3 atoms); terms beyond 60 sd + 60 of each count are left out
    (their mass is far below 1e-40 of the value for the cases used)."""
    v, p = np.asarray(values, float), np.asarray(probs, float)
    if v.max() <= 0:
        return 0.0
    lg, l1g = math.log(gamma), math.log1p(-gamma)
    # M within 15 sd + 15 of n gamma: P(M) outside is below ~1e-45 and E[S_+ | M]/(n gamma) <= E[L_+] M/(n gamma)
    M0, M1 = _window(n * gamma, math.sqrt(n * gamma * (1 - gamma)), 1, n, 15.0)
    Ms = np.arange(M0, M1 + 1)
    lpM = gammaln(n + 1) - gammaln(Ms + 1) - gammaln(n - Ms + 1) + Ms * lg + (n - Ms) * l1g
    total = 0.0
    if v.size == 2 and v[0] > v[1]:
        v, p = v[::-1].copy(), p[::-1].copy()
    lp = np.log(p)
    for M, lm in zip(Ms.tolist(), lpM.tolist()):
        if lm < -800:
            continue
        if v.size == 2:
            # count at atom 1: S > 0 iff c > kc; c within 60 sd + 60 of its mean M p1
            kc = int(math.floor(-M * v[0] / (v[1] - v[0])))
            lo_c, hi_c = _window(M * p[1], math.sqrt(M * p[1] * p[0]), 0, M)
            lo_c = max(lo_c, kc - 1, 0)
            if lo_c > hi_c:
                continue
            c = np.arange(lo_c, hi_c + 1)
            s = c * v[1] + (M - c) * v[0]
            sel = s > 0
            if not sel.any():
                continue
            c, s = c[sel], s[sel]
            lt = gammaln(M + 1) - gammaln(c + 1) - gammaln(M - c + 1) + c * lp[1] + (M - c) * lp[0]
            total += math.fsum((np.exp(lt + lm) * s).tolist())
        else:
            # counts (c0, c2) of atoms 0 and 2 (the rest at atom 1), windowed around their means
            a0, a1 = _window(M * p[0], math.sqrt(M * p[0] * (1 - p[0])), 0, M)
            b0, b1 = _window(M * p[2], math.sqrt(M * p[2] * (1 - p[2])), 0, M)
            c0 = np.arange(a0, a1 + 1)[:, None]
            c2 = np.arange(b0, b1 + 1)[None, :]
            c1 = M - c0 - c2
            ok = c1 >= 0
            c1 = np.where(ok, c1, 0)
            s = c0 * v[0] + c1 * v[1] + c2 * v[2]
            sel = ok & (s > 0)
            if not sel.any():
                continue
            lt = (gammaln(M + 1) - gammaln(c0 + 1) - gammaln(c1 + 1) - gammaln(c2 + 1)
                  + c0 * lp[0] + c1 * lp[1] + c2 * lp[2])
            total += math.fsum((np.exp(lt[sel] + lm) * s[sel]).tolist())
    return total / (n * gamma)


def dup_krr(k: int, eps0: float, eps: float, n: int, adjacency: str) -> float:
    g, laws = krr_laws(k, eps0, eps, adjacency)
    return max(dup_law(v, p, g, n) for v, p in laws)


def dup_mpmath(values, probs, gamma, n, dps=50):
    """Brute force over all count vectors (small n only), mpmath at ``dps`` digits."""
    import itertools

    import mpmath as mp
    mp.mp.dps = dps
    g = mp.mpf(gamma)
    q = [1 - g] + [g * mp.mpf(float(x)) for x in probs]
    vals = [mp.mpf(0)] + [mp.mpf(float(x)) for x in values]
    m = len(vals)
    tot = mp.mpf(0)
    for cs in itertools.product(range(n + 1), repeat=m - 1):
        if sum(cs) > n:
            continue
        c = (n - sum(cs),) + cs
        s = sum(ci * vi for ci, vi in zip(c, vals))
        if s <= 0:
            continue
        coef = mp.factorial(n)
        for ci in c:
            coef /= mp.factorial(ci)
        pr = coef
        for ci, qi in zip(c, q):
            pr *= qi ** ci
        tot += pr * s
    return float(tot / (n * g))


def check() -> None:
    for k, eps0, eps, n, adj in [(2, 1.0, 0.3, 25, "replace"), (3, 2.0, 0.5, 12, "replace"),
                                 (10, 4.0, 1.0, 14, "replace"), (3, 1.0, 0.2, 30, "zero_out")]:
        g, laws = krr_laws(k, eps0, eps, adj)
        for v, p in laws:
            a, b = dup_law(v, p, g, n), dup_mpmath(v, p, g, n)
            assert abs(a - b) <= 1e-12 * b + 1e-300, (k, eps0, eps, n, adj, a, b)
            print("check", k, eps0, eps, n, adj, a, b)


if __name__ == "__main__":
    check()


def dup_two_atom_fast(values: np.ndarray, probs: np.ndarray, gamma: float, n: int) -> float:
    """The two-atom D_up by binomial tail sums (scipy.stats.binom, vectorised over M within 15 sd):
    E[S_+ | M] = (a2 - a1) M p2 P(Bin(M - 1, p2) >= k) + M a1 P(Bin(M, p2) > k), k = floor(-M a1/(a2 - a1));
    agrees with :func:`dup_law` to ~1e-9 relative (cancellation of the two terms) on the cases used."""
    from scipy import stats

    v, p = np.asarray(values, float), np.asarray(probs, float)
    if v.max() <= 0:
        return 0.0
    if v[0] > v[1]:
        v, p = v[::-1].copy(), p[::-1].copy()
    (a1, a2), (_, p2) = v, p
    M0, M1 = _window(n * gamma, math.sqrt(n * gamma * (1 - gamma)), 1, n, 15.0)
    M = np.arange(M0, M1 + 1)
    k = np.floor(-M * a1 / (a2 - a1))
    cond = (a2 - a1) * M * p2 * stats.binom.sf(k - 1, M - 1, p2) + M * a1 * stats.binom.sf(k, M, p2)
    return float(np.sum(stats.binom.pmf(M, n, gamma) * np.maximum(cond, 0.0))) / (n * gamma)


def dup_krr_any(k: int, eps0: float, eps: float, n: int, adjacency: str) -> float:
    """dup_krr, with the fast two-atom sums for two-atom laws at n > 3000."""
    g, laws = krr_laws(k, eps0, eps, adjacency)
    return max(dup_two_atom_fast(v, p, g, n) if (v.size == 2 and n > 3000) else dup_law(v, p, g, n)
               for v, p in laws)
