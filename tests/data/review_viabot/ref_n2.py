"""Independent reference (numpy only, not sharpdp): exact replace-one hockey-stick divergence of the
shuffled 1-D Gaussian randomizer N(x, s^2) at n = 2 on D = (x1, x2), D' = (x1', x2), by a
trapezoid grid on R^2 of the symmetrised densities (the shuffled multiset's density relative to
Lebesgue on R^2, permutation-averaged). Grid step h and h/2 reported (convergence)."""
import sys
import numpy as np


def phi(z, s):
    return np.exp(-0.5 * (z / s) ** 2) / (s * np.sqrt(2 * np.pi))


def hs2(s, x1, x1p, x2, eps_list, h):
    L = 1 + 11 * s
    y = np.arange(-L, L + h / 2, h)
    w = np.full(y.size, h)
    w[0] = w[-1] = h / 2
    a1, a1p, a2 = phi(y - x1, s), phi(y - x1p, s), phi(y - x2, s)
    out = np.zeros(len(eps_list))
    for i0 in range(0, y.size, 512):
        sl = slice(i0, i0 + 512)
        P = 0.5 * (a1[sl, None] * a2[None, :] + a2[sl, None] * a1[None, :])
        Q = 0.5 * (a1p[sl, None] * a2[None, :] + a2[sl, None] * a1p[None, :])
        W = w[sl, None] * w[None, :]
        for k, e in enumerate(eps_list):
            out[k] += np.sum(np.maximum(P - np.exp(e) * Q, 0.0) * W)
    return out


if __name__ == "__main__":
    s = float(sys.argv[1])
    eps_list = [float(e) for e in sys.argv[2].split(",")]
    for x2 in [-1.0, -0.5, 0.0, 0.5, 1.0]:
        a = hs2(s, 1.0, -1.0, x2, eps_list, 0.02 * s)
        b = hs2(s, 1.0, -1.0, x2, eps_list, 0.01 * s)
        print(s, x2, " ".join(f"{e}:{v:.6e}({abs(v-u)/v:.1e})" for e, v, u in zip(eps_list, b, a)))
