"""Independent reference (numpy only, not sharpdp): exact replace-one hockey-stick divergence of the
shuffled 1-D Gaussian randomizer N(x, s^2) at n = 3 on D = (x1, x2, x3), D' = (x1', x2, x3): trapezoid
grid on R^3 of the permutation-averaged densities (the multiset's density relative to Lebesgue)."""
import sys
import numpy as np


def phi(z, s):
    return np.exp(-0.5 * (z / s) ** 2) / (s * np.sqrt(2 * np.pi))


def hs3(s, x1, x1p, x2, x3, eps_list, h):
    L = 1 + 9.5 * s
    y = np.arange(-L, L + h / 2, h)
    w = np.full(y.size, h)
    w[0] = w[-1] = h / 2
    f = {v: phi(y - v, s) for v in {x1, x1p, x2, x3}}

    out = np.zeros(len(eps_list))
    W23 = w[:, None] * w[None, :]
    perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    for i in range(y.size):
        def dens(first):
            v = [f[first], f[x2], f[x3]]
            tot = 0.0
            for p in perms:
                tot = tot + v[p[0]][i] * v[p[1]][:, None] * v[p[2]][None, :]
            return tot / 6.0
        P, Q = dens(x1), dens(x1p)
        for k, e in enumerate(eps_list):
            out[k] += w[i] * np.sum(np.maximum(P - np.exp(e) * Q, 0.0) * W23)
    return out


if __name__ == "__main__":
    s = float(sys.argv[1])
    eps_list = [float(e) for e in sys.argv[2].split(",")]
    for x2, x3 in [(-1.0, -1.0), (-1.0, 1.0), (1.0, 1.0), (0.0, 0.0), (-1.0, 0.0)]:
        a = hs3(s, 1.0, -1.0, x2, x3, eps_list, 0.1 * s)
        b = hs3(s, 1.0, -1.0, x2, x3, eps_list, 0.05 * s)
        print(s, x2, x3, " ".join(f"{e}:{v:.6e}({abs(v-u)/max(v,1e-300):.1e})" for e, v, u in zip(eps_list, b, a)), flush=True)
