"""rev39 (not collected by pytest). One-jump decomposition reference for GaussianRandomizer(s), zero-out x-vs-bot law, large n, where D_up is a jump
term: users with L > T are 'jumps'
D_up = E[S_+]/(n g) ~= (1 - g pT)^(n-1) * int_{L > T} psi(l) dF(l) + (two jumps,
body alone: negligible), psi(l) = E[(l + S')_+], S' the thinned sum of n - 1 users with L conditioned on L <= T (FFT,
double), the outer integral over y by Gauss-Legendre."""
import math
import sys
import time

import numpy as np
from _rev39_fft_ld import sum_pmf_ld
from _review28_ak_reference import GaussXBot


class Trunc:
    """L | L <= T."""
    def __init__(self, law, T):
        self.law, self.T = law, T
        self.PT, self.ET = [float(v[0]) for v in law.tail(np.array([T]))]
    def tail(self, t):
        P, E = self.law.tail(t)
        t = np.asarray(t, float)
        P = np.where(t < self.T, P - self.PT, 0.0) / (1 - self.PT)
        E = np.where(t < self.T, E - self.ET, 0.0) / (1 - self.PT)
        return P, E


def body_pmf(law, low, gamma, n, h, lo, N):
    """(sorted node values, pmf) of the thinned n-user sum (tests/_rev39_fft_ld.py, long double)."""
    xs, pk = sum_pmf_ld(law, low, gamma, n, h, lo, N)
    o = np.argsort(xs)
    return xs[o], pk[o]


def ref(s, eps, n, T, h, lo, N, pieces=400):
    G = GaussXBot(s, eps)
    g = G.g
    tr = Trunc(G, T)
    xs, p = body_pmf(tr, G.g - G.E, g, n - 1, h, lo, N)
    # psi(l) = sum_{x > -l} (l + x) p(x): suffix sums
    A = np.cumsum(p[::-1])[::-1]
    B = np.cumsum((xs * p)[::-1])[::-1]
    def psi(l):
        k = np.searchsorted(xs, -l, side='right')
        k = np.minimum(k, xs.size - 1)
        return (np.asarray(l, np.longdouble) * A[k] + B[k]).astype(float)
    # outer: y > y_T, L = g e^{2y/s^2} - E, density of y: phi_s(y + 1) / g
    yT = 0.5 * s * s * math.log((T + G.E) / g)
    ytop = yT + 40 * s
    xg, wg = np.polynomial.legendre.leggauss(40)
    e = np.linspace(yT, ytop, pieces + 1)
    a, b = e[:-1, None], e[1:, None]
    y = ((a + b) / 2 + (b - a) / 2 * xg).ravel()
    w = ((b - a) / 2 * wg).ravel()
    dens = np.exp(-0.5 * ((y + 1) / s) ** 2) / (s * math.sqrt(2 * math.pi)) / g
    l = g * np.exp(2 * y / s ** 2) - G.E
    val = float(np.sum(w * dens * psi(l)))
    pT = tr.PT
    val *= (1 - g * pT) ** (n - 1)
    # (no jump, E[S'_+]: left out here: P(S' > -T) = 1.4e-11 at T = 1e5 makes it negligible, and the node values at
    # x > 0 of this FFT are noise at the 1e-13 level of D_up at n gamma = 3e7)
    mass_neg = float(np.sum(p[xs > -T]))
    return val, mass_neg, pT

if __name__ == "__main__":
    s, eps, n, T = float(sys.argv[1]), float(sys.argv[2]), int(float(sys.argv[3])), float(sys.argv[4])
    lo, lg = float(sys.argv[5]), int(sys.argv[6])
    for h in map(float, sys.argv[7:]):
        t = time.process_time()
        v, m, pT = ref(s, eps, n, T, h, lo, 2 ** lg)
        print(s, eps, n, T, h, lo, lg, repr(v), 'mass>-T', m, 'pT', pT, round(time.process_time() - t, 1), flush=True)


def ref_bmg(g0, s0, eps, n, T, h, lo, N, pieces=400):
    from _review28_ak_reference import OneTerm
    r = 1.0 / s0
    law = OneTerm(g0 - math.exp(eps), 1 - g0, r)
    tr = Trunc(law, T)
    xs, p = body_pmf(tr, law.a, g0, n - 1, h, lo, N)
    A = np.cumsum(p[::-1])[::-1]
    B = np.cumsum((xs * p)[::-1])[::-1]
    zT = (math.log((T - law.a) / law.b) + 0.5 * r * r) / r
    xg, wg = np.polynomial.legendre.leggauss(40)
    e = np.linspace(zT, zT + 40, pieces + 1)
    a, b = e[:-1, None], e[1:, None]
    z = ((a + b) / 2 + (b - a) / 2 * xg).ravel()
    w = ((b - a) / 2 * wg).ravel()
    l = law.a + law.b * np.exp(r * z - 0.5 * r * r)
    k = np.minimum(np.searchsorted(xs, -l, side='right'), xs.size - 1)
    ps = (np.asarray(l, np.longdouble) * A[k] + B[k]).astype(float)
    val = float(np.sum(w * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) * ps)) * (1 - g0 * tr.PT) ** (n - 1)
    body = float(np.sum((xs * p)[xs > 0])) * (1 - g0 * tr.PT) ** n / (n * g0)  # (no jump: E[S'_+], n - 1 for n)
    return val + body, body, float(np.sum(p[xs > -T])), tr.PT
