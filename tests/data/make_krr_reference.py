"""Generate tests/data/krr_replace_reference.json: exact blanket divergences of k-ary randomized response.

For k-RR with local epsilon eps0 under replace-one adjacency, the blanket (mass gamma = k / Z,
Z = e^eps0 + k - 1, uniform) and the worst-case pair (x1, x1') give the privacy-amplification
variable L = l_eps(Y), Y uniform on the k symbols, with atoms (closed form, independent of
sharpdp)

    k (e^eps0 - e^eps) / Z       with probability 1/k   (Y = x1),
    k (1 - e^eps e^eps0) / Z     with probability 1/k   (Y = x1'),
    k (1 - e^eps) / Z            with probability (k - 2)/k.

The value is the blanket divergence D_up(eps) = E[(sum_{i<=n} B_i L_i)_+] / (n gamma),
B_i ~ Bernoulli(gamma), computed exactly by summing over the multinomial counts of the three
atoms and the blanket-free 0 atom, the innermost sum in closed form (see :func:`exact_dup`;
float64 binomial pmfs and cdfs, relative error far below the 7 significant digits stored). Run from the repository root:

    python tests/data/make_krr_reference.py
"""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
from scipy import stats

CASES = [(3, 1.0, 0.3, 200), (5, 1.0, 0.25, 300), (10, 2.0, 0.4, 300)]  # (k, eps0, eps, n)


def krr_replace_law(k: int, eps0: float, eps: float) -> tuple[list[float], list[float], float]:
    e0, ee = math.exp(eps0), math.exp(eps)
    Z = e0 + k - 1
    return [k * (e0 - ee) / Z, k * (1 - ee * e0) / Z, k * (1 - ee) / Z], [1 / k, 1 / k, (k - 2) / k], k / Z


def exact_dup(values: list[float], probs: list[float], gamma: float, n: int) -> float:
    """(1/(n gamma)) E[(sum_i B_i L_i)_+] for a law with 3 atoms a, b, c (c < 0), exactly.

    The counts (N1, N2, N3) of the atoms among the n users are multinomial (the rest are
    blanket-free zeros). Given N1 = n1 and N2 = n2, N3 ~ Bin(m, q) with m = n - n1 - n2 and
    q = P(c) / (P(c) + 1 - gamma), and with s0 = n1 a + n2 b > 0 the positive part of
    s0 + c N3 is summed in closed form:

        E[(s0 + c N3)_+] = s0 P(N3 <= t) + c m q P(Bin(m - 1, q) <= t - 1),  t = floor(s0 / -c)

    (E[N 1{N <= t}] = m q P(Bin(m - 1, q) <= t - 1)); s0 <= 0 contributes nothing.
    """
    a, b, c = values
    if not c < 0:
        raise ValueError("the third atom must be negative (k-RR: k (1 - e^eps) / Z with eps > 0)")
    pa, pb, pc = (gamma * p for p in probs)
    q = pc / (pc + 1.0 - gamma)
    n1, n2 = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    ok = n1 + n2 <= n
    n1, n2 = n1[ok].astype(float), n2[ok].astype(float)
    w12 = stats.binom.pmf(n1, n, pa) * stats.binom.pmf(n2, n - n1, pb / (1 - pa))
    m = n - n1 - n2
    s0 = n1 * a + n2 * b
    t = np.minimum(np.floor(np.maximum(s0, 0.0) / -c), m)
    first = s0 * stats.binom.cdf(t, m, q)
    second = np.where(m > 0, c * m * q * stats.binom.cdf(t - 1, np.maximum(m - 1, 0), q), 0.0)
    per = np.where(s0 > 0, first + second, 0.0)
    return float(np.sum(w12 * per)) / (n * gamma)


def main() -> None:
    rows = []
    for k, eps0, eps, n in CASES:
        vals, probs, gamma = krr_replace_law(k, eps0, eps)
        rows.append({"k": k, "epsilon0": eps0, "epsilon": eps, "n": n,
                     "delta": float(f"{exact_dup(vals, probs, gamma, n):.6e}")})
    out = {"source": "tests/data/make_krr_reference.py: exact multinomial sums (replace-one, 7 significant digits)",
           "rows": rows}
    path = pathlib.Path(__file__).with_name("krr_replace_reference.json")
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
