"""Monte Carlo (independent of the package's laws) of leg B (bot vs x) of the Gaussian randomizer, dim 1,
|x| = 1: D_up = E[(L_1 + ... + L_M)_+] / (n g), M ~ Bin(n, g), g = 2 Phibar(1/s); Y ~ R_BG = phi_s(|y| + 1)/g
(P(Y < 0) = 1/2, Y > 0: Y = -1 + s Z, Z ~ N(0,1) | Z > 1/s); L = 1 - e^eps g e^{2 Y+/s^2} <= 1 (bounded
above: the estimator's variance is finite and small). Returns mean and a 6-sigma half-width."""
import math
import numpy as np
from scipy.stats import truncnorm


def mc_b(s, n, eps, reps=400_000, seed=1):
    rng = np.random.default_rng(seed)
    g = math.erfc(1 / s / math.sqrt(2))
    E = math.exp(eps)
    M = rng.binomial(n, g, size=reps)
    tot = int(M.sum())
    neg = rng.random(tot) < 0.5
    z = truncnorm.rvs(1 / s, np.inf, size=tot, random_state=rng)
    y = np.where(neg, 0.0, -1 + s * z)
    L = 1 - E * g * np.exp(2 * y / s**2)
    idx = np.repeat(np.arange(reps), M)
    S = np.bincount(idx, weights=L, minlength=reps)
    X = np.maximum(S, 0.0) / (n * g)
    return float(X.mean()), 6 * float(X.std()) / math.sqrt(reps)


if __name__ == "__main__":
    for s, n, e in ((0.46, 500, 0.5), (0.46, 500, 0.1), (0.46, 50, 1.0), (0.46, 50, 4.0)):
        print(s, n, e, mc_b(s, n, e))
