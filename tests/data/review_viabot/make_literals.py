"""Regenerates the reference literals of tests/test_review_viabot.py (independent of sharpdp: numpy only).

Run from the repository root: python tests/data/review_viabot/make_literals.py (about a minute)."""
import math
import sys

import numpy as np

sys.path.insert(0, "tests/data/review_viabot")
from ref_n3 import hs3  # noqa: E402


def mc_is(sig, n, eps, N=2_000_000, seed=0, x_other=-1.0, tilt=True):
    """H_eps(P || Q) of the shuffled Gaussian N(x, s^2), P on (1, o, ..., o), Q on (-1, o, ..., o) (o = x_other):
    E_P[(1 - e^eps q/p)_+] by Monte Carlo, user 1's output drawn from N(mu, s^2) (importance weight
    N(1, s^2)/N(mu, s^2)), mu at the loss threshold s^2 (eps + ln n)/2; the others exact. (mean, sd)."""
    rng = np.random.default_rng(seed)
    mu = max(1.0, sig**2 * (eps + math.log(n)) / 2) if tilt else 1.0  # (no tilt: plain Monte Carlo)
    vals = []
    for _ in range(N // 100_000):
        y1 = mu + sig * rng.standard_normal(100_000)
        w = np.exp(-((y1 - 1) ** 2 - (y1 - mu) ** 2) / (2 * sig**2))
        lp = -((y1 - 1) ** 2 - (y1 - x_other) ** 2) / (2 * sig**2)
        lq = -((y1 + 1) ** 2 - (y1 - x_other) ** 2) / (2 * sig**2)
        if n > 1:
            yo = x_other + sig * rng.standard_normal((100_000, n - 1))
            lp = np.logaddexp(lp, np.logaddexp.reduce(-((yo - 1) ** 2 - (yo - x_other) ** 2) / (2 * sig**2), axis=1))
            lq = np.logaddexp(lq, np.logaddexp.reduce(-((yo + 1) ** 2 - (yo - x_other) ** 2) / (2 * sig**2), axis=1))
        vals.append(w * np.maximum(1 - np.exp(eps + lq - lp), 0.0))
    v = np.concatenate(vals)
    return float(v.mean()), float(v.std() / math.sqrt(v.size))


if __name__ == "__main__":
    print("# n = 3, sigma0 = 2: max over (x2, x3) of the exact H_eps (grid h = 0.05 s)")
    for e in (1.65, 2.38, 4.05):
        v = max(hs3(2.0, 1.0, -1.0, a, b, [e], 0.1)[0] for a, b in ((-1.0, -1.0), (1.0, 1.0), (-1.0, 1.0), (0.0, 0.0)))
        print(e, f"{v:.6e}")
    print("# calibration n = 3, eps = 2: sigma0 = 2.6")
    v = max(hs3(2.6, 1.0, -1.0, a, b, [2.0], 0.13)[0] for a, b in ((-1.0, -1.0), (1.0, 1.0), (-1.0, 1.0), (0.0, 0.0)))
    print(f"{v:.6e}")
    print("# Monte Carlo (importance sampling), others at -1 (the worst of -1, 0, 1 at n = 2, 3)")
    for sig, n, e, tilt in ((2.0, 10, 1.53, True), (4.0, 100, 0.128, False), (0.46, 50, 26.0, True)):
        print(sig, n, e, mc_is(sig, n, e, tilt=tilt))
