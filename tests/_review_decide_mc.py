"""Offline reference generator for tests/test_review_decide.py (rev-decide review; not collected by pytest). Monte Carlo (independent) of D_up for the 1-D Gaussian randomizer, zero-out, both orders, at calibrated sigma0.
D_up = E[(L_0 + ... + L_{K-1})_+ / K], K - 1 ~ Bin(n - 1, g), L i.i.d. (docs/accountant.md Theorem 1.3)."""
import numpy as np
import math
import time
from scipy import stats
rng = np.random.default_rng(12345)

def sample_L(N, s, E, g, order):
    u = rng.random(N)
    z = stats.norm.isf(u * stats.norm.sf(1 / s))
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0) * (-1 + s * z)
    ratio = g * np.exp(((np.abs(y) + 1) ** 2 - (y - 1) ** 2) / (2 * s * s))
    return ratio - E if order == "x_bot" else 1 - E * ratio

def d_up_mc(s, eps, n, order, N, batches=20):
    E, g = math.exp(eps), 2 * stats.norm.sf(1 / s)
    vals = []
    for _ in range(batches):
        K = 1 + rng.binomial(n - 1, g, size=N)
        tot = K.sum()
        L = sample_L(int(tot), s, E, g, order)
        idx = np.repeat(np.arange(N), K)
        S = np.bincount(idx, weights=L, minlength=N)
        vals.append(np.mean(np.maximum(S, 0) / K))
    v = np.array(vals)
    return v.mean(), v.std(ddof=1) / math.sqrt(batches)

cases = [(2, 3.0, 1e-2, 1.3364640077844097), (2, 1.0, 1e-3, 3.7128477648559204), (2, 0.05, 0.4, 1.125473404784131),
         (2, 0.0, 0.3, 1.4942965087924964), (2, 1.0, 0.5, 0.7211614509582523),
         (3, 1.0, 1e-2, 2.3462793880703487), (10, 2.0, 1e-3, 1.6114510288132178), (500, 0.5, 1e-2, 1.036746663567891)]
for n, eps, delta, s in cases:
    t = time.time()
    N = 2_000_000 if n < 100 else 100_000
    out = []
    for order in ("x_bot", "bot_x"):
        m, se = d_up_mc(s, eps, n, order, N)
        out.append((order, m, se))
    print(repr((n, eps, delta, s)), [(o, float(m), float(se), float((m - delta) / se)) for o, m, se in out], round(time.time() - t, 1), flush=True)
