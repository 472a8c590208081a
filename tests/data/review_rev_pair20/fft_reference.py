"""Second independent reference (numpy/scipy only): D_n(eps) = E[g(S)] with S the sum of the other n - 1 users'
B_j L_j, its law by FFT of the law of L rounded to a fine grid (step h, L truncated at LMAX), g the closed form of
mc_reference.py (order "xb" of the zero-out BMG pair). Errors: rounding (zero-mean, O(n gamma h^2) in the smooth g),
the truncation (g in [1 - e^eps, 1] on a mass <= (n - 1) gamma P(L > LMAX)), the FFT round-off (~1e-15 per cell)."""
import math
import sys

import numpy as np
from scipy.special import ndtr

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from mc_reference import g_xb  # noqa: E402


def fft_D(gam, s, n, eps, h=0.01, lo=None, LMAX=2.0e4):
    ee = math.exp(eps)
    lo = -ee * 200.0 if lo is None else lo  # below every S (200 active others at least e^eps below 0)
    a, b = gam - ee, 1.0 - gam  # L = a + b exp((2y - 1)/(2 s^2)), y ~ N(0, s^2)
    M = int(round((LMAX - lo) / h)) + 1
    M2 = 1 << int(math.ceil(math.log2(M)))
    # S lives on the circular grid of M2 steps h (negative values wrap: lo is below every S)
    def cdf(l):
        out = np.zeros_like(l)
        m = l > a
        out[m] = ndtr((0.5 + s * s * np.log((l[m] - a) / b)) / s)
        return out
    # L's law on the grid indices k (L ~ k h), with L's own offset: index of value v is v / h (L >= a > lo)
    kmin, kmax = int(math.floor(a / h)) - 1, int(math.ceil(LMAX / h))
    ks = np.arange(kmin, kmax + 1)
    edges = np.concatenate([(ks - 0.5) * h, [(kmax + 0.5) * h]])
    F = cdf(edges)
    pm = np.diff(F)
    tail = 1.0 - F[-1]
    pL = np.zeros(M2)
    pL[ks % M2] += pm  # circular positions of the values k h
    phi = np.fft.rfft(pL)
    phiS = np.exp((n - 1) * np.log(1.0 - gam + gam * phi))
    pS = np.fft.irfft(phiS, M2)
    kk = np.arange(M2)
    vals = np.where(kk * h <= LMAX, kk * h, (kk - M2) * h)  # circular index -> value
    D = float(np.sum(pS * g_xb(vals, gam, s, ee)))
    err_tail = (n - 1) * gam * tail * ee
    return D, err_tail, float(pS[(vals < lo)].sum()) if np.any(vals < lo) else 0.0


if __name__ == "__main__":
    import json
    import os
    G, S = 0.04089409561900239, 0.5960134902126553
    out = []
    for n, e, h, lmax in [(2, 1.0, 0.01, 2e4), (2, 3.0, 0.01, 2e4), (1000, 0.5, 0.01, 2e4), (1000, 2.0, 0.01, 2e4),
                          (1000, 3.0, 0.01, 2e4), (10**5, 0.55, 0.1, 4e5), (10**5, 1.0, 0.1, 4e5),
                          (10**5, 2.0, 0.1, 4e5), (10**5, 3.0, 0.1, 4e5)]:
        ee = math.exp(e)
        lo = -ee * 200.0 if n < 10**4 else -ee * 4700.0
        d1, tail, _ = fft_D(G, S, n, e, h=2 * h, lo=lo, LMAX=lmax)
        d2, tail, below = fft_D(G, S, n, e, h=h, lo=lo, LMAX=lmax)
        # error allowance: 4x the change from step 2h to h, the truncation, 1e-15 absolute for the FFT round-off
        err = 4.0 * abs(d2 - d1) + tail + abs(below) * ee + 1e-15
        print(n, e, d2, err / d2, flush=True)
        out.append(dict(gamma=G, sigma0=S, n=n, eps=e, value=d2, err=err))
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fft_reference.json"), "w") as f:
        json.dump(out, f, indent=1)
