"""Independent reference (numpy only): replace-one divergence at n = 3 for huge sigma0, D = (1, o, o),
D' = (-1, o, o), in u = y / s (shift a = 1 / s): P - e^eps Q = phi(u1) phi(u2) phi(u3) / 3
sum_j c(u_j) prod_{k != j} g(u_k) e^{-a^2/2}, c(u) = -e^{a u} expm1(eps - 2 a u), g(u) = e^{o a u - o^2 a^2/2}."""
import math
import sys

import numpy as np


def hs3_precise(s, o, eps_list, h=0.05, L=8.5):
    a = 1.0 / s
    u = np.arange(-L, L + h / 2, h)
    w = np.full(u.size, h)
    w[0] = w[-1] = h / 2
    ph = np.exp(-0.5 * u * u) / math.sqrt(2 * math.pi) * w
    g = np.exp(o * a * u - 0.5 * (o * a) ** 2)
    W23 = ph[:, None] * ph[None, :]
    G23 = g[:, None] * g[None, :]
    out = []
    for e in eps_list:
        c = -np.exp(a * u) * np.expm1(e - 2 * a * u)
        C2 = c[:, None] * g[None, :] + g[:, None] * c[None, :]
        tot = 0.0
        for i in range(u.size):
            M = c[i] * G23 + g[i] * C2
            tot += ph[i] * np.sum(np.maximum(M, 0.0) * W23)
        out.append(math.exp(-0.5 * a * a) * tot / 3.0)
    return np.array(out)


if __name__ == "__main__":
    s = float(sys.argv[1])
    eps = [float(x) for x in sys.argv[2].split(",")]
    for o in (-1.0, 0.0, 1.0):
        print(o, hs3_precise(s, o, eps), hs3_precise(s, o, eps, h=0.1))
